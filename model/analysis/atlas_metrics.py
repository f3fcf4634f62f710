"""The head atlas's per-input measurements: small pure functions of one input's attention.

Every function takes one input's attention for every head of one kind at once, trimmed to the
input's real pieces, and returns one number per head (NaN where the input has no row the
metric counts), so the atlas can average over inputs and say how much a head varies.

    entropy        mean entropy (nats) of a query's row
    distance       mean |query − key| weighted by attention (cross: to the proportional place)
    prev_token     mean weight on key q − 1                     (self-attention)
    next_token     mean weight on key q + 1 where it is visible  (bidirectional self-attention)
    self           mean weight on key q                          (self-attention)
    duplicate      mean weight on other copies of the query's own piece, over queries that
                   have one it may see                          (self-attention)
    punctuation    mean weight on punctuation pieces
    sink_first     mean weight on the first key (BOS, [CLS], <2ko>, or the first word)
    sink_end       mean weight on a closing marker ([SEP], </s>) when the input ends in one
    sink_special   mean weight on any other marker piece (<unk> is text, not a marker)
    alignment, induction: computed by atlas.py from runs of their own (gold alignments of the
                   translators' pairs; a repeated random sequence)

The Jensen–Shannon distance (Clark et al. 2019, §6) between two heads' rows p, q:
    JS(p, q) = sqrt(½ KL(p ‖ m) + ½ KL(q ‖ m)),  m = (p + q) / 2, natural logarithm,
so 0 ≤ JS ≤ sqrt(ln 2) ≈ 0.833 (scipy.spatial.distance.jensenshannon's default base).

Shape legend
    N  heads of one kind, layer-major (layer · H + head)   Q  query pieces   K  key pieces
    R  query rows counted
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from ..specials import is_special
from .heads import is_punct

SELF_ONLY = ("prev_token", "next_token", "self", "duplicate")
METRICS = ("entropy", "distance", "prev_token", "next_token", "self", "duplicate",
           "punctuation", "sink_first", "sink_end", "sink_special", "induction", "alignment")
JS_MAX = float(np.sqrt(np.log(2.0)))  # the largest Jensen–Shannon distance in nats


def is_marker(piece: str) -> bool:
    """A special piece that marks a place (BOS, [CLS], [SEP], </s>, <2ko>), not an unknown
    piece standing for text the vocabulary lacks (<unk>, [UNK])."""
    return is_special(piece) and piece.strip("<>[]").lower() != "unk"


def _row_mean(values: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Mean over the counted rows: values (N, Q), rows bool (Q,) -> (N,); NaN with no row."""
    if not rows.any():
        return np.full(values.shape[0], np.nan)
    return values[:, rows].mean(axis=1)


