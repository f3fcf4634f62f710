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


def for_screen(fig):
    """The figure to draw: in presenter mode a copy (as a dict) with 1.5× larger fonts."""
    if not presenting():
        return fig
    spec = fig.to_dict()  # a copy: cached figures stay as they are
    layout = spec.setdefault("layout", {})
    font = layout.setdefault("font", {})
    font["size"] = round(font.get("size", PLOTLY_FONT) * ZOOM)
    title = layout.get("title")
    if isinstance(title, dict):  # the title's own size, which the template may also set
        title_font = title.setdefault("font", {})
        title_font["size"] = round(title_font.get("size", PLOTLY_FONT * 1.4) * ZOOM)
    return spec


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
