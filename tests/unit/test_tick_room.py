"""Tick labels on one axis never overlap (viz.common.fit_ticks): a label's width from
viz.plot_area.label_px against the widths Chromium draws, the overlap rule against the pairs
Chromium drew overlapping and clear, and the labels fit_ticks keeps against that rule with
Chromium's own widths."""

from __future__ import annotations

import numpy as np
import pytest

from viz.common import fit_ticks, heatmap, plotly_text
from viz.plot_area import label_px, labels_clear, plot_area

# SVG getBBox().width in px of each label, as Chromium draws it in the app's tick font (a
# drawn x tick label of lm's attention view cloned, level, its text replaced; Source Sans),
# at 12 px (normal mode) and 18 px (presenter mode). Measured by a script run once, by hand
DRAWN_PX = {
    "<s>": (16.99, 25.49), "▁read (2)": (48.41, 72.11), "riend (2)": (41.94, 62.91),
    "[CLS]": (26.11, 39.16), "13:▁book": (49.79, 74.68), "head 10": (39.39, 59.08),
    "layer 11": (39.15, 58.67), "l:": (6.06, 9.08), "s": (5.03, 7.55), "av (2)": (27.30, 40.94),
    "∅": (10.45, 15.69), "<pad>": (31.17, 46.75), "▁My": (24.95, 36.93), "11:s": (19.95, 29.92),
    "the (2)": (32.19, 48.27), "문장 2": (30.48, 45.72), "30522": (29.86, 44.78),
    "[SEP]": (26.80, 40.20),
}
SIZES = (12, 18)
BOX_EM = 16 / 12  # the same labels' box height: 16 px at 12 px, 24 px at 18 px

# (left label, right label, px between their ticks, font px, tickangle, overlapping?) as
# tests/browser/geometry.problems judged them in Chromium (tests/browser/test_geometry_ticks
# has the pages), before the fix: lm's masks view (third of the row, -45°, plotly's own dtick
# 5 over 3.28 px cells), lm's compare view presenting (-45°, dtick 2 of 14.29 px cells), GPT-2
# small's grid presenting (level, 35.15 px panels); after it, the neighbours drawn in place of
# those: every 6th piece on lm's masks view, every 2nd head on the grid
SEEN = [
    ("s", "av (2)", 16.4, 12, -45, True),
    ("11:s", "13:▁book", 28.58, 18, -45, True),
    ("head 0", "head 1", 35.15, 18, 0, True),
    ("<s>", "▁My", 19.68, 12, -45, False),
    ("head 0", "head 2", 70.3, 18, 0, False),
]


@pytest.mark.parametrize("size", SIZES)
def test_label_widths_are_the_ones_chromium_draws(size):
    for label, drawn in DRAWN_PX.items():
        px = drawn[SIZES.index(size)]
        # within 5 % and a pixel (Korean, wider than any table entry, is over, never under)
        assert abs(label_px(plotly_text(label), size) - px) <= 0.07 * px + 1.0, label


def _drawn_width(label: str, size: float) -> float:
    """A label's width as Chromium drew it; labels outside the table by their measured
    glyphs (head 0, head 1 ... as head 10 less a digit's 0.497 em)."""
    if label in DRAWN_PX:
        return DRAWN_PX[label][SIZES.index(size)]
    return DRAWN_PX["head 10"][SIZES.index(size)] - 0.497 * size


@pytest.mark.parametrize("left, right, apart, size, angle, overlapping", SEEN)
def test_the_overlap_rule_agrees_with_chromium(left, right, apart, size, angle, overlapping):
    clear = labels_clear(_drawn_width(left, size), _drawn_width(right, size), apart, size, angle)
    assert clear is not overlapping


def _check_clear(a: str, b: str, apart: float, size: float, angle: float) -> bool:
    """geometry.problems' own test on two neighbouring labels, from Chromium's widths: level
    boxes apart by more than a pixel's overlap; tilted boxes' middles 0.9 of the size apart
    (an end-anchored label's middle sits cos(angle) / 2 of its width from its tick)."""
    wa, wb = DRAWN_PX[a][SIZES.index(size)], DRAWN_PX[b][SIZES.index(size)]
    if angle == 0:
        return apart - (wa + wb) / 2 >= -1
    turn = np.radians(abs(angle))
    return apart - np.cos(turn) / 2 * abs(wb - wa) >= 0.9 * size


def test_fit_ticks_keeps_token_labels_apart_where_chromium_draws_them():
    """An 18-piece map a third of the row wide, its x labels at -45°: plotly's own thinning
    put them 16 px apart (lm's masks view: "s" met "av (2)"); fit_ticks keeps every k-th so
    that each pair kept passes the page check with the widths Chromium draws."""
    labels = [plotly_text(t) for t in DRAWN_PX]
    plain = list(DRAWN_PX)
    fig = heatmap(np.zeros((18, 18)), labels, labels, title="t", x_title="key",
                  y_title="query", height=340)
    width = 262.7
    fit_ticks(fig, width)
    area_w, area_h = plot_area(fig, width)
    for axis, cell, angle in ((fig.layout.xaxis, area_w / 18, -45), (fig.layout.yaxis,
                                                                      area_h / 18, 0)):
        assert axis.tickvals is not None and 2 <= len(axis.tickvals) < 18
        at = [labels.index(v) for v in axis.tickvals]
        for i, j in zip(at, at[1:]):
            apart = (j - i) * cell
            if angle:
                assert _check_clear(plain[i], plain[j], apart, 12, angle), (plain[i], plain[j])
            else:  # stacked: a box 16 px high, a pixel's overlap allowed
                assert apart >= BOX_EM * 12 - 1, (plain[i], plain[j])


def test_labels_that_fit_are_all_kept():
    """Eight short pieces across a full-width chart: nothing to thin, no tickvals set."""
    labels = ["a", "b", "c", "d", "e", "f", "g", "h"]
    fig = heatmap(np.zeros((8, 8)), labels, labels, title="t", x_title="key", y_title="query")
    fit_ticks(fig, 820)
    assert fig.layout.xaxis.tickvals is None and fig.layout.yaxis.tickvals is None
