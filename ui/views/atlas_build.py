"""Building the head atlas on the page: the shared result, or an estimate, a button when the
build is over a few seconds, the admission gate, a bar and Cancel (the atlas view and its
comparison with another model or snapshot both build through here); and fitting the
scatters' point labels to the mode's width and font.."""

from __future__ import annotations

import streamlit as st
import torch

from model.analysis.atlas import JS_SECONDS_PER_CELL, corpus_inputs, estimate_atlas, head_atlas
from ui.admission import admitted, or_warning
from ui.cost import asks_first, seconds
from ui.i18n import _
from ui.presenter import MIN_PX, PLOT_WIDTH, PLOTLY_FONT, ZOOM, presenting
from ui.runtime import result_get, result_put
from ui.sweep import Sweep, stopped
from viz import atlas as viz_atlas
from viz.common import SCREEN_W


def build_atlas(bundle, key: tuple, lines: list[str] | None, pairs: list | None, n: int,
                name: str):
    """The atlas kept under `key` in the shared results, or built now: an estimate, a button
    when it is over a few seconds (widget key f"{name}_go"), the admission gate, a bar and
    Cancel (sweep `name`); None while it waits for its button or was refused."""
    found = result_get(key)
    if found is not None:
        return found
    inputs, _where = corpus_inputs(bundle, lines, pairs, n)
    est, dims, cells = estimate_atlas(bundle, inputs)
    secs = sum(seconds(d) for d in dims) + cells * JS_SECONDS_PER_CELL / max(
        1, torch.get_num_threads())
    stopped(name)
    if asks_first(secs) and not st.button(
            _("Build the atlas over {n} inputs (about {s:.0f} s, {mb:.0f} MB at most)")
            .format(n=len(inputs), s=secs, mb=est.mb), key=f"{name}_go"):
        st.caption(_("The atlas runs the model on every input once and compares every pair "
                     "of heads; it is kept for every session afterwards."))
        return None

    def run():
        with Sweep(name, _("Measuring every head over {n} inputs…")
                   .format(n=len(inputs))) as sweep:
            atlas = head_atlas(bundle, lines, pairs=pairs, n=n, progress=sweep.report)
        result_put(key, atlas)
        return atlas

    return or_warning(lambda: admitted(est, lambda: result_get(key), run))

def label_room(fig) -> tuple[int, int]:
    """Drop the point labels that would collide at this mode's width and fonts (presenter
    mode draws them 1.5x, at least MIN_PX, and the figure 1.5x as high); (kept, all)."""
    sizes = [t.textfont.size for t in fig.data if t.textfont and t.textfont.size]
    font = max(sizes, default=12)
    if presenting():
        return viz_atlas.place_labels(fig, PLOT_WIDTH, max(MIN_PX, round(font * ZOOM)),
                                      MIN_PX, (fig.layout.height or 450) * ZOOM)
    return viz_atlas.place_labels(fig, SCREEN_W, font, PLOTLY_FONT)
