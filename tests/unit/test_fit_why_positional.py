"""What the why and positional figures set so that presenter mode draws them whole, checked
against what Chromium drew (tests/browser/test_geometry_why_positional.py draws them):

  * the composition maps' right margin holds "V-composition (random: 0.089)", 308 px wide at
    24 px, which ran 6.1 px past the chart's edge at plotly's margin of 10 px;
  * the rotary chart's log axes name powers of ten only (plotly.js's 2 and 5 between them
    are drawn at 0.75 of the tick font: 13.5 px presenting);
  * the positional colour bars carry fixed ticks: the ones plotly.js drew on minilm's table
    at 660 px, whatever the bar's length."""

from __future__ import annotations

import numpy as np
import pytest

from viz import positional, why
from viz.common import SCREEN_W

# measured in Chromium (paper, why view, presenter mode, 1040 px wide chart, left margin 47)
TITLE = "V-composition (random: 0.089)"
TITLE_DRAWN_PX = 308.0  # at 24 px
CUT_AT_R10 = 6.1  # px past the chart's edge with the margin r of 10
SHARE = (1 - 2 * why.MAP_SPACING) / 3  # the last map's part of the plot's width


def composition_scores(n_layers: int = 3, n_heads: int = 4) -> dict:
    """composition_scores' shape: per side and kind a (L, H, L, H) array, a baseline and the
    name of the earlier heads."""
    rng = np.random.default_rng(0)
    out = {s: {"dec_self": rng.random((n_layers, n_heads, n_layers, n_heads))}
           for s in why.SIDES}
    out["baseline"] = {s: {"dec_self": 0.089} for s in why.SIDES}
    out["earlier"] = {s: {"dec_self": "decoder"} for s in why.SIDES}
    return out


def test_the_last_title_is_estimated_no_narrower_than_drawn():
    assert why.text_px(TITLE, 24) >= TITLE_DRAWN_PX
    assert why.text_px("V 합성(무작위 기준: 0.089)", 24) > why.text_px("V 0.089", 24)


def test_presenting_the_right_margin_takes_back_the_cut():
    """A wider margin r narrows the last map too, so its centred title moves in by
    (1 - SHARE / 2) of it: the 6.1 px cut needs r >= 10 + 6.1 / (1 - SHARE / 2)."""
    fig = why.composition_figure(composition_scores(), "dec_self", 1, 0, 1040, 24)
    assert fig.layout.margin.r >= 10 + CUT_AT_R10 / (1 - SHARE / 2)
    assert fig.layout.annotations[-1].text == TITLE


def test_normal_mode_keeps_a_small_margin():
    fig = why.composition_figure(composition_scores(), "dec_self", 1, 0)
    assert 10 <= fig.layout.margin.r == max(10, why.right_margin([TITLE] * 3, SCREEN_W, 16))
    assert fig.layout.margin.r <= 30  # the maps keep their width
    assert fig.layout.margin.r < why.composition_figure(
        composition_scores(), "dec_self", 1, 0, 1040, 24).layout.margin.r


def test_rotary_log_axes_name_powers_of_ten_only():
    theta = 10000.0 ** (-np.arange(16) / 16)  # lm's: 1 ... 1.8e-4, wavelengths 6.3 ... 3.5e4
    fig = positional.rotary_frequencies(theta)
    assert (fig.layout.yaxis.type, fig.layout.yaxis2.type) == ("log", "log")
    assert (fig.layout.yaxis.dtick, fig.layout.yaxis2.dtick) == (1, 1)


@pytest.mark.parametrize("low, high, step", [(1e-4, 1.0, 1), (6.3, 3.5e4, 1),
                                             (1e-12, 1.0, 2), (1.0, 1.0, 1)])
def test_decade_step(low, high, step):
    assert positional.decade_step(np.array([low, high, np.nan, 0.0])) == step


def test_colour_bar_ticks_are_what_plotly_drew_at_full_length():
    """minilm's table (half width 1.874) presenting, drawn whole: -1.5 ... 1.5 by 0.5."""
    assert positional.bar_ticks(1.874) == [-1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5]
    table = np.linspace(-1.874, 1.874, 64 * 8).reshape(64, 8)
    bar = positional.table_heatmap(table).data[0].colorbar
    assert list(bar.tickvals) == positional.bar_ticks(1.874)
    assert bar.title.text == "value"


@pytest.mark.parametrize("half", [1e-9, 0.07, 0.9, 1.0, 3.0, 8.04, 64.2, 1e6])
def test_colour_bar_ticks_are_even_steps_inside_the_range(half):
    ticks = positional.bar_ticks(half)
    step = ticks[-1] - ticks[-2]
    assert ticks == [-t for t in reversed(ticks)] and 0.0 in ticks
    assert 1 <= len(ticks) // 2 <= positional.BAR_TICKS
    assert max(ticks) <= half and max(ticks) + step > half  # every whole step that fits
    mantissa = step / 10 ** np.floor(np.log10(step))
    assert any(np.isclose(mantissa, s) for s in positional.BAR_STEPS)
    np.testing.assert_allclose(np.diff(ticks), step, rtol=1e-9)
