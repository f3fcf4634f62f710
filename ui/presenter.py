"""Presenter mode (`present=1` in the link): for a projector in a lecture hall.

The sidebar starts collapsed, the page title and the view bar are left out (only the view the
link names, usually the tour, is drawn), and the main column is zoomed 1.5×, which enlarges
text and widgets. Charts are taken out of the zoom (plotly would lay them out for the wrong
width and overflow the column) and get 1.5× larger fonts instead (for_screen). Checked at
1280×720 by tests/browser/test_presenter.py (docs/presenter.png).
"""

from __future__ import annotations

import streamlit as st

from ui.context import Notes
from ui.i18n import _
from ui.text import md
from viz.common import SCREEN_W, fit_cell_numbers, fit_ticks, fit_title
from viz.plot_area import column_width

STATE_KEY = "present"
ZOOM = 1.5
_CSS = f"""<style>
[data-testid="stMainBlockContainer"] {{
  zoom: {ZOOM};
  padding-top: 3rem;  /* clear of the fixed header (×1.5 = 72 px) */
  padding-bottom: 1rem;
  max-width: 100%;
}}
[data-testid="stMainBlockContainer"] [data-testid="stPlotlyChart"] {{
  zoom: {1 / ZOOM:.6f};
}}
</style>"""
PLOTLY_FONT = 12  # plotly's default font size; titles are 1.4× the font
MIN_PX = 18  # no text in a chart smaller than this on a projector (11 px was unreadable)
# one heatmap (a single head) fits a 720-px screen below the page's header: Chromium draws a
# chart ZOOM x its layout height (see for_screen), and at 1280 x 720 Streamlit's header ends at
# 60 px, so 660 px are left: 440 x 1.5. It was 600, drawn 900 px high (lm's attention view)
SCREEN_H, HEADER_PX = 720, 60
MAX_SINGLE_HEIGHT = int((SCREEN_H - HEADER_PX) / ZOOM)
# a full-width chart's width at 1280 x 720, the sidebar collapsed: the main column's padding is
# zoomed 1.5x too, so Chromium draws it 1040 px wide (gd._fullLayout.width of the attention
# view's heatmap; it was 1200 here, 160 px more than drawn)
PLOT_WIDTH = 1040
TEXT_COLOR = "#262730"  # chart text on a projector: Streamlit's dark text, not its grey
TICK_PX = {"x": 26, "y": 22}  # room one 18-px tick label needs (x labels are tilted)


def for_screen(fig, share: float = 1.0):
    """The figure to draw. Numbers on heatmap cells follow one rule in both modes
    (viz.common.cell_font_px): a fixed size, or dropped where a cell is too small for them
    (9 px normally, MIN_PX here; the hover keeps them). In presenter mode a copy (as a dict)
    whose every font is 1.5× and at least MIN_PX and whose single heatmap fits the screen.
    share: the part of the row the chart is given (0.5 in two columns): titles are broken and
    numbers sized for that width (viz.common.fit_title)."""
    if not presenting():
        # the same result every time for one width: a cached figure may be changed in place
        width = column_width(SCREEN_W, share)
        fit_title(fig, width)  # first: the margin it sets is the cells' too
        fit_cell_numbers(fig, width)
        fit_ticks(fig, width)
        return fig
    width = column_width(PLOT_WIDTH, share, ZOOM)
    spec = fig.to_dict()  # a copy: cached figures stay as they are
    layout = spec.setdefault("layout", {})
    _scale_fonts(spec)  # every size a figure sets, wherever it sets it
    font = layout.setdefault("font", {})
    font.setdefault("size", max(MIN_PX, round(PLOTLY_FONT * ZOOM)))
    title = layout.get("title")
    if isinstance(title, dict):  # the title's own size, which the template may also set
        title.setdefault("font", {}).setdefault("size", round(PLOTLY_FONT * 1.4 * ZOOM))
        fit_title(spec, width, title["font"]["size"])  # plotly never wraps one
    heatmaps = [t for t in spec.get("data", []) if t.get("type") == "heatmap"]
    # one heatmap, alone or under its click targets (scatter markers on its cells: the
    # attention view's every-layer grid was drawn 976 px high on a 720 px screen)
    if len(heatmaps) == 1 and all(t.get("type") in ("heatmap", "scatter")
                                  for t in spec.get("data", [])):
        layout["height"] = min(layout.get("height") or 450, MAX_SINGLE_HEIGHT)
    fit_ticks(spec, width, (TICK_PX["x"], TICK_PX["y"]), drawn_h=ZOOM)  # drawn 1.5x high
    _pin_fonts(layout, spec.get("data", []))
    # Streamlit sizes the chart's frame in the zoomed column, so Chromium draws the figure
    # ZOOM x its layout height (380 -> 570 px on the attention view, 254 -> 381 on the heads
    # view's maps): its cells are that tall (fitted at the layout's height, the heads view's
    # 3 x 4 maps dropped their numbers in 62 px rows). The data list is spec's own.
    drawn = {**spec, "layout": {**layout, "height": (layout.get("height") or 450) * ZOOM}}
    fit_cell_numbers(drawn, width, size=MIN_PX, min_px=MIN_PX)
    return spec


