"""URL state: query parameters read once per session, widget seeds, widgets whose value
outlives the views that draw them, the shared kind/layer/head, and the link written back."""

from __future__ import annotations

import streamlit as st

from model import Bundle
from model.analysis.detectors import DETECTORS
from ui.context import Notes
from ui.i18n import _, browser_lang
from ui.text import KIND_LABELS, md

MAX_URL_TEXT = 2_000  # longer text is left out of shareable links


def url_once() -> dict[str, str]:
    """The query parameters on the first run of a session; later runs: {} (widgets rule)."""
    if st.session_state.get("_url_read"):
        return {}
    st.session_state["_url_read"] = True
    params = {k: st.query_params[k] for k in st.query_params}
    st.session_state["_url"] = params  # for views that read a parameter when first drawn
    return params


def url_value(key: str) -> str | None:
    """A query parameter of the session's first run (e.g. `corrupt` for view=patch)."""
    return st.session_state.get("_url", {}).get(key)


def link_int(raw: str) -> int | None:
    """A link's non-negative whole number, else None: not "²" (isascii), not "-1" (isdigit),
    and short, since int() raises on strings of over 4,300 digits."""
    return int(raw) if raw.isascii() and raw.isdigit() and len(raw) < 10 else None


def seed(key: str, value: object) -> None:
    """Give a widget its starting value through session state (never through index=)."""
    if key not in st.session_state:
        st.session_state[key] = value


def _copy(src: str, dst: str) -> None:
    st.session_state[dst] = st.session_state[src]


def sticky(widget, key: str, label: str, **kwargs):
    """A widget whose value outlives views that do not draw it (kept under `key`)."""
    shadow = f"_w_{key}"
    st.session_state[shadow] = st.session_state[key]
    return widget(label, key=shadow, on_change=_copy, args=(shadow, key), **kwargs)


def head_state(bundle: Bundle, url: dict[str, str], notes: Notes) -> None:
    """kind/layer/head: from the URL once (checked against the model), then kept valid."""
    state = st.session_state
    kinds = bundle.kinds
    if "kind" not in state:
        state["kind"], state["layer"], state["head"] = kinds[0] if kinds else "", 0, 0
        first = (bundle.card or {}).get("default_head")  # the card's own pick (its "why")
        if isinstance(first, dict) and first.get("kind") in kinds and all(
                isinstance(first.get(k), int) for k in ("layer", "head")):
            state["kind"], state["layer"], state["head"] = (first["kind"], first["layer"],
                                                            first["head"])
        if "kind" in url:
            if url["kind"] in kinds:
                state["kind"] = url["kind"]
            else:
                notes.warnings.append(_("Unknown attention kind {value} in the link; showing "
                                        "{kind}.").format(value=md(repr(url["kind"])),
                                                          kind=KIND_LABELS[state["kind"]]))
        for name, limit in (("layer", bundle.n_layers(state["kind"]) if kinds else 0),
                            ("head", bundle.config.n_heads)):
            if name in url:
                value = url[name]
                number = link_int(value)
                if number is not None and number < limit:
                    state[name] = number
                else:
                    notes.warnings.append(_("{name} {value} from the link is not between 0 "
                                            "and {last}; showing {name} 0.").format(
                        name=name, value=md(repr(value)), last=limit - 1))
    if kinds and state["kind"] not in kinds:
        state["kind"] = kinds[0]
    if kinds and not 0 <= state["layer"] < bundle.n_layers(state["kind"]):
        state["layer"] = 0
    if not 0 <= state["head"] < bundle.config.n_heads:
        state["head"] = 0


def detector_state(url: dict[str, str], notes: Notes) -> None:
    """detector= from the link: opens Heads › Detectors on that detector; an unknown value is
    a note and the default detector."""
    if "detector" not in url:
        return
    value = url["detector"]
    st.session_state["heads_part"] = "detectors"
    if value in DETECTORS:
        st.session_state["det_detector"] = value
    else:
        notes.warnings.append(_("Unknown detector {value} in the link; showing {name}.").format(
            value=md(repr(value[:80])), name=DETECTORS[0]))


def write_url(params: dict[str, str]) -> None:
    """Put the page state into the address bar (only when it changed)."""
    current = {k: st.query_params[k] for k in st.query_params}
    if current != params:
        st.query_params.from_dict(params)


def link_params(name: str, inputs: dict, view: str) -> dict[str, str]:
    """The URL query parameters that reopen exactly this page."""
    state = st.session_state
    params = {"ckpt": name}
    if len(inputs["text"]) <= MAX_URL_TEXT:
        params["text"] = inputs["text"]
    params.update(lang=inputs["lang"], view=view, kind=state["kind"], layer=str(state["layer"]),
                  head=str(state["head"]))
    if inputs["ablate"]:
        params["ablate"] = inputs["ablate"]
    corrupt = state.get("patch_corrupt")
    if view == "patch" and corrupt and len(corrupt) <= MAX_URL_TEXT:
        params["corrupt"] = corrupt  # ui/views/patch.py's corrupted sentence
    if view == "tour" and "tour_step" in state:  # the tour's step, 1-based in the link
        params["step"] = str(int(state["tour_step"]) + 1)
    if view == "why" and "why_query" in state and "why_key" in state:  # ui/views/why.py
        params["query"], params["key"] = str(state["why_query"]), str(state["why_key"])
    if view == "similarity" and "sim_a" in state and "sim_b" in state:  # the chosen pair, 1-based
        params["pair"] = f"{int(state['sim_a']) + 1},{int(state['sim_b']) + 1}"
    if view == "cache" and "cache_policy" in state:  # ui/views/cache_evict.py's what-if
        params["policy"] = str(state["cache_policy"])
        params["budget"] = str(state.get("cache_budget", ""))
    if view == "heads" and state.get("heads_part") == "detectors":  # ui/views/heads/detectors
        params["detector"] = str(state.get("det_detector", DETECTORS[0]))
    if view == "atlas":  # ui/views/atlas.py's choices
        for name in ("n", "place", "colour", "x", "y"):
            if f"atlas_{name}" in state:
                params[name] = str(state[f"atlas_{name}"])
    if state.get("attn_measure") == "norms":  # ui/views/measure.py's toggle, off by default
        params["measure"] = "norms"
    if state.get("present"):  # presenter mode stays on in the link
        params["present"] = "1"
    lang_ui = state.get("lang_ui")
    if lang_ui == "ko" or (lang_ui == "en" and browser_lang() == "ko"):  # not the default
        params["lang_ui"] = lang_ui
    return params
