"""The layers × heads grid at real depths: 12-layer GPT-2 and 30-layer Llama (9 query heads,
3 key/value heads) shapes, narrow so they build in a moment; plotly's own validation is the
oracle. Since issue 30 the grid and the layer's heads are one heatmap trace of tiled panels
(viz.tiles); the tiles' meta says where each panel lies, and the NaN gaps are checked
against it."""

from __future__ import annotations

import os

import numpy as np
import plotly.graph_objects as go
import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from model import capture, load_checkpoint  # noqa: E402
from tests.hf_folders import SPECIALS, WORDS, make_tokenizer  # noqa: E402
from viz.attention import grid_figure, layer_figure  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_thread")  # tests/conftest.py


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


def _runs(finite: np.ndarray) -> list[tuple[int, int]]:
    """(first, last) index of each run of True."""
    runs, start = [], None
    for i, v in enumerate(list(finite) + [False]):
        if v and start is None:
            start = i
        elif not v and start is not None:
            runs.append((start, i - 1))
            start = None
    return runs


@pytest.mark.parametrize("family,layers,heads", [("gpt2", 12, 12), ("llama", 30, 9)])
def test_every_layer_by_head_grid_is_valid_plotly(tmp_path, family, layers, heads):
    bundle = load_checkpoint(_folder(tmp_path, family))
    trace = capture(bundle, ["the cat eats fish every day .", "winter is cold"],
                    names=["attn"])
    assert trace.attn["dec_self"].shape[:3] == (layers, 2, heads)
    fig = grid_figure(trace, "dec_self", 0, selected=(layers - 1, heads - 1))
    checked = go.Figure(fig.to_dict())  # validates every property
    assert len(checked.data) == 1  # one trace, not a subplot per head
    z = np.asarray(fig.data[0].z, dtype=float)  # (the dict holds it base64-encoded)
    finite = np.isfinite(z)
    rows, cols = _runs(finite.any(axis=1)), _runs(finite.any(axis=0))
    assert len(rows) == layers and len(cols) == heads  # panels separated by empty gaps
    meta = fig.layout.meta["tiles"]
    assert [tuple(r) for r in meta["row_spans"]] == rows
    assert [tuple(c) for c in meta["col_spans"]] == cols
    assert len(set(r[1] - r[0] for r in rows)) == 1  # every panel one size
    assert len(checked.layout.yaxis.tickvals) == layers  # a tick naming each layer
    assert list(checked.layout.yaxis.ticktext) == [f"layer {i}" for i in range(layers)]
    assert checked.layout.yaxis.scaleanchor == "x"  # square cells
    frame = [s for s in checked.layout.shapes if s.line.color == "#d62728"]
    assert len(frame) == 1 and frame[0].x0 < cols[-1][0] < cols[-1][1] < frame[0].x1
    assert frame[0].y0 < rows[-1][0] and rows[-1][1] < frame[0].y1  # the selected head
    layer = go.Figure(layer_figure(trace, "dec_self", layers - 1, 0).to_dict())
    assert len(layer.data) == 1 and layer.layout.meta["tiles"]["cols"] <= 8
    if family == "llama":
        assert trace.kv_groups.tolist() == list(np.repeat([0, 1, 2], 3))


def _columns(fig) -> list[tuple[int, int]]:
    """Each panel column's (first, last) cell column, left to right, read from the data."""
    z = np.asarray(fig.data[0].z, dtype=float)
    return _runs(np.isfinite(z).any(axis=0))


@pytest.mark.parametrize("family", ["gpt2", "llama"])
def test_heads_that_share_keys_and_values_are_drawn_together(tmp_path, family):
    """Grouped-query attention (Llama: 9 query heads read 3 key/value heads) draws each group's
    columns closer together on one grey band, and names the kv head; GPT-2 has no groups.
    The layer's heads wrap into rows of whole groups (6 = two groups of 3, then 3)."""
    bundle = load_checkpoint(_folder(tmp_path, family))
    trace = capture(bundle, ["the cat eats fish"], names=["attn"])
    grid, layer = grid_figure(trace, "dec_self", 0), layer_figure(trace, "dec_self", 0, 0)
    for fig in (grid, layer):
        cols = _columns(fig)
        gaps = [b[0] - a[1] - 1 for a, b in zip(cols, cols[1:])]
        bands = [s for s in fig.layout.shapes if s.fillcolor and "120" in s.fillcolor]
        n_cols = 12 if fig is grid else 8
        if family == "gpt2":
            assert len(cols) == n_cols and len(set(gaps)) == 1 and not bands
            continue
        assert len(cols) == (9 if fig is grid else 6)
        inside, between = gaps[0], gaps[2]
        assert inside >= 1 and between == 4 * inside  # 0 1 2 | 3 4 5 | 6 7 8
        assert gaps == [inside, inside, between, inside, inside, between, inside,
                        inside][:len(cols) - 1]
        assert len(bands) == len(cols) // 3
        for g, band in enumerate(bands):  # each band covers exactly its three columns
            assert band.x0 < cols[3 * g][0] and cols[3 * g + 2][1] < band.x1
            if 3 * g + 3 < len(cols):
                assert band.x1 < cols[3 * g + 3][0]
    if family == "llama":  # the grid names the kv head under each column, the layer above
        assert list(grid.layout.xaxis.ticktext) == [f"head {h} · kv {h // 3}" for h in range(9)]
        assert [a.text for a in layer.layout.annotations] == [
            f"head {h} · kv {h // 3}" for h in range(9)]
        assert layer.layout.meta["tiles"]["rows"] == 2
        assert "kv %{customdata[1]}" in layer.data[0].hovertemplate
        data = np.asarray(layer.data[0].customdata)
        rows = layer.layout.meta["tiles"]["row_spans"]
        cols = layer.layout.meta["tiles"]["col_spans"]
        assert data[rows[1][0], cols[2][0]].tolist() == [8, 2]  # second row, third panel


def test_runs_on_one_thread():
    """tests/conftest.one_thread is in force for this module (and restored after it)."""
    assert torch.get_num_threads() == 1
