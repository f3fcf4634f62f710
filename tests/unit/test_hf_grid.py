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


def _columns(fig) -> list[tuple[float, float]]:
    """Each column's x domain, left to right (the first row's axes)."""
    return sorted({(ax.domain[0], ax.domain[1]) for ax in go.Figure(fig.to_dict()).select_xaxes()})


@pytest.mark.parametrize("family", ["gpt2", "llama"])
def test_heads_that_share_keys_and_values_are_drawn_together(tmp_path, family):
    """Grouped-query attention (Llama: 9 query heads read 3 key/value heads) draws each group's
    columns closer together on one grey band, and names the kv head; GPT-2 has no groups."""
    bundle = load_checkpoint(_folder(tmp_path, family))
    trace = capture(bundle, ["the cat eats fish"], names=["attn"])
    for fig in (grid_figure(trace, "dec_self", 0), layer_figure(trace, "dec_self", 0, 0)):
        cols = _columns(fig)
        gaps = [round(b[0] - a[1], 9) for a, b in zip(cols, cols[1:])]
        bands = fig.layout.shapes
        titles = [ax.title.text for ax in fig.select_xaxes() if ax.title.text]
        if family == "gpt2":
            assert len(cols) == 12 and len(set(gaps)) == 1 and not bands
            continue
        assert len(cols) == 9
        inside, between = gaps[0], gaps[2]
        assert between == pytest.approx(4 * inside)  # 0 1 2 | 3 4 5 | 6 7 8
        assert gaps == [inside, inside, between, inside, inside, between, inside, inside]
        assert len(bands) == 3
        for g, band in enumerate(bands):  # each band covers exactly its three columns
            assert band.x0 <= cols[3 * g][0] and cols[3 * g + 2][1] <= band.x1
            assert band.x1 < (cols[3 * g + 3][0] if g < 2 else 1.0 + 1e-9)
        if fig.layout.height > 400:  # the grid names the kv head under each column
            assert titles == [f"head {h} · kv {h // 3}" for h in range(9)]
        else:
            assert [a.text for a in fig.layout.annotations] == [
                f"head {h} · kv {h // 3}" for h in range(9)]
