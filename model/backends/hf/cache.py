"""A Hugging Face model's own key/value cache, read without changing it.

transformers 5 keeps a `DynamicCache` whose `layers[i]` hold `keys` and `values` of shape
(B, Hkv, P, Dh); older versions kept `key_cache`/`value_cache` lists, and older still a tuple
of (k, v) pairs. The bytes are those of the tensors themselves, in their own dtype: what the
cache costs, not what the lab records about it.
"""

from __future__ import annotations

from typing import Any

import torch


def layer_tensors(past: Any) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """(keys, values) per layer, each (B, Hkv, P, Dh), from any of transformers' cache forms."""
    layers = getattr(past, "layers", None)
    if layers is not None:
        return [(layer.keys, layer.values) for layer in layers]
    keys = getattr(past, "key_cache", None)
    if keys is not None:
        return list(zip(keys, past.value_cache, strict=True))
    return [(k, v) for k, v in past]


def cache_bytes(past: Any) -> list[int]:
    """Bytes per layer of the cached keys and values (numel · itemsize, both tensors)."""
    return [k.numel() * k.element_size() + v.numel() * v.element_size()
            for k, v in layer_tensors(past)]


def cache_length(past: Any) -> int:
    """Positions held (the first layer's; every layer holds the same in a full cache)."""
    pairs = layer_tensors(past)
    return int(pairs[0][0].shape[-2]) if pairs else 0
