"""The three width rules of issue 59, one place each (viz/common.py), checked on figures
without a browser (tests/browser/test_geometry.py checks what Chromium draws): colour scales
are sent as explicit colours, numbers on cells get a fixed size or none, a shape on a
category axis sits at the category's index; titles and ticks fit the width a chart gets."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from viz.common import (
    CELL_FONT_MIN_PX,
    DIVERGING,
    cell_font_px,
    fit_cell_numbers,
    fit_ticks,
    fit_title,
    heatmap,
)


def test_a_diverging_heatmap_sends_the_same_colours_both_ways():
    fig = heatmap(np.array([[-1.0, 1.0]]), ["a", "b"], ["q"], title="t", x_title="x",
                  y_title="y", colorscale=DIVERGING, zmid=0)
    normal = [list(p) for p in fig.data[0].colorscale]  # what the page sends as it is
    # presenter mode sends the dict, which plotly.py validates (and would expand a name)
    presenter = [list(p) for p in go.Figure(fig.to_dict()).data[0].colorscale]
    assert normal == presenter
    red, _g, blue = (int(v) for v in normal[-1][1][4:-1].split(","))
    assert red > blue  # the pages say "red = ..." for the high end


def test_cell_numbers_get_a_fixed_size_or_none():
    z = np.arange(49, dtype=float).reshape(7, 7) / 49
    narrow = heatmap(z, list("abcdefg"), list("hijklmn"), title="t", x_title="x",
                     y_title="y", numbers=True, height=300)
    fit_cell_numbers(narrow, 280)  # a third of the page: 11 px wide cells for "0.02"
    assert narrow.data[0].texttemplate == ""
    wide = heatmap(z, list("abcdefg"), list("hijklmn"), title="t", x_title="x",
                   y_title="y", numbers=True, height=400)
    fit_cell_numbers(wide, 850)
    size = wide.data[0].textfont.size
    cell_w, cell_h = (850 - 200) / 7, (400 - 150) / 7
    assert size == cell_font_px(cell_w, cell_h, 4) and size >= CELL_FONT_MIN_PX


def test_the_training_chart_marks_the_phase_change_at_its_column():
    from viz.training import heads_steps_figure

    class History:
        steps = np.array([0, 100, 200, 300])
        heads = {"induction": np.random.default_rng(0).random((4, 2, 2))}

        def at(self, step):
            return int(np.argmin(np.abs(self.steps - step)))

    fig = heads_steps_figure(History(), "induction", "induction", 200)
    x = list(fig.data[0].x)
    assert fig.layout.shapes[0].x0 == x.index("200")  # not "200", which plotly.js reads as 200


def test_titles_break_to_fit_a_half_width_chart():
    words = "mean weight on the previous piece, over every real query of every sentence here"
    fig = go.Figure(layout={"title": {"text": f"a: b<br><sup>{words}</sup>"},
                            "margin": {"t": 60}})
    fit_title(fig, 415)
    lines = fig.layout.title.text.split("<br>")
    assert len(lines) > 2 and all(len(x) <= 70 for x in lines)
    assert " ".join(x.removeprefix("<sup>").removesuffix("</sup>") for x in lines[1:]) == words
    assert fig.layout.margin.t > 60  # room for the extra lines


def test_ticks_are_thinned_for_the_width_a_chart_gets():
    labels = [str(i) for i in range(128)]
    fig = heatmap(np.zeros((4, 128)), labels, list("abcd"), title="t", x_title="x",
                  y_title="y")
    full = len(fig.layout.xaxis.tickvals)
    fit_ticks(fig, 850 * 0.75)
    kept = fig.layout.xaxis.tickvals
    assert len(kept) < full
    assert (850 * 0.75 - 150) / len(kept) >= 14  # labels at least 14 px apart
