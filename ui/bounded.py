"""The one bounded cache class of ui/runtime.py's table: a thread-safe least-recently-used
table shared by every session, bounded by entries and, given a size function, by bytes.

A byte bound evicts least recently used entries until the newest fits; the newest entry is
always kept, whatever its size (a session is reading it). TraceCache adds what the Trace cache
needs beyond that: the need groups each entry holds, and merging a capture of more groups into
the entry of its input.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Collection

from model import Trace
from model.backends import EVERYTHING
from model.capture import freeze, merge, nbytes
from model.heap import trim_heap


class Bounded:
    """Least recently used entries, newest last: at most max_entries, and with `size` at most
    max_bytes of them (the newest always kept)."""

    def __init__(self, max_entries: int, max_bytes: int | None = None,
                 size: Callable[[object], int] | None = None) -> None:
        self.max_entries, self.max_bytes, self.size = max_entries, max_bytes, size
        self.lock = threading.Lock()
        self.items: OrderedDict[tuple, tuple[object, int]] = OrderedDict()  # key -> (value, bytes)
        self.bytes = 0

    def get(self, key: tuple):
        """The value, or None; a hit becomes the most recently used."""
        with self.lock:
            item = self.items.get(key)
            if item is None:
                return None
            self.items.move_to_end(key)
            return item[0]

    def put(self, key: tuple, value, *, replace: bool = False):
        """Store value and return it; without `replace` an entry another session stored first
        is kept and returned instead."""
        with self.lock:
            if key in self.items and not replace:
                self.items.move_to_end(key)
                return self.items[key][0]
            self.store(key, value)
            self.evict()
            return value

    def store(self, key: tuple, value) -> None:
        """Put value as the newest entry (the lock held), counting its bytes."""
        old = self.items.pop(key, None)
        if old is not None:
            self.bytes -= old[1]
        size = self.size(value) if self.size is not None else 0
        self.items[key] = (value, size)
        self.bytes += size

    def evict(self) -> int:
        """Drop the least recently used entries over the bounds (the lock held); how many."""
        evicted = 0
        while len(self.items) > 1 and (len(self.items) > self.max_entries or (
                self.max_bytes is not None and self.bytes > self.max_bytes)):
            gone, (_value, gone_size) = self.items.popitem(last=False)
            self.bytes -= gone_size
            self.dropped(gone)
            evicted += 1
        return evicted

    def dropped(self, key: tuple) -> None:
        """Called for each evicted key (the lock held)."""


class TraceCache(Bounded):
    """Recent Traces, newest last, bounded by count and by bytes; shared by every session.

    st.cache_resource bounds only the number of entries, and a Trace ranges from kilobytes
    to ~600 MB (16 lines of 519 pieces), so 24 entries could have held ~14 GB. The bytes are
    the bound that matters; the count (256) only caps what nbytes leaves out (each entry's
    token lists, a few kB). With 24 a class's short sentences (a few MB each) left most of the
    budget unused while repeats were recomputed. The newest entry is always kept, whatever its
    size: a session is reading it.

    Each entry also holds the need groups it was recorded with (model.backends.NEED_GROUPS):
    a view that needs more records only the rest, merged into the entry (model.capture.merge).
    """

    def __init__(self, max_bytes: int, max_entries: int = 256) -> None:
        super().__init__(max_entries, max_bytes, nbytes)
        self.needs: dict[tuple, frozenset[str]] = {}  # key -> the groups its Trace holds

    def entry(self, key: tuple) -> tuple[Trace, frozenset[str]] | None:
        """(Trace, the need groups it holds), or None."""
        with self.lock:
            item = self.items.get(key)
            if item is None:
                return None
            self.items.move_to_end(key)
            return item[0], self.needs.get(key, EVERYTHING)

    def get(self, key: tuple, needs: Collection[str] = ()) -> Trace | None:
        """The cached Trace if it holds every group of `needs`, else None."""
        found = self.entry(key)
        return found[0] if found is not None and found[1] >= frozenset(needs) else None

    def put(self, key: tuple, trace: Trace, needs: Collection[str] = EVERYTHING) -> Trace:
        """Store trace (merged into what another capture of this input stored first) and
        return the entry's Trace."""
        needs = frozenset(needs)
        with self.lock:
            old = self.items.get(key)
            if old is not None:
                self.items.move_to_end(key)
                had = self.needs.get(key, EVERYTHING)
                if needs <= had:
                    return old[0]
                try:
                    trace, needs = freeze(merge(old[0], trace)), had | needs
                except ValueError:  # another decoder input (a nondeterministic generate()):
                    pass  # the new capture replaces the entry; its groups alone are held
            self.store(key, trace)
            self.needs[key] = needs
            evicted = self.evict()
        if evicted:  # their small arrays lived in malloc's heaps: give those pages back
            trim_heap()
        return trace

    def dropped(self, key: tuple) -> None:
        self.needs.pop(key, None)
