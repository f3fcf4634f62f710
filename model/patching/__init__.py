"""Activation patching: which heads, layers and positions carry a clean/corrupted difference.

    p = patch(bundle, "The cat eats fish.", "The dog eats fish.")
    p.heads["cross"]   # (L, H): 0 = the corrupted run, 1 = the clean run

Run the corrupted input, copy one activation from the clean run into it, and see how far the
metric moves back: (m_patched − m_corrupted) / (m_clean − m_corrupted). The metric is the logit
difference answer − wrong where the model predicts (decoder-only: the next token after the
text; encoder–decoder: decoder step `step`, teacher-forced on the clean target in both runs).
An encoder-only model has no LM head here: its metric is the mean last hidden state projected
on the unit direction from the corrupted to the clean one (corrupted 0, clean its distance);
a sentence-embedding model's is the cosine of the run's sentence embedding to the clean
line's (clean 1, corrupted the two lines' cosine).

Shape legend: L layers (blocks) of a kind or side, H query heads, n positions of a side.
`method="exact"` runs patched copies of the corrupted input, `chunk` per forward;
`method="attribution"` is the first-order estimate (clean − corrupted) · ∂metric/∂activation
from the clean run, the corrupted run and one backward pass.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from ..batch import Batch
from ..capture import SIDE_STACK, query_side
from ..checkpoint import Bundle
from ..decode import Translation, checked_heads
from ..hooks import Head, ablation_hooks
from ..pairs import Setup
from .core import (
    Patch,
    Progress,
    attribution_values,
    exact_effects,
    grad_forward,
    gradients,
    record_run,
)
from .minimal import Swap, minimal_swap, word_swaps

PARTS = ("heads", "attn_out", "resid")
METHODS = ("exact", "attribution")


@dataclass(frozen=True)
class Patching:
    """Effects normalised so that 0 is the corrupted run and 1 the clean run."""

    heads: dict[str, np.ndarray]  # kind -> (L, H): the head's context from the clean run
    resid: dict[str, np.ndarray]  # "enc"/"dec" -> (L+1, n): each block's input, then output
    attn_out: dict[str, np.ndarray]  # kind -> (L, n): the attention block's output
    clean_metric: float  # logits (answer − wrong) of the clean run
    corrupted_metric: float
    answer_id: int  # -1 for an encoder-only model
    wrong_id: int
    position: int  # decoder position of the metric; -1 for an encoder-only model
    clean_ids: list[int]  # decoder input (decoder-only) or source, as fed
    corrupted_ids: list[int]
    method: str
    step: int | None = None  # decoder step of an encoder–decoder model (== position)
    pieces: dict[str, list[str]] = field(default_factory=dict)  # side -> clean pieces
    corrupted_pieces: dict[str, list[str]] = field(default_factory=dict)
    outputs: tuple[str, str] = ("", "")  # what the model writes for clean and corrupted
    answer: str = ""  # answer_id's piece
    wrong: str = ""
    metric: str = "logit_diff"  # or "pooled_projection" (encoder-only), "pooled_cosine"
    #                             (a sentence-embedding model: cosine to the clean line's)


def _setup(bundle: Bundle, clean: str, corrupted: str, target, step, target_lang,
           heads: frozenset[Head], encoded: Batch | None = None,
           decoded: Sequence[Translation] | None = None) -> Setup:
    from ..backends import backend_for

    if not isinstance(clean, str) or not isinstance(corrupted, str):
        raise ValueError("clean and corrupted are one sentence each (a string)")
    if not clean.strip() or not corrupted.strip():
        raise ValueError("type a clean and a corrupted sentence")
    return backend_for(bundle).patch_setup(clean, corrupted, target=target, step=step,
                                           target_lang=target_lang, ablate=heads,
                                           encoded=encoded, decoded=decoded)


def _metric(setup: Setup, clean_out: torch.Tensor, corr_out: torch.Tensor,
            answer: str | int | None, wrong: str | int | None):
    """(answer id, wrong id, metric fn): readout (R, X) -> float64 (R,)."""
    if not setup.lm and setup.cosine:
        clean = clean_out[0].detach().double()
        clean = clean / clean.norm().clamp_min(1e-12)

        def cosine(x: torch.Tensor) -> torch.Tensor:
            x = x.double()
            return (x @ clean) / x.norm(dim=-1).clamp_min(1e-12)

        return -1, -1, cosine
    if not setup.lm:
        base = corr_out[0].double()
        d = clean_out[0].double() - base
        unit = d / d.norm().clamp_min(1e-30)
        return -1, -1, lambda x: (x.double() - base) @ unit

    def as_id(tok: str | int | None, logits: torch.Tensor, other: int | None) -> int:
        if tok is not None:
            i = int(tok) if isinstance(tok, int) else setup.token_id(tok)
            if not 0 <= i < logits.numel():
                raise ValueError(f"token id {i} is outside the vocabulary "
                                 f"(0..{logits.numel() - 1})")
            return i
        masked = logits.detach().double().clone()
        masked[[i for i in setup.never if 0 <= i < masked.numel()]] = -torch.inf
        if other is not None:
            masked[other] = -torch.inf  # the two runs agree: the corrupted run's runner-up
        return int(masked.argmax())

    a = as_id(answer, clean_out[0], None)
    w = as_id(wrong, corr_out[0], None)
    if wrong is None and w == a:
        w = as_id(None, corr_out[0], a)
    if a == w:
        raise ValueError("answer and wrong are the same token; pick two different ones")
    return a, w, lambda x: x[:, a].double() - x[:, w].double()


def _rows(setup: Setup, parts: Collection[str]) -> list[Patch]:
    rows: list[Patch] = []
    if "heads" in parts:
        rows += [("head", k, layer, h) for k, n in setup.kinds.items() for layer in range(n)
                 for h in range(setup.n_heads)]
    if "attn_out" in parts:
        rows += [("attn_out", k, layer, p) for k, n in setup.kinds.items() for layer in range(n)
                 for p in range(setup.lengths[SIDE_STACK[query_side(k)]])]
    if "resid" in parts:
        rows += [("resid", s, i, p) for s, n in setup.sides.items() for i in range(n + 1)
                 for p in range(setup.lengths[s])]
    return rows


def patch(bundle: Bundle, clean: str, corrupted: str, *, target: str | None = None,
          answer: str | int | None = None, wrong: str | int | None = None,
          step: int | None = None, method: str = "exact", ablate: Iterable[Head] | str = (),
          target_lang: str | None = None, parts: Collection[str] = PARTS,
          progress: Progress = None, chunk: int = 32, encoded: Batch | None = None,
          decoded: Sequence[Translation] | None = None) -> Patching:
    """Patch every head, attention output and residual position of the clean run into the
    corrupted one (see the module docstring). `ablate`: heads knocked out in every run;
    `parts`: which of heads / attn_out / resid to compute (the others stay empty);
    `progress` gets fractions 0..1; `chunk`: patched copies per forward (exact); `encoded`:
    encode(bundle, [clean, corrupted], target_lang=…) when the caller tokenized the pair
    already (read instead of tokenizing again where it is that pair); `decoded`: translate()'s
    result for the pair (same language and ablation), reused where a translator would decode
    it again."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, not {method!r}")
    if set(parts) - set(PARTS):
        raise ValueError(f"parts are {PARTS}, not {sorted(set(parts) - set(PARTS))}")
    report = progress or (lambda _f: None)
    report(0.0)
    heads = checked_heads(bundle, ablate)
    fns = ablation_hooks(heads)
    setup = _setup(bundle, clean, corrupted, target, step, target_lang, heads, encoded,
                   decoded)
    clean_acts, clean_out = record_run(setup, "clean", fns)
    report(0.1)
    rows = _rows(setup, parts)
    if method == "exact":
        _, corr_out = record_run(setup, "corrupted", fns)
        a, w, metric = _metric(setup, clean_out, corr_out, answer, wrong)
        m_c, m_r = _checked(setup, metric(clean_out), metric(corr_out))
        effects = exact_effects(setup, [[r] for r in rows], clean_acts, metric, chunk,
                                lambda f: report(0.1 + 0.9 * f), fns)
    else:
        acts, graph_out = grad_forward(setup, fns)
        corr_out = graph_out.detach()
        a, w, metric = _metric(setup, clean_out, corr_out, answer, wrong)
        m_graph = metric(graph_out)
        m_c, m_r = _checked(setup, metric(clean_out), m_graph.detach())
        grads = gradients(acts, m_graph)
        acts = {n: x.detach() for n, x in acts.items()}
        effects = [v / (m_c - m_r)
                   for v in attribution_values(setup, rows, clean_acts, acts, grads)]
    report(1.0)
    if setup.lm and setup.outputs == ("", ""):  # decoder-only: the next token each run writes
        setup.outputs = (setup.id_to_piece(_top(setup, clean_out)),
                         setup.id_to_piece(_top(setup, corr_out)))
    return _result(setup, rows, effects, parts, m_c, m_r, a, w, method)


