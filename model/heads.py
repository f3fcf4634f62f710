"""Debugging attention heads: per-head statistics, ablation, an importance scan and rollout.

Heads are addressed as (kind, layer, head). Statistics and rollout are numpy on Trace arrays;
ablation and the importance scan run the model (torch) with hooks on `...hook_context`.

Shape legend
    L  layers    B  sentences    H  heads    Q  query positions    K  key positions
    S  source positions (unpadded)           T  target positions (unpadded)
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Iterable, Sequence

import numpy as np
import torch

from .capture import Trace, capture
from .decode import checked_heads, source_batch, target_langs, translate
from .hooks import Head, HookFn, ablation_hooks, attn_prefix, format_ablate, hooks

Progress = Callable[[float], None] | None

METRICS: dict[str, str] = {
    "entropy": "mean entropy (nats) of a query's attention over its unblocked keys; "
               "0 = all on one key, log n = spread evenly over n keys",
    "distance": "mean attention distance |query − key| in positions, weighted by attention "
                "(ViT, seed 001); cross attention: distance to the proportional source position",
    "max_weight": "mean of each query's largest attention weight",
    "pad_share": "share of attention on padding keys (must be 0: pad keys are masked)",
    "special_share": "share of attention on special tokens (<s>, </s>, <2ko>, <2en>)",
    "punct_share": "share of attention on punctuation pieces (., ?, !, ,)",
    "prev_token": "mean weight on the previous position (key = query − 1), over queries that "
                  "have one; self-attention only",
    "diagonal": "mean weight on the same position (key = query); cross attention: on the "
                "source position nearest the proportional position",
    "alignment": "share of gold-aligned target words whose summed cross attention peaks on a "
                 "gold source word (cross attention, teacher-forced on the reference)",
}

_SIDES = {"enc_self": ("src", "src"), "dec_self": ("tgt", "tgt"), "cross": ("tgt", "src")}


def is_special(piece: str) -> bool:
    """<s>, </s>, <pad>, <2ko> … or [CLS]-style pieces; byte pieces like <0x41> are content."""
    if len(piece) > 2 and piece[0] == "<" and piece[-1] == ">":
        return not piece.startswith("<0x")
    return len(piece) > 2 and piece[0] == "[" and piece[-1] == "]" and piece[1:-1].isupper()


def is_punct(piece: str) -> bool:
    """A piece made only of punctuation once the word-start mark ▁ is removed."""
    body = piece.replace("▁", "")
    return bool(body) and all(unicodedata.category(c).startswith("P") for c in body)


# ---- head statistics -----------------------------------------------------------------------


def _side(trace: Trace, side: str) -> tuple[np.ndarray, list[list[str]]]:
    if side == "src":
        return trace.src_ids, trace.src_tokens
    return trace.tgt_ids, trace.tgt_tokens


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
    q_side, k_side = _SIDES[kind]
    _, q_tokens = _side(trace, q_side)
    _, k_tokens = _side(trace, k_side)
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


def _agreement(trace: Trace, align: list, src_is_en: list[bool]) -> np.ndarray:
    """model.evaluate.alignment_agreement, imported late: evaluate pulls in the corpus module."""
    from .evaluate import alignment_agreement

    return alignment_agreement(trace, align, src_is_en)


def _directions(target_lang: str | None) -> list[tuple[str, str, str]]:
    """(target_lang, source field, target field) of the corpus directions asked for."""
    both = [("ko", "en", "ko"), ("en", "ko", "en")]
    if target_lang in (None, "auto", "both"):
        return both
    picked = [d for d in both if d[0] == target_lang]
    if not picked:
        raise ValueError(f"target_lang must be 'ko', 'en' or None (both), got {target_lang!r}")
    return picked


def _corpus_traces(bundle, pairs: Sequence, target_lang: str | None, batch: int,
                   progress: Progress) -> Iterable[tuple[Trace, list, bool]]:
    """Teacher-forced traces (attention only) of the pairs, chunk by chunk, in each direction."""
    dirs = _directions(target_lang)
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
    for tr, chunk, src_is_en in _corpus_traces(bundle, pairs, target_lang, batch, progress):
        part = _agreement(tr, [p.align for p in chunk], [src_is_en] * len(chunk))
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
    for tr, chunk, src_is_en in _corpus_traces(bundle, pairs, target_lang, batch, progress):
        for kind in tr.kinds:
            s, c = _row_sums(tr, kind)
            if kind not in sums:
                sums[kind], counts[kind] = s, c
            else:
                sums[kind] = {m: sums[kind][m] + s[m] for m in s}
                counts[kind] = {m: counts[kind][m] + c[m] for m in c}
        if "cross" in tr.attn and all(hasattr(p, "align") for p in chunk):
            part = _agreement(tr, [p.align for p in chunk], [src_is_en] * len(chunk))
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
    return _agreement(tr, [align], [src_is_en])


# ---- ablation and importance ----------------------------------------------------------------


def _native(bundle, what: str) -> None:
    if bundle.kind != "native" or "cross" not in bundle.kinds:
        raise ValueError(f"{what} needs one of this project's encoder–decoder checkpoints")


def _forced(bundle, ids: Sequence[int]) -> tuple[list[int], list[int]]:
    """Decoder input [bos] + ids and output ids + [eos], within the position table."""
    limit = bundle.config.max_len - 1
    body = list(ids)[: limit - 1]
    return [bundle.tokenizer.bos_id, *body], [*body, bundle.tokenizer.eos_id]


def _token_logprobs(bundle, src: torch.Tensor, tgt_in: torch.Tensor, tgt_out: torch.Tensor,
                    fns: dict[str, HookFn]) -> torch.Tensor:
    """(B, T) float64 log-probability of each output id (0 at pad), with hooks attached."""
    model = bundle.model
    model.eval()  # idempotent; the cached model is always in eval mode
    with torch.inference_mode(), hooks(fns):
        logits = model(src, tgt_in)  # (B, T, V)
    logp = torch.log_softmax(logits.double(), dim=-1)
    picked = logp.gather(-1, tgt_out.unsqueeze(-1)).squeeze(-1)  # (B, T)
    return picked.masked_fill(tgt_out.eq(bundle.config.pad_id), 0.0)


def ablation_effect(bundle, sources: Sequence[str] | str, ablate: Iterable[Head] | str,
                    target_lang: str | None = None) -> dict:
    """Translations with and without the ablated heads, and the loss change.

    Log-probabilities are teacher-forced on the UN-ablated greedy translation (its ids, not
    re-tokenised text), output = translation pieces + </s>. Per sentence b:
    tokens[b] (output pieces), logp_before/after/change[b] (arrays, change = after − before),
    loss_*[b] = mean NLL over those tokens. loss_before/after/change: mean NLL over all tokens.
    """
    _native(bundle, "ablation")
    if isinstance(sources, str):
        sources = [sources]
    sources = list(sources)
    heads = checked_heads(bundle, ablate)
    before = translate(bundle, sources, target_lang)
    after = translate(bundle, sources, target_lang, ablate=heads)
    langs = target_langs(bundle, sources, target_lang)
    src, _, _ = source_batch(bundle, sources, langs)
    forced = [_forced(bundle, t.ids) for t in before]
    tok = bundle.tokenizer
    tgt_in = torch.from_numpy(tok.pad([f[0] for f in forced]))
    tgt_out = torch.from_numpy(tok.pad([f[1] for f in forced]))
    lp_before = _token_logprobs(bundle, src, tgt_in, tgt_out, {}).numpy()
    lp_after = _token_logprobs(bundle, src, tgt_in, tgt_out, ablation_hooks(heads)).numpy()
    lens = [len(f[1]) for f in forced]
    per = {name: [lp[b, :n].copy() for b, n in enumerate(lens)]
           for name, lp in (("before", lp_before), ("after", lp_after))}
    change = [a - b for a, b in zip(per["after"], per["before"])]
    n_tok = sum(lens)
    loss_before = float(-lp_before.sum() / n_tok)
    loss_after = float(-lp_after.sum() / n_tok)
    return {
        "sources": sources, "ablate": heads, "ablate_spec": format_ablate(heads),
        "before": before, "after": after,
        "changed": [a.text != b.text for a, b in zip(after, before)],
        "tokens": [tok.ids_to_pieces(f[1]) for f in forced],
        "logp_before": per["before"], "logp_after": per["after"], "logp_change": change,
        "sentence_loss_before": [float(-x.mean()) for x in per["before"]],
        "sentence_loss_after": [float(-x.mean()) for x in per["after"]],
        "loss_before": loss_before, "loss_after": loss_after,
        "loss_change": loss_after - loss_before,
    }


def all_heads(bundle) -> list[Head]:
    """Every (kind, layer, head) of the model, kinds in bundle order."""
    return [(kind, layer, head) for kind in bundle.kinds for layer in range(bundle.n_layers(kind))
            for head in range(bundle.config.n_heads)]


def row_ablation_hooks(rows: Sequence[Head | None]) -> dict[str, HookFn]:
    """Hooks that zero head h's context only in batch row r, for each rows[r] = (kind, layer, h).

    rows[r] = None leaves row r untouched. Tensors at hook_context are (B, H, Q, Dh).
    """
    by_hook: dict[str, tuple[list[int], list[int]]] = {}
    for r, head in enumerate(rows):
        if head is None:
            continue
        kind, layer, h = head
        idx = by_hook.setdefault(f"{attn_prefix(kind, layer)}.hook_context", ([], []))
        idx[0].append(r)
        idx[1].append(h)

    def make(r_idx: list[int], h_idx: list[int]) -> HookFn:
        r_t, h_t = torch.tensor(r_idx), torch.tensor(h_idx)

        def zero(x: torch.Tensor, name: str) -> torch.Tensor:
            x = x.clone()  # never write into a tensor someone else recorded
            x[r_t, h_t] = 0.0  # (n, Q, Dh) slices: row r_t[i], head h_t[i]
            return x

        return zero

    return {name: make(*idx) for name, idx in by_hook.items()}


def importance_scan(bundle, source: str, target_lang: str | None = None,
                    progress: Progress = None, *, target: str | None = None,
                    chunk: int = 64) -> dict[str, np.ndarray]:
    """Loss increase (mean NLL, nats) when each head alone is ablated: {kind: (L, H)}.

    Teacher-forced on the un-ablated greedy translation (or on `target` text when given).
    The sentence is replicated once per head plus one untouched baseline row and each row
    ablates a different head, so the whole scan is one forward per `chunk` rows.
    progress gets fractions 0..1.
    """
    _native(bundle, "the importance scan")
    report = progress or (lambda _f: None)
    report(0.0)
    langs = target_langs(bundle, [source], target_lang)
    src, _, _ = source_batch(bundle, [source], langs)
    if target is None:
        tgt_in, tgt_out = _forced(bundle, translate(bundle, [source], target_lang)[0].ids)
    else:
        tgt_in, tgt_out = bundle.tokenizer.target_ids(target, bundle.config.max_len - 1)
    report(0.2)
    heads = all_heads(bundle)
    rows: list[Head | None] = [None, *heads]
    t_in, t_out = torch.tensor([tgt_in]), torch.tensor([tgt_out])
    losses: list[float] = []
    chunk = max(1, chunk)
    for start in range(0, len(rows), chunk):
        part = rows[start:start + chunk]
        n = len(part)
        lp = _token_logprobs(bundle, src.repeat(n, 1), t_in.repeat(n, 1), t_out.repeat(n, 1),
                             row_ablation_hooks(part))
        losses += (-lp.mean(-1)).tolist()
        report(0.2 + 0.8 * min(1.0, (start + n) / len(rows)))
    out = {kind: np.zeros((bundle.n_layers(kind), bundle.config.n_heads)) for kind in bundle.kinds}
    for (kind, layer, h), loss in zip(heads, losses[1:]):
        out[kind][layer, h] = loss - losses[0]
    return out


# ---- attention rollout (Abnar & Zuidema, 2020) -----------------------------------------------


def _mean_heads(trace: Trace, kind: str, layer: int, b: int, n_q: int, n_k: int) -> np.ndarray:
    """Layer's attention averaged over heads for sentence b, unpadded: (n_q, n_k) float64."""
    return trace.attn[kind][layer, b, :, :n_q, :n_k].astype(np.float64).mean(0)


