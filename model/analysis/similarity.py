"""Why two sentences are alike: the cosine of their pooled embeddings, split token by token
and head by head.

Shape legend: B sentences, n positions, D model width, L layers, H heads, Dh head size,
R rows of one batched forward.

Mean pooling is linear, so with hᵢ the last hidden state of line a's i-th piece (nₐ pieces,
mean ā) and hⱼ line b's:

    cos(ā, b̄) = ā·b̄ / (‖ā‖ ‖b̄‖) = Σᵢ Σⱼ hᵢ·hⱼ / (nₐ n_b ‖ā‖ ‖b̄‖)

and each (i, j) term is what that pair of pieces contributes (normalising afterwards scales
every term alike). CLS pooling is one term, [CLS]·[CLS]; max pooling is not a sum of pairs.

Heads: knocking head (l, h) out zeroes its context before the output projection (the same
hook as every ablation); `head_similarity` re-embeds both lines with each head out (exact) and
estimates the same change to first order from one backward pass (attribution patching:
gradient × (0 − activation) on the head's context), the two side by side.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from ..backends import backend_for
from ..capture import Trace
from ..decode import checked_heads
from ..dispatch import embed
from ..hooks import Head, HookFn, ablation_hooks, attn_prefix, hooks

# Knocked-out copies run in as few forwards as memory allows (each forward through the
# recorder has a fixed cost): at most this many query-key cells in one attention call's
# (rows, H, n, n), 64 MB in float32. minilm's 72 heads on short lines: one forward per line.
CELLS_PER_FORWARD = 1 << 24


def sentence_backend(bundle):
    """The bundle's backend, where it embeds sentences (caps.embeds)."""
    backend = backend_for(bundle)
    if not backend.caps.embeds:
        raise ValueError("sentence similarity needs a sentence-transformers encoder (a folder "
                         "with modules.json and a mean or cls pooling config)")
    return backend


@dataclass(frozen=True)
class SimilarityTerms:
    """cos(line a, line b) as token-pair terms: terms.sum() == cosine (float64)."""

    terms: np.ndarray  # (nₐ, n_b) float64
    tokens_a: list[str]
    tokens_b: list[str]
    cosine: float  # of the pooled vectors of the Trace's last hidden states
    pooling: str


def similarity_terms(bundle, trace: Trace, a: int, b: int) -> SimilarityTerms:
    """Lines a and b of the Trace (indices into its sentences): the cosine of their pooled
    last hidden states split into one term per (piece of a, piece of b). Needs the Trace's
    `hidden` group. The pieces are the Trace's (cut to the model's position table, not to the
    trained length as embed() cuts: equal for lines within it)."""
    sentence = bundle.sentence
    sentence_backend(bundle)
    if sentence.pooling not in ("mean", "cls"):
        raise ValueError(f"{sentence.pooling} pooling is not a sum over token pairs")
    hidden = trace.hidden.get("enc")
    if hidden is None:
        raise ValueError("the Trace holds no hidden states: capture with the 'hidden' group")
    n_lines = hidden.shape[1]
    for name, i in (("a", a), ("b", b)):
        if not 0 <= i < n_lines:
            raise ValueError(f"line {name} must be 0..{n_lines - 1}, not {i}")
    na, nb = trace.length("src", a), trace.length("src", b)
    ha = hidden[-1, a, :na].astype(np.float64)  # (nₐ, D)
    hb = hidden[-1, b, :nb].astype(np.float64)  # (n_b, D)
    if sentence.pooling == "cls":  # the pooled vector is position 0 alone
        terms = np.zeros((na, nb))
        terms[0, 0] = ha[0] @ hb[0] / (np.linalg.norm(ha[0]) * np.linalg.norm(hb[0]))
    else:
        mean_a, mean_b = ha.mean(0), hb.mean(0)
        scale = na * nb * np.linalg.norm(mean_a) * np.linalg.norm(mean_b)
        terms = (ha @ hb.T) / scale  # (nₐ, n_b)
    return SimilarityTerms(terms=terms, tokens_a=list(trace.src_tokens[a][:na]),
                           tokens_b=list(trace.src_tokens[b][:nb]),
                           cosine=float(terms.sum()), pooling=sentence.pooling)


def similarity_matrix(vectors: np.ndarray) -> np.ndarray:
    """(B, D) sentence vectors -> (B, B) float64 cosines."""
    v = vectors.astype(np.float64)
    v = v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)
    return v @ v.T


def top_pairs(st: SimilarityTerms, k: int = 5) -> tuple[list, list]:
    """The k largest and the k most negative terms: [(term, i, j)] each, strongest first."""
    flat = [(float(st.terms[i, j]), i, j) for i in range(st.terms.shape[0])
            for j in range(st.terms.shape[1])]
    ordered = sorted(flat, reverse=True)
    pos = [t for t in ordered[:k] if t[0] > 0]
    neg = [t for t in ordered[::-1][:k] if t[0] < 0]
    return pos, neg


