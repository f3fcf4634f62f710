"""Admission control under a crowd (issue 19): many large inputs at once queue, say so, and are
turned away with the busy message rather than taking the server down.

The crowd test runs a stand-in for the server in a child process (benchmarks/bench_admission:
child): 30 threads call ui.runtime.cached_capture, the function every page calls, at the same
moment, each with its own largest accepted input (16 lines, each cut to 519 pieces). Streamlit
runs every session's script in a thread of one process in the same way; the browser and the
websocket add nothing to the model's memory. The model is of the lab's type at the shipped
models' length (max_len 520), with 1+1 layers of width 64: per layer the same (16, 4, 519, 519)
tensors as `paper`, in a fraction of its CPU time. The page side (messages, the text kept) is
checked through AppTest on a tiny checkpoint.
"""

from __future__ import annotations

import threading
import time

import pytest
from streamlit import config
from streamlit.testing.v1 import AppTest

import ui.admission as admission
from benchmarks.bench_admission import run_child
from model.budget import Dims, Estimate
from model.gate import BUSY, QUEUE_FULL, QUEUE_TIMEOUT, Busy, Gate, QueueFull, QueueTimeout
from tests.app.conftest import APP

SENTENCE = "The cat eats the fish."


def test_thirty_sessions_with_largest_inputs_stay_under_budget():
    budget_x = 2.5  # room for two largest runs at once, not three
    r = run_child(30, "gate", "tiny", env={
        "ATTN_INFLIGHT_X": str(budget_x), "ATTN_RUNS": "2", "ATTN_QUEUE": "12",
        "ATTN_QUEUE_TIMEOUT_S": "10", "ATTN_TRACE_CACHE_MB": "1", "OMP_NUM_THREADS": "1"},
        timeout_s=400)
    sessions = r["sessions"]
    outcomes = [s["outcome"] for s in sessions]
    print(f"\n30 sessions: peak RSS {r['peak_mb']:.0f} MB over a {r['base_mb']:.0f} MB baseline "
          f"(budget {r['budget_mb']:.0f} MB, one run estimated {r['estimate_mb']:.0f} MB, "
          f"admitted at most {r['admitted_peak_mb']:.0f} MB); {outcomes.count('result')} "
          f"results, {outcomes.count('QueueFull')} queue full, {outcomes.count('QueueTimeout')} "
          f"timed out, in {r['wall_s']:.1f} s")
    assert r["budget_mb"] == pytest.approx(budget_x * r["estimate_mb"])
    assert r["peak_mb"] - r["base_mb"] <= 1.2 * r["budget_mb"], r
    assert r["admitted_peak_mb"] <= r["budget_mb"]
    assert set(outcomes) <= {"result", "QueueFull", "QueueTimeout"}, sessions  # no error,
    # nobody else's result; each refusal says which it was
    assert all(s["message"] == QUEUE_FULL for s in sessions if s["outcome"] == "QueueFull")
    timed_out = QUEUE_TIMEOUT.format(seconds="10")
    assert all(s["message"] == timed_out for s in sessions if s["outcome"] == "QueueTimeout")
    assert outcomes.count("result") >= 2  # the runs admitted at once always finish
    assert outcomes.count("QueueFull") >= 30 - 2 - 12  # beyond running + queue: refused at once
    full_s = [s["s"] for s in sessions if s["outcome"] == "QueueFull"]
    assert max(full_s) < 5, full_s  # at once, not after the 10 s timeout
    assert all(s["src"] == 519 for s in sessions if s["outcome"] == "result")


# ---- the page side -----------------------------------------------------------------------


@pytest.fixture
def gate_env(monkeypatch, checkpoints):
    """Set the gate's environment for one test; the process's gate is rebuilt before and
    after, and torch's thread count restored."""
    import torch

    threads = torch.get_num_threads()

    def make(**env) -> Gate:
        for key, value in env.items():
            monkeypatch.setenv(key, str(value))
        admission.server_gate.clear()
        return admission.server_gate()

    yield make
    monkeypatch.undo()
    admission.server_gate.clear()
    torch.set_num_threads(threads)


