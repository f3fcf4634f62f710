"""Activation patching over any model that a Setup can run: exact and attribution.

Shape legend
    R  rows in one batched forward (patched copies of the corrupted input)
    H  query heads            Dh  head size           D  model width
    n  positions of one side ("enc": source, "dec": decoder input)
    Q  query positions of one attention kind (the side its queries come from)

A Setup (model/pairs.py; each backend's `patch_setup` makes it) knows how to run the clean or
the corrupted input R times with hook functions attached and return a readout per row (logits
at the metric's position, or the pooled last hidden state of an encoder-only model). Hook
names are the lab model's: `{prefix}.hook_context` (R, H, Q, Dh) per attention block,
`{stack}.layers.{i}.hook_resid_pre` and the last block's `hook_resid_post` (R, n, D); Hugging
Face models get the same names from model/backends/hf/recorder.py. attn_out of block (kind, l)
at position p is patched as every head's context at p: the block's output there is
W_O·context + b with b the same in both runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch

from ..hooks import HookFn, attn_prefix, hooks
from ..pairs import Setup

Progress = Callable[[float], None] | None
# what one patched row copies from the clean run: (part, name-ish key, index, position)
#   ("head", kind, layer, h)      one head's context at every query position
#   ("attn_out", kind, layer, p)  every head's context at position p
#   ("resid", side, i, p)         the residual stream entering block i (i = L: leaving the
#                                 last block) at position p; p = None: every position
Patch = tuple[str, str, int, "int | None"]
STACK = {"enc": "encoder", "dec": "decoder"}


def context_name(kind: str, layer: int) -> str:
    return f"{attn_prefix(kind, layer)}.hook_context"


def resid_name(side: str, i: int, n_blocks: int) -> str:
    """Block i's input; i == n_blocks: the last block's output."""
    if i < n_blocks:
        return f"{STACK[side]}.layers.{i}.hook_resid_pre"
    return f"{STACK[side]}.layers.{n_blocks - 1}.hook_resid_post"


def all_names(setup: Setup) -> list[str]:
    names = [context_name(k, layer) for k, n in setup.kinds.items() for layer in range(n)]
    names += [resid_name(s, i, n) for s, n in setup.sides.items() for i in range(n + 1)]
    return names


def site(setup: Setup, p: Patch) -> str:
    part, where, i, _ = p
    return resid_name(where, i, setup.sides[where]) if part == "resid" else context_name(where, i)


def record_run(setup: Setup, which: str, fns: dict[str, HookFn] | None = None
               ) -> tuple[dict[str, torch.Tensor], torch.Tensor]:
    """One unpatched run of `which` (R = 1): every patchable activation and the readout."""
    acts: dict[str, torch.Tensor] = {}

    def keep(x: torch.Tensor, name: str) -> None:
        acts[name] = x.detach().clone()

    watch = dict.fromkeys(all_names(setup), keep)
    with hooks(fns or {}), hooks(watch):
        out = setup.run([which], False)
    return acts, out


def patch_hooks(setup: Setup, rows: Sequence[Sequence[Patch]],
                clean: dict[str, torch.Tensor]) -> dict[str, HookFn]:
    """Hook functions that give row r of a batch the clean values listed in rows[r]."""
    by_name: dict[str, list[tuple[int, Patch]]] = {}
    for r, patches in enumerate(rows):
        for p in patches:
            by_name.setdefault(site(setup, p), []).append((r, p))

    def make(entries: list[tuple[int, Patch]]) -> HookFn:
        def put(x: torch.Tensor, name: str) -> torch.Tensor:
            x = x.clone()  # never write into a tensor someone else recorded
            src = clean[name].to(x.dtype)
            for r, (part, _, _, idx) in entries:
                if part == "head":
                    x[r, idx] = src[0, idx]  # (Q, Dh)
                elif part == "attn_out":
                    x[r, :, idx] = src[0, :, idx]  # (H, Dh)
                elif idx is None:
                    x[r] = src[0]  # (n, D)
                else:
                    x[r, idx] = src[0, idx]  # (D,)
            return x

        return put

    return {name: make(entries) for name, entries in by_name.items()}


def first_block(p: Patch) -> int:
    """The first block whose computation a patch changes (the blocks before it run exactly as
    in the corrupted run)."""
    return p[2]  # resid L (the last block's output) widens at that output, which is fine


def _expand(rows: int) -> HookFn:
    def widen(x: torch.Tensor, name: str) -> torch.Tensor:
        return x.expand(rows, *x.shape[1:]).contiguous()  # (1, n, D) -> (R, n, D)

    return widen


def exact_effects(setup: Setup, rows: Sequence[Sequence[Patch]],
                  clean: dict[str, torch.Tensor], metric: Callable[[torch.Tensor], torch.Tensor],
                  chunk: int, report: Callable[[float], None], fns: dict[str, HookFn]
                  ) -> list[float]:
    """Each row's patches in the corrupted run, as (m − m_corrupted) / (m_clean − m_corrupted),
    `chunk` rows per forward.

    Every forward also runs an unpatched clean and corrupted row and normalises by those two:
    a batch's numbers then share one arithmetic (a row's result can depend on the batch size in
    the last bits), so a patch that makes a row the clean run reads exactly 1 and one that
    changes nothing exactly 0. Where the setup allows (`prefix`: one stack, whose blocks take
    batch-1 masks and position terms), rows are sorted by the first block they change and each
    forward runs the blocks before its first row's once, on one row, widened to the batch at
    that block's input; its clean row is then the whole residual stream patched there.
    """
    order = sorted(range(len(rows)), key=lambda r: min(map(first_block, rows[r]), default=0)) \
        if setup.prefix else list(range(len(rows)))
    values = [0.0] * len(rows)
    chunk = max(1, chunk)
    side = next(iter(setup.sides), None)
    for start in range(0, len(order), chunk):
        idx = order[start:start + chunk]
        part = [rows[r] for r in idx]
        n = len(part) + 2
        if setup.prefix and side is not None:
            block = min((first_block(p) for ps in part for p in ps), default=0)
            entry = resid_name(side, block, setup.sides[side])
            widen = {entry: _expand(n)}
            refs: list[Sequence[Patch]] = [[("resid", side, block, None)], []]
            which = ["corrupted"]
        else:
            widen, refs, which = {}, [[], []], ["clean", "corrupted", *["corrupted"] * len(part)]
        with torch.inference_mode(), hooks(fns), hooks(widen), \
                hooks(patch_hooks(setup, [*refs, *part], clean)):
            m = metric(setup.run(which, False))
        m_clean, m_corr = m[0], m[1]
        for r, v in zip(idx, ((m[2:] - m_corr) / (m_clean - m_corr)).tolist()):
            values[r] = v
        report(min(1.0, (start + len(part)) / max(1, len(rows))))
    return values


def grad_forward(setup: Setup, fns: dict[str, HookFn]
                 ) -> tuple[dict[str, torch.Tensor], torch.Tensor]:
    """The corrupted run with autograd: its activations (graph kept) and readout."""
    acts: dict[str, torch.Tensor] = {}

    def keep(x: torch.Tensor, name: str) -> torch.Tensor:
        if not x.requires_grad:  # frozen weights: start the graph here (nothing upstream)
            x = x.detach().requires_grad_(True)
        acts[name] = x
        return x

    with torch.enable_grad(), hooks(fns), hooks(dict.fromkeys(all_names(setup), keep)):
        out = setup.run(["corrupted"], True)
    return acts, out


def gradients(acts: dict[str, torch.Tensor], m: torch.Tensor) -> dict[str, torch.Tensor]:
    """d m / d activation for every recorded activation (one backward pass)."""
    names = list(acts)
    grads = torch.autograd.grad(m.sum(), [acts[n] for n in names], allow_unused=True)
    return {n: (g if g is not None else torch.zeros_like(acts[n])).detach()
            for n, g in zip(names, grads)}


def attribution_values(setup: Setup, rows: Sequence[Patch], clean: dict[str, torch.Tensor],
                       corrupted: dict[str, torch.Tensor], grads: dict[str, torch.Tensor]
                       ) -> list[float]:
    """First-order change of the metric for each single patch: (clean − corrupted) · grad."""
    prods = {n: ((clean[n].double() - corrupted[n].double()) * grads[n].double())[0]
             for n in grads}  # (H, Q, Dh) or (n, D)
    out = []
    for p in rows:
        part, _, _, idx = p
        prod = prods[site(setup, p)]
        if part == "head":
            out.append(float(prod[idx].sum()))
        elif part == "attn_out":
            out.append(float(prod[:, idx].sum()))
        else:
            out.append(float(prod.sum() if idx is None else prod[idx].sum()))
    return out
