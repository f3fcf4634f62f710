"""Head detectors: which heads look at the previous token, at copies, at induction targets, at
a sink, or by position alone. Every score is (L, H) in [0, 1], one array per attention kind.

    previous_token   mean weight on key q − 1 (self-attention; queries that have one)
    duplicate_token  mean weight on other copies of the query's own token: earlier copies in
                     causal attention, any other copy in bidirectional attention; over queries
                     that have a copy (the typed input and, when run, the repeated sequence)
    induction        on a repeated random token sequence [prefix] r₁…rₙ r₁…rₙ (the standard
                     construction), mean weight from each second-copy token rᵢ to r₍ᵢ₊₁₎ of
                     the first copy (its own capture, by ids; self-attention only)
    sink             the largest mean share of a query's attention on one fixed place: the
                     first position, or one special token (BOS, </s>, [SEP], <2ko> …); over
                     queries with at least two keys, on the typed input and on validation
                     sentences where given
    positional       1 − the mean total-variation distance between a query's attention row
                     and the same row once the non-special tokens are shuffled with the
                     positions kept (its own capture): 1 = the head looks by position only

Shape legend
    L  layers   B  sentences   H  heads   Q  query positions   K  key positions
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np
import torch

from ..backends import backend_for, capabilities
from ..budget import Estimate, estimate
from ..capture import Trace, key_side, query_side
from ..hooks import ablation_hooks, attn_prefix, hooks
from ..masks import trace_masks
from ..tokenizer import is_special

DETECTORS = ("previous_token", "duplicate_token", "induction", "sink", "positional")
# the detectors read from the typed Trace alone (no run of the model): the first table
QUICK = ("previous_token", "duplicate_token", "sink")
SELF_KINDS = ("enc_self", "dec_self")
APPLIES = {"previous_token": SELF_KINDS, "duplicate_token": SELF_KINDS,
           "induction": SELF_KINDS, "sink": ("enc_self", "dec_self", "cross"),
           "positional": ("enc_self", "dec_self", "cross")}
INDUCTION_LENGTH = 24  # random tokens per copy (2 copies + prefix per row)
INDUCTION_ROWS = 4  # sequences averaged
Progress = Callable[[float], None] | None


@dataclass
class _Acc:
    """Σ weight over counted rows and the number of rows, per (L, H)."""

    total: np.ndarray
    rows: int = 0

    def add(self, total: np.ndarray, rows: int) -> None:
        self.total = self.total + total
        self.rows += rows

    def mean(self) -> np.ndarray:
        if not self.rows:
            return np.full_like(self.total, np.nan)
        return np.clip(self.total / self.rows, 0.0, 1.0)


# ---- weighted sums over attention ------------------------------------------------------------


def _mass(attn: np.ndarray, weight: np.ndarray) -> np.ndarray:
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


def _lengths(trace: Trace, side: str) -> np.ndarray:
    tokens = trace.tokens(side)
    return np.array([len(t) for t in tokens], dtype=np.int64)


def _rows(trace: Trace, kind: str, min_keys: int = 1) -> np.ndarray:
    """bool (B, Q): real (non-pad) queries with at least `min_keys` unblocked keys."""
    blocked = trace.masks[kind]  # (B, Q, K)
    n_q = blocked.shape[1]
    real = np.arange(n_q)[None, :] < _lengths(trace, query_side(kind))[:, None]
    return real & ((~blocked).sum(-1) >= min_keys)


def _causal(kind: str) -> bool:
    """Decoder self-attention sees no future key (in every model the lab runs)."""
    return kind == "dec_self"


def previous_token(trace: Trace, kind: str) -> tuple[np.ndarray, int]:
    """(Σ weight on key q − 1, rows counted) for a self-attention kind."""
    attn = trace.attn[kind]
    n_q = attn.shape[3]
    rows = _rows(trace, kind) & (np.arange(n_q) >= 1)[None, :]  # (B, Q)
    w = np.zeros(trace.masks[kind].shape, np.float32)
    q = np.arange(1, n_q)
    w[:, q, q - 1] = rows[:, 1:]
    return _mass(attn, w), int(rows.sum())


def duplicate_token(trace: Trace, kind: str) -> tuple[np.ndarray, int]:
    """(Σ weight on other copies of the query's token, rows that have a copy)."""
    ids = trace.ids(key_side(kind))  # (B, n)
    blocked = trace.masks[kind]
    n = blocked.shape[1]
    same = ids[:, :n, None] == ids[:, None, :n]  # (B, Q, K)
    same &= ~np.eye(n, dtype=bool)[None] & ~blocked
    if _causal(kind):
        same &= np.tril(np.ones((n, n), dtype=bool), -1)[None]
    lengths = _lengths(trace, key_side(kind))
    real = np.arange(n)[None, :] < lengths[:, None]
    same &= real[:, :, None] & real[:, None, :]
    rows = same.any(-1)  # (B, Q)
    return _mass(trace.attn[kind], same), int(rows.sum())


def _special_ids(trace: Trace, side: str) -> list[int]:
    """Ids of the special pieces (markers) found on one side of the trace."""
    tokens = trace.tokens(side)
    ids = trace.ids(side)
    found = set()
    for b, pieces in enumerate(tokens):
        for i, p in enumerate(pieces):
            if is_special(p):
                found.add(int(ids[b, i]))
    return sorted(found)


def sink(trace: Trace, kind: str) -> dict[str, tuple[np.ndarray, int]]:
    """Per candidate sink ('first position', 'token <id>'): (Σ share on it, rows counted).
    Rows are real queries with at least two keys (a causal first query has no choice)."""
    attn = trace.attn[kind]
    blocked = trace.masks[kind]
    rows = _rows(trace, kind, min_keys=2)  # (B, Q)
    n_rows = int(rows.sum())
    out = {}
    w = np.zeros(blocked.shape, np.float32)
    w[:, :, 0] = rows
    out["first position"] = (_mass(attn, w), n_rows)
    ids = trace.ids(key_side(kind))[:, : blocked.shape[2]]
    for s in _special_ids(trace, key_side(kind)):
        on = (ids == s)[:, None, :] & rows[:, :, None] & ~blocked  # (B, Q, K)
        if on.any():
            out[f"token {s}"] = (_mass(attn, on), n_rows)
    return out


def positional_shift(trace: Trace, shuffled: Trace, kind: str) -> tuple[np.ndarray, int]:
    """(Σ (1 − total variation) between each row of trace and shuffled, rows counted)."""
    rows = _rows(trace, kind)  # (B, Q)
    a, s = trace.attn[kind], shuffled.attn[kind]
    tv = 0.5 * np.abs(a - s).sum(-1)  # (L, B, H, Q)
    kept = (1.0 - tv) * rows[None, :, None, :]
    return kept.sum(axis=(1, 3)).astype(np.float64), int(rows.sum())


def induction_score(trace: Trace, kind: str, prefix: int, length: int) -> tuple[np.ndarray, int]:
    """(Σ weight from second-copy position q to q − length + 1, rows) on a repeated sequence
    [prefix tokens] r₁…rₙ r₁…rₙ (n = length)."""
    blocked = trace.masks[kind]
    w = np.zeros(blocked.shape, np.float32)
    q = np.arange(prefix + length, prefix + 2 * length)
    w[:, q, q - length + 1] = 1.0
    w = np.where(blocked, 0.0, w).astype(np.float32)
    return _mass(trace.attn[kind], w), int(len(q) * blocked.shape[0])


# ---- runs of the model on given ids ----------------------------------------------------------


def _pad_rows(rows: Sequence[Sequence[int]], pad: int) -> tuple[np.ndarray, np.ndarray]:
    n = max((len(r) for r in rows), default=0)
    ids = np.full((len(rows), n), pad, np.int64)
    for i, r in enumerate(rows):
        ids[i, : len(r)] = r
    return ids, np.array([len(r) for r in rows], np.int64)


def run_ids(bundle, src: list[list[int]], tgt: list[list[int]],
            ablate: frozenset = frozenset()) -> Trace:
    """Attention of the model on given token ids (no text, no tokenizer): a Trace holding attn
    and masks only, tokens as ids. src is empty for decoder-only models, tgt for encoder-only.
    Rows are padded on the right with pad_id (masked out, as capture does)."""
    backend = backend_for(bundle)
    caps = backend.caps
    model, cfg = bundle.model, bundle.config
    n = len(src) or len(tgt)
    src_ids, src_len = _pad_rows(src, cfg.pad_id) if src else (np.zeros((n, 0), np.int64),
                                                               np.zeros(n, np.int64))
    tgt_ids, tgt_len = _pad_rows(tgt, cfg.pad_id) if tgt else (np.zeros((n, 0), np.int64),
                                                               np.zeros(n, np.int64))
    kinds = [k for k in caps.kinds]
    got: dict[str, dict[int, np.ndarray]] = {k: {} for k in kinds}
    names = {}
    for kind in kinds:
        for layer in range(bundle.n_layers(kind)):
            names[f"{attn_prefix(kind, layer)}.hook_probs"] = (kind, layer)

    def keep(x: torch.Tensor, name: str) -> None:
        kind, layer = names[name]
        got[kind][layer] = x.detach().to("cpu", torch.float32).numpy().copy()

    device = next(model.parameters()).device
    s_t = torch.from_numpy(src_ids).to(device)
    t_t = torch.from_numpy(tgt_ids).to(device)
    s_m = torch.from_numpy(np.arange(src_ids.shape[1])[None] < src_len[:, None]).long().to(device)
    t_m = torch.from_numpy(np.arange(tgt_ids.shape[1])[None] < tgt_len[:, None]).long().to(device)
    with torch.inference_mode(), hooks(ablation_hooks(frozenset(ablate))), \
            hooks(dict.fromkeys(names, keep)):
        backend.forward(s_t, s_m, t_t, t_m)
    attn = {k: np.stack([got[k][i] for i in range(len(got[k]))]) for k in kinds if got[k]}
    s_pad = np.arange(src_ids.shape[1])[None] >= src_len[:, None]  # (B, S)
    t_pad = np.arange(tgt_ids.shape[1])[None] >= tgt_len[:, None]  # (B, T)
    masks = trace_masks(s_pad, t_pad, attn)
    # blocked entries are exactly 0, as in a captured Trace
    attn = {k: np.where(masks[k][None, :, None], 0.0, a).astype(np.float32)
            for k, a in attn.items()}
    return Trace(src_tokens=[[str(i) for i in r] for r in src] or [[] for _ in range(n)],
                 tgt_tokens=[[str(i) for i in r] for r in tgt] or [[] for _ in range(n)],
                 src_ids=src_ids, tgt_ids=tgt_ids, masks=masks, scores={}, attn=attn, q={},
                 k={}, v={}, hidden={}, pos_table=np.zeros((1, 1), np.float32), logits=None,
                 pad_id=cfg.pad_id, ablate=frozenset(ablate))


def _plain_ids(bundle) -> np.ndarray:
    """Ids of ordinary pieces (no marker, no pad), within the model's embedding table."""
    pieces = backend_for(bundle).vocabulary()
    limit = min(len(pieces), int(bundle.config.vocab_size))
    ok = [i for i in range(limit) if i != bundle.config.pad_id and not is_special(pieces[i])]
    return np.array(ok, np.int64)


def _row(trace: Trace, side: str, b: int) -> list[int]:
    return [int(i) for i in trace.ids(side)[b, : trace.length(side, b)]]


def _prefix(trace: Trace, side: str) -> list[int]:
    """The typed input's first token on a side, kept when it is a marker (BOS, <2ko>, [CLS])."""
    tokens = trace.tokens(side)
    if tokens and tokens[0] and is_special(tokens[0][0]):
        return [int(trace.ids(side)[0, 0])]
    return []


def _span(bundle, trace: Trace) -> int:
    """Random tokens per copy: INDUCTION_LENGTH, fewer when the position table is short."""
    room = int(bundle.config.max_len) - 4
    return max(2, min(INDUCTION_LENGTH, room // 2))


def induction_inputs(bundle, trace: Trace, seed: int = 0
                     ) -> tuple[list[list[int]], list[list[int]], dict[str, int], int]:
    """(src rows, tgt rows, prefix length per side, n): INDUCTION_ROWS rows of
    [prefix] r₁…rₙ r₁…rₙ with random ordinary tokens rᵢ, on every side the model has."""
    rng = np.random.default_rng(seed)
    pool = _plain_ids(bundle)
    n = _span(bundle, trace)
    caps = capabilities(bundle)
    src, tgt, pre = [], [], {}
    for _ in range(INDUCTION_ROWS):
        r = [int(x) for x in rng.choice(pool, size=n, replace=len(pool) < n)]
        if caps.family != "decoder":
            p = _prefix(trace, "src")
            pre["src"] = len(p)
            src.append(p + r + r)
        if caps.family != "encoder":
            p = _prefix(trace, "tgt")
            pre["tgt"] = len(p)
            tgt.append(p + r + r)
    return src, tgt, pre, n


def shuffled_inputs(trace: Trace, seed: int = 0) -> tuple[list[list[int]], list[list[int]]]:
    """The typed input's rows with the ordinary tokens shuffled among their own positions
    (markers and positions stay)."""
    rng = np.random.default_rng(seed)
    out = {}
    for side in ("src", "tgt"):
        tokens = trace.tokens(side)
        rows = []
        for b, pieces in enumerate(tokens):
            row = _row(trace, side, b)
            free = [i for i, p in enumerate(pieces) if not is_special(p)]
            if len(free) > 1:
                order = rng.permutation(len(free))
                if (order == np.arange(len(free))).all():
                    order = np.roll(order, 1)
                vals = [row[i] for i in free]
                for i, j in zip(free, order):
                    row[i] = vals[j]
            rows.append(row)
        out[side] = rows if any(tokens) else []
    return out["src"], out["tgt"]


def estimate_detectors(bundle, trace: Trace) -> Estimate:
    """Peak bytes of the detectors' own runs (shuffled input, repeated sequence), attention
    only: the larger of the two."""
    cfg = bundle.config
    from ..budget import Dims

    caps = capabilities(bundle)
    d_ff = caps.d_ff or 4 * cfg.d_model  # the FFN's width where the model says it
    n_ind = 2 * _span(bundle, trace) + 1
    best = None
    for batch, s, t in ((len(trace.src_tokens), trace.src_ids.shape[1], trace.tgt_ids.shape[1]),
                        (INDUCTION_ROWS, n_ind if caps.family != "decoder" else 0,
                         n_ind if caps.family != "encoder" else 0)):
        dims = Dims(batch=batch, src=s, tgt=t, layers={k: bundle.n_layers(k) for k in caps.kinds},
                    heads=cfg.n_heads, d_head=cfg.d_model // cfg.n_heads, d_model=cfg.d_model,
                    d_ff=d_ff, vocab=int(cfg.vocab_size), max_len=int(cfg.max_len),
                    **backend_for(bundle).forward_costs)
        est = estimate(dims, {"attn"})
        best = est if best is None or est.bytes > best.bytes else best
    return best


# ---- all detectors -------------------------------------------------------------------------


def _kinds(trace: Trace, detector: str) -> list[str]:
    return [k for k in APPLIES[detector] if k in trace.attn]


def quick_detectors(trace: Trace) -> dict[str, dict[str, np.ndarray]]:
    """previous_token, duplicate_token and sink from the typed input's Trace alone."""
    return _combine(trace, None, None, ())


def _combine(trace: Trace, induction: tuple[Trace, dict, int] | None, shuffled: Trace | None,
             extra: Sequence[Trace]) -> dict[str, dict[str, np.ndarray]]:
    out: dict[str, dict[str, np.ndarray]] = {}
    out["previous_token"] = {}
    for kind in _kinds(trace, "previous_token"):
        acc = _Acc(*previous_token(trace, kind))
        out["previous_token"][kind] = acc.mean()
    out["duplicate_token"] = {}
    for kind in _kinds(trace, "duplicate_token"):
        acc = _Acc(*duplicate_token(trace, kind))
        if induction is not None and kind in induction[0].attn:
            acc.add(*duplicate_token(induction[0], kind))
        out["duplicate_token"][kind] = acc.mean()
    out["sink"] = {}
    for kind in _kinds(trace, "sink"):
        found: dict[str, _Acc] = {}
        for tr in (trace, *extra):
            if kind not in tr.attn:
                continue
            for where, (total, rows) in sink(tr, kind).items():
                if where in found:
                    found[where].add(total, rows)
                else:
                    found[where] = _Acc(total, rows)
        means = [a.mean() for a in found.values() if a.rows]
        if means:
            out["sink"][kind] = np.max(np.stack(means), axis=0)
    if induction is not None:
        tr, pre, n = induction
        out["induction"] = {}
        for kind in _kinds(tr, "induction"):
            out["induction"][kind] = _Acc(*induction_score(tr, kind, pre[query_side(kind)],
                                                           n)).mean()
    if shuffled is not None:
        out["positional"] = {kind: _Acc(*positional_shift(trace, shuffled, kind)).mean()
                             for kind in _kinds(trace, "positional") if kind in shuffled.attn}
    return out


def pair_traces(bundle, pairs: Sequence, batch: int = 32, progress: Progress = None
                ) -> list[Trace]:
    """Teacher-forced attention on validation pairs (both directions), for the sink detector."""
    from .heads import corpus_traces

    return [tr for tr, _, _ in corpus_traces(bundle, list(pairs), None, batch, progress)]


def detect_heads(bundle, trace: Trace, *, pairs: Sequence | None = None,
                 validation: Sequence[Trace] | None = None, run: bool = True, seed: int = 0
                 ) -> dict[str, dict[str, np.ndarray]]:
    """{detector: {kind: (L, H) in [0, 1]}} for the detectors in DETECTORS (module docstring).

    trace: the typed input, captured with attention. run=False keeps to the typed input
    (no induction, no positional). The sink also averages over `validation` traces, or over
    the validation `pairs` captured here (a lab checkpoint's val_pairs.tsv); without either,
    over the typed input only (Hugging Face models have no validation set).
    """
    if not trace.attn:
        raise ValueError("the detectors need a trace captured with attention ('attn')")
    extra = list(validation or [])
    if pairs and not extra:
        extra = pair_traces(bundle, pairs)
    if not run:
        return _combine(trace, None, None, extra)
    src, tgt, pre, n = induction_inputs(bundle, trace, seed)
    induction = (run_ids(bundle, src, tgt, trace.ablate), pre, n)
    s_src, s_tgt = shuffled_inputs(trace, seed)
    shuffled = run_ids(bundle, s_src, s_tgt, trace.ablate)
    return _combine(trace, induction, shuffled, extra)


def ranked(scores: dict[str, np.ndarray], top: int | None = None
           ) -> list[tuple[str, int, int, float]]:
    """(kind, layer, head, score) of one detector's heads, highest first (NaN left out)."""
    rows = [(kind, layer, head, float(a[layer, head]))
            for kind, a in scores.items() for layer in range(a.shape[0])
            for head in range(a.shape[1]) if np.isfinite(a[layer, head])]
    rows.sort(key=lambda r: -r[3])
    return rows[:top] if top else rows


def chance_levels(bundle, trace: Trace) -> dict[str, dict[str, float]]:
    """{detector: {kind: score}} of a uniform head (equal weight on every key it may see) on
    the rows the detectors count: the typed input for previous-token, duplicate-token and sink,
    the repeated sequence for induction; positional is 1 (a uniform row ignores the tokens).
    Reads only the masks and shapes of those rows: no run of the model."""
    uniform = {}
    for kind, blocked in trace.masks.items():
        if kind in trace.attn:
            seen = (~blocked).astype(np.float32)  # (B, Q, K)
            uniform[kind] = (seen / np.maximum(seen.sum(-1, keepdims=True), 1.0))[None, :, None]
    flat = replace(trace, attn=uniform)  # (1, B, 1, Q, K): one layer, one head
    out = {d: {k: float(a[0, 0]) for k, a in s.items()} for d, s in quick_detectors(flat).items()}
    _, _, pre, n = induction_inputs(bundle, trace)
    out["induction"] = {}
    for kind in _kinds(trace, "induction"):
        start = pre.get(query_side(kind), 0)
        q = np.arange(start + n, start + 2 * n)
        out["induction"][kind] = float(np.mean(1.0 / (q + 1) if _causal(kind)
                                               else np.full(len(q), 1.0 / (start + 2 * n))))
    out["positional"] = dict.fromkeys(_kinds(trace, "positional"), 1.0)
    return out