def _top(setup: Setup, out: torch.Tensor) -> int:
    logits = out[0].detach().double().clone()
    logits[[i for i in setup.never if 0 <= i < logits.numel()]] = -torch.inf
    return int(logits.argmax())


def _checked(setup: Setup, m_c: torch.Tensor, m_r: torch.Tensor) -> tuple[float, float]:
    c, r = float(m_c[0]), float(m_r[0])
    if abs(c - r) <= 1e-7 * max(1.0, abs(c), abs(r)):
        raise ValueError("nothing differs at the metric: the clean and corrupted runs give the "
                         f"same value ({c:.4g}); change the corrupted word, the step or the "
                         "answer/wrong tokens")
    return c, r


def _result(setup: Setup, rows: list[Patch], effects: list[float], parts, m_c: float,
            m_r: float, a: int, w: int, method: str) -> Patching:
    heads = {k: np.zeros((n, setup.n_heads)) for k, n in setup.kinds.items()} \
        if "heads" in parts else {}
    attn_out = {k: np.zeros((n, setup.lengths[SIDE_STACK[query_side(k)]]))
                for k, n in setup.kinds.items()} if "attn_out" in parts else {}
    resid = {s: np.zeros((n + 1, setup.lengths[s])) for s, n in setup.sides.items()} \
        if "resid" in parts else {}
    target = {"head": heads, "attn_out": attn_out, "resid": resid}
    for (part, where, i, j), e in zip(rows, effects):
        target[part][where][i, j] = e
    return Patching(
        heads=heads, resid=resid, attn_out=attn_out, clean_metric=m_c, corrupted_metric=m_r,
        answer_id=a, wrong_id=w, position=setup.position, clean_ids=setup.clean_ids,
        corrupted_ids=setup.corrupted_ids, method=method, step=setup.step,
        pieces=setup.pieces, corrupted_pieces=setup.corrupted_pieces, outputs=setup.outputs,
        answer=setup.id_to_piece(a) if a >= 0 else "",
        wrong=setup.id_to_piece(w) if w >= 0 else "",
        metric="logit_diff" if setup.lm else "pooled_cosine" if setup.cosine
        else "pooled_projection")


