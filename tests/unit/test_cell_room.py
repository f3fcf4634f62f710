"""Numbers on heatmap cells are shown whenever they fit and dropped only where they would not
(viz.common.fit_cell_numbers): a cell's size comes from the plot area plotly.js draws
(viz.plot_area), checked here against the plot areas Chromium drew for the same
figures, in normal and presenter mode. A one-row heatmap (the tokens view on one line) has
64 px rows and keeps its numbers; a 512 × 512 grid and a 64-piece attention map drop them."""

from __future__ import annotations

import numpy as np
import pytest

import ui.presenter as presenter
from viz.common import (
    CELL_CHAR_W,
    CELL_FONT_MIN_PX,
    CELL_FONT_PX,
    CELL_LINE_H,
    SCREEN_W,
    cell_font_px,
    heatmap,
    token_labels,
)
from viz.look import themed
from viz.plot_area import column_width, plot_area

# gd._fullLayout._size (w, h) of each figure below as plotly.py's bundled plotly.js laid it out
# in Chromium, in the page's Source Sans (Streamlit's own font file), at the size the app draws
# it: CHART_W wide (viz.plot_area.column_width of it for a share of the row) and, presenting,
# 1.5x its layout height (Streamlit sizes the chart's frame in the zoomed column). Measured by
# a script run once, by hand, for this table; the attention maps presenting again at the
# 440 px cap (ui.presenter.MAX_SINGLE_HEIGHT; 679 and 739 px high at the 600 px one); the
# heads map again with its title's margin (viz.common.title_margin; 90 and 188 px high when
# its wrapped lines ran over the top row)
DRAWN = {
    ("one_row", "normal"): (704, 64), ("one_row", "presenter"): (894, 96),
    ("tall_rows", "normal"): (663, 259), ("tall_rows", "presenter"): (860, 440),
    ("attention_20", "normal"): (651, 418), ("attention_20", "presenter"): (843, 499),
    ("attention_64", "normal"): (651, 758), ("attention_64", "presenter"): (843, 499),
    ("tilted", "normal"): (265, 153), ("tilted", "presenter"): (327, 281),
    ("stat_map", "normal"): (261, 100), ("stat_map", "presenter"): (347, 167),
    ("many_cols", "normal"): (673, 166), ("many_cols", "presenter"): (874, 300),
}
# a chart's width (gd._fullLayout.width) in the app in Chromium, per mode and share of the
# row: the attention view's full-width heatmap (1280 x 800; 1280 x 720 presenting), the heads
# view's maps two to a row, the masks view's three (normal mode)
CHART_W = {("normal", 1.0): 820, ("normal", 1 / 2): 402, ("normal", 1 / 3): 262.7,
           ("presenter", 1.0): 1040, ("presenter", 1 / 2): 508}
TOLERANCE_PX = 6


def one_row() -> object:
    """The tokens view's padded-ids heatmap on one line: one row of ids, 12 columns."""
    ids = np.arange(101, 113)[None, :]
    fig = heatmap(np.zeros(ids.shape, dtype=np.float32), [str(j) for j in range(12)],
                  ["sentence 1"], title="Padded encoder input ids, shape (bs=1, n=12)",
                  x_title="position in the padded batch", y_title="sentence",
                  colorscale=[[0, "#dbe9f6"], [1, "#4d4d4d"]], zmin=0, zmax=1,
                  text=np.array([[str(i) for i in ids[0]]], dtype=object), height=160)
    fig.update_traces(showscale=False)
    return fig


def square_map(n: int, height: int | None = None) -> object:
    """An n × n attention-like map with two-decimal numbers (no TEXT_MAX cut: the fit
    alone decides)."""
    z = np.random.default_rng(n).random((n, n))
    labels = [f"tok{i}" for i in range(n)]
    return heatmap(z, labels, labels, title="attention", x_title="key", y_title="query",
                   numbers=True, text_max=10**6, height=height)


def tall_rows() -> object:
    """12 rows of 6: 21.6 px rows, room for 12 px numbers; presenting, drawn 1.5x as high, 37
    px rows, room for 18 px ones too."""
    z = np.random.default_rng(1).random((12, 6))
    return heatmap(z, list("abcdef"), [f"r{i}" for i in range(12)], title="t",
                   x_title="x", y_title="y", numbers=True, height=384)


