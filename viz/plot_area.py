"""Where plotly.js will draw a heatmap figure's plot area, worked out from the figure alone.

viz.common.fit_cell_numbers needs a cell's size on screen to decide whether a number fits on
it, before the browser lays the figure out. plotly.js's layout, as far as that needs it: the
figure's height and width less its margins; a margin grows to hold an axis's tick labels and
title (automargin, at the fonts the figure sets: presenter mode's larger ones too) and the
colour bar; x's labels tilt where they would meet; and the margins give way so that the plot
area keeps 64 px (layout.minreducedheight/width). Within 6 px of the plot area Chromium drew,
in the page's Source Sans, for tokens-like, attention, tilted-label and layers x heads maps
at the widths the app draws them (tests/unit/test_cell_room.py, both modes). A fixed guess
(150 px of the height) gave a one-row map 10 px rows where Chromium draws 64 px.

Tick labels (viz.common.fit_ticks): how wide Chromium draws one (label_px, Source Sans glyph
widths), whether two neighbours overlap at their axis's angle (labels_clear), and every k-th
of an axis's labels that keeps them all clear (keep_every; tests/unit/test_tick_room.py).
"""

from __future__ import annotations

import html
import re

import numpy as np

PLOTLY_MARGIN = {"l": 80, "r": 80, "t": 100, "b": 80}  # plotly.js's own, where none is set
MIN_PLOT_PX = 64
CHAR_W = 0.55  # a label's character in font sizes, as viz.atlas and viz.cache reckon their boxes
# a tick label's character in font sizes: fitted to the margins Chromium drew in the page's
# Source Sans for the figures of tests/unit/test_cell_room.py, tick labels and colour bar (0.55
# left the plot 12-23 px narrower than drawn; 0.43 is within 5 px of every one there)
TICK_CHAR_W = 0.43
# Streamlit's gap between st.columns: 1rem, 16 px at the page's zoom (24 px presenting, where
# the main column is zoomed 1.5x). Measured in Chromium at 1280 px: charts in two columns of
# the 820 px row are 402 px wide, in three 262.7 px; in two of the 1040 px row presenting, 508
COLUMN_GAP_PX = 16


def _at(node, key: str):
    """node[key] of a dict or a plotly object, None where it is not set or not a property."""
    if isinstance(node, dict):
        return node.get(key)
    try:
        return node[key]
    except (KeyError, ValueError, TypeError):
        return None


def grid_shape(z) -> tuple[int, int]:
    """(rows, cols) of a heatmap's z: an array, nested lists, or plotly's binary dict."""
    if isinstance(z, dict):  # {"dtype", "bdata", "shape": "r, c"}
        dims = [int(n) for n in str(z.get("shape", "1,1")).split(",")]
    else:
        try:
            dims = list(np.shape(z)) if z is not None else [1, 1]
        except ValueError:  # ragged lists: the number of rows and the first row's length
            dims = [len(z), len(z[0]) if len(z) and hasattr(z[0], "__len__") else 1]
    dims = (dims + [1, 1])[:2]
    return max(1, dims[0]), max(1, dims[1])


def plain_layout(layout) -> dict:
    """A layout as a dict: a go.Layout's nested getters cost 8 ms a figure, a copy 0.1 ms."""
    return layout if isinstance(layout, dict) else {} if layout is None else \
        layout.to_plotly_json()


def setting(layout, *keys):
    """A layout's (or a trace's) setting at keys, else its template's; None where neither
    sets it. layout: a dict (plain_layout), or a trace as a dict or plotly object."""
    template = layout.get("template") if isinstance(layout, dict) else None
    for node in (layout, None if template is None else _at(template, "layout")):
        for key in keys:
            nested = node is not None and not isinstance(node, (str, int, float, list, tuple))
            node = _at(node, key) if nested else None
        if node is not None:
            return node
    return None


def _tick_labels(layout: dict, name: str, labels, n: int) -> tuple[int, int]:
    """(how many, characters of the longest) of an axis's tick labels: its ticktext, else the
    trace's labels, else plotly's 0 … n−1; an HTML escape (&lt;) is one character."""
    labels = setting(layout, name, "ticktext") or labels
    labels = labels if isinstance(labels, (list, tuple, np.ndarray)) else [n - 1]
    return len(labels), max((len(html.unescape(str(v))) for v in labels), default=1)


