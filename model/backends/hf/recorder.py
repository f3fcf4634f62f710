"""The lab's attention function inside transformers: one recorder for every model family.

Since 4.48 transformers routes attention through `AttentionInterface`: each attention module
computes q, k, v (keys and queries already rotated for rotary models, k/v not yet repeated for
grouped-query attention) and calls the function registered under `config._attn_implementation`
with the mask, the scaling and the family's extras (T5's `position_bias`, Gemma2's `softcap`,
Mistral's `sliding_window`, which the mask already carries). `lab_attention` is registered as
"lab_record" and computes attention the way the families' eager functions do:

    scores = (q · kᵀ) · scaling (+ position_bias) (→ softcap)   recorded, before the mask
    probs  = softmax(scores + mask)                             (float32 softmax, as Llama's)
    context = probs · v                                         per head, the ablation point

Every intermediate passes a `HookPoint` named like the lab's own model
(`decoder.layers.3.self_attn.hook_probs`), so `model.hooks.hooks()`, `buffers()`,
`ablation_hooks()` and the Trace slabs work unchanged, per context (ContextVar), thread-safe.
k and v reach their hooks as the model made them, before grouped-query repetition: (B, Hkv, K,
Dh), one row per key/value head; `Sites.kv_groups` (Trace.kv_groups) says which key/value head
each query head reads.

Which module is which (kind, layer) is learned once per model by running a 3-token source and
a 2-token target through it and watching the calls (`sites`): encoder self-attention sees 3×3,
decoder self-attention 2×2, cross-attention 2×3.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn

from ...hooks import HookPoint, active_hooks, attn_prefix

NAME = "lab_record"
POINTS = ("hook_q", "hook_k", "hook_v", "hook_scores", "hook_probs", "hook_context")


@dataclass(frozen=True)
class Site:
    """One attention module of a model, addressed as the lab addresses heads."""

    kind: str
    layer: int
    points: dict[str, HookPoint]  # POINTS -> a HookPoint named f"{attn_prefix}.{point}"


@dataclass(frozen=True)
class Sites:
    """Every attention module of one model: layers per kind and the query→kv head map."""

    layers: dict[str, int]  # kind -> number of layers
    n_heads: int
    kv_groups: np.ndarray  # int64 (H,): kv head read by each query head


_SITE: weakref.WeakKeyDictionary[nn.Module, Site] = weakref.WeakKeyDictionary()
_SITES: weakref.WeakKeyDictionary[nn.Module, Sites] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()
# calls seen while sites() probes a model: (module, query shape, key shape)
_PROBE: ContextVar[list | None] = ContextVar("attention_lab_hf_probe", default=None)
# kind -> bool (B, Q, K) blocked in every layer so far (True = blocked), while capture asks
_MASKS: ContextVar[dict[str, torch.Tensor] | None] = ContextVar("attention_lab_hf_masks",
                                                               default=None)
# long mode (long.py): while set, this context's attention calls go to that function instead
# and the mask function builds no (n, n) mask; other threads sharing the model are unaffected
DIVERT: ContextVar[Any] = ContextVar("attention_lab_hf_divert", default=None)


def _blocked(mask: torch.Tensor | None, shape: tuple[int, int, int]) -> torch.Tensor:
    """bool (B, Q, K) on the CPU from the mask a family hands over (additive float or bool)."""
    if mask is None:
        return torch.zeros(shape, dtype=torch.bool)
    m = mask[:, 0] if mask.dim() == 4 else mask  # (B, Q, K): the same for every head
    m = m[..., : shape[2]]
    if m.dtype == torch.bool:
        out = ~m  # sdpa-style: True = may attend
    else:
        out = m <= torch.finfo(m.dtype).min / 2  # additive: 0 or the dtype's minimum (or -inf)
    return out.to("cpu").expand(shape)


def _note_mask(kind: str, mask: torch.Tensor | None, shape: tuple[int, int, int]) -> None:
    seen = _MASKS.get()
    if seen is None:
        return
    new = _blocked(mask, shape)
    # blocked in every layer: Gemma2 alternates sliding-window and global layers
    seen[kind] = new.clone() if kind not in seen else seen[kind] & new


@contextmanager
def watch_masks() -> Iterator[dict[str, torch.Tensor]]:
    """Collect each kind's blocked cells (bool (B, Q, K)) during the block."""
    seen: dict[str, torch.Tensor] = {}
    token = _MASKS.set(seen)
    try:
        yield seen
    finally:
        _MASKS.reset(token)


