"""A sweep on the page: a progress bar with a Cancel button, and a rerun that stops it.

Streamlit stops a script only where it checks (get_run_yield_check): at every report() here,
so a sweep stops within one chunk of work once the session reruns (Cancel, any other widget, a
new text) or is gone (the page closed). The stop is an exception, so every `with` around the
sweep unwinds: the model's hooks (context managers), the admission gate's ticket (its bytes
go back), and the cache put that only follows a finished sweep never happens. The next run
says the sweep was stopped and keeps nothing of it.

    with Sweep(name, text) as s:  s.report(f) moves the bar, or stops the run
    chunk_within(seconds, rows)   copies per forward so that a check comes every ~0.5 s
"""

from __future__ import annotations

import math

import streamlit as st
from streamlit.runtime.scriptrunner_utils.script_run_context import get_run_yield_check

from ui.i18n import _

CHECK_S = 0.5  # estimated seconds of work between two checks: a stop lands within 1 s
_RUNNING = "_sweep_running"  # session key: the name of a sweep that started and did not finish


def chunk_within(seconds: float, rows: int, most: int) -> int:
    """Copies per forward (at most `most`) so that one forward of a sweep of `rows` copies
    estimated at `seconds` takes about CHECK_S."""
    if seconds <= 0 or rows <= 0:
        return most
    per_row = seconds / rows
    return max(1, min(most, math.floor(CHECK_S / per_row)))


def stopped(name: str) -> bool:
    """True once (and a note is shown) when sweep `name` was stopped by the last rerun."""
    if st.session_state.get(_RUNNING) != name:
        return False
    del st.session_state[_RUNNING]
    st.info(_("The sweep was stopped; nothing of it was kept. Start it again with its button."))
    return True


class Sweep:
    """A progress bar and a Cancel button while `name` runs; report(f) moves the bar (0..1) and
    raises Streamlit's stop when the session has a newer run or is gone."""

    def __init__(self, name: str, text: str) -> None:
        self.name, self.text = name, text
        self.check = get_run_yield_check()
        st.session_state[_RUNNING] = name
        self.slot = st.empty()  # one placeholder: clear() takes the bar and the button away
        box = self.slot.container()
        self.bar = box.progress(0.0, text=text)
        box.button(_("Cancel"), key=f"sweep_cancel_{name}",
                        help=_("Stops the sweep within a second; nothing of it is kept."))

    def report(self, fraction: float) -> None:
        if self.check is not None:
            self.check()  # raises when Cancel (any rerun) is waiting, or the page is gone
        self.bar.progress(min(1.0, max(0.0, float(fraction))), text=self.text)

    def __enter__(self) -> Sweep:
        return self

    def __exit__(self, kind, exc, tb) -> bool:
        # finished, or failed (a refusal): no stop note and no bar; a stop (Streamlit's
        # BaseException) keeps the note for the next run, which redraws the page anyway
        if kind is None or issubclass(kind, Exception):
            self.done()
        return False

    def clear(self) -> None:
        """Take the bar and Cancel off the page (never left above a refusal)."""
        self.slot.empty()

    def done(self) -> None:
        """The sweep finished: no stop note on the next run, and the bar goes."""
        if st.session_state.get(_RUNNING) == self.name:
            del st.session_state[_RUNNING]
        self.clear()
