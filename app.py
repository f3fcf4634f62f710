"""Attention lab: type sentences, watch a small encoder–decoder Transformer work on them.

The entry point, run afresh by Streamlit on every rerun: main() reads the URL, draws the
sidebar (ui/sidebar.py), runs the model once per input (cached in ui/runtime.py, which is
imported once per process and shared by every session) and hands the resulting Trace to the
selected view. Each view is a module ui/views/<name>.py with render(ctx), registered in
ui/views/__init__.py; viz/ builds every figure, model/ does every computation.
"""

from __future__ import annotations

import logging
from functools import partial

import streamlit as st

from model import Bundle, Trace
from model.backends import EVERYTHING
from model.settings import SettingsError, settings
from ui import i18n, model_words, presenter
from ui.admission import refusal
from ui.catalog import model_folders
from ui.common import can_ablate, clean_input, control_flow
from ui.context import Ctx, Notes
from ui.download import trace_download
from ui.i18n import _
from ui.runtime import cached_capture, recapture
from ui.sidebar import checkpoint_ui, input_ui, preset_buttons, sentence_ui, share_ui
from ui.state import detector_state, head_state, link_params, seed, url_once, write_url
from ui.text import md
from ui.views import VIEWS, view_label, view_needs

LOG = logging.getLogger("attention_lab")


def render_view(view: str, ctx: Ctx) -> None:
    """Draw one view; an unexpected failure becomes a short message, the trace goes to the log."""
    entry = VIEWS[view]
    try:
        reason = entry.applies(ctx.bundle)
        if reason:
            st.info(reason)
        else:
            with i18n.in_figures():  # chart titles, axes and hovers in the interface language
                entry.render(ctx)
    except Exception as exc:
        if control_flow(exc):
            raise
        if refusal(exc):  # a second input (compare view) turned away by the admission gate
            st.warning(refusal(exc))
            return
        LOG.exception("view %s failed", view)
        st.error(_("The {view} view could not be drawn ({error}: {reason}). The details are "
                   "in the server log.").format(view=_(entry.label), error=type(exc).__name__,
                                                reason=md(str(exc)[:200])))


def empty_prompt(bundle: Bundle) -> None:
    st.info(_("Type one or more sentences in the sidebar (one per line), or start from an "
              "example:"))
    preset_buttons("main", bundle)


def main() -> None:
    notes = Notes()
    url = url_once()
    i18n.choose(url, notes.warnings)  # lang_ui from the link, else the browser's language
    present = presenter.setup(url, notes)  # page config; present=1: projector layout
    if not present:
        st.title(_("Attention lab"))
    try:
        settings()  # a bad ATTN_* value stops the app here, named in one line
    except SettingsError as exc:
        LOG.error("%s", exc)
        st.error(_("This server's settings are wrong: {problem}").format(problem=md(str(exc))))
        return
    catalog = model_folders()
    if not catalog:
        st.error(_("No checkpoint found. Train one (python -m training.train) or point "
                   "ATTN_CHECKPOINTS_DIR at a folder of checkpoints."))
        return
    with st.sidebar:
        i18n.language_toggle()
        name, bundle, key = checkpoint_ui(catalog, url, notes)
        if bundle is None:
            notes.show()
            return
        inputs = input_ui(url, notes, bundle)
    if inputs["ablate"] and not can_ablate(bundle):
        notes.warnings.append(_("Knocking out heads is not supported for this model (its "
                                "attention does not run through the lab's recorder); every "
                                "head is left in."))
        inputs["ablate"] = ""
    if url.get("view", "tokens") not in VIEWS:
        notes.warnings.append(_("Unknown view {value} in the link; showing tokens.").format(
            value=md(repr(url["view"]))))
    seed("view", url.get("view") if url.get("view") in VIEWS else "tokens")
    if present:  # only the view the link names (the tour, usually): no view bar
        view = st.session_state["view"]
    else:
        view = st.radio(_("View"), list(VIEWS), key="view", horizontal=True,
                        format_func=view_label, label_visibility="collapsed")
    head_state(bundle, url, notes)
    detector_state(url, notes)
    lines, input_notes = clean_input(inputs["text"])
    notes.warnings += [md(n) for n in input_notes]
    targets = None
    if inputs["typed"] is not None:
        typed, _typed_notes = clean_input(inputs["typed"])
        if len(typed) == len(lines):
            targets = tuple(typed)
        elif lines:
            notes.warnings.append(_("Teacher forcing needs one target line per sentence ({n} "
                                    "for {m}); using the model's own translation instead.")
                                  .format(n=len(typed), m=len(lines)))
    with st.sidebar:
        b = sentence_ui(lines) if lines else 0
    notes.show()
    try:
        if not lines:
            empty_prompt(bundle)
            return
        needs = view_needs(view, st.session_state, url)  # recorded for this view only
        trace = run_model(bundle, key, lines, targets, inputs, needs)
        if trace is not None:
            with st.sidebar:
                trace_download(trace, name, partial(recapture, bundle, key, tuple(lines), targets,
                                                    inputs["lang"], inputs["ablate"]),
                               complete=lambda _t: needs >= EVERYTHING)
            render_view(view, Ctx(bundle=bundle, key=key, trace=trace, lines=tuple(lines),
                                  targets=targets, lang=inputs["lang"], ablate=inputs["ablate"],
                                  b=b, hide_pad=inputs["hide_pad"], numbers=inputs["numbers"],
                                  colorscale=inputs["colorscale"], fmt=inputs["fmt"],
                                  needs=needs))
    finally:  # views may change kind/layer/head, so the link is written last
        params = link_params(name, inputs, view)
        write_url(params)
        with st.sidebar:
            share_ui(params)


def run_model(bundle: Bundle, key: str, lines: list[str], targets: tuple[str, ...] | None,
              inputs: dict, needs: frozenset[str]) -> Trace | None:
    """The cached capture of what the view needs, with cut sentences reported; a failure is a
    message, not a page."""
    try:
        trace = cached_capture(bundle, key, tuple(lines), targets, inputs["lang"],
                               inputs["ablate"], needs)
    except Exception as exc:
        if control_flow(exc):
            raise
        if refusal(exc):  # the admission gate: busy, or too large for the server's budget
            st.warning(refusal(exc))
            return None
        LOG.exception("capture failed")
        st.error(_("The model could not run on this input ({error}: {reason}).").format(
            error=type(exc).__name__, reason=md(str(exc)[:200])))
        return None
    # pieces cut, a line past the trained length, Korean in a vocabulary without it
    for note in model_words.input_notes(bundle, trace, lines):
        st.warning(note)
    return trace


if __name__ == "__main__":
    main()