def _rows_to_one(a: np.ndarray) -> np.ndarray:
    total = a.sum(-1, keepdims=True)
    return np.divide(a, total, out=np.zeros_like(a), where=total > 0)


def _mixed(a: np.ndarray, residual: bool) -> np.ndarray:
    """0.5·A + 0.5·I (the residual stream) if asked, rows renormalised."""
    if residual:
        a = 0.5 * a + 0.5 * np.eye(a.shape[0])
    return _rows_to_one(a)


def rollout(trace: Trace, b: int, kind: str = "enc_self", residual: bool = True) -> np.ndarray:
    """Attention rollout of a self-attention stack for sentence b: (n, n), rows sum to 1.

    Per layer l: A_l = mean over heads, A'_l = 0.5·A_l + 0.5·I if residual, rows renormalised;
    R = A'_L ··· A'_2 · A'_1 over the unpadded tokens. R[i, j] = how much of output token i
    traces back to input token j.
    """
    if kind not in ("enc_self", "dec_self"):
        raise ValueError(f"rollout needs a self-attention kind, got {kind!r}; "
                         "use cross_rollout for the decoder → source view")
    if kind not in trace.attn:
        raise ValueError(f"the trace has no {kind!r} attention")
    n = trace.length("src" if kind == "enc_self" else "tgt", b)
    r = np.eye(n)
    for layer in range(trace.attn[kind].shape[0]):
        r = _mixed(_mean_heads(trace, kind, layer, b, n, n), residual) @ r
    return r


