"""The one slab recorder every backend records a Trace with.

Each recorded group is one float32 CPU slab per (group, kind or side), (L, ...) deep; a hook
copies its layer's tensor straight in while it is still in cache (from the GPU, from bf16),
and the model frees its own tensor as usual. So memory holds the Trace and nothing twice, and
the copy is the only cost of recording. The quadratic tensors (scores, probabilities) can be
written by the attention straight into their slab (`buffers()`, model.hooks.buffers).

Shape legend: L layers, B sentences, H heads, Q/K query/key positions, n positions, Dh head size.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

import numpy as np
import torch

from .hooks import attn_prefix

# Trace field group -> the hook every attention block records it at
ATTN_HOOKS = {"attn": "hook_probs", "scores": "hook_scores",
              "q": "hook_q", "k": "hook_k", "v": "hook_v"}


class Slabs:
    """One float32 CPU slab per (group, kind), filled layer by layer by hook functions."""

    def __init__(self, layers: Mapping[str, int], groups: Collection[str]) -> None:
        self.slots: dict[str, tuple[str, int, int]] = {}  # hook -> (slab key, layer, depth)
        for kind, n in layers.items():
            for group in set(groups) & set(ATTN_HOOKS):
                for i in range(n):
                    self.add(f"{attn_prefix(kind, i)}.{ATTN_HOOKS[group]}", f"{group}/{kind}",
                             i, n)
        self.slabs: dict[str, torch.Tensor] = {}

    def add(self, name: str, key: str, index: int, depth: int) -> None:
        """Record hook `name` as row `index` of slab `key` ("group/kind"), `depth` rows."""
        self.slots[name] = (key, index, depth)

    def place(self, name: str, shape: tuple[int, ...]) -> torch.Tensor:
        """This hook's layer in its slab, the slab made on first use."""
        key, i, depth = self.slots[name]
        slab = self.slabs.get(key)
        if slab is None:
            slab = self.slabs[key] = torch.empty((depth, *shape), dtype=torch.float32)
        return slab[i]

    def record(self, x: torch.Tensor, name: str) -> None:
        dest = self.place(name, tuple(x.shape))
        if dest.data_ptr() != x.data_ptr():  # not already written there via buffer()
            dest.copy_(x)  # device -> CPU, any dtype -> float32

    def hooks(self) -> dict:
        return dict.fromkeys(self.slots, self.record)

    def buffers(self) -> dict:
        """The quadratic hooks' slab rows, for the attention to write into directly."""
        return {n: (lambda shape, n=n: self.place(n, shape)) for n in self.slots
                if n.endswith((".hook_scores", ".hook_probs"))}

    def take(self, key: str) -> np.ndarray:
        """Slab `key` as numpy, handed over (the recorder keeps no reference)."""
        return self.slabs.pop(key).numpy()

    def group(self, group: str) -> dict[str, np.ndarray]:
        """{kind: slab} of one group, every kind that recorded it."""
        return {key.split("/")[1]: slab.numpy() for key, slab in self.slabs.items()
                if key.split("/")[0] == group}