def stat_map() -> object:
    """The heads view's entropy map of a 3-layer, 4-head model (two to a row, with its click
    targets): presenting, fitted at the layout's height, its 62 px rows were taken for 21."""
    from viz import heads
    from viz.click import cell_targets

    z = np.random.default_rng(3).random((3, 4)) + 0.9
    return cell_targets(heads.stats_heatmaps({"entropy": z}, "enc_self")[0], "click")


def many_cols() -> object:
    """3 rows of 18 columns: a 37 px cell holds a 12 px "0.423" (36 px by the rule) but not an
    18 px one (54 px) in its 48.6 px presenting."""
    z = np.random.default_rng(2).random((3, 18))
    return heatmap(z, [f"c{i}" for i in range(18)], ["a", "b", "c"], title="t",
                   x_title="x", y_title="y", numbers=True, fmt=".3f", height=300)


def tilted() -> object:
    """The masks view's 8 × 8 decoder mask in half a row: its x labels (escaped markup:
    "&lt;pad&gt; (3)" draws 9 characters) meet, and plotly.js tilts them by 30°."""
    labels = token_labels(["<s>", "▁Winter", "▁is", "▁cold", ".", "<pad>", "<pad>", "<pad>"])
    mask = np.triu(np.ones((8, 8), dtype=bool), k=1)
    fig = heatmap(mask.astype(np.uint8), labels, labels, title="Decoder mask (8, 8)",
                  x_title="key (attended to)", y_title="query (attending)",
                  colorscale=[[0, "#f2f2f2"], [1, "#3b3b3b"]], zmin=0, zmax=1,
                  text=np.where(mask, "True", "False").astype(object))
    fig.update_traces(showscale=False)
    return fig


# each figure's builder and the share of the row ui.common.chart gives it
FIGURES = {"one_row": (one_row, 1.0), "tall_rows": (tall_rows, 1.0),
           "attention_20": (lambda: square_map(20), 1.0),
           "attention_64": (lambda: square_map(64), 1.0), "tilted": (tilted, 0.5),
           "stat_map": (stat_map, 0.5), "many_cols": (many_cols, 1.0)}


def drawn(name: str, mode: str, monkeypatch) -> tuple[dict | object, float]:
    """The figure as ui.common.chart sends it in a mode (for_screen on the themed figure)
    and the width it is laid out at."""
    monkeypatch.setattr(presenter, "presenting", lambda: mode == "presenter")
    build, share = FIGURES[name]
    fig = presenter.for_screen(themed(build()), share)
    if mode == "normal":
        return fig, column_width(SCREEN_W, share)
    # as Streamlit draws it presenting: 1.5x the layout's height
    layout = fig["layout"]
    fig = {**fig, "layout": {**layout, "height": (layout.get("height") or 450) * presenter.ZOOM}}
    return fig, column_width(presenter.PLOT_WIDTH, share, presenter.ZOOM)


def trace_of(fig) -> dict:
    trace = (fig["data"] if isinstance(fig, dict) else fig.data)[0]
    return trace if isinstance(trace, dict) else trace.to_plotly_json()


@pytest.mark.parametrize("key", sorted(DRAWN), ids=lambda k: "-".join(k))
def test_the_plot_area_is_the_one_chromium_draws(key, monkeypatch):
    fig, width = drawn(*key, monkeypatch)
    est, real = plot_area(fig, width), DRAWN[key]
    assert abs(est[0] - real[0]) <= TOLERANCE_PX and abs(est[1] - real[1]) <= TOLERANCE_PX, \
        (est, real)


@pytest.mark.parametrize("key", sorted(DRAWN), ids=lambda k: "-".join(k))
def test_cells_get_the_size_chromiums_cells_allow(key, monkeypatch):
    """The size (or no numbers) is the one cell_font_px gives cells of the drawn plot area."""
    fig, _width = drawn(*key, monkeypatch)
    trace = trace_of(fig)
    text = np.asarray(FIGURES[key[0]][0]().data[0].text, dtype=object)
    rows, cols = text.shape
    normal = (CELL_FONT_PX, CELL_FONT_MIN_PX)
    size, least = (presenter.MIN_PX,) * 2 if key[1] == "presenter" else normal
    w, h = DRAWN[key]
    want = cell_font_px(w / cols, h / rows, max(len(str(t)) for t in text.ravel()),
                        size=size, min_px=least)
    if want is None:
        assert trace.get("texttemplate") == "", trace.get("textfont")
    else:
        assert trace.get("texttemplate") == "%{text}"
        assert trace.get("textfont", {}).get("size") == want


