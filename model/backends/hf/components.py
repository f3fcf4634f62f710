"""One head's query and key on a Hugging Face decoder-only pre-norm model (GPT-2, Llama,
Mistral, Qwen2…) split by upstream component (issue 37).

The residual at a position before block l is the embedding (GPT-2: token + position rows;
rotary models: the token row only) plus, per earlier block i, each head's output (its
context, from the recorded attention and values, · W_O^h), the output bias b_O ("bias") and
the MLP's output, "MLP i" = hidden[i+1] − hidden[i] − the attention's output (the recorded
hidden states; pre-norm blocks add both to the stream). The block's norm is frozen at the
whole residual's scale (LayerNorm: model/qkparts.frozen_parts; RMSNorm: x·γ/rms(x)), the
head's W_Q/W_K and biases applied part by part, and rotary models rotate every part by its own
position with the model's own cos/sin.

Shape legend: D model size, Dh head size, H heads, G key/value heads, n positions.
"""

from __future__ import annotations

import numpy as np
import torch

from ...capture import Trace
from ...qkparts import Parts, frozen_parts, project_parts
from .circuits import attention_of, circuit_weights, pre_norm
from .projections import projection_modules

NEEDS = ("attn", "v", "hidden")


def _frozen_rms(parts: Parts, norm: torch.nn.Module) -> Parts:
    """RMSNorm frozen at the whole residual's scale: each part · γ / rms(x)."""
    x = sum(parts.values())
    eps = float(getattr(norm, "variance_epsilon", getattr(norm, "eps", 1e-6)))
    gamma = norm.weight.detach().double().cpu().numpy()
    if type(norm).__name__.startswith("Gemma"):
        gamma = 1.0 + gamma
    rms = np.sqrt(np.mean(x * x) + eps)
    return {p: v * gamma / rms for p, v in parts.items()}


def _recorded(backend, trace: Trace, batch: int) -> tuple[Trace, int]:
    """The trace itself when it holds attn, v and hidden, else a capture of that sentence."""
    if "dec_self" in trace.attn and "dec_self" in trace.v and "dec" in trace.hidden:
        return trace, batch
    again = backend.record(backend.encode([trace.sources[batch]]), list(NEEDS), trace.ablate)
    return again, 0


def _rotate(parts: Parts, model: torch.nn.Module, position: int) -> Parts:
    """Each part rotated as the model rotates q and k at `position` (rotate-half layout)."""
    rot = next(m for n, m in model.named_modules() if n.endswith("rotary_emb"))
    dh = len(next(iter(parts.values())))
    with torch.inference_mode():
        cos, sin = rot(torch.zeros(1, 1, dh), torch.tensor([[position]]))
    cos, sin = cos[0, 0].double().numpy(), sin[0, 0].double().numpy()
    half = dh // 2

    def one(v: np.ndarray) -> np.ndarray:
        return v * cos + np.concatenate([-v[half:], v[:half]]) * sin

    return {p: one(v) for p, v in parts.items()}


def qk_parts(backend, trace: Trace, kind: str, layer: int, head: int, query: int, key: int,
             batch: int) -> tuple[Parts, Parts, float]:
    """Backend.qk_parts for a Hugging Face decoder-only pre-norm model (see base.py)."""
    bundle = backend.bundle
    model, caps = bundle.model, backend.caps
    if caps.family != "decoder" or caps.norm != "pre":
        raise ValueError("component parts cover decoder-only pre-norm Hugging Face models")
    if caps.positional not in ("learned", "rotary"):
        raise ValueError(f"no component split for {caps.positional!r} positions")
    rec, row = _recorded(backend, trace, batch)
    hidden = rec.hidden["dec"][:, row].astype(np.float64)  # (L+1, n, D)
    positions = np.asarray(rec.positions["dec"][row])
    # padding is recorded as -1; the model ran pads at their index (+ the table's offset)
    positions = np.where(positions >= 0, positions,
                         np.arange(len(positions)) + max(int(positions[0]), 0))
    wpe = next((m for n, m in model.named_modules() if n.endswith("wpe")), None)
    table = None if wpe is None else wpe.weight.detach().double().cpu().numpy()
    weights = [circuit_weights(bundle, kind, i) for i in range(layer + 1)]
    ablate = set(trace.ablate or ())
    kv = rec.kv_groups if rec.kv_groups is not None else np.arange(bundle.config.n_heads)

    def stream(p: int) -> Parts:
        # the recorded input of block 0 less the position row: the token row as the model
        # scales it (Gemma multiplies by √D)
        parts: Parts = {"embedding": hidden[0, p]}
        if table is not None:
            parts["position"] = table[positions[p]]
            parts["embedding"] = hidden[0, p] - parts["position"]
        for i in range(layer):
            w = weights[i]
            attn = rec.attn[kind][i, row, :, p].astype(np.float64)  # (H, n)
            v = rec.v[kind][i, row].astype(np.float64)  # (G, n, Dh)
            total = w["b_O"].copy()
            for h in range(len(attn)):
                out = (attn[h] @ v[kv[h]]) @ w["W_O"][h]
                if (kind, i, h) in ablate:
                    out = np.zeros_like(out)
                parts[f"L{i}H{h}"] = out
                total = total + out
            parts["bias"] = parts.get("bias", 0.0) + w["b_O"]
            parts[f"MLP {i}"] = hidden[i + 1, p] - hidden[i, p] - total
        return parts

    path, attn_mod = attention_of(model, projection_modules(model, caps.family)[kind][layer])
    norm = pre_norm(model, path)
    freeze = frozen_parts if isinstance(norm, torch.nn.LayerNorm) else _frozen_rms
    w = weights[layer]
    wq, bq = torch.from_numpy(w["W_Q"][head]), torch.from_numpy(w["b_Q"][head])
    wk, bk = torch.from_numpy(w["W_K"][head]), torch.from_numpy(w["b_K"][head])
    q = project_parts(freeze(stream(query), norm), lambda t: t @ wq + bq)
    k = project_parts(freeze(stream(key), norm), lambda t: t @ wk + bk)
    if caps.positional == "rotary":
        q, k = _rotate(q, model, int(positions[query])), _rotate(k, model, int(positions[key]))
    scale = float(getattr(attn_mod, "scaling", w["W_Q"].shape[2] ** -0.5))
    return q, k, scale
