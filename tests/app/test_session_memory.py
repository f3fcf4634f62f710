"""What a server keeps between inputs is its bounded caches and nothing else.

An open page keeps no Trace of its own: once the server's Trace cache lets an input go, nothing
a session holds (widget format functions and callbacks, download callables) keeps it alive, so
memory is bounded by the cache's budget and not by the number of open tabs. And a bertviz page
drawn is not kept by urllib's URL-parsing cache.

Found by the soak: eight idle sessions each kept their last Trace (up to ~600 MB each) through a
head-label format_func closing over the view's Ctx and the download buttons' data lambdas; and
memory beyond the caches grew ~1 MB per input while urlsplit's lru_cache filled with pages.
"""

from __future__ import annotations

import gc
import tracemalloc
import weakref

import numpy as np

from model import load_checkpoint
from model.capture import trace_arrays
from tests.app.conftest import run_app
from tests.conftest import ROOT, needs
from ui.views import VIEWS

PAPER = ROOT / "checkpoints" / "paper"
pytestmark = needs((PAPER / "config.json").is_file(),
                                reason="uses the shipped paper checkpoint")
TEXT = "The cat sees a dog.\n저는 학생이에요."


def _drop_cached_traces() -> list[weakref.ref]:
    """Empty the server's Trace cache; weak references to what it held."""
    from ui.runtime import trace_cache

    store = trace_cache()
    with store.lock:
        refs = [weakref.ref(trace) for trace, _size in store.items.values()]
        store.items.clear()
        store.bytes = 0
    return refs


def test_an_open_session_keeps_no_trace_alive(monkeypatch):
    monkeypatch.setenv("ATTN_CHECKPOINTS_DIR", str(ROOT / "checkpoints"))
    monkeypatch.delenv("ATTN_MODELS", raising=False)
    _drop_cached_traces()
    at = run_app({"ckpt": "paper", "text": TEXT, "view": "tokens"}, timeout=180)
    views = list(at.radio(key="view").options)
    assert len(views) >= 10
    for view in views:  # every view leaves its widgets (and their callables) in the session
        at.radio(key="view").set_value(view)
        at.run(timeout=180)
        assert not at.exception, (view, at.exception)
    refs = _drop_cached_traces()
    assert refs, "the session's input was not in the Trace cache"
    gc.collect()
    alive = [ref() for ref in refs if ref() is not None]
    assert not alive, f"{len(alive)} Trace(s) still held by the open session"
    assert at.radio(key="view").value == list(VIEWS)[-1]  # the session itself is still open


def test_recapture_makes_the_same_trace_again(monkeypatch):
    """What a download button falls back on when the Trace on screen has been let go."""
    from ui.runtime import cached_capture, recapture

    bundle = load_checkpoint(PAPER)
    args = ("paper-recapture-test", ("The cat sees a dog.",), None, "ko", "")
    first = cached_capture(bundle, *args)
    _drop_cached_traces()
    again = recapture(bundle, *args)
    assert again is not first
    assert first.src_tokens == again.src_tokens and first.tgt_tokens == again.tgt_tokens
    for a, b in zip(trace_arrays(first), trace_arrays(again), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert recapture(bundle, *args) is again  # and it went into the cache


def test_bertviz_pages_are_not_kept_after_drawing(monkeypatch):
    monkeypatch.setenv("ATTN_CHECKPOINTS_DIR", str(ROOT / "checkpoints"))
    monkeypatch.delenv("ATTN_MODELS", raising=False)
    at = run_app({"ckpt": "paper", "text": "The cat sees a dog.", "view": "bertviz"},
                 timeout=180)
    tracemalloc.start()
    try:
        for i in range(6):  # distinct pages, each several hundred kB
            at.text_area(key="text").input(f"My friend reads {i + 2} books in the park.")
            at.run(timeout=180)
            assert not at.exception and at.get("iframe"), i
        gc.collect()
        kept = tracemalloc.take_snapshot().filter_traces(
            [tracemalloc.Filter(True, "*urllib/parse.py")])
        held = sum(stat.size for stat in kept.statistics("filename"))
    finally:
        tracemalloc.stop()
    page = len(at.get("iframe")[0].proto.srcdoc)
    assert page > 100_000
    assert held < page, f"urllib.parse holds {held:,} bytes; one page is {page:,}"
