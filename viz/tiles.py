"""Many panels (one per head, per layer × head …) drawn as ONE heatmap trace.

A plotly subplot per panel costs the browser seconds per hundred panels (a 32 × 32-head grid
as 1,024 subplots froze Chromium for a minute). Here the panels are pooled to what their
on-screen size can show, laid side by side in one matrix with NaN gaps between them (the
white separator lines; wider between groups of columns such as heads that share a key/value
head), and drawn as one heatmap on category axes. Each cell column's category names its panel
column and key, each cell row's its panel row and query, so the hover still says layer, head,
query and key without a string per cell. Ticks name the panels; grey bands mark column groups.

    tile(panels, ...)            -> Tiles  (matrix, categories, where each panel lies)
    tiled_heatmap(panels, ...)   -> go.Figure  (one trace; the public entry point)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from .common import SCREEN_W, TEMPLATE, block_labels, block_mean, colour_scale
from .i18n import _

CELL_MIN_PX = 2  # a panel is pooled until each of its cells is at least this wide
COLORBAR_PX = 90  # what the colour bar and the right margin take from the plot's width
TICK_PX = 11  # panel names (10 px font) at least this far apart, else every k-th panel named
BAND = "rgba(120, 120, 120, 0.18)"
MARK = "#d62728"


@dataclass
class Tiles:
    """Panels laid out in one matrix: z (NaN between panels), one category per cell column
    (x) and row (y), and each panel column's / row's (first, last) cell index."""

    z: np.ndarray
    x: list[str]
    y: list[str]
    col_spans: list[tuple[int, int]]
    row_spans: list[tuple[int, int]]
    pooled: bool


def cells_for(panel_px: float, n: int, cap: int | None = None) -> int:
    """How many cells a panel side of panel_px pixels can show (≥ CELL_MIN_PX px each)."""
    fit = max(1, int(panel_px // CELL_MIN_PX))
    return max(1, min(n, fit, cap if cap is not None else n))


def _gaps(groups: Sequence[int] | None, n: int, gap: int) -> list[int]:
    """Gap (in cells) after each of n panels but the last: 4× between different groups."""
    if groups is None:
        return [gap] * (n - 1)
    return [gap * (4 if groups[i] != groups[i + 1] else 1) for i in range(n - 1)]


def tile(panels: Sequence[Sequence[np.ndarray | None]], *, x_cells: Sequence[str],
         y_cells: Sequence[str], max_cells: int, row_names: Sequence[str] | None = None,
         col_names: Sequence[str] | None = None, col_groups: Sequence[int] | None = None,
         gap: int = 1, row_gap: int | None = None, lead: int = 0, x_word: str = "",
         y_word: str = "") -> Tiles:
    """Lay out panels[r][c] (all one shape, cells labelled x_cells / y_cells; None leaves a
    panel empty) in one matrix.

    Each panel is mean-pooled to at most max_cells per side (block_mean); a cell's category
    reads '<row name> · <y_word> <cell label>' / '<col name> · <x_word> <cell label>'
    (without names, the label made unique by invisible zero-width spaces). row_gap: cells
    between panel rows (2 × gap by default); lead: empty cell rows above the first (room for
    panel titles).
    """
    n_rows, n_cols = len(panels), len(panels[0])
    present = [p for row in panels for p in row if p is not None]
    shape = np.shape(present[0]) if present else (0, 0)
    if not present or any(np.shape(p) != shape for p in present) or any(
            len(row) != n_cols for row in panels):
        raise ValueError("tiled panels must all have one shape and every row as many panels")
    pooled = [[None if p is None else block_mean(p, max_cells) for p in row] for row in panels]
    _z, rstarts, cstarts = block_mean(present[0], max_cells)
    ph, pw = len(rstarts), len(cstarts)
    xs = [f"{x_word} {s}" if x_word else s for s in block_labels(list(x_cells), cstarts)]
    ys = [f"{y_word} {s}" if y_word else s for s in block_labels(list(y_cells), rstarts)]
    col_gaps = _gaps(col_groups, n_cols, gap)
    row_gaps = [gap * 2 if row_gap is None else row_gap] * (n_rows - 1)
    width = n_cols * pw + sum(col_gaps)
    height = lead + n_rows * ph + sum(row_gaps)
    z = np.full((height, width), np.nan, dtype=np.float32)
    col_spans, left = [], 0
    for c in range(n_cols):
        col_spans.append((left, left + pw - 1))
        left += pw + (col_gaps[c] if c < n_cols - 1 else 0)
    row_spans, top = [], lead
    for r in range(n_rows):
        row_spans.append((top, top + ph - 1))
        top += ph + (row_gaps[r] if r < n_rows - 1 else 0)
    for r, (r0, _r1) in enumerate(row_spans):
        for c, (c0, _c1) in enumerate(col_spans):
            if pooled[r][c] is not None:
                z[r0:r0 + ph, c0:c0 + pw] = pooled[r][c][0]
    x = _categories(width, col_spans, col_names, xs)
    y = _categories(height, row_spans, row_names, ys)
    return Tiles(z, x, y, col_spans, row_spans, pooled=(ph, pw) != tuple(shape[:2]))


def _categories(n: int, spans, names, cells) -> list[str]:
    """One unique category per cell: '<panel name> · <cell label>'; gaps get unseen names."""
    # gaps: never hovered (hoverongaps=False) nor ticked; a thin space never starts a piece's
    # label (plotly_text spells it out as \u2009), so these cannot meet a real category
    out = [f"\u2009{i}" for i in range(n)]
    for i, (a, _b) in enumerate(spans):
        for j, label in enumerate(cells):  # plotly merges equal categories: keep them unique
            out[a + j] = f"{names[i]} · {label}" if names else label + "\u200b" * i
    return out


def tiled_heatmap(panels: Sequence[Sequence[np.ndarray | None]], *, x_cells: Sequence[str],
                  y_cells: Sequence[str], title: str, x_title: str, y_title: str,
                  row_names: Sequence[str] | None = None,
                  col_names: Sequence[str] | None = None,
                  panel_titles: Sequence[Sequence[str]] | None = None,
                  panel_data: Sequence[Sequence[Sequence[int]]] | None = None,
                  panel_hover: str = "", value_name: str | None = None,
                  col_groups: Sequence[int] | None = None, colorscale: str | list = "Viridis",
                  zmin: float | None = 0.0, zmax: float | None = 1.0,
                  selected: tuple[int, int] | None = None, width_px: float = SCREEN_W,
                  max_cells: int = 24, panel_px_max: float = 96,
                  col_ticks: Sequence[str] | None = None, x_word: str = "",
                  y_word: str = "") -> go.Figure:
    """panels[r][c] as one heatmap trace with square cells, separator gaps, group bands,
    panel names on the axes (row_names/col_names) or above each panel (panel_titles), and a
    hover that names the panel, the query and the key (x_word / y_word, e.g. 'key', before
    each cell's label).

    Hover: the cell categories carry row/column names; where panels in one column are not
    one thing (heads wrapped into rows), panel_data[r][c] (a few small ints, e.g. the head
    and its kv head) goes into customdata and panel_hover reads it ('head %{customdata[0]}').
    Each panel is pooled to what its on-screen size can show (≥ CELL_MIN_PX px a cell, at
    most max_cells), and the hover says so when it is. selected=(r, c) outlines a panel.
    """
    n_rows, n_cols = len(panels), len(panels[0])
    groups = list(col_groups) if col_groups is not None else None
    panel_px = min(panel_px_max, width_px / (n_cols * 1.1))
    present = [p for row in panels for p in row if p is not None]
    side = max(np.shape(present[0])[:2]) if present else 1
    cells = cells_for(panel_px, side, max_cells)
    title_cells = int(np.ceil(18 / (panel_px / min(cells, side)))) if panel_titles else 0
    t = tile(panels, row_names=row_names, col_names=col_names, x_cells=x_cells,
             y_cells=y_cells, max_cells=cells, col_groups=groups,
             row_gap=max(2, title_cells) if panel_titles else None, lead=title_cells,
             x_word=x_word, y_word=y_word)
    hover = (panel_hover + "<br>" if panel_hover else "") + "%{y}<br>%{x}<br>"
    hover += (value_name or _("weight")) + ": %{z:.4f}"
    if t.pooled:
        hover += "<br><i>" + _("pooled: the mean over a block of pieces") + "</i>"
    extra: dict = {}
    if panel_data is not None:
        extra["customdata"] = _customdata(panel_data, t)
    trace = go.Heatmap(z=t.z, x=t.x, y=t.y, colorscale=colour_scale(colorscale),
                       zmin=zmin, zmax=zmax,
                       hovertemplate=hover + "<extra></extra>", hoverongaps=False,
                       xgap=0, ygap=0, _validate=False, **extra)
    xnames = list(col_ticks or col_names or [])
    left = int(30 + 6.5 * max((len(s) for s in row_names), default=0)) if row_names else 40
    # square cells as wide as the plot area allows (less tick labels and the colour bar)
    cell_px = min((width_px - left - COLORBAR_PX) / len(t.x), 40.0)
    plot_h = cell_px * len(t.y)
    pitch_x = _pitch(t.col_spans, cell_px)
    ticks_x = _panel_ticks(t.x, t.col_spans, xnames, pitch_x) if xnames else {
        "showticklabels": False}
    ticks_y = _panel_ticks(t.y, t.row_spans, list(row_names), _pitch(t.row_spans, cell_px)
                           ) if row_names else {"showticklabels": False}
    longest = max((len(s) for s in ticks_x.get("ticktext", [])), default=0)
    vertical = pitch_x * _every(pitch_x) < 7.5 * longest
    bottom = int(30 + (6.5 * longest if vertical else 18))
    layout = {
        "template": TEMPLATE, "title": {"text": title, "x": 0.0, "xanchor": "left"},
        "height": int(max(260, plot_h + 70 + bottom)),
        "margin": {"l": left, "r": 10, "t": 60, "b": bottom},
        "hoverlabel": {"namelength": -1}, "plot_bgcolor": "white",
        "xaxis": {"type": "category", "title": {"text": x_title}, "showgrid": False,
                  "zeroline": False, "tickangle": -90 if vertical else 0,
                  "tickfont": {"size": 10 if vertical else 11}, "constrain": "domain",
                  **ticks_x},
        "yaxis": {"type": "category", "title": {"text": y_title}, "autorange": "reversed",
                  "showgrid": False, "zeroline": False, "scaleanchor": "x", "scaleratio": 1,
                  "constrain": "domain", "tickfont": {"size": 10 if n_rows > 24 else 11},
                  **ticks_y},
        "shapes": _bands(groups, t) + _outline(selected, t),
        "annotations": _titles(panel_titles, t) if panel_titles else [],
        "meta": {"tiles": {"rows": n_rows, "cols": n_cols, "col_spans": t.col_spans,
                           "row_spans": t.row_spans, "pooled": t.pooled}},
    }
    return go.Figure(data=[trace], layout=layout, _validate=False)


def _customdata(panel_data, t: Tiles) -> np.ndarray:
    """(rows, cols, k) small ints: panel_data[r][c] on every cell of panel (r, c)."""
    k = max(len(d) for row in panel_data for d in row if d is not None)
    out = np.zeros((len(t.y), len(t.x), k), dtype=np.uint16)
    for r, (r0, r1) in enumerate(t.row_spans):
        for c, (c0, c1) in enumerate(t.col_spans):
            data = panel_data[r][c] if c < len(panel_data[r]) else None
            if data is not None:
                out[r0:r1 + 1, c0:c1 + 1] = np.asarray(data, dtype=np.uint16)
    return out


def _titles(titles: Sequence[Sequence[str]], t: Tiles) -> list[dict]:
    """A small title above each panel (category coordinates: the panel's middle column)."""
    out = []
    for r, (r0, _r1) in enumerate(t.row_spans):
        for c, (c0, c1) in enumerate(t.col_spans):
            text = titles[r][c] if c < len(titles[r]) else ""
            if text:
                out.append({"text": text, "x": (c0 + c1) / 2, "y": r0 - 0.5, "xref": "x",
                            "yref": "y", "xanchor": "center", "yanchor": "bottom",
                            "showarrow": False, "font": {"size": 11}})
    return out


def _pitch(spans, cell_px: float) -> float:
    """On-screen distance in px from one panel to the next (a whole panel if only one)."""
    if len(spans) < 2:
        return (spans[0][1] - spans[0][0] + 1) * cell_px
    return (spans[1][0] - spans[0][0]) * cell_px


def _every(pitch: float) -> int:
    """Name every k-th panel so that tick labels (10 px font) stay TICK_PX apart."""
    return max(1, int(np.ceil(TICK_PX / max(pitch, 1e-6))))


def _panel_ticks(cats: list[str], spans, names, pitch: float) -> dict:
    """A tick per panel (every k-th when panels are narrower than a label), at its middle
    cell, reading the panel's name."""
    k = _every(pitch)
    vals = [cats[(a + b) // 2] for a, b in spans][::k]
    return {"tickmode": "array", "tickvals": vals, "ticktext": list(names)[::k]}


def _bands(groups: list[int] | None, t: Tiles) -> list[dict]:
    """A grey band behind each run of more than one column sharing a group, full height."""
    if groups is None:
        return []
    bands, start = [], 0
    for c in range(1, len(groups) + 1):
        if c == len(groups) or groups[c] != groups[start]:
            if c - start > 1:
                bands.append({"type": "rect", "xref": "x", "yref": "paper", "layer": "below",
                              "x0": t.col_spans[start][0] - 1.0,
                              "x1": t.col_spans[c - 1][1] + 1.0, "y0": 0, "y1": 1,
                              "fillcolor": BAND, "line": {"width": 0}})
            start = c
    return bands


def _outline(selected: tuple[int, int] | None, t: Tiles) -> list[dict]:
    """A red frame around the selected panel (r, c), if any."""
    if selected is None:
        return []
    r, c = selected
    if not (0 <= r < len(t.row_spans) and 0 <= c < len(t.col_spans)):
        return []
    (x0, x1), (y0, y1) = t.col_spans[c], t.row_spans[r]
    return [{"type": "rect", "xref": "x", "yref": "y", "x0": x0 - 0.5, "x1": x1 + 0.5,
             "y0": y0 - 0.5, "y1": y1 + 0.5, "line": {"color": MARK, "width": 2},
             "fillcolor": "rgba(0,0,0,0)"}]


def panel(fig: go.Figure, r: int, c: int) -> np.ndarray:
    """The (pooled) matrix drawn for panel (r, c) of a tiled_heatmap figure (for tests and
    callers that read a figure back)."""
    meta = fig.layout.meta["tiles"]
    (x0, x1), (y0, y1) = meta["col_spans"][c], meta["row_spans"][r]
    return np.asarray(fig.data[0].z, dtype=np.float32)[y0:y1 + 1, x0:x1 + 1]