def cross_rollout(trace: Trace, b: int, residual: bool = True) -> np.ndarray:
    """Decoder → source rollout for sentence b: (T, S), rows sum to 1.

    Layer by layer, each decoder position t is tracked as a mixture of decoder inputs D (T, T)
    and source tokens X (T, S), starting from D = I, X = 0; rows of [D | X] always sum to 1.
    In decoder layer l, with heads averaged:
      self-attention   A'_l = 0.5·A_l + 0.5·I (residual), rows renormalised:
                       D ← A'_l D,  X ← A'_l X
      cross attention  C_l (T, S) attends to the encoder output, whose tokens are the mixture
                       R_enc = rollout(trace, b, "enc_self") of source tokens:
                       D ← 0.5·D,  X ← 0.5·X + 0.5·C_l R_enc   (without residual: D ← 0,
                       X ← C_l R_enc)
    The result is X with rows renormalised: the share of each source token in what position t
    took from the source.
    """
    for kind in ("dec_self", "cross", "enc_self"):
        if kind not in trace.attn:
            raise ValueError(f"cross_rollout needs {kind!r} attention in the trace")
    n_t, n_s = trace.length("tgt", b), trace.length("src", b)
    r_enc = rollout(trace, b, "enc_self", residual)
    d, x = np.eye(n_t), np.zeros((n_t, n_s))
    keep = 0.5 if residual else 0.0
    for layer in range(trace.attn["dec_self"].shape[0]):
        a = _mixed(_mean_heads(trace, "dec_self", layer, b, n_t, n_t), residual)
        d, x = a @ d, a @ x
        c = _rows_to_one(_mean_heads(trace, "cross", layer, b, n_t, n_s))
        d, x = keep * d, keep * x + (1.0 - keep) * (c @ r_enc)
    return _rows_to_one(x)


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