def _app(text: str, view: str = "tokens", state: dict | None = None, **query: str) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.query_params["text"] = text
    at.query_params["view"] = view
    for key, value in query.items():
        at.query_params[key] = value
    for key, value in (state or {}).items():  # as if chosen before (no widget interaction)
        at.session_state[key] = value
    config.set_option("client.showErrorDetails", "full")
    return at.run(timeout=120)


def _hold(gate: Gate) -> tuple[threading.Event, threading.Thread]:
    """Another session's run holding the gate's only slot until released."""
    release = threading.Event()

    def run():
        with gate.admit(1):
            release.wait(30)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    deadline = time.monotonic() + 5
    while gate.snapshot()["running"] == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    return release, t


def _texts(at: AppTest, kind: str) -> list[str]:
    return [e.value for e in getattr(at, kind)]


def _gate_says(at: AppTest) -> list[str]:
    """The warnings that come from the gate (other warnings, e.g. low confidence, aside)."""
    return [w for w in _texts(at, "warning") if "The server is" in w and "busy" in w]


def test_busy_keeps_the_text_in_the_box_and_the_link(gate_env):
    gate = gate_env(ATTN_RUNS=1, ATTN_QUEUE=0, ATTN_INFLIGHT_MB=512)
    text = "The big dog reads a book in the park.\nWinter is cold."
    release, t = _hold(gate)
    try:
        at = _app(text)
    finally:
        release.set()
        t.join(5)
    assert not at.exception
    assert _gate_says(at) == [QUEUE_FULL]  # refused at once: the queue (0) is full
    assert not _texts(at, "error")
    assert [a.value for a in at.sidebar.text_area][0] == text
    assert at.query_params["text"] == text
    assert gate.snapshot() == {"running": 0, "waiting": 0, "in_use": 0, "held": 0}


def test_a_wait_past_the_timeout_is_busy_and_leaves_no_ticket(gate_env):
    gate = gate_env(ATTN_RUNS=1, ATTN_QUEUE=4, ATTN_QUEUE_TIMEOUT_S=0.5, ATTN_INFLIGHT_MB=512)
    release, t = _hold(gate)
    try:
        at = _app(SENTENCE + " Again.")
    finally:
        release.set()
        t.join(5)
    assert _gate_says(at) == [QUEUE_TIMEOUT.format(seconds="0.5")]
    assert not any("Waiting for the model" in v for v in _texts(at, "info"))  # cleared
    assert gate.snapshot() == {"running": 0, "waiting": 0, "in_use": 0, "held": 0}


def test_an_input_too_large_for_the_budget_says_how_to_shrink_it(gate_env):
    gate_env(ATTN_INFLIGHT_MB=0.05)  # ~52 KB: one short line fits, four long ones do not
    text = "\n".join([" ".join(["The big dog reads a book in the park."] * 3)] * 4)
    at = _app(text)
    warnings = " ".join(_texts(at, "warning"))
    assert "more than this server's whole budget" in warnings, warnings
    assert "fewer lines or shorter lines" in warnings
    assert not _texts(at, "error") and not at.exception
    assert [a.value for a in at.sidebar.text_area][0] == text


def test_cached_inputs_never_wait(gate_env):
    gate = gate_env(ATTN_RUNS=1, ATTN_QUEUE=0, ATTN_INFLIGHT_MB=512)
    text = "My friend drinks water."
    first = _app(text)
    assert not _gate_says(first)
    release, t = _hold(gate)  # the server is now full: a new input would be busy
    try:
        again = _app(text)
        other = _app("A child is cold.")
    finally:
        release.set()
        t.join(5)
    assert not _gate_says(again) and not again.exception
    assert _gate_says(other) == [QUEUE_FULL]


def _estimate(nbytes: int) -> Estimate:
    d = Dims(batch=1, src=4, tgt=4, layers={"enc_self": 1}, heads=1, d_head=4, d_model=4,
             d_ff=4, vocab=10)
    return Estimate(nbytes, {"attn": nbytes}, d)


