"""The sidebar's one-line card of a model says what its config.json says: one
stack's layer count for the decoder-only lm (not "0+2"), encoder+decoder for the translators,
and the norm by its name (Llama's RMSNorm is not a LayerNorm)."""

from __future__ import annotations

import json

from model import load_checkpoint
from tests.conftest import ROOT, skip_or_fail
from ui.sidebar import card_line


def test_lm_line_reads_its_config():
    raw = json.loads((ROOT / "checkpoints" / "lm" / "config.json").read_text())
    line = card_line(load_checkpoint(ROOT / "checkpoints" / "lm"))
    assert raw["model_type"] == "llama" and "rms_norm_eps" in raw
    assert (f"{raw['num_hidden_layers']} layers × {raw['num_attention_heads']} heads"
            in line), line
    assert "0+" not in line and "pre-RMSNorm" in line and "-LN" not in line, line
    assert f"d_model {raw['hidden_size']}" in line, line


def test_translator_line_keeps_both_stacks_and_its_layernorm():
    raw = json.loads((ROOT / "checkpoints" / "paper" / "config.json").read_text())
    line = card_line(load_checkpoint(ROOT / "checkpoints" / "paper"))
    assert f"{raw['n_enc_layers']}+{raw['n_dec_layers']} layers × {raw['n_heads']} heads" \
        in line, line
    assert f"{raw['norm']}-LN" in line, line


def test_a_hugging_face_model_shows_its_shape_too():
    """MiniLM's line said only "cpu, float32": it gives layers, heads and width from its own
    config.json (and post-LN: BERT normalises after each residual sum)."""
    folder = ROOT / "checkpoints" / "minilm"
    if not (folder / "config.json").exists():
        skip_or_fail("checkpoints/minilm is installed by `make models`")
    raw = json.loads((folder / "config.json").read_text())
    line = card_line(load_checkpoint(folder))
    assert (f"{raw['num_hidden_layers']} layers × {raw['num_attention_heads']} heads"
            in line), line
    assert f"d_model {raw['hidden_size']}" in line and "post-LN" in line, line
