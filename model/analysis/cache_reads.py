"""What the new pieces read from the key/value cache during generation (model.generate with
record=True): the first positions' share over the steps, the positions nobody read, the
layer's mean map.

Each layer's recorded array is (S, H, P): row s the attention of the query that produced
generated piece s over every position it could see (zeros beyond).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def first_share(attn: Sequence[np.ndarray], first: int = 1) -> np.ndarray:
    """float32 (L, S, H): each head's attention on positions 0 … first − 1 at each step."""
    return np.stack([a[:, :, :first].sum(-1) for a in attn]).astype(np.float32)


def layer_mean(a: np.ndarray) -> np.ndarray:
    """float32 (S, P): the layer's heads averaged (every head sees the same positions)."""
    return a.mean(axis=1).astype(np.float32)


def strongest_read(attn: Sequence[np.ndarray]) -> np.ndarray:
    """float32 (P,): per position, the most any head of any layer gave it at any step."""
    return np.stack([a.max(axis=(0, 1)) for a in attn]).max(axis=0)


def unread(attn: Sequence[np.ndarray], threshold: float) -> list[int]:
    """Positions that no head of any layer read above `threshold` at any step."""
    return [int(p) for p in np.flatnonzero(strongest_read(attn) <= threshold)]
