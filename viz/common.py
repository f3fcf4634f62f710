"""Shared figure helpers: token labels, the labelled heatmap, colour scales, downsampling.

Every view builds its figures from these so that labels, hover text and colour ranges look
and behave the same everywhere. Nothing here imports streamlit or runs the model.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas  # noqa: F401 - see below
import PIL.Image  # noqa: F401
import plotly.colors
import plotly.graph_objects as go

from model.masks import MASK_FILL  # blocked scores; cell_text prints them as "-1e9"

from .i18n import _
from .look import TEMPLATE  # the page's one template, with its look (viz/look.py)
from .plot_area import (
    category_px,
    grid_shape,
    keep_every,
    plain_layout,
    plot_area,
    setting,
    tick_places,
)

# pandas and PIL.Image are imported here, fully, before any figure is built: plotly's validators
# and JSON encoder look them up in sys.modules without importing them, so while one session's
# thread is still importing pandas (st.dataframe does it lazily) another session's figure saw a
# half-initialised module and failed ("partially initialized module 'pandas' has no attribute
# 'Series'") on a freshly started server with several users at once.

# Colour-blind-safe sequential scales for probabilities, a diverging one for signed values.
SEQUENTIAL = ("Viridis", "Cividis", "Plasma", "Greys")
# Signed values: blue below 0, white at 0, red above ("red = the model needs the head", "red =
# promoted"). Sent as explicit colours, never as a name: plotly.js and plotly.py know "RdBu"
# (and "Greys") in opposite directions, so a name flipped between the normal page (plotly.js
# reads it) and presenter mode (plotly.py expands it) - issue 59.
DIVERGING = plotly.colors.get_colorscale("RdBu_r")
MASK_COLOURS = [[0.0, "#f2f2f2"], [1.0, "#3b3b3b"]]  # False light, True (blocked) dark
TEXT_MAX = 40  # above this many rows or columns, heatmaps drop per-cell numbers
HOVER = "query: %{y}<br>key: %{x}<br>value: %{z:.4f}<extra></extra>"  # value_hover() in English

# px a full-width chart is drawn at in the wide layout of a 1280 x 800 window, sidebar open:
# gd._fullLayout.width of the attention view's heatmap in Chromium (it was 850, 30 px more)
SCREEN_W = 820
TEXT_MIN_PX = 18  # numbers are written on cells only from this size up (issue 30)
CELL_FONT_PX = 12  # a cell's number in normal mode (plotly.js would shrink it to fit: 5 px)
CELL_FONT_MIN_PX = 9  # below this a number is unreadable: the cell keeps only its hover
# a cell number's character in font sizes: the widest per character of the strings the maps
# write ("0.12", "10.23", "-0.5", "+0.123", "-1e9", ids like "30522", "True") as Chromium draws
# them in the page's Source Sans at 9-18 px: 0.509 ("30522" at 9 px, whole-pixel digits; "0.12"
# 0.45, "-0.5" 0.40), rounded up. It was 0.6, a digit and a half of "." too wide: lm's 25 x 25
# attention map (25.2 px cells) dropped all its numbers. cell_font_px adds 0.4 of the size as
# the cell's spare, so a number never touches its cell's edges (tests/unit/test_cell_room.py)
CELL_CHAR_W = 0.52
# a cell number's line in font sizes: Chromium's text box in Source Sans is 1.333 of the size
# high (its ascent and descent), and a 9 px number keeps 1 px of its cell to spare at 1.45
# (1.25 let a 12 px number's 16 px box overflow a 15 px row)
CELL_LINE_H = 1.45
TICK_MIN_PX = 14  # long token axes label every k-th piece so labels are this far apart

PAD_LABEL = "<pad>"
DOWNLOAD_FORMATS = ("svg", "png")


def numbers_fit(n_rows: int, n_cols: int, height_px: float, width_px: float) -> bool:
    """True when a cell of an n_rows × n_cols heatmap is at least TEXT_MIN_PX on screen."""
    return min(height_px / max(1, n_rows), width_px / max(1, n_cols)) >= TEXT_MIN_PX


def colour_scale(scale: str | list) -> list:
    """A colour scale as explicit [position, colour] pairs, the one form both modes send:
    a name is looked up in plotly.py's registry ("Viridis", "Greys", "RdBu_r"...)."""
    if isinstance(scale, str):
        return plotly.colors.get_colorscale(scale)
    return [list(pair) for pair in scale]


