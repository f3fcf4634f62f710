"""The rows an embedding lookup reads (the tour's step 3 on a model whose recorder keeps no
embedding hook): one row of the input embedding table per id, as float32 numpy.

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
