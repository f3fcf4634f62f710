"""Batch: typed lines tokenized once, the one form the estimate, the decode and the capture take.

Shape legend: B sentences, S padded source positions, T padded target positions.

A backend's `encode(lines, targets, target_lang)` makes it (model/backends/); everything after
reads its ids and lengths instead of tokenizing the text again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

DIRECTIONS = (("ko", "en", "ko"), ("en", "ko", "en"))  # (target_lang, source field, target field)


@dataclass(frozen=True, eq=False)
class Batch:
    """Sentences as the model will read them: ids, pieces, lengths, languages, pad mask, cuts."""

    sources: tuple[str, ...]
    target_lang: str | None  # as asked (None/'auto': per sentence, see langs)
    langs: tuple[str | None, ...]  # the target language of each sentence (None: not a translator)
    src_lists: tuple[tuple[int, ...], ...]  # unpadded source ids, specials included
    pieces: tuple[tuple[str, ...], ...]  # the same as pieces
    cuts: tuple[int, ...]  # pieces cut per sentence to fit the model's positions
    src_ids: np.ndarray  # int64 (B, S), padded with pad_id
    pad_id: int
    targets: tuple[str, ...] | None = None  # teacher-forced decoder texts, as typed
    tgt_lists: tuple[tuple[int, ...], ...] | None = None  # their decoder inputs (or the text's,
    # for a decoder-only model); None: the model's own greedy output decides
    extra: dict[str, Any] = field(default_factory=dict)  # backend-specific encodings

    def __len__(self) -> int:
        return len(self.sources)

    @property
    def lengths(self) -> tuple[int, ...]:
        """Unpadded source length of each sentence."""
        return tuple(len(x) for x in self.src_lists)

    @property
    def pad_mask(self) -> np.ndarray:
        """bool (B, S): True on padding."""
        return self.src_ids == self.pad_id


def padded(lists: Sequence[Sequence[int]], pad_id: int) -> np.ndarray:
    """Right-pad id lists with pad_id: (B, n_max) int64."""
    width = max((len(s) for s in lists), default=0)
    out = np.full((len(lists), width), pad_id, dtype=np.int64)
    for row, seq in enumerate(lists):
        out[row, : len(seq)] = seq
    return out


def directions(target_lang: str | None) -> list[tuple[str, str, str]]:
    """(target_lang, source field, target field) of the corpus directions asked for."""
    if target_lang in (None, "auto", "both"):
        return list(DIRECTIONS)
    picked = [d for d in DIRECTIONS if d[0] == target_lang]
    if not picked:
        raise ValueError(f"target_lang must be 'ko', 'en' or None (both), got {target_lang!r}")
    return picked