def cell_font_px(cell_w: float, cell_h: float, text_len: int, *, size: float = CELL_FONT_PX,
                 min_px: float = CELL_FONT_MIN_PX) -> float | None:
    """The font size a heatmap cell's number gets: `size`, less where the cell is too small
    (a character CELL_CHAR_W of the size wide, a line CELL_LINE_H high), None when that would
    be under min_px (the number is then dropped; the hover still has it). The one rule for
    numbers on cells, in both modes."""
    fit = min(size, cell_h / CELL_LINE_H, cell_w / (CELL_CHAR_W * max(1, text_len) + 0.4))
    return float(np.floor(fit)) if fit >= min_px else None


def _get(node, key: str):
    """node[key] of a plotly object or its dict, None where it is not set."""
    if isinstance(node, dict):
        return node.get(key)
    try:
        return node[key]
    except (KeyError, ValueError):
        return None


def fit_cell_numbers(fig, width_px: float, *, size: float = CELL_FONT_PX,
                     min_px: float = CELL_FONT_MIN_PX) -> None:
    """cell_font_px on every heatmap of a figure (a go.Figure or its dict), in place: each
    trace that writes numbers on its cells gets a fixed font size, or no numbers at all.

    A cell is the plot area plotly.js will draw (viz.plot_area; width_px: the width the page
    gives the chart) times its axes' domains over the trace's columns and rows, square where
    an axis is pinned to the other."""
    layout = plain_layout(_get(fig, "layout"))
    area = plot_area(fig, width_px)
    for trace in _get(fig, "data") or []:
        if _get(trace, "type") != "heatmap" or not _get(trace, "texttemplate"):
            continue
        rows, cols = grid_shape(_get(trace, "z"))
        cell, square = [], False
        for letter, n, room in (("x", cols, area[0]), ("y", rows, area[1])):
            name = letter + "axis" + (_get(trace, letter + "axis") or letter)[1:]
            lo, hi = setting(layout, name, "domain") or (0.0, 1.0)
            cell.append(room * (hi - lo) / n)
            square = square or bool(setting(layout, name, "scaleanchor"))
        if square:  # plotly shrinks the longer side's domain until cells are square
            cell = [min(cell)] * 2
        text = _get(trace, "text")
        longest = 5 if text is None else max(
            (len(str(t)) for t in np.ravel(np.asarray(text, dtype=object))), default=1)
        px = cell_font_px(cell[0], cell[1], longest, size=size, min_px=min_px)
        if px is None:
            trace["texttemplate"] = ""  # too small to read: the hover keeps the number
        else:
            trace["textfont"] = {"size": px}


def _wrap_words(text: str, fits: int) -> list[str]:
    """text broken at spaces into lines of at most `fits` characters (a longer word stays)."""
    lines, line = [], ""
    for word in text.split(" "):
        if line and len(line) + 1 + len(word) > fits:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return lines + [line]


# a title's lines as Chromium draws them in Source Sans, in title font sizes (tests/browser/
# test_geometry.py measures each chart's title box against its plot area): top-anchored in the
# container, the first baseline is the title's pad below the chart's edge, and plotly.js puts
# each line 1.3 below the one before (LINE_SPACING, of the title's own size, <sup> lines too);
# a bold line's box reaches 1.0 above its baseline and 0.34 below, a <sup> line's ends 0.17
# above its baseline (0.1 here, for spare). From y "auto" (the first baseline mid-margin, the
# margin grown 1.15 a wrapped line) the heads view's maps presenting (25 px title, four lines)
# ended 34.5 px below the plot's top
TITLE_LINE = 1.3
TITLE_PAD = 1.3  # the first baseline: its line's box starts 0.3 of the size below the edge
# a one-line title's baseline is a further CAP_SHIFT (0.7) below its y: its pad is less by that
# (plotly.js drops that shift for a title of several lines)
TITLE_CAP = 0.7
TITLE_TAIL = {"plain": 0.34, "sup": -0.1}
TITLE_GAP = 0.4  # between the last line's box and the plot area (and subplot titles)


