"""Knocking heads out: the effect of an ablation on a translation, and a scan over every head.

Heads are addressed as (kind, layer, head); ablation zeroes a head's context before the output
projection (`...hook_context`), and the loss is teacher-forced on the un-ablated translation.

Hugging Face models are knocked out at the same hook names (model/hf/recorder.py), and the
"loss" follows what the model does (model/hf/forced.py): decoder-only models, the mean NLL of
each next token of the typed text; encoder–decoder models, the mean NLL of their un-ablated
greedy output; encoder-only models (no LM head), the mean relative change of the last hidden
states, ‖h_after − h_before‖ / ‖h_before‖ (before = 0). `measure` in the results says which.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import numpy as np
import torch

from ..backends import capabilities
from ..decode import checked_heads, source_batch, target_langs
from ..dispatch import translate
from ..hooks import Head, HookFn, ablation_hooks, attn_prefix, format_ablate, hooks

Progress = Callable[[float], None] | None


def is_native(bundle, what: str) -> bool:
    """True for the lab's own encoder–decoder, False for a Hugging Face model."""
    caps = capabilities(bundle)
    if not caps.lab:
        return False
    if not caps.translates:
        raise ValueError(f"{what} needs one of this project's encoder–decoder checkpoints")
    return True


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
    if isinstance(sources, str):
        sources = [sources]
    sources = list(sources)
    heads = checked_heads(bundle, ablate)
    if not is_native(bundle, "ablation"):
        return _hf_effect(bundle, sources, heads)
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
        "loss_change": loss_after - loss_before, "measure": "logp",
    }


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


def _hf_effect(bundle, sources: list[str], heads: frozenset[Head]) -> dict:
    """ablation_effect for a Hugging Face model (the measures in the module docstring)."""
    from ..backends.hf.forced import forced_batch, forced_values, greedy, hidden_change

    fns = ablation_hooks(heads)
    before, after = greedy(bundle, sources), greedy(bundle, sources, fns)
    forced = forced_batch(bundle, sources, [t.ids for t in before])
    lens = [len(t) for t in forced.tokens]
    base, gone = forced_values(bundle, forced, {}), forced_values(bundle, forced, fns)
    if forced.measure == "hidden":  # before: no change; after: minus the relative change
        base, gone = torch.zeros(forced.valid.shape, dtype=torch.float64), -hidden_change(
            base, gone, forced.valid)
    return _summary(sources, heads, before, after, forced.tokens, base.numpy(), gone.numpy(),
                    lens, forced.measure)


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
    if not is_native(bundle, "the importance scan"):
        return _hf_scan(bundle, source, report, target, max(1, chunk))
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


def _hf_scan(bundle, source: str, report: Callable[[float], None], target: str | None,
             chunk: int) -> dict[str, np.ndarray]:
    """importance_scan for a Hugging Face model: one row per head plus a baseline row."""
    from ..backends.hf.forced import forced_batch, forced_values, greedy, hidden_change

    if target is None and bundle.config.family == "seq2seq":
        forced = forced_batch(bundle, [source], [greedy(bundle, [source])[0].ids])
    else:
        forced = forced_batch(bundle, [source], target=target)
    report(0.2)
    heads = all_heads(bundle)
    rows: list[Head | None] = [None, *heads]
    losses: list[float] = []
    base = None
    for start in range(0, len(rows), chunk):
        part = rows[start:start + chunk]
        values = forced_values(bundle, forced.repeat(len(part)), row_ablation_hooks(part))
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