@dataclass(frozen=True)
class HeadSimilarity:
    """What knocking each head out does to cos(line a, line b)."""

    kind: str
    base: float  # the cosine with `ablated` out (all heads in place when empty)
    exact: np.ndarray  # (L, H) float64 cosine after − base, each head knocked out alone; NaN
    # for heads already in `ablated`
    attribution: np.ndarray  # (L, H) float64 first-order estimate of the same change
    ablated: frozenset[Head]


def _cosine(v: torch.Tensor) -> torch.Tensor:
    """(2R, D) rows paired (a, b), (a, b)… -> (R,) cosines."""
    a, b = v[0::2].double(), v[1::2].double()
    return (a * b).sum(-1) / (a.norm(dim=-1) * b.norm(dim=-1)).clamp(min=1e-12)


def _zero_rows(picks: list[tuple[int, int]]) -> HookFn:
    """Zero head h's context in row r for each (r, h): one knocked-out head per copy."""
    rows = torch.tensor([r for r, _ in picks])
    heads = torch.tensor([h for _, h in picks])

    def zero(x: torch.Tensor, name: str) -> torch.Tensor:
        x = x.clone()  # (R, H, n, Dh)
        x[rows.to(x.device), heads.to(x.device)] = 0.0
        return x

    return zero


def _growing(backend, ids, mask, kind: str, by_layer: dict[int, list[int]], base_fns
             ) -> tuple[torch.Tensor, list[tuple[int, int]]]:
    """One line (a (1, n) row without padding) with each listed head knocked out alone, in one
    forward whose batch grows: at layer l's input the untouched row 0 is copied once per head
    of that layer, and those copies have their head zeroed there. Layers below l run once for
    them (in row 0), not once per head. Returns (R, D) pooled vectors of rows 1.. and their
    (layer, head)."""
    order: list[tuple[int, int]] = []
    fns: dict[str, HookFn] = {}
    for layer in sorted(by_layer):
        heads = by_layer[layer]
        first = 1 + len(order)  # where this layer's copies start
        order += [(layer, h) for h in heads]

        def grow(x: torch.Tensor, name: str, r: int = len(heads)) -> torch.Tensor:
            return torch.cat([x, x[:1].expand(r, *x.shape[1:])])  # (R, n, D) -> (R + r, n, D)

        fns[f"encoder.layers.{layer}.hook_resid_pre"] = grow
        fns[f"{attn_prefix(kind, layer)}.hook_context"] = _zero_rows(
            [(first + i, h) for i, h in enumerate(heads)])
    with hooks(base_fns):
        v = backend.embed_rows(ids, mask, fns)  # (1 + R, D)
    return v[1:], order


