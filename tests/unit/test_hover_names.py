"""The layers × heads maps' hover (which their click targets repeat) names attention kinds in
words, never enc_self / dec_self / cross (issue 39 item 7)."""

from __future__ import annotations

import re
from types import SimpleNamespace

import numpy as np

from viz import contributions, heads
from viz.click import cell_targets

KINDS = ("enc_self", "dec_self", "cross")
# a kind's key alone ("encoder–decoder (cross) attention" and "cross-attention" are words)
INTERNAL = re.compile(r"(?<![\w(-])(enc_self|dec_self|cross)(?![\w)-])")


def _hovers(fig) -> list[str]:
    return [t.hovertemplate or "" for t in fig.data]


def test_head_maps_hover_in_words():
    z = {k: np.zeros((2, 3)) for k in KINDS}
    figs = [heads.importance_figure(z), *heads.stats_heatmaps({"entropy": z["cross"]}, "cross"),
            contributions.heads_figure(SimpleNamespace(dla=z, knockout=z, token="x", step=0,
                                                       logit=1.0))]
    for fig in figs:
        cell_targets(fig, "click")
        found = [h for h in _hovers(fig) if INTERNAL.search(h)]
        assert not found, found
        assert any("attention" in h for h in _hovers(fig))