class _Slot:
    """Stands in for st.empty(): records what the page would show."""

    def __init__(self, log: list[str]) -> None:
        self.log = log

    def info(self, text: str) -> None:
        self.log.append(text)

    def empty(self) -> None:
        self.log.append("")


def test_waiting_shows_k_ahead_as_it_changes(gate_env, monkeypatch):
    gate = gate_env(ATTN_RUNS=1, ATTN_QUEUE=8, ATTN_QUEUE_TIMEOUT_S=20, ATTN_INFLIGHT_MB=512)
    shown: list[str] = []
    monkeypatch.setattr(admission.st, "empty", lambda: _Slot(shown))
    first, t1 = _hold(gate)
    second = threading.Event()

    def queued():  # a second session queued behind the first
        with gate.admit(1):
            second.wait(30)

    t2 = threading.Thread(target=queued, daemon=True)
    t2.start()
    while gate.snapshot()["waiting"] < 1:
        time.sleep(0.01)
    done: list[str] = []
    t3 = threading.Thread(target=lambda: done.append(admission.admitted(
        _estimate(1), lambda: None, lambda: "ran")), daemon=True)
    t3.start()
    while not shown:
        time.sleep(0.01)
    first.set()
    t1.join(5)
    while not any("1 ahead" in s for s in shown):
        time.sleep(0.01)
    second.set()
    t2.join(5)
    t3.join(5)
    assert done == ["ran"]
    waits = [s for s in shown if s]
    assert waits[0].startswith("Waiting for the model: 2 ahead")
    assert any(s.startswith("Waiting for the model: 1 ahead") for s in waits)
    assert shown[-1] == ""  # the message goes once the run starts


def test_a_session_that_closes_while_waiting_leaves_the_queue(gate_env, monkeypatch):
    gate = gate_env(ATTN_RUNS=1, ATTN_QUEUE=8, ATTN_QUEUE_TIMEOUT_S=20, ATTN_INFLIGHT_MB=512)
    monkeypatch.setattr(admission.st, "empty", lambda: _Slot([]))

    class StopException(Exception):  # what Streamlit raises in a stopped session's script
        pass

    calls = []

    def yield_check():
        calls.append(1)
        if len(calls) >= 3:
            raise StopException

    monkeypatch.setattr(admission, "get_run_yield_check", lambda: yield_check)
    release, t = _hold(gate)
    try:
        with pytest.raises(StopException):
            admission.admitted(_estimate(1), lambda: None, lambda: "never")
        assert gate.snapshot()["waiting"] == 0
    finally:
        release.set()
        t.join(5)
    assert gate.snapshot() == {"running": 0, "waiting": 0, "in_use": 0, "held": 0}


def test_a_result_cached_meanwhile_ends_the_wait(gate_env, monkeypatch):
    gate = gate_env(ATTN_RUNS=1, ATTN_QUEUE=8, ATTN_QUEUE_TIMEOUT_S=20, ATTN_INFLIGHT_MB=512)
    monkeypatch.setattr(admission.st, "empty", lambda: _Slot([]))
    cache: list[str] = []
    release, t = _hold(gate)
    try:
        threading.Timer(0.3, lambda: cache.append("another session's trace")).start()
        got = admission.admitted(_estimate(1), lambda: cache[0] if cache else None,
                                 lambda: "ran again")
    finally:
        release.set()
        t.join(5)
    assert got == "another session's trace"
    assert gate.snapshot()["waiting"] == 0


# ---- the other model runs: ablation, importance scan, logit lens, validation average -------
# Each test first runs A (its result cached) and opens B on a page that caches only B's
# capture, then shrinks the budget to ~1 KB, where every new run is too large: A's result is
# shown without asking the gate, and B's run is refused with the message in the page.

TINY_MB = 0.001
A, B = "The cat eats the fish.", "My friend reads a book in the park."