def title_margin(lines: Sequence[str], size: float, above: float = 0.0) -> int:
    """The top margin in px that holds a top-anchored title's lines at `size` px (TITLE_PAD
    from the chart's top edge) with TITLE_GAP to spare, plus `above` px for what sits between
    the title and the plot (subplot titles)."""
    sup = bool(lines) and lines[-1].startswith("<sup>") and lines[-1].endswith("</sup>")
    tail = TITLE_TAIL["sup" if sup else "plain"]
    em = TITLE_PAD + TITLE_LINE * (max(1, len(lines)) - 1) + tail + TITLE_GAP
    return int(np.ceil(em * size + above))


def _subplot_titles_px(layout: dict, base: float) -> float:
    """px the annotations that sit on the plot's top edge (make_subplots' titles: paper y 1,
    anchored at their bottom) take from the top margin: a line of the largest of them."""
    tallest = 0.0
    for note in layout.get("annotations") or []:
        if isinstance(note, dict) and note.get("yref") == "paper" and \
                (note.get("y") or 0) >= 1 and note.get("yanchor") == "bottom":
            size = (note.get("font") or {}).get("size") or base
            tallest = max(tallest, TITLE_LINE * size)
    return tallest


def fit_title(fig, width_px: float, size: float | None = None) -> None:
    """Break a figure's title (a go.Figure or its dict), in place, so that every line fits
    width_px at its font size (bold title lines about 0.6 × size a character, <sup> lines 0.7 of
    that), anchor it at the chart's top and make the top margin hold every line at that size
    (title_margin; never less than the figure's own). size: the title's px, else the figure's
    (its template's), else 16.8. plotly never wraps a title: a definition under a chart in a
    half-width column ran off its edge (issue 59), and from y "auto" (the middle of the top
    margin) its wrapped lines ran over the plot's top rows."""
    layout = _get(fig, "layout")
    title = _get(layout, "title") if layout is not None else None
    text = _get(title, "text") if title is not None else None
    if not isinstance(text, str) or not text:
        return
    plain = plain_layout(layout)
    size = size or setting(plain, "title", "font", "size") or 16.8
    out = []
    for line in text.split("<br>"):
        sup = line.startswith("<sup>") and line.endswith("</sup>")
        inner = line[5:-6] if sup else line
        chars = int(width_px * 0.95 / (0.6 * size * (0.7 if sup else 1.0)))
        if "<" in inner or len(inner) <= chars:  # markup inside a line: left as it is
            out.append(line)
            continue
        parts = _wrap_words(inner, max(chars, 10))
        out += [f"<sup>{p}</sup>" for p in parts] if sup else parts
    title["text"] = "<br>".join(out)
    if _get(title, "y") is not None or _get(title, "yanchor") is not None:
        return  # placed by the figure itself
    pad = TITLE_PAD - (TITLE_CAP if len(out) == 1 else 0.0)
    title.update(y=1.0, yref="container", yanchor="top", pad={"t": round(pad * size)})
    margin = _get(layout, "margin")
    top = (_get(margin, "t") if margin is not None else None) or 80
    base = setting(plain, "font", "size") or 12
    need = title_margin(out, size, _subplot_titles_px(plain, base))
    if need > top:
        layout["margin"] = {**(dict(margin) if isinstance(margin, dict) else
                               (margin.to_plotly_json() if margin is not None else {})),
                            "t": need}


