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


# cells of the JS loop's (pairs, packed keys) float32 blocks: two of them, 8 MB each, so a long
# input's rows never make one block of every pair at once
JS_BLOCK_CELLS = 2_000_000
TINY = float(np.finfo(np.float32).tiny)  # added to every weight: s·log s needs no zero test


def packed_rows(attn: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(p (N, C) float32, starts (R,)): the rows of attn (N, R, K) side by side, each cut to the
    keys up to the last one any head weighs (a causal row skips its future, about half the
    keys), plus TINY: a weight of 0 becomes TINY, whose TINY·log TINY ≈ −1e-36 stands for 0·log 0,
    and TINY is under half a float32 ulp of any weight above ~1e-31, which it leaves as it is.
    Row r is p[:, starts[r]:starts[r] + its width]."""
    used = (attn != 0).any(0)  # (R, K) keys any head weighs
    width = np.where(used.any(1), used.shape[1] - used[:, ::-1].argmax(1), 1)  # (R,)
    starts = np.concatenate(([0], np.cumsum(width)[:-1]))
    p = np.concatenate([attn[:, r, :w] for r, w in enumerate(width)], axis=1,
                       dtype=np.float32)  # (N, C)
    p += np.float32(TINY)
    return p, starts


def pair_spans(n: int, most: int):
    """(first pair, [(i, j0, j1), ...]) per step: the head pairs i < j in triu order (i, then j),
    at most `most` (at least one) per step, each step as runs of j for one i."""
    pair, i, j = 0, 0, 1
    while i < n - 1:
        runs, size = [], 0
        while i < n - 1 and size < most:
            j1 = min(n, j + most - size)
            runs.append((i, j, j1))
            size += j1 - j
            i, j = (i + 1, i + 2) if j1 == n else (i, j1)
        yield pair, runs
        pair += size


def js_rows(attn: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, int]:
    """(Σ over the counted rows of JS(head i's row, head j's row) as (N, N), rows counted).

    attn (N, Q, K) for one input; rows bool (Q,), the queries counted (the atlas counts queries
    with at least two keys: with one there is no choice, and every head agrees). Every pair of
    heads at once, over the rows packed side by side (packed_rows: each row over its own keys),
    in steps of at most JS_BLOCK_CELLS cells; numpy's float32 log (SIMD) is the cost. Float32
    throughout: a JS divergence is off by about 1e-7, so a distance under ~1e-3 reads as 0."""
    n, r = attn.shape[0], int(np.count_nonzero(rows))
    out = np.zeros((n, n))
    if n < 2 or r == 0:
        return out, r
    ln2 = np.float32(np.log(2.0))
    # (N, C), (R,); the (N, R, K) copy of the counted rows lives only while they are packed
    p, starts = packed_rows(np.asarray(attn[:, rows], dtype=np.float32))
    # JSD = ½ (Σ p log p + Σ q log q − Σ s log s) + ln 2 with s = p + q (Σ s = 2), per row
    plogp = np.log(p)
    plogp *= p
    plogp = np.add.reduceat(plogp, starts, axis=1)  # (N, R)
    first, second = np.triu_indices(n, 1)  # (P,) the pairs i < j
    total = np.empty(len(first))  # (P,) Σ over rows of the distance
    most = max(1, JS_BLOCK_CELLS // p.shape[1])
    s = np.empty((min(most, len(first)), p.shape[1]), np.float32)  # (P', C)
    slog = np.empty_like(s)
    for lo, runs in pair_spans(n, most):
        k = 0
        for i, j0, j1 in runs:
            np.add(p[i], p[j0:j1], out=s[k:k + j1 - j0])
            k += j1 - j0
        np.log(s[:k], out=slog[:k])
        slog[:k] *= s[:k]
        jsd = plogp[first[lo:lo + k]] + plogp[second[lo:lo + k]]  # (P', R)
        jsd -= np.add.reduceat(slog[:k], starts, axis=1)
        jsd *= 0.5
        jsd += ln2
        np.sqrt(np.clip(jsd, 0.0, ln2, out=jsd), out=jsd)
        total[lo:lo + k] = jsd.sum(-1, dtype=np.float64)
    out[first, second] = total
    out[second, first] = total
    return out, r


def js_distance(p: np.ndarray, q: np.ndarray) -> float:
    """JS distance of two distributions (natural log), float64: the reference for one pair."""
    p, q = np.asarray(p, np.float64), np.asarray(q, np.float64)
    m = 0.5 * (p + q)

    def kl(x: np.ndarray) -> float:
        on = x > 0
        return float((x[on] * np.log(x[on] / m[on])).sum())

    return float(np.sqrt(max(0.0, 0.5 * kl(p) + 0.5 * kl(q))))