def _gate_calls(monkeypatch) -> list[int]:
    """Record every call that reaches the gate (admitted() asks server_gate() first)."""
    calls: list[int] = []
    real = admission.server_gate
    monkeypatch.setattr(admission, "server_gate", lambda: calls.append(1) or real())
    return calls


def _refused_cleanly(at: AppTest, text: str, words: str) -> None:
    """The refusal is a warning in the page; no traceback, no error box, the text kept."""
    assert not at.exception, [e.value for e in at.exception]
    assert not _texts(at, "error")
    assert words in " ".join(_texts(at, "warning")), _texts(at, "warning")
    assert [a.value for a in at.sidebar.text_area][0] == text
    assert at.query_params["text"] == text


def _charts(at: AppTest) -> int:
    return len(at.get("plotly_chart"))


def _part(at: AppTest, part: str) -> AppTest:
    return at.radio(key="_w_heads_part").set_value(part).run()


def test_ablation_too_large_is_a_message_in_the_page_language_and_a_cached_one_never_asks(
        gate_env, monkeypatch):
    gate_env(ATTN_INFLIGHT_MB=512)
    first = _part(_app(A, "heads", ablate="cross:1:2"), "ablation")
    assert not first.exception and _charts(first) == 1
    _app(A, "attention", ablate="enc_self:0:1")  # that capture only (what heads records)
    gate_env(ATTN_INFLIGHT_MB=TINY_MB)
    calls = _gate_calls(monkeypatch)
    again = _part(_app(A, "heads", ablate="cross:1:2"), "ablation")
    assert not again.exception and _charts(again) == 1 and not _texts(again, "warning")
    assert calls == []
    refused = _part(_app(A, "heads", ablate="enc_self:0:1"), "ablation")
    _refused_cleanly(refused, A, "more than this server's whole budget")
    assert "fewer lines or shorter lines" in " ".join(_texts(refused, "warning"))
    assert calls and _charts(refused) == 0
    assert refused.query_params["ablate"] == "enc_self:0:1"  # the ticked heads stay too
    korean = _app(A, "heads", {"heads_part": "ablation"}, ablate="enc_self:0:1", lang_ui="ko")
    _refused_cleanly(korean, A, "모델 실행에 쓸 수 있는 전체 예산")
    assert "더 짧은 줄을 쓰세요" in " ".join(_texts(korean, "warning"))


def test_scan_too_large_is_a_message_and_a_kept_one_never_asks(gate_env, monkeypatch):
    gate_env(ATTN_INFLIGHT_MB=512)
    first = _part(_app(A, "heads"), "scan")
    first.button(key="scan_go").click().run()
    assert not first.exception and _charts(first) == 1
    _app(B, "attention")  # B's capture of what the heads view records
    gate_env(ATTN_INFLIGHT_MB=TINY_MB)
    calls = _gate_calls(monkeypatch)
    again = _part(_app(A, "heads"), "scan")
    again.button(key="scan_go").click().run()  # pressed again: the kept scan, not a new one
    assert not again.exception and _charts(again) == 1 and not _texts(again, "warning")
    assert calls == []
    refused = _part(_app(B, "heads"), "scan")
    refused.button(key="scan_go").click().run()
    _refused_cleanly(refused, B, "Use a shorter sentence")
    assert calls and _charts(refused) == 0


def test_logit_lens_too_large_is_a_message_below_the_other_charts(gate_env, monkeypatch):
    gate_env(ATTN_INFLIGHT_MB=512)
    first = _app(A, "embeddings").radio(key="emb_side").set_value("dec").run()
    assert not first.exception and not _texts(first, "warning")
    drawn = _charts(first)
    _app(B, "embeddings")  # B's capture (hidden states), on the encoder side: no lens
    gate_env(ATTN_INFLIGHT_MB=TINY_MB)
    calls = _gate_calls(monkeypatch)
    again = _app(A, "embeddings").radio(key="emb_side").set_value("dec").run()
    assert not again.exception and _charts(again) == drawn and not _texts(again, "warning")
    assert calls == []
    refused = _app(B, "embeddings").radio(key="emb_side").set_value("dec").run()
    _refused_cleanly(refused, B, "Use a shorter sentence")
    assert calls and _charts(refused) == drawn - 1  # only the lens is missing