def effect(bundle: Bundle, clean: str, corrupted: str, patches: Iterable[Patch], *,
           target: str | None = None, answer: str | int | None = None,
           wrong: str | int | None = None, step: int | None = None,
           ablate: Iterable[Head] | str = (), target_lang: str | None = None) -> float:
    """The normalised effect of patching all `patches` at once (exact), e.g.
    [("resid", "enc", 0, None)]: the whole first block's input (see core.Patch)."""
    heads = checked_heads(bundle, ablate)
    fns = ablation_hooks(heads)
    setup = _setup(bundle, clean, corrupted, target, step, target_lang, heads)
    clean_acts, clean_out = record_run(setup, "clean", fns)
    _, corr_out = record_run(setup, "corrupted", fns)
    _, _, metric = _metric(setup, clean_out, corr_out, answer, wrong)
    _checked(setup, metric(clean_out), metric(corr_out))
    return exact_effects(setup, [list(patches)], clean_acts, metric, 1, lambda _f: None, fns)[0]


def estimate_patch(bundle: Bundle, clean: str | Batch, chunk: int = 32,
                   target_lang: str | None = None):
    """Peak bytes of patch(): like the importance scan, passes of `chunk` copies one at a time
    after a greedy decode (an Estimate for the admission gate). `clean`: the clean text, or
    the pair's Batch (encode(bundle, [clean, corrupted])) already tokenized for the page: its
    decode then counts both sentences, as patch() decodes both."""
    from ..dispatch import estimate_scan

    return estimate_scan(bundle, clean, target_lang=target_lang, chunk=chunk)


__all__ = ["METHODS", "PARTS", "Patching", "Swap", "effect", "estimate_patch", "minimal_swap",
           "patch", "word_swaps"]
