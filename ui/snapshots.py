"""Process-wide caches of the training and generation views: a folder's history, a snapshot's
Trace, greedy continuations.

Kept beside ui/runtime.py (same rules: bounded, shared by every session) because only the
training view reads them. A snapshot model is a full copy of the model (a few MB for the
shipped language model), so at most four are kept.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from model import Bundle, Trace, capture, generate
from model.training.lm.history import History, read_history, snapshot_bundle


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
