"""Identity hook points and a context manager that attaches functions to them.

Hooks are per-context, not per-module: the functions live in a ContextVar, so two threads that
share one model (Streamlit serves every browser session from one cached model) each see only
their own hooks. Nothing is ever left attached to a module.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar

import torch
from torch import nn

# fn(tensor, hook_name) -> replacement tensor or None (keep the tensor as it is)
HookFn = Callable[[torch.Tensor, str], "torch.Tensor | None"]

_ACTIVE: ContextVar[Mapping[str, HookFn] | None] = ContextVar("attention_lab_hooks", default=None)

# fn(shape) -> an empty float32 tensor of that shape for the module to write its result into
BufferFn = Callable[[tuple[int, ...]], torch.Tensor]
BUFFERS: ContextVar[Mapping[str, BufferFn] | None] = ContextVar("attention_lab_buffers",
                                                                  default=None)


class HookPoint(nn.Module):
    """Identity module that hands its input to the hook function registered under its name."""

    def __init__(self) -> None:
        super().__init__()
        self.name = ""  # filled in by name_hook_points() from the attribute path

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        active = _ACTIVE.get()
        if active is None:
            return x
        fn = active.get(self.name)
        if fn is None:
            return x
        out = fn(x, self.name)
        return x if out is None else out

    def watched(self) -> bool:
        """Whether a hook function or a buffer is attached to this point in this context: if
        not, nothing will read the tensor passed through it, and the module may reuse it."""
        active, provided = _ACTIVE.get(), BUFFERS.get()
        return bool(active and self.name in active) or bool(provided and self.name in provided)

    def buffer(self, shape: tuple[int, ...]) -> torch.Tensor | None:
        """Where the module may write the tensor it is about to pass through this point, or
        None (allocate as usual). Lets a recorder receive big tensors without a copy."""
        provided = BUFFERS.get()
        if provided is None:
            return None
        fn = provided.get(self.name)
        return None if fn is None else fn(shape)


def name_hook_points(root: nn.Module) -> None:
    """Give every HookPoint its attribute path as name, e.g. encoder.layers.0.self_attn.hook_q."""
    for name, module in root.named_modules():
        if isinstance(module, HookPoint):
            module.name = name


def hook_names(root: nn.Module) -> list[str]:
    """All hook point names in the order they run in a forward pass."""
    return [name for name, module in root.named_modules() if isinstance(module, HookPoint)]


def active_hooks() -> Mapping[str, HookFn]:
    """The hooks attached in the current context (empty outside any hooks() block)."""
    return _ACTIVE.get() or {}


def _chain(first: HookFn, second: HookFn) -> HookFn:
    def both(x: torch.Tensor, name: str) -> torch.Tensor | None:
        out = first(x, name)
        x = x if out is None else out
        out = second(x, name)
        return x if out is None else out

    return both


@contextmanager
def hooks(fns: Mapping[str, HookFn]) -> Iterator[None]:
    """Attach fns (hook name -> function) for the duration of the block; nested blocks chain."""
    merged: dict[str, HookFn] = dict(active_hooks())
    for name, fn in fns.items():
        merged[name] = _chain(merged[name], fn) if name in merged else fn
    token = _ACTIVE.set(merged)
    try:
        yield
    finally:
        _ACTIVE.reset(token)


@contextmanager
def buffers(fns: Mapping[str, BufferFn]) -> Iterator[None]:
    """Offer output buffers (hook name -> fn(shape)) to the hook points for the block."""
    token = BUFFERS.set({**(BUFFERS.get() or {}), **fns})
    try:
        yield
    finally:
        BUFFERS.reset(token)


# ---- addressing attention heads as (kind, layer, head) ---------------------------------------

KINDS = ("enc_self", "dec_self", "cross")
_PREFIX = {
    "enc_self": "encoder.layers.{}.self_attn",
    "dec_self": "decoder.layers.{}.self_attn",
    "cross": "decoder.layers.{}.cross_attn",
}

Head = tuple[str, int, int]


def attn_prefix(kind: str, layer: int) -> str:
    """Module path of one attention block, e.g. ('cross', 1) -> decoder.layers.1.cross_attn."""
    return _PREFIX[kind].format(layer)


def parse_ablate(spec: str | object) -> frozenset[Head]:
    """'enc_self:0:1,cross:2:3' (or an iterable of triples) -> {(kind, layer, head)}, unchecked."""
    if isinstance(spec, str):
        heads = set()
        for part in filter(None, (p.strip() for p in spec.split(","))):
            bits = part.split(":")
            if len(bits) != 3 or not all(b.isascii() and b.isdigit() for b in bits[1:]):
                raise ValueError(f"bad head {part!r}: expected kind:layer:head")
            heads.add((bits[0], int(bits[1]), int(bits[2])))
        return frozenset(heads)
    return frozenset((str(k), int(layer), int(h)) for k, layer, h in spec)  # type: ignore[union-attr]


def format_ablate(heads: object) -> str:
    """Inverse of parse_ablate, sorted so URLs are stable."""
    return ",".join(f"{k}:{layer}:{h}" for k, layer, h in sorted(heads))  # type: ignore[call-overload]


def ablation_hooks(heads: frozenset[Head]) -> dict[str, HookFn]:
    """Hook functions that zero the per-head context of each listed head."""
    by_hook: dict[str, list[int]] = {}
    for kind, layer, head in heads:
        by_hook.setdefault(f"{attn_prefix(kind, layer)}.hook_context", []).append(head)

    def make(idx: list[int]) -> HookFn:
        def zero(x: torch.Tensor, name: str) -> torch.Tensor:
            x = x.clone()  # (B, H, Q, Dh); never write into a tensor someone else recorded
            x[:, idx] = 0.0
            return x

        return zero

    return {name: make(sorted(idx)) for name, idx in by_hook.items()}
