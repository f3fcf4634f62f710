"""Scores taken while the language model trains, straight from eager attention weights.

These are independent of the lab's detectors (model/analysis/detectors.py) on purpose: the
tests hold the two against each other on the shipped folder.

    previous_token  mean weight from position i to i − 1, over i ≥ 2 of held-out text
    induction       rows <s> r₁…r_T r₁…r_T of random pieces: mean weight from the second
                    copy's rᵢ to r₍ᵢ₊₁₎ of the first copy
    sink            mean weight on position 0 (<s>), over queries i ≥ 1 of held-out text
    icl             Olsson et al.'s in-context learning score (loss at token 500 minus token
                    50 of 8,192), adapted to a context of T: mean loss on positions 3T/4..T−1
                    minus mean loss on positions T/16..T/8−1 (for T = 128: 96..127 minus
                    8..15; negative = later tokens are easier because of what came before)

Shape legend
    B rows   L layers   H heads   T tokens
"""

from __future__ import annotations

import numpy as np
import torch

INDUCTION_LENGTH = 24


def windows(context: int) -> tuple[tuple[int, int], tuple[int, int]]:
    """(early, late) position ranges of the icl score for a context length."""
    return (context // 16, context // 8), (3 * context // 4, context)


def random_repeats(vocab: int, rows: int, length: int = INDUCTION_LENGTH, seed: int = 0,
                   first: int = 4) -> torch.Tensor:
    """(B, 1 + 2T) ids: <s> then a random run of ordinary pieces twice."""
    g = torch.Generator().manual_seed(seed)
    run = torch.randint(first, vocab, (rows, length), generator=g)
    bos = torch.zeros(rows, 1, dtype=torch.long)
    return torch.cat([bos, run, run], dim=1)


def _attentions(model, ids: torch.Tensor) -> np.ndarray:
    """(L, B, H, T, T) eager attention weights."""
    out = model(input_ids=ids, output_attentions=True)
    return torch.stack(out.attentions).float().numpy()


def induction_scores(model, ids: torch.Tensor, length: int = INDUCTION_LENGTH) -> np.ndarray:
    """(L, H) mean weight on the token after the query's earlier copy."""
    att = _attentions(model, ids)
    q = np.arange(1 + length, 1 + 2 * length)
    k = q - length + 1
    return att[:, :, :, q, k].mean(axis=(1, 3))


def text_scores(model, ids: torch.Tensor) -> dict[str, np.ndarray]:
    """previous_token and sink, (L, H) each, on rows of text."""
    att = _attentions(model, ids)
    t = ids.shape[1]
    q = np.arange(2, t)
    prev = att[:, :, :, q, q - 1].mean(axis=(1, 3))
    sink = att[:, :, :, 1:, 0].mean(axis=(1, 3))
    return {"previous_token": prev, "sink": sink}


def token_losses(model, ids: torch.Tensor) -> np.ndarray:
    """(B, T − 1) next-piece loss at each position."""
    logits = model(input_ids=ids).logits[:, :-1].float()
    loss = torch.nn.functional.cross_entropy(logits.transpose(1, 2), ids[:, 1:], reduction="none")
    return loss.numpy()


def icl_score(losses: np.ndarray, context: int) -> float:
    """Late minus early mean loss; losses[:, i] is the loss of predicting piece i + 1."""
    (e0, e1), (l0, l1) = windows(context)
    return float(losses[:, l0 - 1:l1 - 1].mean() - losses[:, e0 - 1:e1 - 1].mean())
