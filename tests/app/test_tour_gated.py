"""The tour's steps 14 and 15 on a tiny random Llama (RMSNorm, gated SiLU FFN) and a T5 with
a gated-GELU FFN, through AppTest: the page names the RMS norm and the gate in the model's
own words, and its charts hold numbers computed another way, by transformers' own modules on
a second load (post_attention_layernorm's / layer.1.layer_norm's output; down_proj's / wo's
input). A tiny GPT-2 keeps its LayerNorm and ungated FFN text."""

from __future__ import annotations

import json
import os
import re

import numpy as np
import pytest
import torch

from tests.app.conftest import run_app
from tests.chartdata import array
from tests.hf_folders import save_families
from tests.unit.test_block_walk import hooked
from tests.unit.test_block_walk_gated import build, random_gammas
from tests.unit.test_hf import eager_twin

TEXT = "the cat eats fish every day .\nwinter is cold"
LINE = TEXT.split("\n")[0]  # the tour walks sentence 1


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    folder = save_families(tmp_path_factory.mktemp("tour_gated"), ("llama", "t5-gated", "gpt2"),
                           build, random_gammas)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ATTN_MODELS", str(folder))
        mp.setenv("HF_HUB_OFFLINE", "1")
        yield folder


def page(name: str, step: int, lang: str = "en") -> tuple[str, list[dict]]:
    """Step `step` of the tour on model `name`: its text (markdown, captions, code) and charts."""
    at = run_app({"view": "tour", "ckpt": name, "text": TEXT, "step": str(step), "lang_ui": lang},
                 timeout=300)
    problems = [e.value for e in at.error] + [str(x.value)[:300] for x in at.exception]
    assert not problems, problems
    assert [h.value for h in at.subheader][-1].startswith(f"{step}. ")
    assert not at.info, [x.value for x in at.info]  # nothing skipped: the step is rebuilt
    said = [m.value for m in at.markdown] + [c.value for c in at.caption] + \
        [c.value for c in at.code]
    return re.sub(r"\\(.)", r"\1", "\n".join(said)), \
        [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def layer0(folder, modules, inputs: bool = False) -> dict:
    """Outputs (or inputs) of layer 0's modules of a second load, on sentence 1 alone."""
    from transformers import AutoTokenizer

    twin = eager_twin(folder)
    got, handles = hooked(twin, modules(twin), inputs=inputs)
    try:
        enc = AutoTokenizer.from_pretrained(folder)(LINE, return_tensors="pt")
        with torch.no_grad():
            (twin.encoder if hasattr(twin, "encoder") else twin)(**enc)
    finally:
        for h in handles:
            h.remove()
    return {k: v[0] for k, v in got.items()}


def titled(charts: list[dict], start: str) -> dict:
    hits = [c for c in charts
            if str(c["layout"].get("title", {}).get("text", "")).startswith(start)]
    assert len(hits) == 1, [c["layout"].get("title") for c in charts]
    return hits[0]


def test_llama_step_15_draws_the_gated_ffn(root):
    said, charts = page("llama", 15)
    assert "is gated: SiLU(gate_proj · x) × (up_proj · x)" in said
    assert "down_proj brings the product back to 32" in said
    assert "(32 → 48)" in said and "second RMS norm" in said and "LayerNorm" not in said
    assert "gate_proj, up_proj: (bs, n_dec_seq, intermediate_size) = (2, " in said
    fig = titled(charts, "FFN hidden layer: SiLU(gate_proj · x) × (up_proj · x)")
    want = layer0(root / "llama", lambda t: {"h": t.model.layers[0].mlp.down_proj},
                  inputs=True)["h"]
    z = array(fig["data"][0]["z"])
    assert z.shape == want.shape == (len(LINE.split()) + 1, 48)  # <s> and the words
    np.testing.assert_allclose(z, want, atol=1e-4)


def test_llama_step_14_shows_the_rms_norm(root):
    said, charts = page("llama", 14)
    assert "Its norms are RMS norms" in said and "pre-norm" in said
    assert "LayerNorm" not in said and "shifts it by β" not in said
    bars = {t["name"]: array(t["y"]) for t in titled(charts, "Vector length")["data"]}
    want = layer0(root / "llama", lambda t: {"n": t.model.layers[0].post_attention_layernorm})
    np.testing.assert_allclose(bars["after the RMS norm"], np.linalg.norm(want["n"], axis=-1),
                               atol=1e-4)
    mean = float(want["n"].mean(-1).mean())
    assert f"the vectors' mean is {mean:.3f} on average" in said


def test_t5_gated_gelu_step_15_and_korean(root):
    said, charts = page("t5-gated", 15)
    assert "is gated: GELU_NEW(wi_0 · x) × (wi_1 · x)" in said and "wo brings" in said
    fig = titled(charts, "FFN hidden layer: GELU_NEW(wi_0 · x) × (wi_1 · x)")
    want = layer0(root / "t5-gated",
                  lambda t: {"h": t.encoder.block[0].layer[1].DenseReluDense.wo}, inputs=True)
    np.testing.assert_allclose(array(fig["data"][0]["z"]), want["h"], atol=1e-4)
    said_ko, charts_ko = page("t5-gated", 15, lang="ko")
    assert "게이트가 있는 FFN입니다: GELU_NEW(wi_0 · x) × (wi_1 · x)" in said_ko
    assert "FFN 은닉층: GELU_NEW(wi_0 · x) × (wi_1 · x)" in \
        [str(c["layout"].get("title", {}).get("text", "")) for c in charts_ko]


def test_gpt2_steps_14_and_15_unchanged(root):
    said, _charts = page("gpt2", 15)
    assert "Linear n_embd → 4 · n_embd (16 → 64), the activation GELU_NEW" in said
    assert "gated" not in said and "RMS" not in said
    said, _charts = page("gpt2", 14)
    assert "RMS" not in said
    assert os.environ["ATTN_MODELS"]
