"""What a decoder-only model wrote, and, when recorded, what each new piece read from its cache.

`Generation` is a `Translation` (the pieces, per-step top-k, chosen probabilities) with the
cache opened up: per layer a (steps, H, positions) array, row s the attention of the query that
produced generated piece s over every position before it (zeros beyond what it could see).

Shape legend
    S  steps (generated pieces, the end-of-text step included when it came)
    H  query heads   P  positions: prompt pieces + S - 1 (the last piece is never fed back)
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .decode import Translation


@dataclass(frozen=True)
class Generation(Translation):
    """One continuation; `attn` and `cache_bytes` are empty unless recorded."""

    prompt: list[str] = field(default_factory=list)  # the prompt's pieces, specials included
    prompt_ids: list[int] = field(default_factory=list)  # and their ids
    attn: list[np.ndarray] = field(default_factory=list)  # per layer float32 (S, H, P)
    cache_bytes: list[int] = field(default_factory=list)  # per layer: keys + values held
    cache_positions: int = 0  # positions in the cache when the last piece was chosen
    logits: np.ndarray | None = None  # float32 (S, V) when asked for
    sample: int = 0  # top-k sampling's k; 0 = greedy
    seed: int = 0  # the sampler's seed (unused when greedy)

    @property
    def all_ids(self) -> list[int]:
        """The prompt's ids, then the generated ones (eos excluded): the text the cache held."""
        return [*self.prompt_ids, *self.ids]

    @property
    def tokens(self) -> list[str]:
        """Every position the cache can hold: the prompt, then the generated pieces."""
        return [*self.prompt, *self.pieces]
