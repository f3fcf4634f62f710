"""Long mode on the lab's own Transformer, through its hook points.

Shape legend: H heads, n tokens (at most the model's max_len), Dh head size.

The lab's attention (transformer.py here) computes each layer's (1, H, n, n) probabilities
itself; its positions are bounded by max_len (520 for the shipped translators), so one layer's
matrix is small. The hooks read the queries and keys (`hook_q`, `hook_k`), each query's
log-sum-exp from the masked scores (`hook_masked`) and the probabilities (`hook_probs`), and
hand the probabilities to the layer's reducer chunk by chunk; nothing is kept past the layer.
A translator's long text is its source: encoder self-attention; a decoder-only lab model's is
its own text: decoder self-attention.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from ...batch import Batch
from ...checkpoint import Bundle
from ...hooks import attn_prefix, hooks
from ...long.attend import Rule, chunk_size
from ...long.trace import LongRecorder, LongTrace
from ...specials import is_special


def long_forward(bundle: Bundle, batch: Batch, pixels: int, qk_dtype: str,
                 qk_store: str = "memory") -> LongTrace:
    """One forward of the first line; the LongTrace of its self-attention."""
    model, cfg = bundle.model, bundle.config
    encoder = model.encoder is not None
    kind = "enc_self" if encoder else "dec_self"
    ids = list(batch.src_lists[0] if encoder else batch.tgt_lists[0])
    pieces = bundle.tokenizer.ids_to_pieces(ids)
    n = len(ids)
    recorder = LongRecorder(n, pixels, np.array([is_special(p) for p in pieces]), qk_dtype,
                            qk_store)
    rule = Rule(scaling=1.0 / math.sqrt(cfg.d_model // cfg.n_heads), causal=not encoder)
    layers = cfg.n_enc_layers if encoder else cfg.n_dec_layers
    seen: dict[str, torch.Tensor] = {}
    fns = {}
    for layer in range(layers):
        prefix = attn_prefix(kind, layer)

        def keep(x: torch.Tensor, name: str) -> None:
            seen[name.rsplit(".", 1)[1]] = x[0]

        def lse(x: torch.Tensor, name: str, layer: int = layer) -> None:
            red = recorder.layer(kind, layer, seen.pop("hook_q"), seen.pop("hook_k"), rule)
            seen["lse"] = torch.logsumexp(x[0], -1)  # (H, n)
            seen["scores"] = x[0]
            seen["reducer"] = red

        def reduce(x: torch.Tensor, name: str) -> None:
            red, whole, scores = seen.pop("reducer"), seen.pop("lse"), seen.pop("scores")
            step = chunk_size(x.size(1), n)
            for q0 in range(0, n, step):
                q1 = min(n, q0 + step)
                red.add(x[0, :, q0:q1].contiguous(), scores[:, q0:q1].contiguous(),
                        whole[:, q0:q1], q0, 0, rule.causal)

        fns.update({f"{prefix}.hook_q": keep, f"{prefix}.hook_k": keep,
                    f"{prefix}.hook_masked": lse, f"{prefix}.hook_probs": reduce})
    t = torch.tensor([ids])
    with torch.inference_mode(), hooks(fns):
        model.encode(t) if encoder else model.decode(t)
    return recorder.finish(pieces, np.asarray(ids, dtype=np.int64),
                           np.arange(cfg.n_heads, dtype=np.int64))
