"""Token types (segments) of a sentence pair, read off the pieces themselves.

BERT encodes a pair "A [SEP] B" as [CLS] A [SEP] B [SEP] with token type 0 for [CLS], A and
the first [SEP] and 1 for B and its [SEP] (Devlin et al. 2019, §3; Clark et al. 2019 analyse
such pairs). The same ids come from one typed line "A [SEP] B" (the tokenizer reads the
separator written out), so the lab types its segments by rule instead of carrying a second
array through every run: 0 through the first separator, 1 after it, 0 for padding. A line
without a separator inside is all 0, as the tokenizer gives a single sentence.

Shape legend: B rows, n positions.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch


def token_types(ids: torch.Tensor, sep_id: int, pad_id: int | None) -> torch.Tensor:
    """int64 (B, n) token types of (B, n) ids: 1 after the first separator, else 0."""
    sep = (ids == sep_id).long()
    before = sep.cumsum(-1) - sep  # separators strictly before each position
    types = (before > 0).long()
    if pad_id is not None and pad_id != sep_id:
        types = types.masked_fill(ids == pad_id, 0)
    return types


def piece_types(pieces: Sequence[str], separator: str) -> list[int]:
    """The same rule on one row of pieces (unpadded): what token_types gives its ids."""
    out, seen = [], False
    for piece in pieces:
        out.append(int(seen))
        seen = seen or piece == separator
    return out


def is_pair(pieces: Sequence[str], separator: str) -> bool:
    """Whether a row holds a second segment (a separator before its last piece)."""
    return any(p == separator for p in pieces[:-1])
