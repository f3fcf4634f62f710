"""Process-wide caches of the training, generation and cache views: a folder's history, a
snapshot's Trace, greedy continuations, recorded continuations and their eviction what-ifs.

Kept beside ui/runtime.py (same rules: bounded, shared by every session) because only the
training view reads them. A snapshot model is a full copy of the model (a few MB for the
shipped language model), so at most four are kept.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from model import Bundle, Trace, capture, generate
from model.analysis.eviction import Eviction, eviction, sweep
from training.lm.history import History, read_history, snapshot_bundle


@st.cache_resource(max_entries=4, show_spinner=False)
def cached_history(folder: str, stamp: float) -> History | None:
    """The folder's training log and snapshot list (stamp: reread when the folder changes)."""
    return read_history(folder)


@st.cache_resource(max_entries=4, show_spinner=False)
def snapshot_model(_bundle: Bundle, key: str, path: str, step: int) -> Bundle:
    """The bundle with a snapshot's weights (key: the checkpoint's cache key)."""
    return snapshot_bundle(_bundle, Path(path), step)


@st.cache_resource(max_entries=16, show_spinner=False)
def snapshot_trace(_bundle: Bundle, key: str, path: str, step: int,
                   lines: tuple[str, ...]) -> Trace:
    """Attention of every head at one snapshot on the typed lines."""
    return capture(snapshot_model(_bundle, key, path, step), list(lines), names={"attn"})


@st.cache_data(max_entries=32, max_size="8MB", show_spinner=False)
def cached_generate(_bundle: Bundle, key: str, lines: tuple[str, ...], ablate: str,
                    max_new: int) -> list:
    """Greedy continuations of a decoder-only model (the generation view)."""
    return generate(_bundle, list(lines), max_new=max_new, ablate=ablate)


@st.cache_data(max_entries=16, max_size="64MB", show_spinner=False)
def cached_recorded(_bundle: Bundle, key: str, line: str, ablate: str, max_new: int,
                    sample: int, seed: int) -> list:
    """One line's continuation with what each new piece read from the cache (view=cache)."""
    return generate(_bundle, [line], max_new=max_new, ablate=ablate, record=True,
                    sample=sample, seed=seed)


@st.cache_data(max_entries=64, max_size="16MB", show_spinner=False)
def cached_eviction(_bundle: Bundle, key: str, ids: tuple[int, ...], policy: str, budget: int,
                    ablate: str) -> Eviction:
    """A continuation re-scored under one eviction policy (view=cache)."""
    return eviction(_bundle, list(ids), policy, budget, ablate=ablate)


@st.cache_data(max_entries=32, max_size="1MB", show_spinner=False)
def cached_sweep(_bundle: Bundle, key: str, ids: tuple[int, ...], budgets: tuple[int, ...],
                 start: int, ablate: str, policies: tuple[str, ...]) -> dict:
    """Mean continuation loss per policy and budget (view=cache's budget chart)."""
    return sweep(_bundle, list(ids), budgets, start, policies, ablate=ablate)
