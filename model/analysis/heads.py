"""Debugging attention heads: per-head statistics, ablation, an importance scan and rollout.

Heads are addressed as (kind, layer, head). Statistics are numpy on Trace arrays; ablation
(ablation.py) and rollout (rollout.py) live beside this module.

Shape legend
    L  layers    B  sentences    H  heads    Q  query positions    K  key positions
    S  source positions (unpadded)           T  target positions (unpadded)
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Iterable, Sequence

import numpy as np

from ..batch import directions  # shared with dispatch.estimate_validation
from ..capture import Trace, key_side, query_side
from ..dispatch import capture
from ..specials import is_special
from .alignment import alignment_agreement

Progress = Callable[[float], None] | None

METRICS: dict[str, str] = {
    "entropy": "mean entropy (nats) of a query's attention over its unblocked keys; "
               "0 = all on one key, log n = spread evenly over n keys",
    "distance": "mean attention distance |query − key| in positions, weighted by attention "
                "(ViT, seed 001)",
    "max_weight": "mean of each query's largest attention weight",
    "pad_share": "share of attention on padding keys (must be 0: pad keys are masked)",
    "special_share": "share of attention on the model's own special pieces (its start, end, "
                     "separator and tag pieces; byte pieces count as text)",
    "punct_share": "share of attention on punctuation pieces (., ?, !, ,)",
    "prev_token": "mean weight on the previous position (key = query − 1), over queries that "
                  "have one; self-attention only",
    "diagonal": "mean weight on the same position (key = query)",
    "alignment": "share of gold-aligned target words whose summed cross attention peaks on a "
                 "gold source word (cross attention, teacher-forced on the reference)",
}
# what two metrics mean on cross attention, where query and key sit in different sequences:
# said only there (a model without cross attention never reads them)
CROSS_NOTES: dict[str, str] = {
    "distance": "cross attention: distance to the proportional source position",
    "diagonal": "cross attention: on the source position nearest the proportional position",
}

def is_punct(piece: str) -> bool:
    """A piece made only of punctuation once the word-start mark ▁ is removed."""
    body = piece.replace("▁", "")
    return bool(body) and all(unicodedata.category(c).startswith("P") for c in body)


# ---- head statistics -----------------------------------------------------------------------


def _key_flags(tokens: list[list[str]], width: int, test: Callable[[str], bool]) -> np.ndarray:
    """(B, K) float: 1 where the piece at that key position passes `test`."""
    out = np.zeros((len(tokens), width))
    for b, pieces in enumerate(tokens):
        out[b, : len(pieces)] = [test(p) for p in pieces[:width]]
    return out


def _row_sums(trace: Trace, kind: str, b: int | None = None
              ) -> tuple[dict[str, np.ndarray], dict[str, int]]:
    """Per-metric (L, H) sums over real query rows and the number of rows summed."""
    if kind not in trace.attn:
        raise ValueError(f"the trace has no {kind!r} attention; it has {sorted(trace.attn)}")
    sel = slice(None) if b is None else slice(b, b + 1)
    attn = trace.attn[kind][:, sel].astype(np.float64)  # (L, B, H, Q, K)
    blocked = trace.masks[kind][sel]  # (B, Q, K)
    q_tokens, k_tokens = trace.tokens(query_side(kind)), trace.tokens(key_side(kind))
    q_tokens, k_tokens = q_tokens[sel], k_tokens[sel]
    n_q, n_k = attn.shape[-2:]
    # padding from the token lists, never from ids == pad_id: Marian's decoder start id is pad
    q_pad = np.arange(n_q)[None, :] >= np.array([len(t) for t in q_tokens])[:, None]  # (B, Q)
    k_pad = np.arange(n_k)[None, :] >= np.array([len(t) for t in k_tokens])[:, None]  # (B, K)
    real = ~q_pad & ~blocked.all(-1)  # (B, Q) rows that count
    qi = np.arange(n_q)[None, :, None]  # (1, Q, 1)
    ki = np.arange(n_k)[None, None, :]  # (1, 1, K)
    if kind == "cross":  # compare each key with the query's proportional source position
        q_len = (~q_pad).sum(1)[:, None, None]  # (B, 1, 1)
        k_len = (~k_pad).sum(1)[:, None, None]
        where = qi * (k_len - 1) / np.maximum(q_len - 1, 1)  # (B, Q, 1)
        dist = np.abs(ki - where)  # (B, Q, K)
        diag = (ki == np.floor(where + 0.5)).astype(np.float64)
    else:
        dist = np.broadcast_to(np.abs(qi - ki), blocked.shape).astype(np.float64)
        diag = np.broadcast_to(qi == ki, blocked.shape).astype(np.float64)

    def weighted(w: np.ndarray) -> np.ndarray:
        """Σ_k attn·w for (B, Q, K) weights -> (L, B, H, Q)."""
        return np.einsum("lbhqk,bqk->lbhq", attn, w)

    def on_keys(flags: np.ndarray) -> np.ndarray:
        """Σ_k attn over flagged keys for (B, K) flags -> (L, B, H, Q)."""
        return np.einsum("lbhqk,bk->lbhq", attn, flags)

    logs = np.log(np.where(attn > 0, attn, 1.0))
    per_row = {
        "entropy": -(attn * logs).sum(-1),
        "distance": weighted(dist),
        "max_weight": attn.max(-1),
        "pad_share": on_keys(k_pad.astype(np.float64)),
        "special_share": on_keys(_key_flags(k_tokens, n_k, is_special)),
        "punct_share": on_keys(_key_flags(k_tokens, n_k, is_punct)),
    }
    rows = {m: real for m in per_row}
    if kind != "cross":
        prev = np.broadcast_to(ki == qi - 1, blocked.shape).astype(np.float64)
        per_row["prev_token"] = weighted(prev)
        rows["prev_token"] = real & (np.arange(n_q) >= 1)[None, :]
    per_row["diagonal"] = weighted(diag)
    rows["diagonal"] = real
    sums = {m: (v * rows[m][None, :, None, :]).sum(axis=(1, 3)) for m, v in per_row.items()}
    counts = {m: int(rows[m].sum()) for m in per_row}
    return sums, counts


def _means(sums: dict[str, np.ndarray], counts: dict[str, int]) -> dict[str, np.ndarray]:
    return {m: s / counts[m] if counts[m] else np.full_like(s, np.nan) for m, s in sums.items()}


def head_stats(trace: Trace, kind: str, b: int | None = None) -> dict[str, np.ndarray]:
    """Per-head statistics, each (L, H), averaged over real query rows (see METRICS).

    Real rows are non-pad queries with at least one unblocked key, over the whole batch or over
    sentence b. Positions are indices in the padded sequence (padding is on the right).
    Cross attention has no previous token (query and key are different sentences): `distance`
    and `diagonal` compare key k with the query's proportional source position
    p(t) = t·(S_b − 1)/(T_b − 1), and `prev_token` is left out.
    """
    return _means(*_row_sums(trace, kind, b))




def corpus_traces(bundle, pairs: Sequence, target_lang: str | None, batch: int,
                   progress: Progress) -> Iterable[tuple[Trace, list, bool]]:
    """Teacher-forced traces (attention only) of the pairs, chunk by chunk, in each direction."""
    dirs = directions(target_lang)
    chunks = [pairs[i:i + batch] for i in range(0, len(pairs), max(1, batch))]
    total, done = len(chunks) * len(dirs), 0
    if progress:
        progress(0.0)
    for lang, src_of, tgt_of in dirs:
        for chunk in chunks:
            tr = capture(bundle, [getattr(p, src_of) for p in chunk],
                         [getattr(p, tgt_of) for p in chunk], target_lang=lang, names=["attn"])
            yield tr, list(chunk), src_of == "en"
            done += 1
            if progress:
                progress(done / total)


def alignment_stats(bundle, pairs: Sequence, target_lang: str | None = None, batch: int = 32,
                    progress: Progress = None) -> np.ndarray:
    """(L, H) cross-attention agreement with the pairs' gold word alignments.

    Teacher-forced on the reference translation (the alignment numbers its words); target_lang
    'ko' reads English sources, 'en' Korean ones, None both. Chunks are weighted by size.
    """
    if "cross" not in bundle.kinds:
        raise ValueError("alignment agreement needs a model with cross attention")
    if not pairs:
        raise ValueError("alignment_stats needs at least one pair")
    total, n = None, 0
    for tr, chunk, src_is_en in corpus_traces(bundle, pairs, target_lang, batch, progress):
        part = alignment_agreement(tr, [p.align for p in chunk], [src_is_en] * len(chunk))
        total = part * len(chunk) if total is None else total + part * len(chunk)
        n += len(chunk)
    return total / n


def validation_stats(bundle, pairs: Sequence, progress: Progress = None, *, batch: int = 32,
                     target_lang: str | None = None) -> dict[str, dict[str, np.ndarray]]:
    """head_stats of every kind averaged over the pairs' query rows (teacher-forced on the
    references, both directions unless target_lang says), plus `alignment` under "cross"."""
    if not pairs:
        raise ValueError("validation_stats needs at least one pair")
    sums: dict[str, dict[str, np.ndarray]] = {}
    counts: dict[str, dict[str, int]] = {}
    align, n_align = None, 0
    for tr, chunk, src_is_en in corpus_traces(bundle, pairs, target_lang, batch, progress):
        for kind in tr.kinds:
            s, c = _row_sums(tr, kind)
            if kind not in sums:
                sums[kind], counts[kind] = s, c
            else:
                sums[kind] = {m: sums[kind][m] + s[m] for m in s}
                counts[kind] = {m: counts[kind][m] + c[m] for m in c}
        if "cross" in tr.attn and all(hasattr(p, "align") for p in chunk):
            part = alignment_agreement(tr, [p.align for p in chunk], [src_is_en] * len(chunk))
            align = part * len(chunk) if align is None else align + part * len(chunk)
            n_align += len(chunk)
    out = {kind: _means(sums[kind], counts[kind]) for kind in sums}
    if align is not None:
        out["cross"]["alignment"] = align / n_align
    return out


def gold_alignment_for(text: str, pairs: Sequence) -> tuple[list, bool, str] | None:
    """(align, src_is_en, reference) of the corpus pair whose en or ko side is `text`, or None.

    Whitespace is normalised before the exact match. `align` holds (en word, ko word) pairs;
    the reference is the pair's other side, the translation the alignment refers to.
    """
    key = " ".join(text.split())
    if not key:
        return None
    for p in pairs:
        if " ".join(p.en.split()) == key:
            return list(p.align), True, p.ko
        if " ".join(p.ko.split()) == key:
            return list(p.align), False, p.en
    return None


def alignment_for_input(bundle, text: str, pairs: Sequence,
                        target_lang: str | None = None) -> np.ndarray | None:
    """(L, H) alignment agreement for one typed sentence found in the corpus, else None.

    None also when the model has no cross attention or target_lang points the other way.
    """
    found = gold_alignment_for(text, pairs)
    if found is None or "cross" not in bundle.kinds:
        return None
    align, src_is_en, reference = found
    lang = "ko" if src_is_en else "en"
    if target_lang not in (None, "auto", lang):
        return None
    tr = capture(bundle, [text], [reference], target_lang=lang, names=["attn"])
    return alignment_agreement(tr, [align], [src_is_en])


# ---- compare -------------------------------------------------------------------------------


def diff_where_tokens_agree(a_tokens: Sequence, b_tokens: Sequence, a: np.ndarray,
                            b: np.ndarray) -> tuple[np.ndarray | None, str]:
    """(B − A, "") when both inputs have the same tokens, else (None, the reason).

    Tokens are a list of pieces or a pair (query pieces, key pieces) for rectangular maps.
    """
    a, b = np.asarray(a), np.asarray(b)
    pair = (len(a_tokens) == 2 and len(b_tokens) == 2
            and all(not isinstance(t, str) for t in (*a_tokens, *b_tokens)))
    sides = (("query", a_tokens[0], b_tokens[0]), ("key", a_tokens[1], b_tokens[1])) if pair \
        else (("", a_tokens, b_tokens),)
    for name, ta, tb in sides:
        ta, tb = list(ta), list(tb)
        where = f"{name} " if name else ""
        if len(ta) != len(tb):
            return None, f"the {where}tokens differ in number ({len(ta)} vs {len(tb)})"
        for i, (x, y) in enumerate(zip(ta, tb)):
            if x != y:
                return None, f"the {where}tokens differ at position {i + 1} ({x!r} vs {y!r})"
    if a.shape != b.shape:
        return None, f"the maps differ in shape ({a.shape} vs {b.shape})"
    return b.astype(np.float64) - a.astype(np.float64), ""
