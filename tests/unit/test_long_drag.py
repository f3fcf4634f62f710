"""Long mode's drag-zoom (issue 38): a box dragged on a pooled map becomes the exact block."""

from __future__ import annotations

import numpy as np
import pytest

from viz.long import DRAG_GRID, box_region, drag_targets, pooled_figure

N = 16_384


def sel(x, y):
    return {"points": [], "point_indices": [], "box": [{"xref": "x", "yref": "y", "x": x, "y": y}],
            "lasso": []}


def test_a_box_opens_the_square_block_at_its_corner():
    # keys 100.3-600.7 cover cells 100..600, queries 2000.2-2100.9 cover 2000..2100: the block
    # is square, its side the longer span (501)
    assert box_region(sel([100.3, 600.7], [2000.2, 2100.9]), N) == (2000, 100, 501)


def test_the_drag_direction_does_not_matter():
    # the query axis is drawn reversed, so a downward drag gives y in either order
    assert box_region(sel([600.7, 100.3], [2100.9, 2000.2]), N) == (2000, 100, 501)


def test_a_box_larger_than_the_cap_opens_its_first_1024_cells():
    assert box_region(sel([0, 5000], [300, 9000]), N) == (300, 0, 1024)


def test_a_box_at_the_end_is_moved_back_to_fit():
    q0, k0, side = box_region(sel([16_000, 16_500], [15_000, 16_500]), N)
    assert side == 1024 and q0 == 15_000 and k0 == N - 1024
    assert k0 + side == N


def test_a_tiny_box_is_one_cell_and_a_short_text_caps_the_side():
    assert box_region(sel([7.2, 7.4], [9.1, 9.3]), N) == (9, 7, 1)
    assert box_region(sel([-5, 10], [-5, 10]), 3) == (0, 0, 3)


@pytest.mark.parametrize("selection", [
    None, {}, {"box": []}, {"box": [{}]}, {"box": [{"x": ["a", 1], "y": [0, 1]}]},
    {"box": [{"x": [float("nan"), 1], "y": [0, 1]}]}, {"box": [{"x": [1], "y": [0, 1]}]},
    {"box": [{"x": None, "y": [0, 1]}]}])
def test_no_box_or_a_malformed_one_opens_nothing(selection):
    assert box_region(selection, N) is None


def test_drag_targets_cover_the_map_without_hiding_its_hover():
    z = np.random.default_rng(0).random((512, 512)).astype(np.float32)
    fig = drag_targets(pooled_figure(z, N, "t"), N)
    heat, marks = fig.data
    assert heat.type == "heatmap" and marks.type == "scatter"
    assert len(marks.x) == DRAG_GRID ** 2 and marks.hoverinfo == "skip"
    assert 0 < min(marks.x) and max(marks.x) < N and 0 < min(marks.y) and max(marks.y) < N
    assert marks.marker.opacity == 0
    assert fig.layout.dragmode == "select"
