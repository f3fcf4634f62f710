"""Heads: statistics per head, knocking heads out, the importance scan and attention rollout;
one module per part, this one picks the part."""

from __future__ import annotations

import streamlit as st

from ui.context import Ctx
from ui.i18n import N_, Labels, _
from ui.state import seed, sticky
from ui.views.heads import ablation, detectors, rollout, scan, stats

HEADS_PARTS = Labels(stats=N_("Statistics"), detectors=N_("Detectors"),
                     ablation=N_("Knock out heads"), scan=N_("Importance scan"),
                     rollout=N_("Attention rollout"))


def render(ctx: Ctx) -> None:
    seed("heads_part", "stats")
    part = sticky(st.radio, "heads_part", _("Part"), options=list(HEADS_PARTS), horizontal=True,
                  format_func=HEADS_PARTS.get, label_visibility="collapsed")
    {"stats": stats.render, "detectors": detectors.render, "ablation": ablation.render,
     "scan": scan.render, "rollout": rollout.render}[part](ctx)
