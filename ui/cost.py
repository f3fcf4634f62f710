"""How long a run will take, from the shapes the admission gate's estimates carry (model.budget.
Dims): floating-point operations of one forward pass, divided by what this server's CPU does.

Any run estimated over ASK_SECONDS waits for a button that shows the estimate; a cheaper one
runs at once. The figure is an order of magnitude (it leaves out the framework's overheads),
enough to tell a one-second run from a two-minute sweep.
"""

from __future__ import annotations

import math
from dataclasses import replace

import torch

from model.budget import Dims

ASK_SECONDS = 3.0  # a run estimated longer than this waits for a button
# float32 operations per second per torch thread in a model's forward pass: 39 GFLOP/s
# measured on a 4-layer GPT-2-shaped model (d 768, 4 × 200 tokens) on one thread of a 2-core
# CPU with the other core busy
FLOPS_PER_THREAD = 40e9


def forward_flops(d: Dims) -> float:
    """Floating-point operations (2 per multiply–add) of one forward pass of d.batch copies:
    the projections, QKᵀ and ·V of every attention kind, the feed-forward blocks and the
    logits."""
    width = d.heads * d.d_head
    total = 0.0
    for kind, layers in d.layers.items():
        q, k = d.qk(kind)
        project = 2 * q * d.d_model * width * 2 + 2 * k * d.d_model * 2 * d.hkv * d.d_head
        total += layers * (project + 2 * 2 * d.heads * q * k * d.d_head)
    for kind, n in (("enc_self", d.src), ("dec_self", d.tgt)):
        total += d.layers.get(kind, 0) * 2 * 2 * n * d.d_model * d.d_ff
    rows = d.tgt if d.logit_rows < 0 else d.logit_rows
    return d.batch * (total + 2 * rows * d.d_model * d.vocab)


def seconds(d: Dims, passes: float = 1.0) -> float:
    """Estimated wall time of `passes` forward passes shaped like d."""
    return passes * forward_flops(d) / (FLOPS_PER_THREAD * max(1, torch.get_num_threads()))


def sweep_seconds(d: Dims, rows: int, extra_passes: float = 0.0) -> float:
    """A sweep of `rows` copies run d.batch at a time, plus `extra_passes` single passes."""
    one = replace(d, batch=1)
    return seconds(d, math.ceil(rows / max(1, d.batch))) + seconds(one, extra_passes)


def asks_first(estimated: float) -> bool:
    return estimated > ASK_SECONDS
