"""Head detectors: which heads look at the previous or next token, at copies, at induction
targets, at punctuation, at a sink, or by position alone. Every score is (L, H) in [0, 1], one
array per attention kind. The per-trace sums are model/analysis/detector_scores.py; this module
runs the model where a detector needs it and averages.

    previous_token   mean weight on key q − 1 (self-attention; queries that have one)
    next_token       mean weight on key q + 1 (bidirectional self-attention; queries whose
                     next piece is real): Clark et al. 2019's other classic early BERT head
    duplicate_token  mean weight on other copies of the query's own token: earlier copies in
                     causal attention, any other copy in bidirectional attention; over queries
                     that have a copy (the typed input and, when run, the repeated sequence)
    induction        on a repeated random token sequence [prefix] r₁…rₙ r₁…rₙ (the standard
                     construction), mean weight from each second-copy token rᵢ to r₍ᵢ₊₁₎ of
                     the first copy (its own capture, by ids; self-attention only)
    punctuation      mean share of a query's attention on punctuation pieces (. , ? ! " …),
                     over queries that see at least one
    sink             the largest mean share of a query's attention on one place: the first
                     position ([CLS], BOS), one special piece ([SEP], </s>, <2ko> …), or the
                     punctuation pieces together; which place won is kept per head
                     (Detected.sink_place)
    positional       how much of each row stays on the same ordinary keys when the ordinary
                     tokens are shuffled with the positions kept (its own capture), beyond an
                     even spread (detector_scores.positional_shift): attention parked on a
                     special piece or the first position does not count, so a uniform head
                     scores 0 and a [CLS]-sink head ≈ 0; a previous-token or fixed-offset
                     head ≈ 1. A head whose mean share on those places is over one half
                     (detector_scores.parked_share: a sink head, which the sink detector
                     names) scores 0, however its other rows read: ranking it as positional
                     would put a [CLS] sink among the positional heads. (Until issue 54 it
                     was 1 − the total variation between the rows, which gave uniform and
                     sink heads ≈ 1.)

Every detector read from a trace averages over the typed input and, where given, validation
traces or the sums of a built-in sentence set (builtin_sums: for models without a validation
split, sentences in the model's language, model/analysis/builtin_sentences.py).

Shape legend
    L  layers   B  sentences   H  heads   Q  query positions   K  key positions
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from ..backends import backend_for, capabilities
from ..budget import Estimate, estimate
from ..capture import Trace, key_side, query_side
from ..hooks import ablation_hooks, attn_prefix, hooks
from ..masks import trace_masks
from ..specials import is_special
from .detector_scores import (
    FIRST,
    PUNCTUATION,
    duplicate_token,
    entropy,
    induction_score,
    next_token,
    parked_share,
    positional_shift,
    previous_token,
    punctuation,
    sink,
    uniform,
)

__all__ = ["APPLIES", "DETECTORS", "FIRST", "PUNCTUATION", "QUICK", "Acc", "Detected",
           "builtin_sums", "chance_levels", "detect_heads", "entropy", "estimate_builtin",
           "estimate_detectors",
           "finish", "induction_score", "positional_shift", "quick_detectors", "ranked",
           "run_ids", "shuffled_inputs", "trace_sums"]

DETECTORS = ("previous_token", "next_token", "duplicate_token", "induction", "punctuation",
             "sink", "positional")
# the detectors read from the typed Trace alone (no run of the model): the first table
QUICK = ("previous_token", "next_token", "duplicate_token", "punctuation", "sink")
SELF_KINDS = ("enc_self", "dec_self")
PARKED = "parked"  # the positional detector's second place: the share on sinks (finish)
SINK_HEAD = 0.5  # over this mean share on sinks, a head is a sink head, not a positional one
ALL_KINDS = ("enc_self", "dec_self", "cross")
APPLIES = {"previous_token": SELF_KINDS, "next_token": ("enc_self",),
           "duplicate_token": SELF_KINDS, "induction": SELF_KINDS, "punctuation": ALL_KINDS,
           "sink": ALL_KINDS, "positional": ALL_KINDS}
INDUCTION_LENGTH = 24  # random tokens per copy (2 copies + prefix per row)
INDUCTION_ROWS = 4  # sequences averaged
Progress = Callable[[float], None] | None


@dataclass
class Acc:
    """Σ score over counted rows and the number of rows, per (L, H)."""

    total: np.ndarray
    rows: int = 0

    def add(self, total: np.ndarray, rows: int) -> None:
        self.total = self.total + total
        self.rows += rows

    def mean(self) -> np.ndarray:
        if not self.rows:
            return np.full_like(self.total, np.nan)
        return np.clip(self.total / self.rows, 0.0, 1.0)


# detector -> kind -> place ("" but for the sink's places) -> Σ and rows
Sums = dict[str, dict[str, dict[str, Acc]]]


class Detected(dict):
    """{detector: {kind: (L, H)}}, and for the sink which place won, per head:
    sink_place[kind] is an (L, H) array of place names (FIRST, PUNCTUATION or a special
    piece's text such as '[SEP]'); first_piece[kind] the piece at the first position when
    every sentence has the same special one there ('[CLS]'), else ''."""

    def __init__(self, *args, sink_place: dict | None = None, first_piece: dict | None = None):
        super().__init__(*args)
        self.sink_place: dict[str, np.ndarray] = dict(sink_place or {})
        self.first_piece: dict[str, str] = dict(first_piece or {})


def _causal(kind: str) -> bool:
    """Decoder self-attention sees no future key (in every model the lab runs)."""
    return kind == "dec_self"


def _put(sums: Sums, detector: str, kind: str, place: str, total: np.ndarray, rows: int
         ) -> None:
    found = sums.setdefault(detector, {}).setdefault(kind, {})
    if place in found:
        found[place].add(total, rows)
    else:
        found[place] = Acc(np.asarray(total, np.float64), rows)


def add_sums(into: Sums, more: Sums) -> Sums:
    """into += more, place by place (more is left as it was); returns into."""
    for detector, kinds in more.items():
        for kind, places in kinds.items():
            for place, acc in places.items():
                _put(into, detector, kind, place, acc.total, acc.rows)
    return into


def trace_sums(trace: Trace, shuffled: Trace | None = None) -> Sums:
    """The quick detectors' sums on one trace, and the positional one when `shuffled` (the
    same rows with the ordinary tokens shuffled, run_ids) is given."""
    sums: Sums = {}
    for kind in trace.attn:
        if kind in APPLIES["previous_token"]:
            _put(sums, "previous_token", kind, "", *previous_token(trace, kind))
        if kind in APPLIES["next_token"]:
            _put(sums, "next_token", kind, "", *next_token(trace, kind))
        if kind in APPLIES["duplicate_token"]:
            _put(sums, "duplicate_token", kind, "", *duplicate_token(trace, kind, _causal(kind)))
        if kind in APPLIES["punctuation"]:
            _put(sums, "punctuation", kind, "", *punctuation(trace, kind))
        if kind in APPLIES["sink"]:
            for place, (total, rows) in sink(trace, kind).items():
                _put(sums, "sink", kind, place, total, rows)
        if shuffled is not None and kind in shuffled.attn and kind in APPLIES["positional"]:
            _put(sums, "positional", kind, "", *positional_shift(trace, shuffled, kind))
            _put(sums, "positional", kind, PARKED, *parked_share(trace, kind))
    return sums


def _first_pieces(traces: Sequence[Trace]) -> dict[str, str]:
    """Per kind: the special piece every sentence's key side starts with, or ''."""
    out = {}
    for kind in ("enc_self", "dec_self", "cross"):
        firsts = {row[0] if row else "" for tr in traces if kind in tr.attn
                  for row in tr.tokens(key_side(kind))}
        if len(firsts) == 1:
            (piece,) = firsts
            out[kind] = piece if is_special(piece) else ""
    return out