def fit_ticks(fig, width_px: float, gap: tuple[float, float] = (TICK_MIN_PX, TICK_MIN_PX),
              drawn_h: float = 1.0) -> None:
    """Every category axis of a figure (a go.Figure or its dict) keeps every k-th of its
    labels, in place, so that no two labels on one axis overlap where plotly.js draws the
    figure width_px wide: the labels' widths in their font (viz.plot_area.label_px), the
    spacing of the plot area plotly.js lays out, and the angle it draws them at (tilted labels
    anchored at their ends slide by their difference in length). Axes that name chosen
    categories (tickvals, as thin_ticks writes them) keep a part of those; an axis of a
    heatmap's pieces gets tickvals where not all of them fit (plotly's own thinning spaced
    -45° labels 16 px apart at 12 px: "s" and "av (2)" met). gap (x, y): labels at least
    this many px apart as well. drawn_h: how many times its layout height Chromium draws the
    chart (presenter mode: ui.presenter.ZOOM, as Streamlit sizes the frame in the zoomed
    column); the y labels' rows are that much taller."""
    layout = _get(fig, "layout")
    if layout is None:
        return
    plain = plain_layout(layout)
    data = [t if isinstance(t, dict) else t.to_plotly_json() for t in _get(fig, "data") or []]
    names = sorted({n for n in plain if n[:5] in ("xaxis", "yaxis")} |
                   {(letter + "axis" + (_get(t, letter + "axis") or letter)[1:])
                    for t in data for letter in "xy"})
    cells = category_px(plain, data, names, _get(layout, "width") or width_px, drawn_h)
    size_px = ((_get(layout, "width") or width_px), (_get(layout, "height") or 450) * drawn_h)
    base = setting(plain, "font", "size") or 12
    for name in names:
        placed = tick_places(plain, data, name, cells.get(name), size_px)
        if placed is None:
            continue
        vals, labels, at_px = placed
        axis = _get(layout, name)
        size = setting(plain, name, "tickfont", "size") or base
        k = keep_every(plain, name, labels, at_px, size, gap[name[0] == "y"])
        if k > 1:
            if axis is None:
                layout[name] = axis = {}
            axis["tickmode"] = "array"
            axis["tickvals"] = list(vals)[::k]
            axis["ticktext"] = list(labels)[::k]


def category_at(labels: Sequence[str], value: str) -> float:
    """Where a shape or annotation goes on a category axis: the category's index. plotly.js
    reads a numeric-looking string there ("1800") as a number, far off the axis (issue 59:
    the training chart's range became -0.5 ... 1802)."""
    return float(list(labels).index(value))


def thin_ticks(labels: Sequence[str], px: float, min_px: float = TICK_MIN_PX) -> dict:
    """Axis keys that name every k-th category when all of them would crowd (else {})."""
    n = len(labels)
    k = int(np.ceil(n * min_px / max(px, 1.0)))
    if n == 0 or k <= 1:
        return {}
    picked = list(labels)[::k]
    return {"tickmode": "array", "tickvals": picked, "ticktext": picked}


