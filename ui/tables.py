"""Tables that fit the column in both modes.

Presenting, Streamlit sizes a dataframe's frame from the zoomed column's drawn width (1040 px
at 1280 x 720) and gives it that many CSS px, which the column's 1.5x zoom draws again: the
grid was drawn 1560 px wide from x 120 on a 1280 px screen, its last columns off the window
(Chromium, tests/browser/test_geometry_tables.py). Given the column's width over the zoom, the
frame is drawn as wide as the column. Streamlit's "content" width has the same fault: it is
capped at that drawn width, so a grid whose columns need more than the column's 693 CSS px was
drawn to x 1680 as well; presenting, a grid is always given the column's width.

A grid never wraps its cells: a short table whose values may run long (sentences, long column
names) is better an st.table, whose HTML wraps and is laid out in the zoomed column.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import streamlit as st

from ui.presenter import PLOT_WIDTH, ZOOM, presenting

# an expander's content is this much narrower than the column (CSS px, before any zoom:
# 786 of 820 at 1280 x 800 in Chromium)
EXPANDER_INSET_PX = 34


def frame_width(inset_px: float = 0, content: bool = False) -> int | str:
    """st.dataframe's width: in presenter mode the column's in CSS px before the zoom, less
    inset_px (what a container such as an expander takes from the column); else the
    container's own ("stretch"), or the columns' ("content") when content is asked."""
    if presenting():
        return int(PLOT_WIDTH / ZOOM - inset_px)
    return "content" if content else "stretch"


def dataframe(rows: Sequence[dict] | Mapping[str, Sequence], inset_px: float = 0,
              content: bool = False, **kwargs) -> None:
    """st.dataframe without an index, never wider than its container in either mode.
    rows: a list of row dicts or a dict of columns. content: in normal mode only as wide as
    its columns (presenting, as wide as the column: see frame_width). kwargs go to
    st.dataframe as they are (column_config, height, on_select, ...)."""
    st.dataframe(rows, hide_index=True, width=frame_width(inset_px, content), **kwargs)
