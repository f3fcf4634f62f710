"""Heads › Importance scan: knock out each head alone and measure the loss again."""

from __future__ import annotations

import time

import streamlit as st

from model.analysis.ablation import importance_scan
from model.analysis.similarity import partner, pooled_scan
from model.backends import facts
from model.dispatch import estimate_scan
from ui import cost
from ui.admission import admitted, or_warning
from ui.common import NOT_NATIVE, can_ablate
from ui.context import Ctx
from ui.i18n import _
from ui.model_words import embedding_words
from ui.pick import head_chart, kind_maps
from ui.runtime import result_get, result_put
from ui.sweep import Sweep, chunk_within, stopped
from viz import heads as viz_heads


def render(ctx: Ctx) -> None:
    if not can_ablate(ctx.bundle):
        st.info(_(NOT_NATIVE).format(what=_("The importance scan")))
        return
    line = ctx.lines[ctx.b]
    unit = facts(ctx.bundle).effect_unit
    other = _partner_line(ctx) if unit == "cosine" else None
    if unit == "cosine":
        _cosine_caption(ctx)
    elif unit == "nats":
        st.caption(_("Sentence {b}: each head is knocked out alone (all kinds) and the loss of "
                     "the un-ablated greedy translation is measured again; red = the loss rose "
                     "without the head. One batched forward pass per 64 heads; results are kept "
                     "per checkpoint and sentence for every session.").format(b=ctx.b + 1))
    else:  # an encoder: what moves is its last hidden states (model.analysis.ablation)
        st.caption(_("Sentence {b}: each head is knocked out alone and the last hidden states "
                     "are compared with the run that has every head (mean relative change); "
                     "red = knocking the head out changes them most. One batched forward pass "
                     "per 64 heads; results are kept per checkpoint and sentence for every "
                     "session.").format(b=ctx.b + 1))
    key = ("scan", ctx.key, line, ctx.lang) + ((other,) if unit == "cosine" else ())
    # a scan already kept is shown at once, never queued again
    secs = _seconds(ctx, line)
    stopped("scan")  # the last run's scan was cancelled: say so once
    label = (_("Scan every head (about {s:.0f} s)").format(s=secs) if secs >= 1
             else _("Scan every head (under a second)"))
    if st.button(label, key="scan_go") and result_get(key) is None:
        if or_warning(lambda: admitted(estimate_scan(ctx.bundle, line, ctx.lang),
                                       lambda: result_get(key),
                                       lambda: _scan(ctx, line, key, secs, other))) is None:
            return
    found = result_get(key)
    if found is None:
        st.info(_("Press “Scan every head” to measure how much the model needs each head."))
        return
    scan, seconds = found
    st.caption(_("Scan took {s:.2f} s.").format(s=seconds))
    # a click on a cell opens that head (of that map's kind) in the attention view
    title = (viz_heads.IMPORTANCE_TITLE if unit == "nats" else
             _("Importance scan: change of the last hidden states when one head is knocked out")
             if unit != "cosine" else _scan_title(ctx))
    head_chart(kind_maps(viz_heads.importance_figure(scan, title, unit=unit), list(scan)), ctx,
               key="scan_map",
               kind=next(iter(scan)))


def _seconds(ctx: Ctx, line: str) -> float:
    """The scan's time from the admission estimate's shapes (ui/cost.py): a decode, then heads
    + 1 knocked-out copies, 64 per forward."""
    dims = estimate_scan(ctx.bundle, line, ctx.lang).dims
    if dims is None:
        return 0.0
    return cost.sweep_seconds(dims, _rows(ctx), extra_passes=1)  # the decode, with its prefix cache


def _rows(ctx: Ctx) -> int:
    """The scan's copies: every head of every kind, plus the untouched one."""
    return sum(ctx.bundle.n_layers(k) for k in ctx.bundle.kinds) * ctx.bundle.config.n_heads + 1


def _partner_line(ctx: Ctx) -> str | None:
    """Line B of a sentence-embedding model's scan (None with one line typed)."""
    b = partner(len(ctx.lines), ctx.b)
    return None if b is None else ctx.lines[b]


def _cosine_caption(ctx: Ctx) -> None:
    what = embedding_words(facts(ctx.bundle))
    b = partner(len(ctx.lines), ctx.b)
    if b is None:
        st.caption(_("This model's output is {what}. Sentence {a}: each head is knocked out "
                     "alone and the change in the pooled embedding is measured: the cosine of "
                     "the vector without the head to the vector with every head, minus 1; "
                     "blue = knocking the head out moves it most. Type a second line to "
                     "measure the change in the cosine to it instead.").format(
            what=what, a=ctx.b + 1))
        return
    st.caption(_("This model's output is {what}. Sentence {a}: each head is knocked out alone "
                 "and the change in the cosine of line {a} to line {b} is measured; blue = the "
                 "cosine fell without the head (it makes the two lines alike), red = it rose. "
                 "Results are kept per checkpoint and pair of lines for every session.").format(
        what=what, a=ctx.b + 1, b=b + 1))


def _scan_title(ctx: Ctx) -> str:
    b = partner(len(ctx.lines), ctx.b)
    if b is None:
        return _("Importance scan: change in the pooled embedding when one head is knocked out")
    return _("Importance scan: change in the cosine of line {a} to line {b} when one head is "
             "knocked out").format(a=ctx.b + 1, b=b + 1)


def _scan(ctx: Ctx, line: str, key: tuple, secs: float = 0.0, other: str | None = None
          ) -> tuple:
    """Run the scan with a progress bar and Cancel (once the gate admits it) and keep it for
    everyone; a stopped scan raises out of here before anything is kept."""
    with Sweep("scan", _("Knocking out one head at a time…")) as sweep:
        start = time.monotonic()
        if facts(ctx.bundle).effect_unit == "cosine":
            scan = pooled_scan(ctx.bundle, line, other, progress=sweep.report)
        else:
            scan = importance_scan(ctx.bundle, line, ctx.lang, progress=sweep.report,
                                   chunk=chunk_within(secs, _rows(ctx), 64))  # a check ~0.5 s
        found = (scan, time.monotonic() - start)
        result_put(key, found)
    return found