def lab_attention(module: nn.Module, query: torch.Tensor, key: torch.Tensor,
                  value: torch.Tensor, attention_mask: torch.Tensor | None,
                  scaling: float | None = None, dropout: float = 0.0,
                  position_bias: torch.Tensor | None = None, softcap: float | None = None,
                  **kwargs: Any) -> tuple[torch.Tensor, torch.Tensor]:
    """query (B, H, Q, Dh), key/value (B, Hkv, K, Dh) -> context (B, Q, H, Dh), probs (B,H,Q,K).

    Eager attention as transformers' families compute it, with the lab's hook points around
    each step. `sliding_window` and other keywords arrive in kwargs and need nothing: the mask
    already carries the window.
    """
    diverted = DIVERT.get()
    if diverted is not None:
        return diverted(module, query, key, value, attention_mask, scaling=scaling,
                        dropout=dropout, position_bias=position_bias, softcap=softcap, **kwargs)
    probe = _PROBE.get()
    if probe is not None:
        probe.append((module, tuple(query.shape), tuple(key.shape)))
    site = _SITE.get(module)
    pts = site.points if site is not None else None
    if scaling is None:
        scaling = query.size(-1) ** -0.5
    if pts is not None:  # k and v as the model made them: one row per key/value head
        query, key, value = pts["hook_q"](query), pts["hook_k"](key), pts["hook_v"](value)
    n_rep = query.size(1) // key.size(1)
    if n_rep > 1:  # grouped-query attention: query head h reads kv head h // n_rep
        key, value = key.repeat_interleave(n_rep, 1), value.repeat_interleave(n_rep, 1)
    b, h, n_q, _ = query.shape
    n_k = key.size(2)
    shape = (b, h, n_q, n_k)
    # a recorder may hand out slab memory for the quadratic tensors (HookPoint.buffer); only
    # usable when the model computes in float32 on the CPU, where the slabs live
    direct = pts is not None and query.dtype == torch.float32 and query.device.type == "cpu"
    out = pts["hook_scores"].buffer(shape) if direct else None
    scores = torch.matmul(query, key.transpose(2, 3), out=out)  # (B, H, Q, K)
    if scaling != 1.0:
        scores.mul_(scaling)
    if position_bias is not None:  # T5: relative position bias (and no scaling)
        scores.add_(position_bias)
    if softcap is not None:  # Gemma2: softcap · tanh(scores / softcap)
        scores.div_(softcap).tanh_().mul_(softcap)
    if pts is not None:
        scores = pts["hook_scores"](scores)
        _note_mask(site.kind, attention_mask, (b, n_q, n_k))
    # nothing reads the scores before the mask (no hook or buffer there, no autograd): mask
    # them where they are rather than in a fresh (B,H,Q,K) tensor, whose first write is page
    # faults
    reuse = not (torch.is_grad_enabled() or (pts is not None and pts["hook_scores"].watched()))
    if attention_mask is None:
        masked = scores
    elif attention_mask.dtype == torch.bool:
        fill = scores.masked_fill_ if reuse else scores.masked_fill
        masked = fill(~attention_mask[..., :n_k], torch.finfo(scores.dtype).min)
    elif reuse and attention_mask.dtype == scores.dtype:  # else the sum is the wider type
        masked = scores.add_(attention_mask[..., :n_k])
    else:
        masked = scores + attention_mask[..., :n_k]
    out = pts["hook_probs"].buffer(shape) if direct else None
    if out is not None:
        probs = torch.softmax(masked, dim=-1, out=out)
    else:
        probs = torch.softmax(masked, dim=-1, dtype=torch.float32).to(query.dtype)
    if pts is not None:
        probs = pts["hook_probs"](probs)
    used = nn.functional.dropout(probs, p=dropout, training=module.training)
    context = torch.matmul(used, value)  # (B, H, Q, Dh)
    if pts is not None:
        context = pts["hook_context"](context)  # ablation zeroes heads here
    return context.transpose(1, 2).contiguous(), probs