def _tilt(layout: dict, name: str, wide: float, spacing: float, tick: float) -> float:
    """x's label angle in radians (0 … π): x_angle's rule, level where labels `wide` px wide
    fit `spacing` px apart with nothing to spare."""
    return float(np.radians(abs(x_angle(layout, name, wide, spacing, tick, clear=0.0)) % 180))


def _axis_push(layout: dict, name: str, labels, n: int, spacing: float = 0.0
               ) -> tuple[float, float]:
    """(margin, overhang) an automargin axis needs in px: the margin on its side for its
    tick labels and title (x: a line high, or its labels tilted), and how far tilted x labels
    run past the plot's right edge."""
    if not setting(layout, name, "automargin"):
        return 0.0, 0.0
    base = setting(layout, "font", "size") or 12
    tick = setting(layout, name, "tickfont", "size") or base
    count, chars = _tick_labels(layout, name, labels, n)
    room = over = TICK_CHAR_W * tick * chars  # y: the labels' width
    if name[0] == "x":
        turn = _tilt(layout, name, room, spacing / max(1, count), tick)
        # a positive angle (plotly's auto tilt) hangs the last label past the right edge: its
        # box's corner, less the half cell between its tick and the edge
        angle = setting(layout, name, "tickangle")
        corner = room * np.cos(turn) + tick * np.sin(turn) - spacing / max(1, count) / 2
        over = max(0.0, corner) if turn and not isinstance(angle, (int, float)) else 0.0
        room = room * np.sin(turn) + tick * np.cos(turn)
    title = setting(layout, name, "title")
    if title if isinstance(title, str) else setting(layout, name, "title", "text"):
        room += ((setting(layout, name, "title", "standoff") or 0) + 5
                 + (setting(layout, name, "title", "font", "size") or base * 7 / 6))
    return (setting(layout, "margin", "pad") or 0) + room + 5, over


def plot_area(fig, width_px: float) -> tuple[float, float]:
    """(width, height) in px of the plot area plotly.js gives a figure with heatmaps (a
    go.Figure or its dict), width_px wide unless it sets a width of its own."""
    layout = plain_layout(_at(fig, "layout"))
    width, height = _at(layout, "width") or width_px, _at(layout, "height") or 450
    side = {k: setting(layout, "margin", k) for k in PLOTLY_MARGIN}
    side = {k: PLOTLY_MARGIN[k] if v is None else v for k, v in side.items()}
    maps = [t for t in _at(fig, "data") or [] if _at(t, "type") == "heatmap"]
    axes = [{c: c + "axis" + (_at(t, c + "axis") or c)[1:] for c in "xy"} for t in maps]
    for trace, name in zip(maps, axes):  # first the width: y's labels, the colour bar
        rows = grid_shape(_at(trace, "z"))[0]
        side["l"] = max(side["l"], _axis_push(layout, name["y"], _at(trace, "y"), rows)[0])
        if _at(trace, "showscale") is not False and not _at(trace, "coloraxis"):
            tick = setting(trace, "colorbar", "tickfont", "size") or setting(
                layout, "font", "size") or 12  # the bar 30 px, 10 px either side, at x 1.02
            bar = 60 + 3 * TICK_CHAR_W * tick + 0.02 * (width - side["l"])
            side["r"] = max(side["r"], bar / 1.02)
    plot_w = max(MIN_PLOT_PX, width - side["l"] - side["r"])
    for trace, name in zip(maps, axes):  # then x's labels, tilted where they would meet
        cols = grid_shape(_at(trace, "z"))[1]
        lo, hi = setting(layout, name["x"], "domain") or (0.0, 1.0)
        push, over = _axis_push(layout, name["x"], _at(trace, "x"), cols, plot_w * (hi - lo))
        if over:  # tilted: plotly.js lays out again with the overhang's margin, and turns the
            # labels upright where that narrower plot spaces them too close for 30° (the
            # masks view's 8 x 8 mask presenting, half of the 1040 px row: 90° drawn)
            narrower = max(MIN_PLOT_PX, width - side["l"] - max(side["r"], over))
            push, over = _axis_push(layout, name["x"], _at(trace, "x"), cols,
                                    narrower * (hi - lo))
        side["b"], side["r"] = max(side["b"], push), max(side["r"], over)
    return (max(MIN_PLOT_PX, width - side["l"] - side["r"]),
            max(MIN_PLOT_PX, height - side["t"] - side["b"]))


