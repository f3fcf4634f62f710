"""The detectors' scores on one Trace: small pure functions over its attention arrays.

Each returns (Σ score over counted query rows, rows counted) per head, so that scores from
several traces (the typed input, validation or built-in sentences) add up before one mean:
total is float64 (L, H), rows an int. model/analysis/detectors.py runs the model and averages;
the head atlas reuses these directly.

Shape legend
    L  layers   B  sentences   H  heads   Q  query positions   K  key positions
    attn   (L, B, H, Q, K) float32, blocked entries exactly 0 (as capture writes them)
    masks  (B, Q, K) bool, True = blocked (padding or the future)
"""

from __future__ import annotations

import unicodedata

import numpy as np

from ..capture import Trace, key_side, query_side
from ..specials import is_special

WORD_MARKS = ("▁", "Ġ", "##")  # SentencePiece / byte-level BPE / WordPiece word marks
FIRST = "first position"  # the sink's place names besides special pieces' own text
PUNCTUATION = "punctuation"


def mass(attn: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """Σ_{b,q,k} attn·weight for attn (L, B, H, Q, K), weight (B, Q, K) -> (L, H) float64.

    One float32 matrix–vector product per sentence: a 12 × 12 × 512 × 512 slab takes tens of
    ms, where an einsum through float64 would copy it twice."""
    n_l, n_b, n_h, n_q, n_k = attn.shape
    out = np.zeros((n_l * n_h,), np.float64)
    for b in range(n_b):
        w = np.ascontiguousarray(weight[b], dtype=np.float32).reshape(n_q * n_k)
        if not w.any():
            continue
        out += attn[:, b].reshape(n_l * n_h, n_q * n_k) @ w
    return out.reshape(n_l, n_h)


def lengths(trace: Trace, side: str) -> np.ndarray:
    """int64 (B,): unpadded length of each sentence on a side."""
    return np.array([len(t) for t in trace.tokens(side)], dtype=np.int64)


def query_rows(trace: Trace, kind: str, min_keys: int = 1) -> np.ndarray:
    """bool (B, Q): real (non-pad) queries with at least `min_keys` unblocked keys."""
    blocked = trace.masks[kind]  # (B, Q, K)
    n_q = blocked.shape[1]
    real = np.arange(n_q)[None, :] < lengths(trace, query_side(kind))[:, None]
    return real & ((~blocked).sum(-1) >= min_keys)


def is_punctuation(piece: str) -> bool:
    """A piece made only of punctuation once its word mark is dropped ('.', ',', '▁?', '##!',
    '"'); markers ([SEP], </s>) and symbols ($, +) are not."""
    if is_special(piece):
        return False
    for mark in WORD_MARKS:
        if piece.startswith(mark):
            piece = piece[len(mark):]
            break
    return bool(piece) and all(unicodedata.category(c).startswith("P") for c in piece)


def key_flags(trace: Trace, kind: str, test) -> np.ndarray:
    """bool (B, K): real keys whose piece passes test(piece)."""
    n_k = trace.masks[kind].shape[2]
    out = np.zeros((len(trace.tokens(key_side(kind))), n_k), bool)
    for b, pieces in enumerate(trace.tokens(key_side(kind))):
        for i, p in enumerate(pieces[:n_k]):
            out[b, i] = test(p)
    return out


def previous_token(trace: Trace, kind: str) -> tuple[np.ndarray, int]:
    """(Σ weight on key q − 1, rows counted) for a self-attention kind."""
    attn = trace.attn[kind]
    n_q = attn.shape[3]
    rows = query_rows(trace, kind) & (np.arange(n_q) >= 1)[None, :]  # (B, Q)
    w = np.zeros(trace.masks[kind].shape, np.float32)
    q = np.arange(1, n_q)
    w[:, q, q - 1] = rows[:, 1:]
    return mass(attn, w), int(rows.sum())


def next_token(trace: Trace, kind: str) -> tuple[np.ndarray, int]:
    """(Σ weight on key q + 1, rows counted): queries whose next piece is real and visible
    (bidirectional self-attention; a causal query never sees it, so counts no row)."""
    attn = trace.attn[kind]
    blocked = trace.masks[kind]
    n_q = attn.shape[3]
    n = lengths(trace, query_side(kind))
    q = np.arange(n_q - 1)
    rows = np.zeros(blocked.shape[:2], bool)  # (B, Q)
    rows[:, q] = query_rows(trace, kind)[:, q] & (q[None, :] + 1 < n[:, None]) \
        & ~blocked[:, q, q + 1]
    w = np.zeros(blocked.shape, np.float32)
    w[:, q, q + 1] = rows[:, q]
    return mass(attn, w), int(rows.sum())


def duplicate_token(trace: Trace, kind: str, causal: bool) -> tuple[np.ndarray, int]:
    """(Σ weight on other copies of the query's token, rows that have a copy): earlier copies
    only when `causal`, any other copy otherwise."""
    ids = trace.ids(key_side(kind))  # (B, n)
    blocked = trace.masks[kind]
    n = blocked.shape[1]
    same = ids[:, :n, None] == ids[:, None, :n]  # (B, Q, K)
    same &= ~np.eye(n, dtype=bool)[None] & ~blocked
    if causal:
        same &= np.tril(np.ones((n, n), dtype=bool), -1)[None]
    real = np.arange(n)[None, :] < lengths(trace, key_side(kind))[:, None]
    same &= real[:, :, None] & real[:, None, :]
    rows = same.any(-1)  # (B, Q)
    return mass(trace.attn[kind], same), int(rows.sum())


def punctuation(trace: Trace, kind: str) -> tuple[np.ndarray, int]:
    """(Σ share of a query's attention on punctuation pieces, rows counted): real queries
    that see at least one punctuation key (a sentence without any says nothing)."""
    blocked = trace.masks[kind]
    on = key_flags(trace, kind, is_punctuation)[:, None, :] & ~blocked  # (B, Q, K)
    rows = query_rows(trace, kind) & on.any(-1)
    return mass(trace.attn[kind], on & rows[:, :, None]), int(rows.sum())


def sink(trace: Trace, kind: str) -> dict[str, tuple[np.ndarray, int]]:
    """Per place (FIRST, PUNCTUATION, or a special piece's own text such as '[SEP]' or
    '</s>'): (Σ share of a query's attention on it, rows counted). Rows are real queries with
    at least two keys (a causal first query has no choice), the same rows for every place. A
    special piece seen only at the first position is that place, not one of its own."""
    attn = trace.attn[kind]
    blocked = trace.masks[kind]
    rows = query_rows(trace, kind, min_keys=2)  # (B, Q)
    n_rows = int(rows.sum())
    out = {}
    w = np.zeros(blocked.shape, np.float32)
    w[:, :, 0] = rows
    out[FIRST] = (mass(attn, w), n_rows)
    seen = ~blocked & rows[:, :, None]  # (B, Q, K)
    pieces: set[str] = {p for row in trace.tokens(key_side(kind)) for p in row[1:]
                        if is_special(p)}
    for piece in sorted(pieces):
        on = key_flags(trace, kind, lambda p, s=piece: p == s)[:, None, :] & seen
        if on.any():
            out[piece] = (mass(attn, on), n_rows)
    on = key_flags(trace, kind, is_punctuation)[:, None, :] & seen
    if on.any():
        out[PUNCTUATION] = (mass(attn, on), n_rows)
    return out


def positional_shift(trace: Trace, shuffled: Trace, kind: str) -> tuple[np.ndarray, int]:
    """(Σ positional score, rows counted): how much of a row stays on the same ordinary keys
    when the ordinary tokens are shuffled among their positions, beyond an even spread.

    For a query row a with n visible keys and the same row s of the shuffled input:
        Σ over ordinary keys k of max(0, min(a_k, s_k) − 1/n)  /  (1 − 1/n)
    Ordinary keys are real pieces that are neither special ([CLS], [SEP], BOS, </s>) nor at the
    first position: attention parked there never moves in a shuffle, whatever the head reads,
    so it proves nothing about position. An even (uniform) row scores 0, a head that parks on
    [CLS] or the first position ≈ 0, a previous-token or fixed-offset head ≈ 1, a head that
    follows a word to its new place ≈ 0. Rows: real queries with at least two keys."""
    rows = query_rows(trace, kind, min_keys=2)  # (B, Q)
    blocked = trace.masks[kind]
    n = np.maximum((~blocked).sum(-1), 2).astype(np.float32)  # (B, Q) visible keys
    ordinary = key_flags(trace, kind, lambda p: not is_special(p))  # (B, K)
    ordinary[:, 0] = False
    keep = (ordinary[:, None, :] & ~blocked & rows[:, :, None]).astype(np.float32)  # (B, Q, K)
    a, s = trace.attn[kind], shuffled.attn[kind]
    out = np.zeros(a.shape[0:3:2], np.float64)  # (L, H)
    for layer in range(a.shape[0]):  # one layer at a time: the (B, H, Q, K) temporaries
        over = np.minimum(a[layer], s[layer]) - (1.0 / n)[:, None, :, None]
        kept = np.maximum(over, 0.0) * keep[:, None]  # (B, H, Q, K)
        per_row = kept.sum(-1) / (1.0 - 1.0 / n)[:, None, :]  # (B, H, Q)
        out[layer] = per_row.sum(axis=(0, 2))
    return out, int(rows.sum())


def parked_share(trace: Trace, kind: str) -> tuple[np.ndarray, int]:
    """(Σ share of a row on keys the positional detector does not count, rows counted): the
    first position and special pieces ([CLS], [SEP], BOS, </s>), on the same rows as
    positional_shift. A head whose mean share here is over one half rests on a sink: it is
    a sink head, whatever the rest of its attention does (detectors.finish gives it 0 as a
    positional head)."""
    rows = query_rows(trace, kind, min_keys=2)  # (B, Q)
    blocked = trace.masks[kind]
    parked = ~key_flags(trace, kind, lambda p: not is_special(p))  # (B, K)
    parked[:, 0] = True
    on = parked[:, None, :] & ~blocked & rows[:, :, None]  # (B, Q, K)
    return mass(trace.attn[kind], on), int(rows.sum())


def induction_score(trace: Trace, kind: str, prefix: int, length: int) -> tuple[np.ndarray, int]:
    """(Σ weight from second-copy position q to q − length + 1, rows) on a repeated sequence
    [prefix tokens] r₁…rₙ r₁…rₙ (n = length)."""
    blocked = trace.masks[kind]
    w = np.zeros(blocked.shape, np.float32)
    q = np.arange(prefix + length, prefix + 2 * length)
    w[:, q, q - length + 1] = 1.0
    w = np.where(blocked, 0.0, w).astype(np.float32)
    return mass(trace.attn[kind], w), int(len(q) * blocked.shape[0])


def entropy(trace: Trace, kind: str) -> tuple[np.ndarray, int]:
    """(Σ entropy in nats of each counted row, rows counted): real queries, any key count."""
    rows = query_rows(trace, kind)  # (B, Q)
    a = trace.attn[kind]
    out = np.zeros(a.shape[0:3:2], np.float64)  # (L, H)
    for layer in range(a.shape[0]):
        p = a[layer].astype(np.float64)  # (B, H, Q, K)
        h = -(p * np.log(np.where(p > 0, p, 1.0))).sum(-1)  # (B, H, Q)
        out[layer] = (h * rows[:, None, :]).sum(axis=(0, 2))
    return out, int(rows.sum())


def uniform(trace: Trace) -> Trace:
    """The trace with one layer of one head that spreads each row evenly over the keys it may
    see: (1, B, 1, Q, K). The detectors' scores on it are their chance levels."""
    from dataclasses import replace

    flat = {}
    for kind, blocked in trace.masks.items():
        if kind in trace.attn:
            seen = (~blocked).astype(np.float32)  # (B, Q, K)
            flat[kind] = (seen / np.maximum(seen.sum(-1, keepdims=True), 1.0))[None, :, None]
    return replace(trace, attn=flat)