def test_a_one_row_heatmap_keeps_its_numbers_in_both_modes(monkeypatch):
    for mode, size in (("normal", CELL_FONT_PX), ("presenter", presenter.MIN_PX)):
        trace = trace_of(drawn("one_row", mode, monkeypatch)[0])
        assert trace["texttemplate"] == "%{text}" and trace["textfont"]["size"] == size, mode
        assert [str(t) for t in np.asarray(trace["text"], dtype=object)[0]] == [
            str(i) for i in range(101, 113)]


def test_presenter_mode_needs_cells_for_its_larger_numbers(monkeypatch):
    normal = trace_of(drawn("many_cols", "normal", monkeypatch)[0])
    present = trace_of(drawn("many_cols", "presenter", monkeypatch)[0])
    assert normal["texttemplate"] and normal["textfont"]["size"] == CELL_FONT_PX
    assert present["texttemplate"] == ""  # 48.6 px cells hold no 18 px "0.423" (54 px)


@pytest.mark.parametrize("mode, share", sorted(CHART_W), ids=str)
def test_the_width_fitted_is_the_width_chromium_draws(mode, share):
    """The width for_screen fits a chart to (the mode's constant, less the column gaps) is the
    width the app's charts were drawn at; SCREEN_W's 850 and PLOT_WIDTH's 1200 were 30 and
    160 px more than drawn."""
    fitted = column_width(SCREEN_W, share) if mode == "normal" else column_width(
        presenter.PLOT_WIDTH, share, presenter.ZOOM)
    assert abs(fitted - CHART_W[mode, share]) <= 1, (fitted, CHART_W[mode, share])


def test_the_heads_views_maps_keep_their_numbers_presenting(monkeypatch):
    """Its 3 x 4 maps are drawn 167 px high presenting (55.7 px rows): fitted at the layout's
    254 px they were taken for 21.3 px rows and dropped their numbers. The numbers are the
    map's own two-decimal values."""
    fig, _width = drawn("stat_map", "presenter", monkeypatch)
    trace = trace_of(fig)
    assert trace["texttemplate"] == "%{text}" and trace["textfont"]["size"] == presenter.MIN_PX
    z = np.asarray(stat_map().data[0].z, dtype=float)
    assert np.asarray(trace["text"], dtype=object).tolist() == [
        [f"{v:.2f}" for v in row] for row in z]


def test_big_grids_drop_their_numbers(monkeypatch):
    for mode in ("normal", "presenter"):
        assert trace_of(drawn("attention_64", mode, monkeypatch)[0])["texttemplate"] == ""
    monkeypatch.setattr(presenter, "presenting", lambda: False)
    z = np.full((512, 512), 0.5, dtype=np.float32)
    text = np.full(z.shape, "0.50", dtype=object)
    fig = heatmap(z, [str(i) for i in range(512)], [str(i) for i in range(512)], title="t",
                  x_title="x", y_title="y", text=text, text_max=10**6)
    w, h = plot_area(themed(fig), SCREEN_W)
    assert w / 512 < 2 and h / 512 < 2  # cells of a pixel or two
    assert presenter.for_screen(fig).data[0].texttemplate == ""


# the width (getBBox) Chromium draws number strings the maps write at a font size in px, in the
# page's Source Sans (Streamlit's own font file, an SVG <text> as plotly.js writes a cell's
# number). Measured by a script run once, by hand, for this table
NUMBER_W = {
    ("0.12", 9): 16.19, ("0.12", 10): 17.43, ("0.12", 12): 20.92, ("0.12", 18): 31.37,
    ("1.00", 12): 20.92, ("10.23", 12): 26.88, ("10.23", 18): 40.32,
    ("-0.5", 12): 18.68, ("-0.5", 18): 28.03, ("-0.50", 12): 24.65, ("-1e9", 9): 16.74,
    ("-1e9", 12): 21.65, ("+0.123", 12): 32.84, ("+0.123", 18): 49.27, ("0.123", 18): 40.32,
    ("101", 9): 13.42, ("101", 18): 26.84, ("30522", 9): 22.89, ("30522", 12): 29.86,
    ("0", 9): 5.0, ("0", 18): 9.0, ("True", 12): 22.57, ("False", 18): 38.49,
}


# the height of that text box (getBBox, any of the strings) per font size: 1.333 of the size
NUMBER_H = {9: 12.0, 12: 16.0, 18: 24.0}


