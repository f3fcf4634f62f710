"""Token types for sentence pairs on BERT-style encoders (model/segments.py has the rule).

transformers fills token types with 0 when a call passes none, so a pair typed as one line
"A [SEP] B" would run as one sentence. A pre-hook on the embeddings module, installed once at
load, types the segments from the call's own input ids whenever the caller gave none: every
forward of the lab (capture, embed, knock-outs, patching, the tour) then reads a pair as BERT
was trained to. It reads nothing but its arguments, so concurrent sessions cannot see each
other's inputs (the reason hooks are otherwise added per run, inside a context manager).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ...segments import token_types

TABLE = "token_type_embeddings"


def segment_table(model: Any) -> tuple[str, Any] | None:
    """(module name, module) holding a token-type table of at least two rows, or None."""
    for name, module in model.named_modules():
        table = getattr(module, TABLE, None)
        if table is not None and getattr(table, "num_embeddings", 0) >= 2:
            return name, module
    return None


def type_segments(model: Any, sep_id: int | None, pad_id: int | None) -> bool:
    """Install the pre-hook (once) where the model has a two-row token-type table and the
    tokenizer a separator; returns whether pairs are typed."""
    found = segment_table(model)
    if found is None or sep_id is None:
        return False
    _name, module = found
    if getattr(module, "_lab_segments", False):
        return True

    def fill(mod: Any, args: tuple, kwargs: dict) -> tuple[tuple, dict] | None:
        if kwargs.get("token_type_ids") is not None:
            return None  # the caller typed them itself
        ids = kwargs.get("input_ids", args[0] if args else None)
        if ids is None:
            return None  # embeddings given directly: nothing to read the segments from
        return args, {**kwargs, "token_type_ids": token_types(ids, sep_id, pad_id)}

    module.register_forward_pre_hook(fill, with_kwargs=True)
    module._lab_segments = True
    return True


def row_types(bundle: Any, ids: Any) -> np.ndarray:
    """int64 (n,) token types of one row of ids as the pre-hook gives them (all 0 where the
    model types no pairs): for analyses that rebuild the embedding sum from the tables."""
    ids = torch.as_tensor(np.asarray(ids, dtype=np.int64))
    sep = getattr(bundle.tokenizer, "sep_token_id", None)
    if segment_table(bundle.model) is None or sep is None:
        return np.zeros(ids.shape, np.int64)
    return token_types(ids[None], sep, bundle.config.pad_id)[0].numpy()
