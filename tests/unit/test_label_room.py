"""Point labels of the head atlas and the KV-cache read map's position labels fit the font in
use: viz.atlas.keep_labels / place_labels (greedy, in screen space) and viz.cache.tick_plan /
fit_position_ticks (level, 45° or upright and thinned), checked against boxes worked out here."""

from __future__ import annotations

import numpy as np

from viz import atlas as viz_atlas
from viz import cache as viz_cache
from viz.plot_area import CHAR_W


def meet(a: tuple, b: tuple, gap: float) -> bool:
    """Two (left, top, right, bottom) boxes closer than gap on both axes."""
    return (min(a[2], b[2]) - max(a[0], b[0]) > -gap) and (min(a[3], b[3]) - max(a[1], b[1])
                                                          > -gap)


def boxes(px, py, widths, font):
    high = viz_atlas.LINE_H * font
    return [(x - w / 2, y - high, x + w / 2, y) for x, y, w in zip(px, py, widths)]


def test_kept_labels_never_meet_and_every_dropped_one_would():
    rng = np.random.default_rng(3)
    px, py = rng.uniform(0, 300, 80), rng.uniform(0, 200, 80)
    widths, font, gap = rng.uniform(15, 40, 80), 11.0, 3.0
    keep = viz_atlas.keep_labels(px, py, widths, font, gap)
    box = boxes(px, py, widths, font)
    kept = np.flatnonzero(keep)
    assert 0 < len(kept) < 80  # a crowded cloud: some, not all
    for i in kept:
        for j in kept:
            assert i == j or not meet(box[i], box[j], gap - 1e-6), (i, j)
    for i in np.flatnonzero(~keep):  # greedy: a dropped label meets a kept one
        assert any(meet(box[i], box[j], gap + 1e-6) for j in kept), i


def test_apart_points_all_keep_their_labels_and_a_stack_keeps_one():
    far = viz_atlas.keep_labels(np.array([0.0, 100.0, 200.0]), np.zeros(3),
                                np.full(3, 20.0), 11.0)
    assert far.all()
    stack = viz_atlas.keep_labels(np.zeros(4), np.zeros(4), np.full(4, 20.0), 11.0)
    assert stack.sum() == 1


def _scatter(n_layers: int = 12, n_heads: int = 12, seed: int = 0):
    rng = np.random.default_rng(seed)
    layers, heads = np.divmod(np.arange(n_layers * n_heads), n_heads)
    x, y = rng.normal(size=len(layers)), rng.normal(size=len(layers))
    hovers = [f"hover {i}" for i in range(len(layers))]
    return viz_atlas.atlas_scatter(x, y, layers, heads, layers,
                                   [f"layer {la}" for la in range(n_layers)], hovers,
                                   "self", "a", "b", "t")


def test_placed_labels_stay_true_to_their_points_and_hover_is_kept():
    fig = _scatter()
    before = [(list(t.customdata), list(t.hovertext)) for t in fig.data]
    shown, total = viz_atlas.place_labels(fig, 850, 11)
    assert total == 144 and 0 < shown < total  # 144 clustered heads: not every label fits
    drawn = 0
    for trace, (data, hovers) in zip(fig.data, before):
        assert list(trace.hovertext) == hovers
        for text, (layer, head, *_rest) in zip(trace.text, data):
            assert text in ("", f"{layer}.{head}")
            drawn += bool(text)
    assert drawn == shown
    bigger = _scatter()
    assert viz_atlas.place_labels(bigger, 850, 18)[0] < shown  # presenter's font: fewer


def test_a_few_spread_heads_are_all_labelled():
    fig = _scatter(1, 3)
    for trace, x in zip(fig.data, ([0.0, 1.0, 2.0],)):
        trace.x, trace.y = x, [0.0, 1.0, 0.0]
    assert viz_atlas.place_labels(fig, 850, 11) == (3, 3)


def test_tick_plan_levels_tilts_or_thins_by_the_labels_width():
    font = 18.0
    assert viz_cache.tick_plan(["1:a", "2:b"], 100.0, font) == (0, 1)  # 30 px in 100 px
    assert viz_cache.tick_plan(["1:the", "2:cat"], 40.0, font) == (-45, 1)
    # one label much longer than its neighbour: 45° would bring their middles together
    assert viz_cache.tick_plan(["14:.", "15:[CLS]"], 27.0, font)[0] == -90
    angle, step = viz_cache.tick_plan(["1:the"] * 60, 8.0, font)
    assert angle == -90 and step * 8.0 >= viz_cache.LINE * font > (step - 1) * 8.0


def test_read_map_ticks_name_true_positions_in_order():
    tokens = [f"w{i}" for i in range(60)]
    z = np.random.default_rng(0).random((20, 60)).astype(np.float32)
    for font in (12, 18):
        fig = viz_cache.read_map_figure(z, tokens, ["x"] * 20, "t")
        labels = list(fig.data[0].x)
        viz_cache.fit_position_ticks(fig, 850, font)
        axis = fig.layout.xaxis
        assert list(axis.ticktext) == list(axis.tickvals)
        assert set(axis.tickvals) <= set(labels)
        where = [labels.index(v) for v in axis.tickvals]
        assert where == sorted(where) and where[0] == 0
        step = where[1] - where[0]
        assert all(b - a == step for a, b in zip(where, where[1:]))
        widest = CHAR_W * font * max(len(v) for v in labels)
        # a level axis only where the widest label fits; upright ones a line apart
        if axis.tickangle == 0:
            assert widest < 850 / len(labels)
        if axis.tickangle == -90:
            assert step > 1
