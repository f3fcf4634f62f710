"""Tables that fit the column in both modes.

Presenting, Streamlit sizes a dataframe's frame from the zoomed column's drawn width (1040 px
at 1280 x 720) and gives it that many CSS px, which the column's 1.5x zoom draws again: the
grid was drawn 1560 px wide from x 120 on a 1280 px screen, its last columns off the window
(Chromium, tests/browser/test_geometry_tables.py). Given the column's width over the zoom, the
frame is drawn as wide as the column.

A grid never wraps its cells: a short table whose values may run long (sentences, long column
names) is better an st.table, whose HTML wraps and is laid out in the zoomed column.
"""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from ui.presenter import PLOT_WIDTH, ZOOM, presenting

# an expander's content is this much narrower than the column (CSS px, before any zoom:
# 786 of 820 at 1280 x 800 in Chromium)
EXPANDER_INSET_PX = 34


def frame_width(inset_px: float = 0) -> int | str:
    """st.dataframe's width: in presenter mode the column's in CSS px before the zoom, less
    inset_px (what a container such as an expander takes from the column); else the
    container's own ("stretch")."""
    return int(PLOT_WIDTH / ZOOM - inset_px) if presenting() else "stretch"


def dataframe(rows: Sequence[dict], inset_px: float = 0, **kwargs) -> None:
    """st.dataframe without an index, as wide as its container in both modes."""
    st.dataframe(rows, hide_index=True, width=frame_width(inset_px), **kwargs)