def on_keys(attn: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Σ_k attn over the flagged keys: attn (N, Q, K), keys bool (K,) -> (N, Q)."""
    return attn[:, :, keys].sum(-1) if keys.any() else np.zeros(attn.shape[:2])


def on_cells(attn: np.ndarray, cells: np.ndarray) -> np.ndarray:
    """Σ_k attn·cells for a (Q, K) 0/1 weight -> (N, Q)."""
    return np.einsum("nqk,qk->nq", attn, cells.astype(attn.dtype))


def input_metrics(attn: np.ndarray, blocked: np.ndarray, q_pieces: Sequence[str],
                  k_pieces: Sequence[str], cross: bool) -> dict[str, np.ndarray]:
    """{metric: (N,)} for one input: attn (N, Q, K) with Q = len(q_pieces), K = len(k_pieces),
    blocked (Q, K) True where the model may not look (a future key). Self-attention metrics are
    left out for cross attention, next_token where no query can see its next key (causal)."""
    attn = np.asarray(attn, dtype=np.float64)
    n_q, n_k = attn.shape[1:]
    seen = ~blocked  # (Q, K)
    rows = seen.any(-1)  # (Q,) a query with a key to look at
    choice = seen.sum(-1) >= 2  # (Q,) a query with a choice (the sinks)
    qi, ki = np.arange(n_q)[:, None], np.arange(n_k)[None, :]
    logs = np.log(np.where(attn > 0, attn, 1.0))
    out = {"entropy": _row_mean(-(attn * logs).sum(-1), rows)}
    if cross:  # compare each key with the query's proportional place in the source
        where = qi * (n_k - 1) / max(n_q - 1, 1)  # (Q, 1)
        dist = np.abs(ki - where)
    else:
        dist = np.abs(qi - ki).astype(np.float64)
    out["distance"] = _row_mean(np.einsum("nqk,qk->nq", attn, dist), rows)
    if not cross:
        for name, shift in (("prev_token", -1), ("next_token", 1), ("self", 0)):
            cell = (ki == qi + shift) & seen  # (Q, K)
            out[name] = _row_mean(on_cells(attn, cell), cell.any(-1))
        same = np.array([[a == b for b in k_pieces] for a in q_pieces], dtype=bool)
        same &= seen & (qi != ki)
        out["duplicate"] = _row_mean(on_cells(attn, same), same.any(-1))
    punct = np.array([is_punct(p) for p in k_pieces], dtype=bool)
    out["punctuation"] = _row_mean(on_keys(attn, punct), rows)
    special = np.array([is_marker(p) for p in k_pieces], dtype=bool)
    first = np.zeros(n_k, dtype=bool)
    first[0] = n_k > 0
    end = np.zeros(n_k, dtype=bool)
    if n_k > 1 and special[-1]:
        end[-1] = True
    out["sink_first"] = _row_mean(on_keys(attn, first), choice)
    # a closing marker only counts for the queries that can see it (causal: the last one)
    sees_end = choice & seen[:, -1] if end.any() else np.zeros(n_q, dtype=bool)
    out["sink_end"] = _row_mean(on_keys(attn, end), sees_end)
    out["sink_special"] = _row_mean(on_keys(attn, special & ~first & ~end), choice)
    return out


ROW_BLOCK = 16  # query rows per block of the JS loop (each block reads only the keys it sees)


def js_rows(attn: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, int]:
    """(Σ over the counted rows of JS(head i's row, head j's row) as (N, N), rows counted).

    attn (N, Q, K) for one input; rows bool (Q,), the queries counted (the atlas counts queries
    with at least two keys: with one there is no choice, and every head agrees). Rows go in
    blocks of ROW_BLOCK, each over the keys up to the last one any head of the block weighs (a
    causal block skips the future: about half the work at 64 pieces). Float32 throughout: a
    JS divergence is off by about 1e-7, so a distance under ~1e-3 reads as 0."""
    a = torch.as_tensor(np.ascontiguousarray(attn[:, rows]), dtype=torch.float32)  # (N, R, K)
    n, r = a.shape[:2]
    out = np.zeros((n, n))
    if n < 2 or r == 0:
        return out, int(r)
    ln2 = float(np.log(2.0))
    used = (a != 0).any(0)  # (R, K) keys any head weighs
    with torch.no_grad():
        for start in range(0, r, ROW_BLOCK):
            block = used[start:start + ROW_BLOCK].any(0).nonzero()
            width = int(block.max()) + 1 if len(block) else 1
            b = a[:, start:start + ROW_BLOCK, :width].contiguous()  # (N, R', K')
            # JSD = ½ (Σ p log p + Σ q log q − Σ s log s) + ln 2 with s = p + q (Σ s = 2)
            plogp = torch.special.xlogy(b, b).sum(-1)  # (N, R')
            for i in range(n - 1):
                s = b[i] + b[i + 1:]  # (N − i − 1, R', K')
                jsd = 0.5 * (plogp[i] + plogp[i + 1:] - torch.special.xlogy(s, s).sum(-1)) + ln2
                d = jsd.clamp_(0.0, ln2).sqrt_().sum(-1).double().numpy()
                out[i, i + 1:] += d
                out[i + 1:, i] += d
    return out, int(r)


def js_distance(p: np.ndarray, q: np.ndarray) -> float:
    """JS distance of two distributions (natural log), float64: the reference for one pair."""
    p, q = np.asarray(p, np.float64), np.asarray(q, np.float64)
    m = 0.5 * (p + q)

    def kl(x: np.ndarray) -> float:
        on = x > 0
        return float((x[on] * np.log(x[on] / m[on])).sum())

    return float(np.sqrt(max(0.0, 0.5 * kl(p) + 0.5 * kl(q))))