def finish(sums: Sums, first_piece: dict[str, str] | None = None) -> Detected:
    """Means of the sums: {detector: {kind: (L, H)}}; the sink takes, per head, its place
    with the largest mean share (and names it in sink_place)."""
    out = Detected(first_piece=first_piece)
    for detector, kinds in sums.items():
        out[detector] = {}
        for kind, places in kinds.items():
            if detector == "positional" and PARKED in places:
                # a sink head is not a positional one, however its other rows read
                parked = places[PARKED].mean()
                out[detector][kind] = np.where(parked > SINK_HEAD, 0.0, places[""].mean())
                continue
            if detector != "sink":
                out[detector][kind] = places[""].mean()
                continue
            names = [p for p, acc in places.items() if acc.rows]
            if not names:
                continue
            means = np.stack([places[p].mean() for p in names])  # (places, L, H)
            out[detector][kind] = means.max(axis=0)
            out.sink_place[kind] = np.array(names, dtype=object)[means.argmax(axis=0)]
    return out


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


def quick_detectors(trace: Trace, base: Sums | None = None) -> Detected:
    """The QUICK detectors from the typed input's Trace alone (no model run), added to the
    built-in or validation sums `base` when given."""
    sums = trace_sums(trace)
    if base:
        add_sums(sums, {d: v for d, v in base.items() if d in QUICK})
    return finish(sums, _first_pieces([trace]))


def pair_traces(bundle, pairs: Sequence, batch: int = 32, progress: Progress = None
                ) -> list[Trace]:
    """Teacher-forced attention on validation pairs (both directions), for the sink detector."""
    from .heads import corpus_traces

    return [tr for tr, _, _ in corpus_traces(bundle, list(pairs), None, batch, progress)]


def _shuffled(bundle, trace: Trace, seed: int) -> Trace:
    s_src, s_tgt = shuffled_inputs(trace, seed)
    return run_ids(bundle, s_src, s_tgt, trace.ablate)