def register() -> str:
    """Register lab_attention (and the eager mask for it) with transformers; returns NAME."""
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface, eager_mask

    def mask(*args: Any, **kwargs: Any) -> torch.Tensor | None:
        return None if DIVERT.get() is not None else eager_mask(*args, **kwargs)

    AttentionInterface.register(NAME, lab_attention)
    AttentionMaskInterface.register(NAME, mask)
    return NAME


def _probe_inputs(model: nn.Module, family: str) -> dict[str, torch.Tensor]:
    """A 3-token source and a 2-token target (ids 1..3, inside any vocabulary)."""
    device = next(model.parameters()).device
    src = torch.tensor([[1, 2, 3]], device=device)
    given = {"input_ids": src, "attention_mask": torch.ones_like(src)}  # ids may include pad
    if family == "seq2seq":
        return {**given, "decoder_input_ids": torch.tensor([[1, 2]], device=device)}
    return given


def _classify(calls: list, family: str) -> list[tuple[nn.Module, str]]:
    kinds = []
    for module, q_shape, k_shape in calls:
        if family == "encoder":
            kind = "enc_self"
        elif family == "decoder":
            kind = "dec_self"
        else:
            kind = {(3, 3): "enc_self", (2, 2): "dec_self", (2, 3): "cross"}[(q_shape[2],
                                                                              k_shape[2])]
        kinds.append((module, kind))
    return kinds


def site_of(module: nn.Module) -> Site | None:
    """The (kind, layer) an attention module records as, once `sites` has classified it."""
    return _SITE.get(module)


def sites(model: nn.Module, family: str) -> Sites | None:
    """Find (once per model) which module is which (kind, layer); None when the model does not
    call lab_attention (loaded with another attn_implementation, or a family that does not
    route attention through AttentionInterface)."""
    if getattr(model.config, "_attn_implementation", None) != NAME:
        return None  # asked each time: set_attn_implementation may switch a loaded model
    with _LOCK:
        known = _SITES.get(model)
        if known is not None:
            return known
        calls: list = []
        token = _PROBE.set(calls)
        try:
            with torch.inference_mode():
                model(**_probe_inputs(model, family))
        finally:
            _PROBE.reset(token)
        if not calls:
            return None
        modules = [c[0] for c in calls]
        if len({id(m) for m in modules}) != len(modules):
            return None  # one module serving several layers (ALBERT): no single address
        layers: dict[str, int] = {}
        for module, kind in _classify(calls, family):
            layer = layers.get(kind, 0)
            layers[kind] = layer + 1
            prefix = attn_prefix(kind, layer)
            points = {}
            for p in POINTS:
                points[p] = HookPoint()
                points[p].name = f"{prefix}.{p}"
            _SITE[module] = Site(kind, layer, points)
        n_heads, n_kv = calls[0][1][1], calls[0][2][1]
        groups = np.arange(n_heads, dtype=np.int64) // max(1, n_heads // max(1, n_kv))
        found = Sites(layers=layers, n_heads=int(n_heads), kv_groups=groups)
        _SITES[model] = found
        return found


def instrumented(bundle) -> bool:
    """True when a Hugging Face bundle's attention runs through lab_attention (q/k/v, scores,
    ablation available); False for models that fell back to output_attentions."""
    return sites(bundle.model, bundle.config.family) is not None


# ---- the residual stream: hook points at each block's input and the last block's output ----

