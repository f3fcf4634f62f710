"""Knocking heads out: the effect of an ablation on a translation, and a scan over every head.

Heads are addressed as (kind, layer, head); ablation zeroes a head's context before the output
projection (`...hook_context`), and the loss is teacher-forced on the un-ablated translation.

Written once against the backend (Backend.greedy, forced, forced_values; model/forced.py):
every backend knocks heads out at the same hook names, and the "loss" follows what the model
does: decoder-only models, the mean NLL of each next token of the typed text; encoder–decoder
models, the mean NLL of their un-ablated greedy output; encoder-only models (no LM head), the
mean relative change of the last hidden states, ‖h_after − h_before‖ / ‖h_before‖ (before =
0); a sentence-embedding model (caps.embeds), its output, the sentence embedding: the lines'
cosines with and without the heads (similarity.pooled_knockout). `measure` in the results
says which.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import numpy as np
import torch

from ..backends import backend_for
from ..decode import checked_heads
from ..forced import hidden_change
from ..hooks import Head, HookFn, ablation_hooks, attn_prefix, format_ablate

Progress = Callable[[float], None] | None


def teacher_forced(bundle, what: str):
    """The bundle's backend, where ablation's forced runs exist (not on the lab's encoder-only
    or decoder-only shapes)."""
    backend = backend_for(bundle)
    if not backend.caps.teacher_forced:
        raise ValueError(f"{what} needs one of this project's encoder–decoder checkpoints")
    return backend


def ablation_effect(bundle, sources: Sequence[str] | str, ablate: Iterable[Head] | str,
                    target_lang: str | None = None) -> dict:
    """Translations with and without the ablated heads, and the loss change.

    Log-probabilities are teacher-forced on the UN-ablated greedy translation (its ids, not
    re-tokenised text), output = translation pieces + </s>. Per sentence b:
    tokens[b] (output pieces), logp_before/after/change[b] (arrays, change = after − before),
    loss_*[b] = mean NLL over those tokens. loss_before/after/change: mean NLL over all tokens.
    """
    if isinstance(sources, str):
        sources = [sources]
    sources = list(sources)
    heads = checked_heads(bundle, ablate)
    if backend_for(bundle).caps.embeds:  # its output is one vector per line, not text
        from .similarity import pooled_knockout

        return {"sources": sources, "ablate": heads, "ablate_spec": format_ablate(heads),
                "measure": "cosine", "pooled": pooled_knockout(bundle, sources, heads)}
    backend = teacher_forced(bundle, "ablation")
    fns = ablation_hooks(heads)
    before = backend.greedy(sources, target_lang)
    after = backend.greedy(sources, target_lang, ablate=heads)
    forced = backend.forced(sources, target_lang, outputs=[t.ids for t in before])
    lens = [len(t) for t in forced.tokens]
    base, gone = backend.forced_values(forced, {}), backend.forced_values(forced, fns)
    if forced.measure == "hidden":  # before: no change; after: minus the relative change
        base, gone = torch.zeros(forced.valid.shape, dtype=torch.float64), -hidden_change(
            base, gone, forced.valid)
    return _summary(sources, heads, before, after, forced.tokens, base.numpy(), gone.numpy(),
                    lens, forced.measure)


def _summary(sources: list[str], heads: frozenset[Head], before: list, after: list,
             tokens: list[list[str]], lp_before: np.ndarray, lp_after: np.ndarray,
             lens: list[int], measure: str) -> dict:
    """ablation_effect's result from per-token values (B, T), the first lens[b] real."""
    per = {name: [lp[b, :n].copy() for b, n in enumerate(lens)]
           for name, lp in (("before", lp_before), ("after", lp_after))}
    n_tok = max(1, sum(lens))
    loss_before, loss_after = float(-lp_before.sum() / n_tok), float(-lp_after.sum() / n_tok)
    return {
        "sources": sources, "ablate": heads, "ablate_spec": format_ablate(heads),
        "before": before, "after": after,
        "changed": [a.text != b.text for a, b in zip(after, before)],
        "tokens": tokens,
        "logp_before": per["before"], "logp_after": per["after"],
        "logp_change": [a - b for a, b in zip(per["after"], per["before"])],
        "sentence_loss_before": [float(-x.mean()) if x.size else 0.0 for x in per["before"]],
        "sentence_loss_after": [float(-x.mean()) if x.size else 0.0 for x in per["after"]],
        "loss_before": loss_before, "loss_after": loss_after,
        "loss_change": loss_after - loss_before, "measure": measure,
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
    report = progress or (lambda _f: None)
    report(0.0)
    backend = teacher_forced(bundle, "the importance scan")
    chunk = max(1, chunk)
    forced = backend.forced([source], target_lang, target=target)
    report(0.2)
    heads = all_heads(bundle)
    rows: list[Head | None] = [None, *heads]
    losses: list[float] = []
    base = None
    for start in range(0, len(rows), chunk):
        part = rows[start:start + chunk]
        values = backend.forced_values(forced.repeat(len(part)), row_ablation_hooks(part))
        valid = forced.valid.cpu().repeat(len(part), 1)
        n_tok = max(1, int(forced.valid.sum()))
        if forced.measure == "hidden":
            base = values[:1] if base is None else base
            change = hidden_change(base.expand_as(values), values, valid)
            losses += (change.sum(-1) / n_tok).tolist()
        else:
            losses += (-values.sum(-1) / n_tok).tolist()
        report(0.2 + 0.8 * min(1.0, (start + len(part)) / len(rows)))
    out = {kind: np.zeros((bundle.n_layers(kind), bundle.config.n_heads)) for kind in bundle.kinds}
    for (kind, layer, h), loss in zip(heads, losses[1:]):
        out[kind][layer, h] = loss - losses[0]
    return out
