"""Heads › Detectors: previous-token, next-token, duplicate-token, induction, punctuation, sink
and positional heads, ranked, with a layers × heads map per kind; any head opens in the
attention view. A lab translator's sink can take validation pairs; a model without a
validation split can average every detector over the built-in sentences in its language."""

from __future__ import annotations

import streamlit as st

from model.analysis.builtin_sentences import LANGUAGE_NAMES, builtin_language, builtin_lines
from model.analysis.detectors import (
    DETECTORS,
    QUICK,
    builtin_sums,
    chance_levels,
    detect_heads,
    estimate_builtin,
    estimate_detectors,
    pair_traces,
    quick_detectors,
)
from model.backends import is_translator
from model.dispatch import estimate_validation
from ui.admission import admitted, or_warning
from ui.common import goto
from ui.context import Ctx, trace_key
from ui.i18n import _
from ui.pick import head_chart
from ui.runtime import result_get, result_put, val_split
from ui.state import seed
from ui.sweep import Sweep, stopped
from ui.tables import dataframe
from ui.text import KIND_LABELS, md
from viz import detectors as viz_detectors
from viz.click import cell_targets

SINK_PAIRS = 32  # validation pairs (both directions) added to the sink average


def _builtin_key(ctx: Ctx) -> tuple:
    """The built-in set's sums depend on the model and the knocked-out heads only."""
    return "det_builtin", ctx.key, ctx.ablate


def _builtin(ctx: Ctx) -> tuple | None:
    """(sums, chance sums) of the built-in sentence set once someone ran it on this model (and
    these knocked-out heads), shared by every session; None before."""
    return result_get(_builtin_key(ctx))


def _quick(ctx: Ctx, base: tuple | None) -> dict:
    """The detectors read from the typed input's Trace (no model run), plus the built-in set's
    sums when there are any, kept per input."""
    key = ("det_quick", *trace_key(ctx), base is not None)
    found = result_get(key)
    if found is None:
        found = quick_detectors(ctx.trace, base[0] if base else None)
        result_put(key, found)
    return found


def _runs(ctx: Ctx, base: tuple | None) -> dict | None:
    """Induction and positional: the model's own runs on a repeated random sequence and on the
    shuffled input, through the admission gate; None when refused (the warning is shown)."""
    key = ("det_runs", *trace_key(ctx), base is not None)

    def run() -> dict:
        with st.spinner(_("Running the repeated random sequence and the shuffled input…")):
            found = detect_heads(ctx.bundle, ctx.trace, base=base[0] if base else None)
        result_put(key, found)
        return found

    return or_warning(lambda: admitted(estimate_detectors(ctx.bundle, ctx.trace),
                                       lambda: result_get(key), run))


def _builtin_part(ctx: Ctx) -> tuple | None:
    """A model without a validation split: the built-in sentences in its language, a button
    until someone ran them (then every detector averages over them too), or a note why not."""
    found = _builtin(ctx)
    language = builtin_language(ctx.bundle)
    lines = builtin_lines(ctx.bundle)
    if not lines:
        st.caption(_("Over the typed input only: this model has no validation set, and no "
                     "built-in sentence set matches its vocabulary."))
        return None
    name = _(LANGUAGE_NAMES.get(language, language))
    if found is not None:
        st.caption(_("Averaged over the typed input and {n} built-in {language} sentences "
                     "(chosen by the model's vocabulary; induction keeps its own random "
                     "sequence).").format(n=len(lines), language=name))
        return found
    st.caption(_("Over the typed input only so far: this model has no validation set."))
    stopped("builtin")  # the last run was cancelled: say so once
    if st.button(_("Average over {n} built-in {language} sentences").format(
            n=len(lines), language=name), key="det_builtin_go"):
        key = _builtin_key(ctx)

        def run() -> tuple:
            # a bar and Cancel, checked after each chunk; a stop keeps nothing
            with Sweep("builtin", _("Running {n} built-in sentences and their shuffled "
                                    "copies…").format(n=len(lines))) as sweep:
                got = builtin_sums(ctx.bundle, lines, ablate=ctx.trace.ablate,
                                   progress=sweep.report)
                result_put(key, got)
            return got

        found = or_warning(lambda: admitted(estimate_builtin(ctx.bundle, lines),
                                            lambda: result_get(key), run))
        if found is not None:
            st.rerun()
    return found


def _sink_button(ctx: Ctx) -> dict | None:
    """A lab translator's sink over validation sentences too: Detected (scores and places), or
    None with a button."""
    key = ("det_sink_val", *trace_key(ctx))
    found = result_get(key)
    if found is not None:
        st.caption(_("Sink: the typed input and {n} validation pairs in both directions.")
                   .format(n=SINK_PAIRS))
        return found
    st.caption(_("Sink: over the typed input only so far."))
    stopped("sink")  # the last run's sink average was cancelled: say so once
    if st.button(_("Add {n} validation pairs to the sink").format(n=SINK_PAIRS),
                 key="det_sink_go"):
        pairs = val_split(ctx.bundle, ctx.key)[:SINK_PAIRS]

        def run() -> dict:
            # a bar and Cancel, checked after each batch of pairs; a stop keeps nothing
            with Sweep("sink", _("Running {n} validation pairs in both directions…")
                       .format(n=SINK_PAIRS)) as sweep:
                traces = pair_traces(ctx.bundle, pairs, progress=sweep.report)
                sink = detect_heads(ctx.bundle, ctx.trace, validation=traces, run=False)
                result_put(key, sink)
            return sink

        found = or_warning(lambda: admitted(estimate_validation(ctx.bundle, pairs),
                                            lambda: result_get(key), run))
        if found is not None:
            st.rerun()
    return found


