"""The sidebar's "Download this Trace": the Trace on screen as one .npz (arrays + trace.json,
no pickle; model.trace_io) that `Trace.load()` reads back, and its trace.json alone."""

from __future__ import annotations

import re
import weakref
from collections.abc import Callable

import streamlit as st

from model import Trace
from model.trace_io import json_text, to_bytes
from ui.i18n import _


def file_stem(name: str) -> str:
    """trace-<checkpoint>, with anything but letters, digits, '.', '_' and '-' replaced."""
    return "trace-" + (re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip(".-") or "model")


def trace_download(trace: Trace, name: str, again: Callable[[], Trace],
                   complete: Callable[[Trace], bool] = lambda t: True) -> None:
    """Two download buttons; the files are built only when a button is pressed, from the Trace
    on screen if complete(trace), or else (or if the server has let it go by then) from
    again() (the same capture, every group)."""
    stem = file_stem(name)
    # The data callables live on in the session until its next rerun. Holding the Trace itself
    # kept every open page's Trace alive outside the cache's byte budget (eight idle tabs, eight
    # Traces of up to ~600 MB), so they hold a weak reference and the way to make it again.
    ref = weakref.ref(trace)

    def current() -> Trace:
        trace = ref()
        # the view on screen may have recorded only what it needs (View.needs): the file holds
        # every group, so again() records the rest into the cached Trace
        return trace if trace is not None and complete(trace) else again()

    with st.expander(_("Download this Trace")):
        st.caption(_("Every recorded array as one .npz (NumPy's zip of .npy files, with "
                     "trace.json inside; no pickle). In Python: Trace.load(path)."))
        # a callable is run on click, on its own thread: reruns never serialise the Trace
        st.download_button(_("Trace (.npz)"), data=lambda: to_bytes(current()),
                           file_name=f"{stem}.npz", mime="application/zip", key="dl_trace_npz",
                           on_click="ignore")
        st.download_button(_("Tokens and settings (.json)"), data=lambda: json_text(current()),
                           file_name=f"{stem}.json", mime="application/json",
                           key="dl_trace_json", on_click="ignore")
