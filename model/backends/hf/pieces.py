"""Pieces for the ids a model outputs, which may lie past the end of its tokenizer.

A model's output can be wider than its tokenizer: vocabularies padded to a round size, or a
random GPT-2-small shape (50,257 rows) over a short word list. transformers'
convert_ids_to_tokens answers None for such an id, which the generation, KV-cache and
contribution pages showed as 'None'; they are named "[id i]" instead (model.analysis.lens
names them the same way).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def piece_names(tok: Any, ids: Sequence[int]) -> list[str]:
    """The tokenizer's piece for each id, or "[id i]" where the tokenizer has none."""
    ids = [int(i) for i in ids]
    names = tok.convert_ids_to_tokens(ids) if ids else []
    return [f"[id {i}]" if p is None else str(p) for i, p in zip(ids, names, strict=True)]
