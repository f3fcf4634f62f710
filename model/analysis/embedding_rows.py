"""The rows an embedding lookup reads (the tour's step 3 on a model whose recorder keeps no
embedding hook): one row of the input embedding table per id, and on a model with token
types (BERT) one row of its token-type table per piece, as float32 numpy.

Any model that offers transformers' get_input_embeddings() (every Hugging Face model) is read
through it; the lab's own models record the lookup as a hook and need no helper (None).
"""

from __future__ import annotations

import numpy as np
import torch


def token_rows(bundle, ids: np.ndarray) -> np.ndarray | None:
    """(n, D) float32: the input embedding table's row of each id (n,), before positions,
    token types or any norm are added; None where the model offers no input embedding."""
    get = getattr(bundle.model, "get_input_embeddings", None)
    table = get() if callable(get) else None
    weight = getattr(table, "weight", None)
    if not isinstance(weight, torch.Tensor) or weight.ndim != 2:
        return None
    ids = np.asarray(ids, dtype=np.int64).reshape(-1)
    if ids.size and (ids.min() < 0 or ids.max() >= weight.shape[0]):
        raise ValueError(f"ids must be in 0..{weight.shape[0] - 1}")
    with torch.inference_mode():  # only the rows asked for: a 30,522-row table stays put
        return weight[torch.from_numpy(ids.copy())].detach().float().cpu().numpy()


def type_rows(bundle, types: np.ndarray) -> np.ndarray | None:
    """(n, D) float32: the token-type (segment) table's row of each type (n,) — 0 for A, 1
    for B of a pair — read from the model's own weights; None where the model has no table
    of at least two rows (GPT-2, the lab's models; RoBERTa's single row is no segment)."""
    table = next((t for m in bundle.model.modules()
                  if (t := getattr(m, "token_type_embeddings", None)) is not None
                  and getattr(t, "num_embeddings", 0) >= 2), None)
    if table is None:
        return None
    types = np.asarray(types, dtype=np.int64).reshape(-1)
    if types.size and (types.min() < 0 or types.max() >= table.num_embeddings):
        raise ValueError(f"token types must be in 0..{table.num_embeddings - 1}")
    with torch.inference_mode():
        return table.weight[torch.from_numpy(types.copy())].detach().float().cpu().numpy()
