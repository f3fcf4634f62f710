"""Boolean attention masks, True = blocked. Shapes: [B, Q, K]."""

from __future__ import annotations

from collections.abc import Collection

import numpy as np
import torch

# The fill value of blocked scores: the lab's network writes it, and the pages print it
# (viz/common.py) for any model that records scores before masking.
MASK_FILL = -1e9  # the seeds' fill value; finite, so a fully blocked row cannot make NaN


def pad_mask(q_ids: torch.Tensor, k_ids: torch.Tensor, pad_id: int) -> torch.Tensor:
    """Block keys that are padding: (B, Q) and (B, K) ids -> (B, Q, K)."""
    blocked = k_ids.eq(pad_id).unsqueeze(1)  # (B, 1, K)
    return blocked.expand(k_ids.size(0), q_ids.size(1), k_ids.size(1))


def subsequent_mask(size: int, device: torch.device | None = None) -> torch.Tensor:
    """Block future positions: (T, T), True above the diagonal."""
    ones = torch.ones(size, size, dtype=torch.bool, device=device)
    return torch.triu(ones, diagonal=1)


def encoder_mask(src_ids: torch.Tensor, pad_id: int) -> torch.Tensor:
    """Encoder self-attention: pad keys blocked, (B, S, S)."""
    return pad_mask(src_ids, src_ids, pad_id)


def decoder_mask(tgt_ids: torch.Tensor, pad_id: int) -> torch.Tensor:
    """Decoder self-attention: pad keys OR future keys blocked, (B, T, T)."""
    future = subsequent_mask(tgt_ids.size(1), tgt_ids.device).unsqueeze(0)  # (1, T, T)
    return pad_mask(tgt_ids, tgt_ids, pad_id) | future


def cross_mask(tgt_ids: torch.Tensor, src_ids: torch.Tensor, pad_id: int) -> torch.Tensor:
    """Encoder-decoder attention: source pad keys blocked, (B, T, S)."""
    return pad_mask(tgt_ids, src_ids, pad_id)


def trace_masks(src_pad: np.ndarray | None, tgt_pad: np.ndarray | None,
            kinds: Collection[str]) -> dict[str, np.ndarray]:
    """The Trace's masks, the one builder every recorder uses: bool (B, Q, K), True = blocked,
    for each attention kind of `kinds` (in the order enc_self, dec_self, cross), from bool
    (B, S) / (B, T) pad positions: pad keys, and future keys in decoder self-attention. The
    same values as encoder_mask / decoder_mask / cross_mask, in numpy."""
    masks = {}
    if "enc_self" in kinds:
        masks["enc_self"] = np.repeat(src_pad[:, None, :], src_pad.shape[1], axis=1)  # (B,S,S)
    if "dec_self" in kinds:
        n_t = tgt_pad.shape[1]
        future = np.triu(np.ones((n_t, n_t), dtype=bool), k=1)
        masks["dec_self"] = tgt_pad[:, None, :] | future[None]  # (B, T, T)
    if "cross" in kinds:
        masks["cross"] = np.repeat(src_pad[:, None, :], tgt_pad.shape[1], axis=1)  # (B, T, S)
    return masks

