"""The layers × heads grid at real depths: 12-layer GPT-2 and 30-layer Llama (9 query heads,
3 key/value heads) shapes, narrow so they build in a moment; plotly's own validation is the
oracle (it refused a domain of -1.6e-16 on 12 layers and more)."""

from __future__ import annotations

import os

import numpy as np
import plotly.graph_objects as go
import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from model import capture, load_checkpoint  # noqa: E402
from tests.unit.test_hf import SPECIALS, WORDS, make_tokenizer  # noqa: E402
from viz.attention import grid_figure, layer_figure  # noqa: E402


@pytest.fixture(autouse=True)
def _one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny tensors: threads cost more than they give on 2 busy cores
    yield
    torch.set_num_threads(before)


def _folder(tmp_path, family: str):
    import transformers as tf

    torch.manual_seed(0)
    common = dict(vocab_size=len(SPECIALS) + len(WORDS), pad_token_id=0, bos_token_id=2,
                  eos_token_id=3)
    if family == "gpt2":
        model = tf.GPT2LMHeadModel(tf.GPT2Config(n_embd=24, n_layer=12, n_head=12,
                                                 n_positions=64, **common))
    else:
        model = tf.LlamaForCausalLM(tf.LlamaConfig(
            hidden_size=36, num_hidden_layers=30, num_attention_heads=9, num_key_value_heads=3,
            intermediate_size=16, max_position_embeddings=64, **common))
    model.save_pretrained(tmp_path / family, safe_serialization=True)
    make_tokenizer(None).save_pretrained(tmp_path / family)
    return tmp_path / family


@pytest.mark.parametrize("family,layers,heads", [("gpt2", 12, 12), ("llama", 30, 9)])
def test_every_layer_by_head_grid_is_valid_plotly(tmp_path, family, layers, heads):
    bundle = load_checkpoint(_folder(tmp_path, family))
    trace = capture(bundle, ["the cat eats fish every day .", "winter is cold"],
                    names=["attn"])
    assert trace.attn["dec_self"].shape[:3] == (layers, 2, heads)
    fig = grid_figure(trace, "dec_self", 0, selected=(layers - 1, heads - 1))
    checked = go.Figure(fig.to_dict())  # validates every property, domains included
    domains = [(ax.domain[0], ax.domain[1]) for ax in checked.select_yaxes()]
    assert len(domains) == layers * heads
    assert all(0 <= lo < hi <= 1 for lo, hi in domains)
    rows = sorted({d for d in domains}, reverse=True)
    assert len(rows) == layers  # one band per layer, none overlapping the next
    assert all(a[0] > b[1] for a, b in zip(rows, rows[1:]))
    widths = [hi - lo for lo, hi in rows]
    assert min(widths) > 0.6 / layers  # gaps take at most 30 % of the height
    go.Figure(layer_figure(trace, "dec_self", layers - 1, 0).to_dict())
    if family == "llama":
        assert trace.kv_groups.tolist() == list(np.repeat([0, 1, 2], 3))