def column_width(row_px: float, share: float, zoom: float = 1.0) -> float:
    """The width in px a chart is drawn at when given `share` of a row row_px wide (1/3: one
    of three equal st.columns), less its part of the gaps between the columns; zoom: the
    column's CSS zoom (presenter mode's 1.5), which widens the gaps."""
    gap = COLUMN_GAP_PX * zoom
    return max(1.0, share * (row_px + gap) - gap)


# A character's advance in font sizes in the page's Source Sans, as Chromium draws a tick label
# (measured on the app's page by getComputedTextLength, a label cloned at 100 px): each group
# within 0.03 of its value. Anything else (Korean, CJK, symbols) is taken as a full em.
GLYPH_EM = {0.20: " ", 0.27: ".|':ij,;Il!-f", 0.31: "()[]{}t", 0.36: "/\\r",
            0.44: "*Y?sz\"cxyT", 0.50: "FevJLVXak0123456789#$+<=>E^_g~oZ",
            0.56: "SA`bdhpquPnCKRB", 0.63: "D&GOQUHN", 0.78: "wMW\u2581", 0.86: "%m@\u2205"}
_EM = {c: em for em, chars in GLYPH_EM.items() for c in chars}
UNKNOWN_EM = 1.0
# Chromium's text box in Source Sans is 1.33 of the size high (ascent and descent: 16 px at
# 12 px, 24 at 18, y tick labels measured on the masks and compare views); tilted
# labels' lines must be a line of ink (the size) apart across their slant, and the
# test_geometry check wants their boxes' middles 0.9 of the size apart along the axis
TEXT_BOX_EM = 1.33
SLANT_MID_EM = 0.9
CLEAR_PX = 2.0  # spare between two labels' boxes, for the glyph widths' rounding


def label_px(text: str, size: float) -> float:
    """How wide Chromium draws a tick label `text` (plotly markup and escapes as shown) at
    `size` px, from GLYPH_EM."""
    shown = html.unescape(re.sub(r"<[^>]*>", "", str(text)))
    return size * sum(_EM.get(c, UNKNOWN_EM) for c in shown)


def labels_clear(left_px: float, right_px: float, apart: float, size: float,
                 angle: float, along_y: bool = False) -> bool:
    """True when two neighbouring tick labels, left_px and right_px wide, whose ticks are
    `apart` px apart, do not overlap at font `size` and tickangle `angle` (degrees): y's
    labels stack a text box high; level x labels meet half their widths from their ticks;
    tilted ones are anchored at one end, so a longer label's middle slides cos(angle) / 2 of
    the difference towards its neighbour, and their slanted lines must be the size apart."""
    if along_y:  # boxes may touch by a pixel, as test_geometry's check allows
        return apart >= TEXT_BOX_EM * size - 1.0
    turn = np.radians(abs(angle) % 180)
    if turn < 1e-6:
        return apart >= (left_px + right_px) / 2 + CLEAR_PX
    slide = np.cos(turn) / 2 * abs(right_px - left_px)
    return (apart - slide >= SLANT_MID_EM * size + CLEAR_PX
            and apart * np.sin(turn) >= size)


def axis_categories(data, name: str) -> list[str] | None:
    """The categories a figure's traces put on axis `name` ("xaxis2"): the labels of the
    first trace on it whose x (or y) is a list of strings (a heatmap's pieces, a bar's names);
    None where no trace names any."""
    letter = name[0]
    ref = letter + name[5:]
    for trace in data or []:
        if (_at(trace, letter + "axis") or letter) != ref:
            continue
        labels = _at(trace, letter)
        if isinstance(labels, (list, tuple, np.ndarray)) and len(labels) and all(
                isinstance(v, str) for v in labels):
            return list(labels)
    return None