def _font(node: dict, key: str) -> None:
    """node[key] (a font) at least MIN_PX and dark, whatever a theme would give it."""
    font = node.setdefault(key, {})
    font["size"] = max(font.get("size") or 0, MIN_PX)
    font.setdefault("color", TEXT_COLOR)


def _pin_fonts(layout: dict, data: list) -> None:
    """Streamlit's chart theme brings its own tick, axis-title and colour-bar fonts (12 px,
    grey), which win over layout.font: in Chromium the tick labels stayed 11-12 px. Each is
    set on the figure itself, where a theme never overrides it."""
    for name, axis in layout.items():
        if name[:5] in ("xaxis", "yaxis") and isinstance(axis, dict):
            _font(axis, "tickfont")
            if isinstance(axis.get("title"), str):
                axis["title"] = {"text": axis["title"]}
            _font(axis.setdefault("title", {}), "font")
    if isinstance(layout.get("legend"), dict) or any(t.get("showlegend") for t in data):
        _font(layout.setdefault("legend", {}), "font")
    for note in layout.get("annotations") or []:
        if isinstance(note, dict):
            _font(note, "font")
    bars = [axis.setdefault("colorbar", {}) for name, axis in layout.items()
            if name.startswith("coloraxis") and isinstance(axis, dict)]  # shared scales
    for trace in data:
        if "text" in str(trace.get("mode", "")):  # written labels (the flow chart's tokens)
            _font(trace, "textfont")
        marker = trace.get("marker") if isinstance(trace.get("marker"), dict) else {}
        bar = trace.get("colorbar") or marker.get("colorbar")
        if bar is None and trace.get("type") == "heatmap" and trace.get("showscale", True) \
                and "coloraxis" not in trace:
            bar = trace.setdefault("colorbar", {})
        bars.append(bar)
    for bar in bars:
        if isinstance(bar, dict):
            _font(bar, "tickfont")
            if isinstance(bar.get("title"), str):
                bar["title"] = {"text": bar["title"]}
            _font(bar.setdefault("title", {}), "font")


def _scale_fonts(node) -> None:
    """Every {"size": s} under a key ending in "font" becomes max(MIN_PX, 1.5 s)."""
    if isinstance(node, list):
        for item in node:
            _scale_fonts(item)
        return
    if not isinstance(node, dict):
        return
    for key, value in node.items():
        if key == "template":
            continue
        if key.endswith("font") and isinstance(value, dict) and isinstance(
                value.get("size"), (int, float)):
            value["size"] = max(MIN_PX, round(value["size"] * ZOOM))
        _scale_fonts(value)


def presenting() -> bool:
    """True in presenter mode (decided once per session from the link)."""
    return bool(st.session_state.get(STATE_KEY, False))


def setup(url: dict[str, str], notes: Notes) -> bool:
    """Page config for this session's mode (first call of the script); True when presenting."""
    if STATE_KEY not in st.session_state:
        raw = url.get("present")
        if raw not in (None, "0", "1"):
            notes.warnings.append(_("present={value} in the link is not 0 or 1; presenter "
                                    "mode is off.").format(value=md(repr(raw[:20]))))
        st.session_state[STATE_KEY] = raw == "1"
    present = presenting()
    st.set_page_config(page_title="Attention lab", layout="wide",
                       initial_sidebar_state="collapsed" if present else "auto")
    if present:
        st.html(_CSS)
    return present