def test_validation_average_too_large_is_a_message_and_a_kept_one_never_asks(
        gate_env, monkeypatch, checkpoints):
    from training import corpus

    # the checkpoint's own validation split, read from its folder (not generated)
    corpus.write_pairs(checkpoints / "paper" / corpus.VAL_FILE, corpus.generate(120, seed=3))
    gate_env(ATTN_INFLIGHT_MB=512)
    first = _app(A, "heads")
    first.select_slider(key="hs_val_n").set_value(100).run()
    first.button(key="hs_val_go").click().run()
    assert not first.exception
    assert first.radio(key="hs_scope").value == "validation"
    gate_env(ATTN_INFLIGHT_MB=TINY_MB)
    calls = _gate_calls(monkeypatch)
    again = _app(A, "heads")
    again.select_slider(key="hs_val_n").set_value(100).run()
    again.button(key="hs_val_go").click().run()
    assert not again.exception and not _texts(again, "warning")
    assert again.radio(key="hs_scope").value == "validation" and calls == []
    again.select_slider(key="hs_val_n").set_value(250).run()  # all 120 pairs: not kept
    again.button(key="hs_val_go").click().run()
    _refused_cleanly(again, A, "The validation average needs about")
    assert calls
    assert again.radio(key="hs_scope").options[-1].startswith("100 validation pairs")


# ---- a full queue and a timeout are told apart ---------------------------------------------


def test_a_full_queue_refuses_at_once_and_a_timeout_only_after_waiting():
    """Both are Busy (callers keep working), but a full queue raises QueueFull without
    waiting, while a wait raises QueueTimeout only after the timeout; the messages differ."""
    gate = Gate(budget=100, queue=1, timeout_s=3.0, runs=1, poll_s=0.01)
    release, t = _hold(gate)
    waiter_done: list[BaseException] = []

    def wait_in_queue():  # the one place in the queue
        try:
            with gate.admit(1):
                pass
        except Busy as exc:
            waiter_done.append(exc)

    waiter = threading.Thread(target=wait_in_queue, daemon=True)
    waiter.start()
    deadline = time.monotonic() + 5
    while gate.snapshot()["waiting"] == 0 and time.monotonic() < deadline:
        time.sleep(0.005)
    try:
        t0 = time.monotonic()
        with pytest.raises(QueueFull) as full:
            with gate.admit(1):
                pass
        full_s = time.monotonic() - t0
        waiter.join(10)
        waited_s = time.monotonic() - t0
    finally:
        release.set()
        t.join(5)
    assert full_s < 0.1, f"a full queue took {full_s:.3f} s to refuse (timeout 3 s)"
    assert len(waiter_done) == 1 and isinstance(waiter_done[0], QueueTimeout)
    assert waited_s >= 2.9  # the waiter gave up only after the timeout
    timed_out = waiter_done[0]
    assert isinstance(full.value, Busy) and isinstance(timed_out, Busy)
    assert str(full.value) == QUEUE_FULL and str(timed_out) == QUEUE_TIMEOUT.format(seconds="3")
    assert len({BUSY, QUEUE_FULL, QUEUE_TIMEOUT.format(seconds="3")}) == 3
    assert admission.refusal(full.value) == QUEUE_FULL
    assert admission.refusal(timed_out) == "The server is still busy after 3 seconds of " \
        "waiting for the model. Try again in a moment."
    assert gate.snapshot() == {"running": 0, "waiting": 0, "in_use": 0, "held": 0}


def test_the_page_messages_are_the_gates_english():
    """ui/admission.py marks model/budget.py's messages for the catalogue: same English."""
    marked = (admission.BUSY_MARKED, admission.QUEUE_FULL_MARKED, admission.QUEUE_TIMEOUT_MARKED)
    assert marked == (
        BUSY, QUEUE_FULL, QUEUE_TIMEOUT)
