"""capture() for the lab's own Transformer: one forward with recording hooks into a Trace.

Shape legend: B sentences, S source / T target positions, L layers, H heads, D model size.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence

import numpy as np
import torch

from ...batch import Batch
from ...capture import GROUPS, Trace
from ...decode import Translation, checked_heads
from ...hooks import Head, ablation_hooks, buffers, hooks
from ...masks import trace_masks
from ...norms import LazyNorms
from ...slabs import ATTN_HOOKS, Slabs
from .decode import translate_native
from .norms import native_norms


def _wanted(names: Collection[str] | None, model) -> tuple[set[str], list[str]]:
    """Split `names` into field groups and raw hook names, checking both."""
    if names is None:
        return set(GROUPS), []
    groups = {n for n in names if n in GROUPS}
    raw = [n for n in names if n not in GROUPS]
    if raw:
        known = set(model.hook_names())
        unknown = [n for n in raw if n not in known]
        if unknown:
            raise ValueError(f"unknown names {unknown}; use {GROUPS} or hook names")
    return groups, raw


def _numpy(t: torch.Tensor) -> np.ndarray:
    return t.detach().to("cpu", torch.float32).numpy()


def _positions(pad: np.ndarray) -> np.ndarray:
    """(B, n) pad flags -> int64 positions 1..n, 0 on pad (as positional.position_ids)."""
    return np.where(pad, 0, np.arange(1, pad.shape[1] + 1, dtype=np.int64))


def _target_batch(bundle, batch: Batch, ablate, decoded) -> list[list[int]]:
    """Decoder inputs [bos] + pieces: the batch's (given texts, or a decoder-only model's
    typed text), or the model's own greedy translation."""
    tok, limit = bundle.tokenizer, bundle.config.max_len - 1
    if batch.tgt_lists is None:
        done = decoded if decoded is not None else translate_native(bundle, batch,
                                                                    ablate=ablate)
        return [[tok.bos_id, *t.ids[: limit - 1]] for t in done]
    return [list(t) for t in batch.tgt_lists]


def capture_native(bundle, batch: Batch, *, ablate: Iterable[Head] | str = (),
                   names: Collection[str] | None = None,
                   decoded: Sequence[Translation] | None = None) -> Trace:
    """capture() for the lab's own model, on a Batch from its backend's encode()."""
    model, tok, cfg = bundle.model, bundle.tokenizer, bundle.config
    heads = checked_heads(bundle, ablate)
    groups, raw = _wanted(names, model)
    need = groups | ({"attn", "v"} if "norms" in groups else set())  # norms come from these
    sources, langs, cuts = list(batch.sources), list(batch.langs), list(batch.cuts)
    # a copy: the Trace's src_ids is frozen later, and the Batch may be read again
    src = torch.from_numpy(batch.src_ids.copy())
    has_dec = model.decoder is not None
    tgt_lists = _target_batch(bundle, batch, heads, decoded) if has_dec else []
    tgt = torch.from_numpy(tok.pad(tgt_lists)) if has_dec else None

    layers = {k: bundle.n_layers(k) for k in bundle.kinds}
    slabs = Slabs(layers, need)  # model/slabs.py: one (L, ...) slab per group and kind
    if "hidden" in groups:
        for short, side, stack in (("enc", "encoder", model.encoder),
                                   ("dec", "decoder", model.decoder)):
            if stack is not None:
                n = len(stack.layers) + 1
                slabs.add(f"{side}.hook_embed", f"hidden/{short}", 0, n)
                for i in range(n - 1):
                    slabs.add(f"{side}.layers.{i}.hook_resid_post", f"hidden/{short}", i + 1, n)
    acts: dict[str, np.ndarray] = {}

    def record(x: torch.Tensor, name: str) -> None:
        if name in raw_set:
            acts[name] = _numpy(x).copy()
        if name in slabs.slots:
            slabs.record(x, name)

    raw_set = set(raw)
    if model.training:  # checked, not forced: eval() walks every module and costs ms
        model.eval()
    watch = dict.fromkeys([*slabs.slots, *raw], record)
    direct = slabs.buffers()  # the quadratic tensors written by the model into their slabs
    with torch.inference_mode(), hooks(ablation_hooks(heads)), hooks(watch), buffers(direct):
        if has_dec and "logits" not in groups:
            # model.forward without its last step: the (B, T, V) logits cost a large share of
            # the forward (as transformers' logits_to_keep saves for its models), unread here
            model.decode(tgt, model.encode(src) if model.encoder is not None else None, src)
            out = None
        else:
            out = model(src, tgt)
    logits = _numpy(out) if has_dec and "logits" in groups else None

    per_group = {g: {k: slabs.take(f"{g}/{k}") for k in layers} if g in need else {}
                 for g in ATTN_HOOKS}  # (L, B, H, Q, K) or (L, B, H, n, Dh)
    # (L, B, H, Q, K), weighed when first read where attn stays in the Trace (LazyNorms)
    norms = LazyNorms({k: native_norms(model, k, per_group["attn"][k], per_group["v"][k], heads,
                                       lazy="attn" in groups)
                       for k in layers}) if "norms" in groups else {}
    per_group.update({g: {} for g in need - groups})  # recorded only to make the norms
    hidden = {short: slabs.take(f"hidden/{short}")  # (L+1, B, n, D)
              for short in ("enc", "dec") if f"hidden/{short}" in slabs.slabs}
    # masks and positions straight from the ids in numpy: the same values as model.masks and
    # position_ids (tests compare them), without a round of small torch ops per call
    src_np = src.numpy()
    src_pad = src_np == cfg.pad_id  # (B, S)
    tgt_pad = tgt.numpy() == cfg.pad_id if tgt is not None else None  # (B, T)
    masks = trace_masks(src_pad, tgt_pad, layers)
    positions = {"enc": _positions(src_pad)}
    if tgt is not None:
        positions["dec"] = _positions(tgt_pad)
    return Trace(
        src_tokens=[list(p) for p in batch.pieces],
        tgt_tokens=[tok.ids_to_pieces(t) for t in tgt_lists],
        src_ids=src_np,
        tgt_ids=tgt.numpy() if tgt is not None else np.zeros((len(sources), 0), np.int64),
        masks=masks, scores=per_group["scores"], attn=per_group["attn"],
        q=per_group["q"], k=per_group["k"], v=per_group["v"], hidden=hidden,
        pos_table=_numpy(model.pos_embed.weight()).copy(), logits=logits, pad_id=cfg.pad_id,
        sources=sources, targets=[tok.decode(t) for t in tgt_lists], target_langs=langs,
        positions=positions, src_cut=cuts, ablate=heads,
        acts=acts, kv_groups=np.arange(cfg.n_heads, dtype=np.int64), norms=norms,
    )
