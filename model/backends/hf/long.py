"""Long mode inside transformers: the lab's registered attention function diverted per context.

Shape legend: H query heads, G key/value heads, n tokens, Dh head size.

The model is loaded with the lab's attention function (recorder.py, registered through
transformers' AttentionInterface as "lab_record"). While `long_forward` runs, a ContextVar
(recorder.DIVERT) sends that function's calls here, in this thread only: the mask function
registered beside it returns no mask at all (a 32,768² eager mask would be 4 GB), and each
attention call runs model/long/attend.py chunk by chunk, with the causal rule and sliding
window read from the module and the keywords the family passes. Other sessions sharing the
model keep the ordinary recorder.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import nn

from ...batch import Batch
from ...checkpoint import Bundle
from ...long.attend import Rule, attend
from ...long.trace import LongRecorder, LongTrace
from .recorder import DIVERT, site_of, sites


def _attention(recorder: LongRecorder):
    def fn(module: nn.Module, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
           attention_mask: torch.Tensor | None, scaling: float | None = None,
           dropout: float = 0.0, position_bias: torch.Tensor | None = None,
           softcap: float | None = None, sliding_window: int | None = None,
           **kwargs: Any) -> tuple[torch.Tensor, None]:
        """query (1, H, n, Dh), key/value (1, G, n, Dh) -> context (1, n, H, Dh), None."""
        if position_bias is not None:
            raise ValueError("long mode does not compute relative position biases")
        site = site_of(module)
        rule = Rule(scaling=scaling if scaling is not None else query.size(-1) ** -0.5,
                    causal=bool(getattr(module, "is_causal", True)),
                    window=sliding_window, softcap=softcap)
        q, k, v = (t[0].float() for t in (query, key, value))
        reducer = recorder.layer(site.kind, site.layer, q, k, rule) if site else None
        context = attend(q, k, v, rule, reducer)  # (H, n, Dh), a view of (n, H, Dh)
        # contiguous already (attend's layout) for float32 models: no copy
        return context.to(value.dtype).transpose(0, 1).unsqueeze(0).contiguous(), None

    return fn


def specials(bundle: Bundle, ids: list[int]) -> np.ndarray:
    """bool (n,): positions holding one of the tokenizer's special tokens."""
    special = set(getattr(bundle.tokenizer, "all_special_ids", []) or [])
    return np.array([i in special for i in ids], dtype=bool)


def long_forward(bundle: Bundle, batch: Batch, pixels: int, qk_dtype: str,
                 qk_store: str = "memory") -> LongTrace:
    """One forward of the first line in long mode; the LongTrace of its self-attention."""
    model, family = bundle.model, bundle.config.family
    found = sites(model, family)
    if found is None:
        raise ValueError("this model's attention does not run through the lab's recorder")
    ids = list(batch.src_lists[0])
    recorder = LongRecorder(len(ids), pixels, specials(bundle, ids), qk_dtype, qk_store)
    device = next(model.parameters()).device
    inputs: dict[str, Any] = {"input_ids": torch.tensor([ids], device=device)}
    if family == "decoder":
        inputs.update(use_cache=False, logits_to_keep=1)  # one logit row: (n, V) is not needed
    token = DIVERT.set(_attention(recorder))
    try:
        with torch.inference_mode():
            model(**inputs)
    finally:
        DIVERT.reset(token)
    return recorder.finish(list(batch.pieces[0]), np.asarray(ids, dtype=np.int64),
                           found.kv_groups)
