"""The page side of admission control (model/budget.py holds the gate itself).

A run whose Trace is not cached asks the server's one Gate for room before it starts. While it
waits, the page shows "Waiting for the model: k ahead" and the wait checks, every poll, whether
the session has gone (tab closed) or has newer input (a rerun): either ends the wait and its
place in the queue goes to the next. A run too large for the whole budget, a full queue and a
wait past the timeout raise TooLarge / Busy, which the caller shows as a message; the typed
text stays in the box and the link.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import streamlit as st
import torch
from streamlit.runtime.scriptrunner_utils.script_run_context import (
    get_run_yield_check,
    get_script_run_ctx,
)

from model.budget import Estimate, too_large_advice, too_large_message
from model.gate import (
    BUSY,
    QUEUE_FULL,
    QUEUE_TIMEOUT,
    Busy,
    Gate,
    QueueFull,
    QueueTimeout,
    TooLarge,
    Withdrawn,
    gate_from_env,
    threads_per_run,
)
from model.heap import return_freed_memory
from model.norms import limit_blas_threads
from ui.i18n import N_, _

T = TypeVar("T")
__all__ = ["BUSY", "QUEUE_FULL", "QUEUE_TIMEOUT", "Busy", "QueueFull", "QueueTimeout",
           "TooLarge", "admitted", "or_warning", "refusal", "server_gate"]

# model/budget.py's messages, marked for the catalogue here (model/ knows no gettext);
# tests/unit/test_budget_runs.py checks the English is the same
BUSY_MARKED = N_("The server is busy, try again in a moment.")
QUEUE_FULL_MARKED = N_("The server is busy: every place in the queue for the model is taken. "
                       "Try again in a moment.")
QUEUE_TIMEOUT_MARKED = N_("The server is still busy after {seconds} seconds of waiting for the "
                          "model. Try again in a moment.")
_TOO_LARGE = {
    "lines": N_("This input needs about {mb} MB to run, more than this server's whole budget "
                "for model runs ({budget} MB). Use fewer lines or shorter lines: at most {fit} "
                "of these lines at a time."),
    "line": N_("This input needs about {mb} MB to run, more than this server's whole budget "
               "for model runs ({budget} MB). Use fewer lines or shorter lines: fewer or "
               "shorter lines (each line alone is too long)."),
    "sentence": N_("This sentence needs about {mb} MB for this, more than this server's whole "
                   "budget for model runs ({budget} MB). Use a shorter sentence."),
    "validation": N_("The validation average needs about {mb} MB at a time, more than this "
                     "server's whole budget for model runs ({budget} MB); it cannot run here."),
}


@st.cache_resource
def server_gate() -> Gate:
    """The process's gate (ATTN_INFLIGHT_MB, ATTN_QUEUE, ATTN_QUEUE_TIMEOUT_S, ATTN_RUNS).

    Thread policy: at most `runs` captures run at once and torch gets at most cores ÷ runs
    intra-op threads (a process-wide setting), so runs × threads never exceeds the cores.
    """
    gate = gate_from_env()
    # never more than cores ÷ runs; fewer if the operator asked (OMP_NUM_THREADS=1)
    torch.set_num_threads(min(torch.get_num_threads(), threads_per_run(gate.runs)))
    # numpy's OpenBLAS as well (norms, PCA, SVD): its own default is one spinning thread per
    # core, and on a busy 2-core machine the query–key map's first PCA took 3.0 s, not 0.06
    limit_blas_threads(torch.get_num_threads())
    return_freed_memory()  # freed Traces and activations go back to the kernel at once
    return gate


def _session() -> object | None:
    ctx = get_script_run_ctx(suppress_warning=True)
    return ctx.session_id if ctx is not None else None


def admitted(est: Estimate, lookup: Callable[[], T | None], run: Callable[[], T]) -> T:
    """run() once the gate admits est.bytes; lookup()'s result instead whenever the input is
    found cached (before, while waiting, or once admitted: another session ran it)."""
    gate = server_gate()
    if est.bytes > gate.budget:
        raise TooLarge(too_large_message(est, gate.budget), est, gate.budget)
    check = get_run_yield_check()  # raises StopException / RerunException: session gone/newer
    slot, shown = None, None

    def on_wait(ahead: int) -> bool:
        nonlocal slot, shown
        if check is not None:
            check()
        if lookup() is not None:
            return True
        if ahead != shown:
            slot = slot or st.empty()
            slot.info(_("Waiting for the model: {ahead} ahead. You can change the text "
                        "meanwhile; the newest input is the one that runs.").format(ahead=ahead))
            shown = ahead
        return False

    try:
        with gate.admit(est.bytes, owner=_session(), on_wait=on_wait):
            if slot is not None:
                slot.empty()
            found = lookup()
            return found if found is not None else run()
    except Withdrawn:
        found = lookup()
        if found is None:  # evicted again in between: very unlikely; wait once more
            return admitted(est, lookup, run)
        return found
    finally:
        if slot is not None:
            slot.empty()


def too_large_text(est: Estimate, budget: int) -> str:
    """too_large_message in the interface language."""
    key, values = too_large_advice(est, budget)
    return _(_TOO_LARGE[key]).format(**values)


def refusal(exc: BaseException) -> str | None:
    """The message for a run the gate turned away, or None for any other failure."""
    if isinstance(exc, QueueFull):  # refused at once
        return _(QUEUE_FULL_MARKED)
    if isinstance(exc, QueueTimeout):  # waited the whole ATTN_QUEUE_TIMEOUT_S
        return _(QUEUE_TIMEOUT_MARKED).format(seconds=exc.seconds)
    if isinstance(exc, Busy):
        return _(BUSY_MARKED) if str(exc) == BUSY else str(exc)
    if isinstance(exc, TooLarge):
        return too_large_text(exc.est, exc.budget) if exc.est is not None else str(exc)
    return None


def or_warning(fn: Callable[[], T]) -> T | None:
    """fn(), or None once a gate refusal inside it is shown as a warning in its place (the rest
    of the page, the text and the ticked heads stay as they are)."""
    try:
        return fn()
    except (Busy, TooLarge) as exc:
        st.warning(refusal(exc))
        return None
