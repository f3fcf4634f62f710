"""Backends: the one place that knows which kind a model is.

Everyone else asks `capabilities(bundle)` or `backend_for(bundle)` and never compares
`bundle.kind`. A third model kind is one module here (a class with the methods of
base.Backend) plus one line in REGISTRY.
"""

from __future__ import annotations

import threading
import weakref
from pathlib import Path

from ..cards import trained_here  # a fact of the card, not of the kind (model/cards.py)
from ..checkpoint import Bundle, CheckpointError, read_json
from .base import EVERYTHING, NEED_GROUPS, Backend, Capabilities, Facts
from .hf import HFBackend
from .hf.install_minilm import FOLDER as MINILM_FOLDER  # the pretrained model make installs
from .hf.install_minilm import install_status as minilm_status
from .hf.load import listed_models, resolve_model_ref  # which folders may be opened
from .lab import LabBackend
from .words import word_index

# kind -> backend class; folders are offered to each in this order, the first claim wins
REGISTRY: dict[str, type] = {
    HFBackend.kind: HFBackend,
    LabBackend.kind: LabBackend,
}
_BACKENDS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # model -> its backend
_LOCK = threading.Lock()


def _class(bundle: Bundle) -> type:
    try:
        return REGISTRY[bundle.kind]
    except KeyError:
        raise ValueError(f"no backend for model kind {bundle.kind!r}; known: "
                         f"{sorted(REGISTRY)}") from None


def backend_for(bundle: Bundle) -> Backend:
    """The backend serving a loaded bundle: one per model, made on first use (thread-safe)."""
    if bundle.model is None:  # a bundle without a model (tests): nothing to cache it by
        return _class(bundle)(bundle)
    with _LOCK:
        found = _BACKENDS.get(bundle.model)
        if found is None or found.bundle is not bundle:
            found = _BACKENDS[bundle.model] = _Cached(_class(bundle)(bundle))
        return found.backend


class _Cached:
    """A backend and its capabilities, computed once (hf's walk the model's modules)."""

    def __init__(self, backend) -> None:
        self.backend, self.bundle = backend, backend.bundle
        self.caps = None
        self.facts = None


def capabilities(bundle: Bundle) -> Capabilities:
    """Capabilities of a loaded bundle (cheap; no model run; computed once per model)."""
    backend = backend_for(bundle)
    if bundle.model is None:
        return backend.caps
    cached = _BACKENDS[bundle.model]
    if cached.caps is None:
        cached.caps = cached.backend.caps
    return cached.caps


def facts(bundle: Bundle) -> Facts:
    """What pages may say about a loaded bundle (model.backends.base.Facts; computed once per
    model: a Hugging Face vocabulary is read once)."""
    backend = backend_for(bundle)
    if bundle.model is None:
        return backend.facts
    cached = _BACKENDS[bundle.model]
    if cached.facts is None:
        cached.facts = backend.facts
    return cached.facts


def load_folder(folder: str | Path) -> Bundle:
    """Load a checkpoint folder with the backend that claims it (config.json decides)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise CheckpointError(folder, "not a checkpoint folder (missing)")
    raw = read_json(folder / "config.json")
    for cls in REGISTRY.values():
        if cls.claims(folder, raw):
            return cls.load(folder, raw)
    raise CheckpointError(folder / "config.json", "no model kind of this lab reads this config")


def is_translator(bundle: Bundle) -> bool:
    """Whether model.translate runs on this model (greedy decoding, step by step)."""
    return capabilities(bundle).translates


__all__ = ["EVERYTHING", "MINILM_FOLDER", "NEED_GROUPS", "REGISTRY", "Backend", "Capabilities",
           "Facts", "HFBackend", "LabBackend", "backend_for", "capabilities", "facts",
           "is_translator", "listed_models", "load_folder", "minilm_status", "resolve_model_ref",
           "trained_here", "word_index"]
