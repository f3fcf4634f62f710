"""Positional terms: the paper's sinusoidal table or a learned table.

Position numbering follows seed 000: real tokens are numbered 1, 2, 3, … and every pad slot gets
position 0, so row 0 of the table is the pad position. The model never attends to pad keys,
so whatever row 0 holds cannot change a real token's result.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from .config import ModelConfig


def sinusoid_table(n_pos: int, d_model: int) -> torch.Tensor:
    """PE[pos, 2i] = sin(pos / 10000^(2i/d)), PE[pos, 2i+1] = cos(same angle): (n_pos, d)."""
    table = torch.empty(n_pos, d_model, dtype=torch.float64)
    if table.is_meta:  # shapes only: arange on meta imports torch._dynamo (normal_embedding)
        return table.float()
    pos = torch.arange(n_pos, dtype=torch.float64).unsqueeze(1)  # (P, 1)
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)  # (d/2,)
    angle = pos / torch.pow(10000.0, two_i / d_model)  # (P, d/2)
    table[:, 0::2] = torch.sin(angle)
    table[:, 1::2] = torch.cos(angle)
    return table.float()


def position_ids(ids: torch.Tensor, pad_id: int) -> torch.Tensor:
    """(B, n) ids -> (B, n) positions 1..n for tokens, 0 for pad (seed 000's convention)."""
    n = ids.size(1)
    pos = torch.arange(1, n + 1, device=ids.device, dtype=torch.long).expand_as(ids)
    return pos.masked_fill(ids.eq(pad_id), 0)


def normal_embedding(rows: int, dim: int, std: float,
                     padding_idx: int | None = None) -> nn.Embedding:
    """An embedding table drawn from N(0, std²), its padding row zero.

    On the meta device (load_native's shape check) nothing is drawn: normal_ on a meta tensor
    goes through torch._refs, which imports torch._dynamo and sympy, ~70 MB a server kept for
    nothing. Otherwise the table is drawn twice, N(0, 1) and then N(0, std²), as nn.Embedding's
    own init followed by ours did, so a seed still gives the weights it gave before.
    """
    weight = torch.empty(rows, dim)
    if not weight.is_meta:
        with torch.no_grad():
            weight.normal_()
            weight.normal_(0.0, std)
            if padding_idx is not None:
                weight[padding_idx] = 0
    return nn.Embedding(rows, dim, padding_idx=padding_idx, _weight=weight)


class PositionalEncoding(nn.Module):
    """Lookup of position ids in a fixed sinusoidal or a learned table."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.kind = cfg.pos_encoding
        if self.kind == "sinusoidal":
            # not persistent: the table is a formula, not a weight to ship
            self.register_buffer("table", sinusoid_table(cfg.max_len, cfg.d_model),
                                 persistent=False)
            self.learned = None
        else:
            self.learned = normal_embedding(cfg.max_len, cfg.d_model, 1.0 / math.sqrt(cfg.d_model))

    def weight(self) -> torch.Tensor:
        """The whole table, (max_len, D)."""
        return self.table if self.learned is None else self.learned.weight

    def forward(self, positions: torch.Tensor) -> torch.Tensor:
        """(B, n) position ids -> (B, n, D)."""
        return nn.functional.embedding(positions, self.weight())