def layer_row_px(n_layers: int) -> int:
    """Height of one layer's row in a layers × heads map: 48 px, less for deep models."""
    return int(min(48, max(12, 900 // max(1, n_layers))))


def fitting_numbers(z: np.ndarray, fmt: str, row_px: float, width_px: float
                    ) -> np.ndarray | None:
    """cell_text(z, fmt) for a (rows, cols) map whose rows are row_px tall in width_px, when a
    cell is ≥ TEXT_MIN_PX and as wide as its text (7 px a character); else None."""
    n_rows, n_cols = np.shape(z)
    wide = width_px / max(1, n_cols) >= 7 * len(format(0.5, fmt))
    fits = numbers_fit(n_rows, n_cols, row_px * n_rows, width_px)
    return cell_text(z, fmt) if fits and wide else None


def query_key_hover(rest: str) -> str:
    """A heatmap hover's query and key lines, then `rest`: only the words go through _(), so
    plotly's %{…} fields never meet str.format."""
    return _("query") + ": %{y}<br>" + _("key") + ": %{x}<br>" + rest


def value_hover() -> str:
    """The default heatmap hover (HOVER) in the installed language."""
    return query_key_hover(_("value") + ": %{z:.4f}<extra></extra>")


def plotly_text(text: str) -> str:
    """A piece or typed text as plotly shows it literally and visibly.

    Invisible characters (controls, zero-width and bidi marks, unusual spaces: everything
    str.isprintable rejects) are spelled out as escapes (\\x1b, \\u200b, \\u202e), so a label
    cannot hide, reorder or fake its neighbours; then <, > and & are escaped, because plotly
    reads <b>, <s>, <br> and &…; in labels and titles as markup.
    """
    text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in str(text))
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def token_labels(tokens: Sequence[str], *, numbered: bool = False) -> list[str]:
    """Unique axis labels for pieces: shown as they are (▁ visible) through plotly_text.

    Plotly merges equal category names into one row, so labels must differ. By default the
    second `▁the` becomes `▁the (2)`, the third `▁the (3)`; an empty piece reads `∅`.
    numbered=True writes every label as "position:piece" with positions 1..n as the model
    numbers tokens ("1:&lt;2ko&gt;", "2:▁the"), for views about positions and layers.
    """
    if numbered:
        return [f"{i}:{plotly_text(t)}" for i, t in enumerate(tokens, start=1)]
    seen: dict[str, int] = {}
    labels = []
    for token in tokens:
        text = plotly_text(token) or "∅"
        seen[text] = seen.get(text, 0) + 1
        labels.append(text if seen[text] == 1 else f"{text} ({seen[text]})")
    return labels


def half_width(*arrays: np.ndarray) -> float:
    """Half-width of a colour range centred on 0 that covers every finite value (1.0 when
    there is none, so the range is never empty)."""
    m = 0.0
    for a in arrays:
        a = np.asarray(a, dtype=np.float64)
        finite = a[np.isfinite(a)]
        if finite.size:
            m = max(m, float(np.abs(finite).max()))
    return m if m > 0 else 1.0


def padded_tokens(tokens: Sequence[str], width: int) -> list[str]:
    """Pieces of one sentence extended with <pad> up to the padded width."""
    return list(tokens) + [PAD_LABEL] * max(0, width - len(tokens))


def chart_config(fmt: str = "svg", filename: str = "attention-lab") -> dict:
    """plotly.js config: the toolbar's camera button saves an image in the browser itself."""
    fmt = fmt if fmt in DOWNLOAD_FORMATS else "svg"
    return {"displaylogo": False,
            "toImageButtonOptions": {"format": fmt, "filename": filename, "scale": 2}}


def cell_text(z: np.ndarray, fmt: str = ".2f", fill: str = "-1e9") -> np.ndarray:
    """Numbers for heatmap cells; blocked scores (≤ -1e9/2) read `fill` (the model's own mask
    fill, ui/model_words.fill_label: the lab's "-1e9", a dtype minimum elsewhere), NaN empty."""
    z = np.asarray(z, dtype=np.float64)
    out = np.empty(z.shape, dtype=object)
    for idx, value in np.ndenumerate(z):
        if np.isnan(value):
            out[idx] = ""
        elif value <= MASK_FILL / 2:
            out[idx] = fill
        else:
            out[idx] = format(value, fmt)
    return out


def base_layout(title: str, height: int | None = None) -> dict:
    """Layout keys every figure gets: title on the left, small margins, full hover names."""
    layout = {"template": TEMPLATE, "title": {"text": title, "x": 0.0, "xanchor": "left"},
              "margin": {"l": 10, "r": 10, "t": 60, "b": 10}, "hoverlabel": {"namelength": -1}}
    if height is not None:
        layout["height"] = height
    return layout


def style(fig: go.Figure, title: str, x_title: str, y_title: str, *,
          height: int | None = None, width: int | None = None) -> go.Figure:
    """Title, axis titles and margins every figure gets."""
    fig.update_layout(base_layout(title))
    if height is not None:
        fig.update_layout(height=height)
    if width is not None:
        fig.update_layout(width=width)
    fig.update_xaxes(title_text=x_title)
    fig.update_yaxes(title_text=y_title)
    return fig


def heatmap_trace(z: np.ndarray, x: Sequence[str], y: Sequence[str], *,
                  colorscale: str | list = "Viridis", zmin: float | None = None,
                  zmax: float | None = None, zmid: float | None = None,
                  text: np.ndarray | None = None, hover: str | None = None,
                  showscale: bool = True, name: str = "") -> go.Heatmap:
    """One heatmap trace with categorical token axes; z is sent as a binary float32 or
    uint8 array (never as a list of Python numbers). hover: value_hover() when None."""
    z = np.asarray(z)
    if z.dtype == bool:
        z = z.astype(np.uint8)
    elif z.dtype not in (np.float32, np.uint8):
        z = z.astype(np.float32)
    kwargs: dict = {}
    if text is not None:
        kwargs.update(text=text, texttemplate="%{text}")
    if hover is None:  # built now, in the language installed now
        hover = value_hover()
    # _validate=False: plotly's per-property validation costs more than the rest of a rerun;
    # the properties here are fixed, and tests validate every view's figures once
    return go.Heatmap(z=z, x=list(x), y=list(y), colorscale=colour_scale(colorscale),
                      zmin=zmin, zmax=zmax, zmid=zmid, hovertemplate=hover,
                      showscale=showscale, name=name,
                      xgap=0, ygap=0, _validate=False, **kwargs)


def heatmap(z: np.ndarray, x: Sequence[str], y: Sequence[str], *, title: str, x_title: str,
            y_title: str, colorscale: str | list = "Viridis", zmin: float | None = None,
            zmax: float | None = None, zmid: float | None = None, numbers: bool = False,
            fmt: str = ".2f", text: np.ndarray | None = None, hover: str | None = None,
            height: int | None = None, square: bool = False,
            text_max: int = TEXT_MAX) -> go.Figure:
    """A labelled heatmap, first row at the top; per-cell text only when small enough."""
    z = np.asarray(z)
    if text is None and numbers and max(z.shape) <= text_max:
        text = cell_text(z, fmt)
    elif text is not None and max(z.shape) > text_max:
        text = None
    if height is None:
        height = int(min(900, max(300, 120 + 22 * z.shape[0])))
    yaxis = {"autorange": "reversed", "type": "category", "title": {"text": y_title},
             **thin_ticks(y, height - 160)}  # hundreds of pieces: every k-th named
    if square:
        yaxis.update(scaleanchor="x", scaleratio=1, constrain="domain")
    layout = {**base_layout(title, height), "yaxis": yaxis,
              # few labels: no angle, so plotly turns them itself when they would meet (in a
              # third-width chart); square cells shrink the wider side's domain, not widen its
              # range (a 2 × 2 similarity matrix filled 23 % of its plot area, issue 59)
              "xaxis": {"type": "category", "title": {"text": x_title},
                        **({"constrain": "domain"} if square else {}),
                        **({"tickangle": -45} if len(x) > 8 else {}),
                        **thin_ticks(x, SCREEN_W - 150)}}
    trace = heatmap_trace(z, x, y, colorscale=colorscale, zmin=zmin, zmax=zmax, zmid=zmid,
                          text=text, hover=hover)
    return go.Figure(data=[trace], layout=layout, _validate=False)


def block_mean(z: np.ndarray, max_size: int) -> tuple[np.ndarray, list[int], list[int]]:
    """Average z (n, m) over blocks so neither side exceeds max_size.

    Returns the smaller matrix and the first row/column index of every block, so labels can
    say which tokens a cell covers. Shapes never grow: a side at or below max_size is kept.
    """
    z = np.asarray(z, dtype=np.float32)
    if max_size < 1:
        raise ValueError(f"max_size must be at least 1, got {max_size}")
    starts = []
    for axis, n in enumerate(z.shape[:2]):
        step = int(np.ceil(n / max_size)) if n > max_size else 1
        starts.append(list(range(0, n, step)))
        if step > 1:
            z = np.add.reduceat(z, starts[-1], axis=axis)
            sizes = np.diff(starts[-1] + [n]).astype(np.float32)
            shape = [1, 1]
            shape[axis] = len(sizes)
            z = z / sizes.reshape(shape)
    return z, starts[0], starts[1]


def block_labels(labels: Sequence[str], starts: Sequence[int]) -> list[str]:
    """Labels for downsampled rows/columns: the token itself, or 'first…last' for a block."""
    if len(starts) == len(labels):
        return list(labels)
    ends = list(starts[1:]) + [len(labels)]
    return [f"{a}–{b - 1}: {labels[a]}…" for a, b in zip(starts, ends)]

