"""Charts whose heads are clickable: a click on a panel or cell opens that head.

The figure carries viz.click's invisible markers; Streamlit reports a click on one as a
selection, and the callback moves the shared kind/layer/head (the URL state) to it before the
next run draws the page, so the attention view opens on that head.
"""

from __future__ import annotations

from functools import partial

import streamlit as st

from ui.common import chart, goto
from ui.context import Ctx
from ui.i18n import _
from viz.click import cell_targets, picked_head


def _open(key: str, kind: str, view: str) -> None:
    hit = picked_head(st.session_state.get(key), kind)
    if hit is not None:
        goto(view, hit)


def head_chart(fig, ctx: Ctx, key: str, kind: str, view: str = "attention",
               share: float = 1.0) -> None:
    """Draw fig (with viz.click targets); a click on a head opens it in `view`, of `kind`
    unless the clicked marker names its own (one map per kind). share: as for_screen's."""
    chart(fig, ctx, key, share, on_select=partial(_open, key, kind, view),
          selection_mode="points")


def kind_maps(fig, kinds: list[str]):
    """fig (one layers × heads heatmap per kind, trace i drawing kinds[i]: the scan, patching,
    contributions) with a click target on every cell, each naming its kind."""
    hint = _("click to open this head")
    for i, kind in enumerate(kinds):
        cell_targets(fig, hint, trace=i, kind=kind)
    return fig
