"""A chart's title, wrapped to its width (viz.common.fit_title), is drawn above the plot area in
both modes: the top margin holds every line at the title's font (viz.common.title_margin).
Presenting, the heads view's maps drew their wrapped definition over the top row of cells (the
margin grew 1.15 of the size a wrapped line, from a title whose first line sits mid-margin)."""

from __future__ import annotations

import numpy as np
import pytest

import ui.presenter as presenter
from viz import heads
from viz.click import cell_targets
from viz.common import heatmap, title_margin
from viz.look import themed

# the bottom of the title's text box below the chart's top edge (getBoundingClientRect) and its
# line count, as plotly.py's bundled plotly.js drew these figures in Chromium in the page's
# Source Sans, at the widths and heights the app draws them; measured once, by hand, with the
# title placed as fit_title places it (top-anchored, pad TITLE_PAD of the size)
DRAWN_BOTTOM = {
    ("entropy", "normal"): (4, 80.7), ("entropy", "presenter"): (4, 125.0),
    ("distance", "normal"): (3, 59.9), ("distance", "presenter"): (4, 125.0),
    ("special_share", "normal"): (4, 80.7), ("special_share", "presenter"): (5, 157.5),
    ("one_line", "normal"): (1, 26.2), ("one_line", "presenter"): (1, 40.5),
}
GAP_PX = 2  # the least room between a title's box and the plot area


def stat_map(metric: str):
    """The heads view's map of a metric for a 3-layer, 4-head model (two to a row)."""
    z = np.random.default_rng(3).random((3, 4)) + 0.9
    return cell_targets(heads.stats_heatmaps({metric: z}, "enc_self")[0], "click"), 0.5


def one_line():
    z = np.random.default_rng(0).random((5, 5))
    return heatmap(z, list("abcde"), list("abcde"), title="Attention weights, one line",
                   x_title="k", y_title="q", numbers=True), 1.0


def shown(name: str, mode: str, monkeypatch) -> dict:
    """The figure's layout as ui.common.chart sends it in a mode."""
    monkeypatch.setattr(presenter, "presenting", lambda: mode == "presenter")
    fig, share = one_line() if name == "one_line" else stat_map(name)
    out = presenter.for_screen(themed(fig), share)
    return out["layout"] if isinstance(out, dict) else out.layout.to_plotly_json()


@pytest.mark.parametrize("key", sorted(DRAWN_BOTTOM), ids=lambda k: "-".join(k))
def test_the_top_margin_holds_every_title_line(key, monkeypatch):
    layout = shown(*key, monkeypatch)
    lines, bottom = DRAWN_BOTTOM[key]
    title = layout["title"]
    assert len(title["text"].split("<br>")) == lines, title["text"]
    assert (title.get("y"), title.get("yanchor"), title.get("yref")) == (1.0, "top",
                                                                         "container")
    assert layout["margin"]["t"] >= bottom + GAP_PX, (layout["margin"], bottom)
    # a margin grown for the lines grows no more than that: the plot keeps its room (under a
    # line of the title's size spare; one line keeps the figure's own 60 px)
    size = (title.get("font") or {}).get("size") or 16  # normal mode: the template's 16
    assert lines == 1 or layout["margin"]["t"] - bottom <= size, (layout["margin"], bottom)


def test_each_line_and_a_larger_font_take_more_margin():
    sup = ["a", "<sup>b</sup>", "<sup>c</sup>"]
    assert title_margin(sup, 16) < title_margin(sup + ["<sup>d</sup>"], 16)
    assert title_margin(sup, 16) < title_margin(sup, 25)
    # a plain last line hangs below its baseline, a <sup> one ends above it
    assert title_margin(["a", "b"], 16) > title_margin(["a", "<sup>b</sup>"], 16)
    assert title_margin(sup, 16, above=20) == title_margin(sup, 16) + 20


def test_a_figure_that_places_its_title_keeps_it(monkeypatch):
    monkeypatch.setattr(presenter, "presenting", lambda: False)
    fig, _share = one_line()
    fig.update_layout(title={"y": 0.9, "yanchor": "middle"}, margin={"t": 60})
    out = presenter.for_screen(themed(fig), 1.0)
    assert out.layout.title.y == 0.9 and out.layout.margin.t == 60