def _chance(ctx: Ctx, base: tuple | None) -> dict:
    """What a uniform head scores on the same rows (the built-in set's too when it joined),
    per detector and kind, kept per input."""
    key = ("det_chance", *trace_key(ctx), base is not None)
    found = result_get(key)
    if found is None:
        found = chance_levels(ctx.bundle, ctx.trace, base[1] if base else None)
        result_put(key, found)
    return found


def _new_detector() -> None:
    """Another detector: its own ranking, so the picker starts again at its strongest head."""
    st.session_state.pop("det_open_head", None)


def _empty_note(detector: str, kind: str) -> str:
    label = KIND_LABELS.get(kind, kind)
    if detector == "duplicate_token":
        return _("{kind}: no query of this input has another copy of its own token among the "
                 "keys it sees, so there is nothing to score. Type a sentence that repeats a "
                 "word (“the cat saw the cat”) to see this detector.").format(kind=label)
    return _("{kind}: this detector counted no query of this input, so there is nothing to "
             "score.").format(kind=label)


def render(ctx: Ctx) -> None:
    t = ctx.trace
    if not t.attn:
        st.info(_("The detectors need the attention weights, which this model did not record."))
        return
    names = viz_detectors.DETECTOR_NAMES
    seed("det_detector", "previous_token")
    detector = st.radio(_("Detector"), list(DETECTORS), key="det_detector", horizontal=True,
                        format_func=lambda d: _(names[d]), on_change=_new_detector)
    st.caption(md(_(viz_detectors.DETECTOR_DEFINITIONS[detector])))
    base = None if is_translator(ctx.bundle) else _builtin_part(ctx)
    if detector in QUICK:
        found = _quick(ctx, base)
        if detector == "sink" and is_translator(ctx.bundle):
            found = _sink_button(ctx) or found
    else:
        try:
            found = _runs(ctx, base)
        except ValueError as exc:
            st.info(_("This detector cannot run here: {reason}").format(reason=md(exc)))
            return
        if found is None:
            return
    scores = dict(found.get(detector, {}))
    if not scores:
        st.info(_("This detector does not apply to this model's attention kinds."))
        return
    places = getattr(found, "sink_place", {}) if detector == "sink" else None
    first = getattr(found, "first_piece", {})
    chance = _chance(ctx, base).get(detector, {})
    rows = viz_detectors.ranked_rows(scores, chance=chance, places=places, first_piece=first)
    shown = [{k: v for k, v in r.items() if k != "_head"} for r in rows]
    st.caption(_("Chance: what a head that spreads its attention evenly over the keys it may "
                 "see would score on the same rows. A score near it says nothing about the "
                 "head."))
    if shown:
        dataframe(shown[:20], content=True)
    picks = [r["_head"] for r in rows]
    if st.session_state.get("det_open_head") in picks:
        # written back so the page shows this detector's score: the browser keeps a keyed
        # selectbox's old label (the previous detector's score) while the value still fits
        st.session_state["det_open_head"] = st.session_state["det_open_head"]
    elif picks:  # a new detector: its strongest head, set so that its label is redrawn too
        st.session_state["det_open_head"] = picks[0]
    if picks:
        st.markdown(_("**Open a head** in the attention view"))
        # [2, 1]: a quarter of the row cut the buttons' labels in presenter mode
        c1, c2 = st.columns([2, 1], vertical_alignment="bottom")
        head = c1.selectbox(
            _("Head (ranked)"), picks, key="det_open_head",
            format_func=lambda h: KIND_LABELS.get(h[0], h[0]) + " · "
            + _("layer {layer}").format(layer=h[1]) + " · " + _("head {head}").format(head=h[2])
            + f" · {scores[h[0]][h[1], h[2]]:.3f}" + viz_detectors.chance_note(chance.get(h[0])))
        c2.button(_("Open in the attention view"), key="det_open", on_click=goto,
                  args=("attention", head))
        c2.button(_("Why this head attends"), key="det_why", on_click=goto, args=("why", head))
    cols = st.columns(min(2, len(scores)))
    for i, (kind, z) in enumerate(scores.items()):
        with cols[i % len(cols)]:
            if viz_detectors.is_empty(z):
                st.info(_empty_note(detector, kind))
                continue
            fig = viz_detectors.detector_heatmap(z, kind, detector, chance.get(kind),
                                                 (places or {}).get(kind), first.get(kind, ""))
            # a click on a cell opens that head in the attention view, as the picker does
            head_chart(cell_targets(fig, _("click to open this head")), ctx,
                       key=f"det_map_{kind}", kind=kind, share=1 / len(cols))
