"""A cancelled sweep stops within a second and leaves nothing behind (issue 39 item 2,
issue 41 item 2).

Streamlit stops a script where it checks (get_run_yield_check); ui/sweep.Sweep checks at every
progress report, between forwards of about half a second. Here the check raises Streamlit's
StopException once a cancel event is set, as it does when Cancel (any rerun) is pressed or the
page is closed, and the sweep runs in a thread the way a session's script does. Afterwards:
the exception came within 1 s, no result is cached, the admission gate holds no bytes, the
model carries exactly the hooks it had after load, and no thread is left."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from streamlit.runtime.scriptrunner_utils.exceptions import StopException

from model import load_checkpoint
from model.patching import patch
from tests.conftest import needs
from tests.stress import hook_census, tiny_llama
from ui import runtime, sweep
from ui.admission import server_gate

PAPER = Path(__file__).resolve().parents[2] / "checkpoints" / "paper"
STOP_S = 1.0


class Canceller:
    """A Streamlit-like yield check that raises once `cancel()` was called; it counts the
    checks and remembers when the stop was asked."""

    def __init__(self) -> None:
        self.asked = threading.Event()
        self.checks = 0
        self.t_cancel = 0.0

    def __call__(self) -> None:
        self.checks += 1
        if self.asked.is_set():
            raise StopException()

    def cancel(self) -> None:
        self.t_cancel = time.monotonic()
        self.asked.set()


def run_and_cancel(work, check: Canceller, after_checks: int = 2) -> tuple[float, object]:
    """work() in a thread; cancel once it has checked `after_checks` times; (seconds from the
    cancel to the thread's end, what it raised or returned)."""
    out: dict = {}

    def target() -> None:
        try:
            out["value"] = work()
        except BaseException as exc:  # noqa: BLE001 - the stop is what we wait for
            out["value"] = exc
        out["t_end"] = time.monotonic()

    worker = threading.Thread(target=target, name="sweep-under-test")
    worker.start()
    deadline = time.monotonic() + 120
    while check.checks < after_checks and worker.is_alive() and time.monotonic() < deadline:
        time.sleep(0.005)
    assert worker.is_alive(), "the sweep ended before it could be cancelled: give it more rows"
    check.cancel()
    worker.join(timeout=30)
    assert not worker.is_alive()
    return out["t_end"] - check.t_cancel, out["value"]


@needs((PAPER / "config.json").is_file(), reason="needs checkpoints/paper")
def test_cancel_stops_the_contributions_sweep_and_keeps_nothing(monkeypatch):
    bundle = load_checkpoint(PAPER)
    hooks, threads = hook_census(bundle.model), set(threading.enumerate())
    check = Canceller()
    monkeypatch.setattr(sweep, "get_run_yield_check", lambda: check)
    source, step = "The big dog eats the fish.", 1
    args = (bundle, "paper-cancel-test", source, None, "ko", step)
    seconds, raised = run_and_cancel(
        lambda: runtime.cached_contributions(*args, knockout=True, chunk=1), check)
    assert isinstance(raised, StopException), raised
    assert seconds <= STOP_S, f"the sweep ran on {seconds:.2f} s after Cancel"
    store = runtime.contributions_cache()
    assert store.get(("paper-cancel-test", source, None, "ko", step, True)) is None
    assert server_gate().snapshot() == {"running": 0, "waiting": 0, "in_use": 0, "held": 0}
    assert hook_census(bundle.model) == hooks
    assert set(threading.enumerate()) == threads


def test_cancel_stops_exact_patching_on_a_hugging_face_model(tmp_path):
    bundle = load_checkpoint(tiny_llama(tmp_path))
    hooks, threads = hook_census(bundle.model), set(threading.enumerate())
    check = Canceller()

    def report(_f: float) -> None:
        check()  # what Sweep.report does first

    seconds, raised = run_and_cancel(
        lambda: patch(bundle, "the cat sat on the mat", "the dog sat on the mat",
                      method="exact", progress=report, chunk=1), check)
    assert isinstance(raised, StopException), raised
    assert seconds <= STOP_S, f"patching ran on {seconds:.2f} s after Cancel"
    assert hook_census(bundle.model) == hooks
    assert set(threading.enumerate()) == threads


def test_a_chunk_is_half_a_second_of_work():
    assert sweep.chunk_within(100.0, 1000, 64) == 5  # 0.1 s a copy: 5 per forward
    assert sweep.chunk_within(1.0, 1000, 64) == 64  # cheap copies: the most allowed
    assert sweep.chunk_within(600.0, 10, 64) == 1  # one copy is already over: one at a time
    assert sweep.chunk_within(0.0, 10, 64) == 64
