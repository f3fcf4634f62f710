"""The app's byte-bounded Trace cache (ui.runtime.TraceCache), on real small Traces."""

from __future__ import annotations

import threading

import pytest

from model import capture
from model.capture import nbytes
from ui.runtime import TraceCache


@pytest.fixture(scope="module")
def traces(bundle):
    texts = ["Winter is cold.", "The big dog eats the fish in the park today.",
             "겨울은 추워요.", "감기 조심하세요."]
    return [capture(bundle, [t], names=["attn"]) for t in texts]


def test_nbytes_counts_every_array(traces):
    t = traces[1]
    assert nbytes(t) == (sum(a.nbytes for a in t.attn.values()) + sum(
        a.nbytes for a in t.masks.values()) + sum(a.nbytes for a in t.positions.values())
        + t.src_ids.nbytes + t.tgt_ids.nbytes + t.pos_table.nbytes + t.kv_groups.nbytes)


def test_evicts_oldest_by_bytes_and_by_count(traces):
    sizes = [nbytes(t) for t in traces]
    cache = TraceCache(max_bytes=sizes[0] + sizes[1] + sizes[2], max_entries=3)
    for i, t in enumerate(traces[:3]):
        assert cache.put(("k", i), t) is t
    assert cache.bytes == sum(sizes[:3])
    assert cache.get(("k", 0)) is traces[0]  # now the most recent: 1 goes first
    cache.put(("k", 3), traces[3])
    assert cache.get(("k", 1)) is None and cache.get(("k", 0)) is traces[0]
    assert cache.bytes == sum(nbytes(t) for t, _ in cache.items.values()) <= cache.max_bytes
    tiny = TraceCache(max_bytes=1)  # one entry larger than the budget is still kept
    tiny.put("a", traces[0])
    tiny.put("b", traces[1])
    assert list(tiny.items) == ["b"] and tiny.bytes == sizes[1]


def test_first_put_wins_and_threads_agree(traces):
    cache = TraceCache(max_bytes=10**9)
    assert cache.put("x", traces[0]) is traces[0]
    assert cache.put("x", traces[1]) is traces[0]  # a second session's copy is dropped
    seen = []

    def work(i):
        for j in range(50):
            seen.append(cache.put(("t", j % 7), traces[i % 4]) is not None)
            cache.get(("t", (j + i) % 7))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert all(seen) and len(cache.items) == 8
    assert cache.bytes == sum(size for _, size in cache.items.values())