def category_px(layout: dict, data, names: list[str], width_px: float, drawn_h: float = 1.0
                ) -> dict[str, float]:
    """px from one category to the next on each named axis that carries categories: the plot
    area plotly.js draws (plot_area) times the axis's domain over its categories; an axis
    pinned to another (scaleanchor: square cells) and that one both the smaller. drawn_h:
    how many times its layout height the chart is drawn (presenter mode's zoom)."""
    fig = {"layout": {**layout, "height": (layout.get("height") or 450) * drawn_h},
           "data": data or []}
    area = dict(zip("xy", plot_area(fig, width_px)))
    cells = {}
    for name in names:
        cats = axis_categories(data, name)
        if cats:
            lo, hi = setting(layout, name, "domain") or (0.0, 1.0)
            cells[name] = area[name[0]] * (hi - lo) / len(cats)
    for name in names:
        anchor = setting(layout, name, "scaleanchor")
        other = f"{anchor[0]}axis{anchor[1:]}" if isinstance(anchor, str) and anchor else None
        if name in cells and other in cells:
            cells[name] = cells[other] = min(cells[name], cells[other])
    return cells


def x_angle(layout: dict, name: str, widest: float, apart: float, size: float,
            clear: float = CLEAR_PX) -> float:
    """x's label angle in degrees: its tickangle, else the one plotly.js picks for labels up
    to `widest` px wide `apart` px apart: level where they fit with `clear` px between them,
    30° where cos 30° <= apart / hypot(apart, 1.25 size) (plotly.js's autotickangles test:
    apart >= √3 × 1.25 size), else 90°. The plot-area estimate (_tilt) asks with clear 0."""
    angle = setting(layout, name, "tickangle")
    if isinstance(angle, (int, float)):
        return float(angle)
    if widest + clear <= apart:
        return 0.0
    return 30.0 if apart >= np.sqrt(3) * 1.25 * size else 90.0


def keep_every(layout: dict, name: str, labels: list[str], at_px: list[float],
               size: float, floor: float) -> int:
    """k such that every k-th of an axis's labels (at at_px along it) clears the next one kept
    (labels_clear, at the angle plotly.js draws them), at least `floor` px apart."""
    along_y = name[0] == "y"
    widths = [label_px(t, size) for t in labels]
    n = len(labels)
    for k in range(1, max(n, 1)):
        kept = list(range(0, n, k))
        widest = max(widths[i] for i in kept)
        ok = True
        for a, b in zip(kept, kept[1:]):
            apart = abs(at_px[b] - at_px[a])
            angle = 0.0 if along_y else x_angle(layout, name, widest, apart, size)
            if apart < floor or not labels_clear(widths[a], widths[b], apart, size, angle,
                                                 along_y):
                ok = False
                break
        if ok:
            return k
    return max(n, 1)


def tick_places(layout: dict, data: list, name: str, cell: float | None,
                size_px: tuple[float, float]) -> tuple[list, list[str], list[float]] | None:
    """(values, labels, px along the axis) of the tick labels axis `name` may show: the
    categories it names (tickvals and ticktext, as viz.common.thin_ticks writes them), else
    every category a trace puts on it; None where neither is known or its labels are hidden.
    cell: px from one category to the next (category_px), None where not known: the ticks
    then spread evenly over the figure (size_px: its width and height) less 150 and 160 px."""
    vals = setting(layout, name, "tickvals")
    cats = axis_categories(data, name)
    if vals is not None and len(vals) >= 2:
        text = setting(layout, name, "ticktext")
        labels = [str(v) for v in (text if text is not None and len(text) == len(vals)
                                   else vals)]
        where = [cats.index(v) if cats and v in cats else v for v in vals]
        if not all(isinstance(w, (int, float, np.integer, np.floating)) for w in where):
            return None
        if cell is not None:
            return list(vals), labels, [float(w) * cell for w in where]
        lo, hi = setting(layout, name, "domain") or (0.0, 1.0)
        room = ((size_px[1] - 160) if name[0] == "y" else (size_px[0] - 150)) * (hi - lo)
        return list(vals), labels, [i * room / len(vals) for i in range(len(vals))]
    if not cats or cell is None or setting(layout, name, "showticklabels") is False:
        return None
    if setting(layout, name, "type") != "category" and all(_numeric(c) for c in cats):
        return None  # plotly.js makes it a number line, spaced by the values: left to plotly
    return cats, cats, [i * cell for i in range(len(cats))]


def _numeric(text: str) -> bool:
    """True where plotly.js would read a category name as a number ("12", "-0.5")."""
    try:
        float(text)
    except ValueError:
        return False
    return True
