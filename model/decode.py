"""Preparing source batches and greedy decoding with per-step top-k probabilities."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .confidence import COVERAGE, geometric_mean
from .hooks import Head, parse_ablate


@dataclass(frozen=True)
class Translation:
    """One greedy translation and what the model believed at each step."""

    source: str
    target_lang: str | None
    text: str
    ids: list[int]  # generated ids, eos excluded
    pieces: list[str]
    steps: list[list[tuple[str, float]]]  # per step (eos step included): top-k (piece, prob)
    probs: list[float]  # probability of the chosen piece at each step
    finished: bool  # False when max_len stopped it before eos
    # source words the training corpus never had and the output does not copy through
    # (model/confidence.py's coverage term); 0 where the word list is unknown
    uncovered: int = 0

    @property
    def confidence(self) -> float:
        """Geometric mean of the chosen pieces' probabilities, times the coverage term for
        each uncovered source word (model/confidence.py)."""
        return geometric_mean(self.probs) * COVERAGE ** self.uncovered


def checked_heads(bundle, ablate: Iterable[Head] | str) -> frozenset[Head]:
    """Parse and validate heads to ablate against this model's kinds, layers and heads."""
    heads = parse_ablate(ablate)
    n_heads = bundle.config.n_heads
    for kind, layer, head in heads:
        if kind not in bundle.kinds:
            raise ValueError(f"no attention kind {kind!r} here; this model has {bundle.kinds}")
        if not 0 <= layer < bundle.n_layers(kind):
            raise ValueError(f"{kind} has layers 0..{bundle.n_layers(kind) - 1}, not {layer}")
        if not 0 <= head < n_heads:
            raise ValueError(f"heads are numbered 0..{n_heads - 1}, not {head}")
    return heads