_STACK = {"enc_self": "encoder", "dec_self": "decoder"}  # cross shares the decoder's blocks
_RESID: weakref.WeakKeyDictionary[nn.Module, dict[str, int]] = weakref.WeakKeyDictionary()
RESID_MARK = "lab_resid_hooked"  # attribute set on a block once its hooks are registered


def _block_of(name: str, named: dict[str, nn.Module]) -> str:
    """'model.layers.3.self_attn' -> 'model.layers.3': the outermost ModuleList entry (T5's
    'encoder.block.0.layer.0.SelfAttention' -> 'encoder.block.0', not its inner list)."""
    parts = name.split(".")
    for j, part in enumerate(parts):
        if part.isdigit() and isinstance(named.get(".".join(parts[:j])), nn.ModuleList):
            return ".".join(parts[: j + 1])
    raise ValueError(f"attention module {name!r} is not inside a list of blocks")


def _point(name: str) -> HookPoint:
    point = HookPoint()
    point.name = name
    return point


def _pre_hook(point: HookPoint):
    def fn(module: nn.Module, args: tuple, kwargs: dict):
        if not active_hooks():
            return None  # inert outside a hooks() block: one ContextVar read per block
        if args:
            return (point(args[0]), *args[1:]), kwargs
        kwargs = dict(kwargs, hidden_states=point(kwargs["hidden_states"]))
        return args, kwargs

    return fn


def _post_hook(point: HookPoint):
    def fn(module: nn.Module, args: tuple, output):
        if not active_hooks():
            return None
        if isinstance(output, tuple):  # T5 blocks return (hidden, position biases…)
            return (point(output[0]), *output[1:])
        return point(output)

    return fn


def residual_points(model: nn.Module, family: str) -> dict[str, int] | None:
    """Residual-stream hook points, named as in the lab's model, installed once per model:
    `{encoder,decoder}.layers.{i}.hook_resid_pre` at each block's input hidden states and
    `….layers.{L-1}.hook_resid_post` at the last block's output, all (B, n, D). Returns blocks
    per side ({"enc": L, "dec": L}); None where the attention sites are unknown. The module
    hooks only hand tensors to model.hooks' per-context functions, so outside a hooks() block
    they do nothing and threads never see each other's. `prepare` installs them at load, before
    any session shares the model; a block carries a mark with its hooks, so a copy of a
    prepared model (a training snapshot) is never hooked twice."""
    found = sites(model, family)
    if found is None:
        return None
    with _LOCK:
        known = _RESID.get(model)
        if known is not None:
            return known
        named = dict(model.named_modules())
        blocks: dict[str, dict[int, str]] = {}
        for name, module in named.items():
            site = _SITE.get(module)
            if site is not None and site.kind in _STACK:
                side = blocks.setdefault(_STACK[site.kind], {})
                side[site.layer] = _block_of(name, named)
        out: dict[str, int] = {}
        for stack, by_layer in blocks.items():
            n = len(by_layer)
            for i in range(n):
                block = named[by_layer[i]]
                if getattr(block, RESID_MARK, False):  # copied along with its hooks
                    continue
                pre = _point(f"{stack}.layers.{i}.hook_resid_pre")
                block.register_forward_pre_hook(_pre_hook(pre), with_kwargs=True)
                if i == n - 1:
                    block.register_forward_hook(_post_hook(
                        _point(f"{stack}.layers.{i}.hook_resid_post")))
                setattr(block, RESID_MARK, True)
            out["enc" if stack == "encoder" else "dec"] = n
        _RESID[model] = out
        return out


def prepare(model: nn.Module, family: str) -> None:
    """Once at load, before sessions share the model: classify its attention sites, install
    the residual block hooks and run one forward, so that every module hook (ours, and the
    output-capturing hooks transformers adds on a model's first forward) exists before any
    two threads run it; no instrument adds or removes a module hook afterwards."""
    residual_points(model, family)
    with torch.inference_mode():  # transformers hooks a model when an output is first asked
        model(**_probe_inputs(model, family), output_attentions=True,
              output_hidden_states=True)