def _exact(backend, ids, mask, kind: str, todo: list[Head], base_fns) -> dict[Head, float]:
    """cos(a, b) with each head of `todo` knocked out alone: each line in its own forward
    (one row, no padding, so a mask of one row serves every copy), see _growing."""
    n = ids.shape[1]
    per = max(1, CELLS_PER_FORWARD // (backend.bundle.config.n_heads * n * n) - 1)
    out: dict[Head, float] = {}
    for start in range(0, len(todo), per):
        by_layer: dict[int, list[int]] = {}
        for _, layer, head in todo[start:start + per]:
            by_layer.setdefault(layer, []).append(head)
        pooled = []
        for row in range(ids.shape[0]):
            m = int(mask[row].sum())
            vectors, order = _growing(backend, ids[row:row + 1, :m], mask[row:row + 1, :m],
                                      kind, by_layer, base_fns)
            pooled.append(vectors.double())
        va, vb = pooled
        cos = (va * vb).sum(-1) / (va.norm(dim=-1) * vb.norm(dim=-1)).clamp(min=1e-12)
        out.update({(kind, layer, h): value for (layer, h), value in zip(order, cos.tolist())})
    return out


def _attribution(backend, ids, mask, kind: str, n_layers: int, base_fns
                 ) -> tuple[float, np.ndarray]:
    kept: dict[str, torch.Tensor] = {}

    def keep(x: torch.Tensor, name: str) -> torch.Tensor:
        if not x.requires_grad:  # frozen weights upstream: the graph starts here
            x = x.detach().requires_grad_(True)
        kept[name] = x
        return x

    names = [f"{attn_prefix(kind, layer)}.hook_context" for layer in range(n_layers)]
    with hooks(base_fns):
        v = backend.embed_rows(ids, mask, dict.fromkeys(names, keep), grad=True)
        cos = _cosine(v)[0]
        grads = torch.autograd.grad(cos, [kept[n] for n in names], allow_unused=True)
    rows = []
    for n, g in zip(names, grads):
        x = kept[n].detach().double()  # (2, H, n, Dh)
        g = torch.zeros_like(x) if g is None else g.double()
        rows.append((-(g * x)).sum(dim=(0, 2, 3)).cpu().numpy())  # (H,): patch to zero
    return float(cos.detach()), np.stack(rows)


def head_similarity(bundle, line_a: str, line_b: str, ablate: Iterable[Head] | str = ()
                    ) -> HeadSimilarity:
    """Each head's effect on cos(embed(a), embed(b)) when knocked out, exact and by
    attribution patching, on top of the heads in `ablate` (already out in both)."""
    backend = sentence_backend(bundle)
    if not backend.caps.ablates:
        raise ValueError("this model's attention does not run through the lab's recorder, so "
                         "its heads cannot be knocked out")
    done = checked_heads(bundle, ablate)
    kind = backend.caps.kinds[0]  # an embedding model is encoder-only: its self-attention
    n_layers, n_heads = bundle.n_layers(kind), bundle.config.n_heads
    ids, mask = backend.sentence_rows([line_a, line_b])
    base_fns = ablation_hooks(done)
    with hooks(base_fns):
        base = float(_cosine(backend.embed_rows(ids, mask))[0])
    todo = [(kind, layer, h) for layer in range(n_layers) for h in range(n_heads)
            if (kind, layer, h) not in done]
    after = _exact(backend, ids, mask, kind, todo, base_fns)
    exact = np.full((n_layers, n_heads), np.nan)
    for (_, layer, h), value in after.items():
        exact[layer, h] = value - base
    _, attribution = _attribution(backend, ids, mask, kind, n_layers, base_fns)
    for _, layer, h in done:
        attribution[layer, h] = np.nan
    return HeadSimilarity(kind=kind, base=base, exact=exact, attribution=attribution,
                          ablated=done)


def embed_matrix(bundle, lines: Sequence[str], ablate: Iterable[Head] | str = ()
                 ) -> tuple[np.ndarray, np.ndarray]:
    """(B, D) float32 embeddings (model.embed) and their (B, B) cosines."""
    vectors = embed(bundle, lines, ablate)
    return vectors, similarity_matrix(vectors)


# ---- the sentence embedding as the output a knock-out is measured on (issue 54, item 4) ----


@dataclass(frozen=True)
class PooledEffect:
    """What knocking heads out does to the typed lines' sentence embeddings."""

    ablated: frozenset[Head]
    before: np.ndarray  # (B, B) float64 cosines of the lines' embeddings with every head
    after: np.ndarray  # (B, B) the same with `ablated` knocked out
    moved: np.ndarray  # (B,) float64 cos(line i without them, line i with every head)


def partner(n_lines: int, a: int) -> int | None:
    """Line B that line a is compared with (0-based): the second line for the first, the
    first for any other; None for a single line."""
    if n_lines < 2:
        return None
    return 1 if a == 0 else 0


def pooled_knockout(bundle, lines: Sequence[str], ablate: Iterable[Head] | str) -> PooledEffect:
    """The lines embedded with every head and with the heads in `ablate` knocked out."""
    sentence_backend(bundle)
    heads = checked_heads(bundle, ablate)
    before = embed(bundle, list(lines)).astype(np.float64)  # (B, D)
    after = embed(bundle, list(lines), heads).astype(np.float64)
    unit = before / np.maximum(np.linalg.norm(before, axis=1, keepdims=True), 1e-12)
    gone = after / np.maximum(np.linalg.norm(after, axis=1, keepdims=True), 1e-12)
    return PooledEffect(ablated=heads, before=unit @ unit.T, after=gone @ gone.T,
                        moved=(unit * gone).sum(-1))


def pooled_scan(bundle, line_a: str, line_b: str | None = None,
                progress: Callable[[float], None] | None = None) -> dict[str, np.ndarray]:
    """{kind: (L, H)} each head knocked out alone, every other in place: with `line_b`, the
    change in cos(line a, line b) (head_similarity's exact effect); without, the change in
    line a's own embedding, cos(a without the head, a with every head) − 1 (≤ 0)."""
    report = progress or (lambda _f: None)
    report(0.0)
    backend = sentence_backend(bundle)
    kind = backend.caps.kinds[0]  # an embedding model is encoder-only: its self-attention
    n_layers, n_heads = bundle.n_layers(kind), bundle.config.n_heads
    todo = [(kind, layer, h) for layer in range(n_layers) for h in range(n_heads)]
    out = np.zeros((n_layers, n_heads))
    if line_b is not None:
        ids, mask = backend.sentence_rows([line_a, line_b])
        base = float(_cosine(backend.embed_rows(ids, mask))[0])
        for (_, layer, h), value in _exact(backend, ids, mask, kind, todo, {}).items():
            out[layer, h] = value - base
        report(1.0)
        return {kind: out}
    ids, mask = backend.sentence_rows([line_a])
    base = backend.embed_rows(ids, mask)[0].double()  # (D,)
    per = max(1, CELLS_PER_FORWARD // (n_heads * ids.shape[1] ** 2) - 1)  # as _exact
    for start in range(0, len(todo), per):
        by_layer: dict[int, list[int]] = {}
        for _, layer, h in todo[start:start + per]:
            by_layer.setdefault(layer, []).append(h)
        vectors, order = _growing(backend, ids, mask, kind, by_layer, {})  # (R, D)
        v = vectors.double()
        cos = (v @ base) / (v.norm(dim=-1) * base.norm()).clamp(min=1e-12)
        for (layer, h), value in zip(order, cos.tolist()):
            out[layer, h] = value - 1.0
        report(min(1.0, (start + per) / len(todo)))
    return {kind: out}