def builtin_sums(bundle, lines: Sequence[str], *, batch: int = 32, run: bool = True,
                 ablate: frozenset = frozenset(), seed: int = 0, progress: Progress = None
                 ) -> tuple[Sums, Sums]:
    """(sums, chance sums) of every detector read from traces over `lines` (a built-in set:
    builtin_sentences.builtin_lines), chunk by chunk (attention only), with the positional
    detector's shuffled runs when `run`. The chance sums are a uniform head's on the same
    rows. Held instead of the traces: a few (L, H) arrays however many lines."""
    from ..dispatch import capture

    lines = list(lines)
    if not lines:
        raise ValueError("builtin_sums needs at least one line")
    sums: Sums = {}
    chance: Sums = {}
    chunks = [lines[i:i + batch] for i in range(0, len(lines), max(1, batch))]
    for i, chunk in enumerate(chunks):
        tr = capture(bundle, chunk, names=["attn"], ablate=ablate)
        add_sums(sums, trace_sums(tr, _shuffled(bundle, tr, seed + i) if run else None))
        flat = uniform(tr)
        add_sums(chance, trace_sums(flat, flat if run else None))
        if progress:
            progress((i + 1) / len(chunks))
    return sums, chance


def estimate_builtin(bundle, lines: Sequence[str], *, batch: int = 32) -> Estimate:
    """Peak bytes of builtin_sums(bundle, lines, batch=…): its largest chunk's capture
    (attention only; the shuffled run of a chunk is the same size and comes after it)."""
    from ..dispatch import estimate_capture

    lines = sorted(lines, key=len, reverse=True)[:max(1, batch)]
    if not lines:
        raise ValueError("builtin_sums needs at least one line")
    return estimate_capture(bundle, lines, names=["attn"])


def detect_heads(bundle, trace: Trace, *, pairs: Sequence | None = None,
                 validation: Sequence[Trace] | None = None, base: Sums | None = None,
                 run: bool = True, seed: int = 0) -> Detected:
    """{detector: {kind: (L, H) in [0, 1]}} for the detectors in DETECTORS (module docstring),
    with the sink's winning place per head (Detected.sink_place).

    trace: the typed input, captured with attention. run=False keeps to what the traces give
    (no induction, no positional). Every detector read from a trace also averages over
    `validation` traces (their positional over their own shuffled runs when run), or over
    the validation `pairs` captured here (a lab checkpoint's val_pairs.tsv), and adds the sums
    `base` (builtin_sums' first value: a built-in sentence set). Without any, the typed input
    alone.
    """
    if not trace.attn:
        raise ValueError("the detectors need a trace captured with attention ('attn')")
    extra = list(validation or [])
    if pairs and not extra:
        extra = pair_traces(bundle, pairs)
    sums = trace_sums(trace, _shuffled(bundle, trace, seed) if run else None)
    for i, tr in enumerate(extra):
        add_sums(sums, trace_sums(tr, _shuffled(bundle, tr, seed + 1 + i) if run else None))
    if base:
        add_sums(sums, {d: v for d, v in base.items() if run or d != "positional"})
    if run:
        src, tgt, pre, n = induction_inputs(bundle, trace, seed)
        repeated = run_ids(bundle, src, tgt, trace.ablate)
        for kind in _kinds(repeated, "induction"):
            _put(sums, "induction", kind, "", *induction_score(repeated, kind,
                                                                pre[query_side(kind)], n))
        for kind in _kinds(repeated, "duplicate_token"):  # copies by construction
            _put(sums, "duplicate_token", kind, "", *duplicate_token(repeated, kind,
                                                                      _causal(kind)))
    return finish(sums, _first_pieces([trace, *extra]))


def ranked(scores: dict[str, np.ndarray], top: int | None = None
           ) -> list[tuple[str, int, int, float]]:
    """(kind, layer, head, score) of one detector's heads, highest first (NaN left out)."""
    rows = [(kind, layer, head, float(a[layer, head]))
            for kind, a in scores.items() for layer in range(a.shape[0])
            for head in range(a.shape[1]) if np.isfinite(a[layer, head])]
    rows.sort(key=lambda r: -r[3])
    return rows[:top] if top else rows


def chance_levels(bundle, trace: Trace, base: Sums | None = None
                  ) -> dict[str, dict[str, float]]:
    """{detector: {kind: score}} of a uniform head (equal weight on every key it may see) on
    the rows the detectors count: the typed input (plus builtin_sums' chance sums `base`) for
    the detectors read from traces, the repeated sequence for induction; positional is what
    a uniform head scores against itself shuffled (0: an even spread never counts).
    Reads only the masks and shapes of those rows: no run of the model."""
    flat = uniform(trace)  # (1, B, 1, Q, K): one layer, one head
    sums = trace_sums(flat, flat)
    if base:
        add_sums(sums, base)
    out = {d: {k: float(a[0, 0]) for k, a in s.items()} for d, s in finish(sums).items()}
    _, _, pre, n = induction_inputs(bundle, trace)
    out["induction"] = {}
    for kind in _kinds(trace, "induction"):
        start = pre.get(query_side(kind), 0)
        q = np.arange(start + n, start + 2 * n)
        out["induction"][kind] = float(np.mean(1.0 / (q + 1) if _causal(kind)
                                               else np.full(len(q), 1.0 / (start + 2 * n))))
    return out