@pytest.mark.parametrize("px", sorted(NUMBER_H))
def test_a_number_never_gets_a_size_whose_box_overflows_its_row(px):
    """A row less than 1 px taller than the number's drawn box is too short for its size (1.25
    of the size a line gave a 12 px number, 16 px high, a 15 px row)."""
    got = cell_font_px(1000, NUMBER_H[px] + 0.99, 4, size=px, min_px=1)
    assert got is None or got < px, (px, got)


@pytest.mark.parametrize("text, px", sorted(NUMBER_W), ids=str)
def test_a_number_never_gets_a_size_it_would_overflow(text, px):
    """A cell one px wider than the number drawn at px is too narrow for that size: the rule
    keeps more than 1 px to spare around every number it writes."""
    got = cell_font_px(NUMBER_W[text, px] + 1, 1000, len(text), size=px, min_px=1)
    assert got is None or got < px, (text, px, got)


def test_the_character_width_is_the_drawn_one_with_a_small_margin():
    """CELL_CHAR_W is the widest character of the table (whole-pixel digits at 9 px) rounded
    up by at most 0.02 of the size: 0.6 was 0.15 wider than a "0.12"'s characters."""
    widest = max(w / px / len(t) for (t, px), w in NUMBER_W.items() if len(t) > 1)
    assert widest <= CELL_CHAR_W <= widest + 0.02, (widest, CELL_CHAR_W)


def test_knife_edge_cells_keep_their_numbers():
    """lm's 25 x 25 attention map: 25.07 px cells estimated (25.24 drawn); with 0.6 a character
    "0.12" got 8.95 px, under the 9 px minimum, and all 625 numbers were dropped. The lm heads
    view's distance map presenting: 57 px cells, an 18 px "10.23" needed 61 px by the rule. Both
    now write their numbers, with room to spare in the cell Chromium draws."""
    px = cell_font_px(25.07, 24.1, len("0.12"))
    assert px is not None and px >= CELL_FONT_MIN_PX, px
    assert NUMBER_W["0.12", int(px)] + 1 <= 25.07, px
    big = cell_font_px(57, 57, len("10.23"), size=presenter.MIN_PX, min_px=presenter.MIN_PX)
    assert big == presenter.MIN_PX and NUMBER_W["10.23", 18] + 1 <= 57


def test_a_presenting_single_heatmap_fits_below_the_header(monkeypatch):
    """A tall single heatmap presenting is capped so that Chromium's 1.5x drawing of it fits a
    720 px screen below Streamlit's 60 px header: the 600 px cap was drawn 900 px high. Its
    cells are fitted at that drawn height: a 25 x 25 map's 18 px numbers need rows it lacks."""
    monkeypatch.setattr(presenter, "presenting", lambda: True)
    spec = presenter.for_screen(themed(square_map(25, height=760)))
    assert spec["layout"]["height"] * presenter.ZOOM <= presenter.SCREEN_H - presenter.HEADER_PX
    drawn_h = plot_area({**spec, "layout": {**spec["layout"], "height": spec["layout"]["height"]
                                            * presenter.ZOOM}}, presenter.PLOT_WIDTH)[1]
    fits = drawn_h / 25 >= CELL_LINE_H * presenter.MIN_PX
    assert (spec["data"][0]["texttemplate"] != "") == fits, (drawn_h, spec["layout"]["height"])


def test_a_presenting_heatmap_under_click_targets_fits_below_the_header(monkeypatch):
    """One heatmap with a scatter of click targets on its cells (the attention view's
    every-layer grid, drawn 976 px high on a 720 px screen; a 12-layer heads map, 1029) is
    capped as a single heatmap is, and its numbers are fitted at the drawn height: each kept
    number's row is CELL_LINE_H of its size high."""
    from viz import heads
    from viz.click import cell_targets

    monkeypatch.setattr(presenter, "presenting", lambda: True)
    z = np.random.default_rng(4).random((12, 4)) + 0.9
    fig = cell_targets(heads.stats_heatmaps({"entropy": z}, "enc_self")[0], "click")
    assert fig.layout.height * presenter.ZOOM > presenter.SCREEN_H  # uncapped: too tall
    spec = presenter.for_screen(themed(fig), 0.5)
    height = spec["layout"]["height"] * presenter.ZOOM
    assert height <= presenter.SCREEN_H - presenter.HEADER_PX
    drawn_h = plot_area({**spec, "layout": {**spec["layout"], "height": height}},
                        column_width(presenter.PLOT_WIDTH, 0.5, presenter.ZOOM))[1]
    fits = drawn_h / 12 >= CELL_LINE_H * presenter.MIN_PX
    assert (spec["data"][0]["texttemplate"] != "") == fits, drawn_h
