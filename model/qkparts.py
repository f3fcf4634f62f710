"""The linear algebra of a query–key decomposition (model.analysis.qkterms): a residual split
into parts that add up to it, a LayerNorm frozen at the whole residual's scale, an affine map
applied part by part, and the named sums of products. Each backend's qk_terms builds its parts
with these.

Shape legend: D model size, Dh head size.
"""

from __future__ import annotations

import numpy as np
import torch

BANDS = 8  # frequency bands a rotary head's score is split into (fewer if Dh is small)
Parts = dict[str, np.ndarray]


def split_parts(x: np.ndarray, tok: np.ndarray, pos: np.ndarray) -> Parts:
    """token, position and what earlier layers wrote (x − token − position), the last left
    out where it is only float32 rounding (layer 0 reads the embedding sum itself)."""
    x = x.astype(np.float64)
    parts = {"token": tok.astype(np.float64), "position": pos.astype(np.float64)}
    rest = x - parts["token"] - parts["position"]
    if np.abs(rest).max() > 1e-5 * max(np.abs(x).max(), 1e-12):
        parts["layers"] = rest
    return parts


def frozen_parts(parts: Parts, ln: torch.nn.Module) -> Parts:
    """LayerNorm with its scale frozen at the whole residual's: each part centred and scaled,
    β added to the bias part."""
    x = sum(parts.values())
    sigma = np.sqrt(x.var() + float(ln.eps))
    gamma = ln.weight.detach().double().cpu().numpy()
    out = {p: (v - v.mean()) * gamma / sigma for p, v in parts.items()}
    if getattr(ln, "bias", None) is not None:
        out["bias"] = out.get("bias", 0.0) + ln.bias.detach().double().cpu().numpy()
    return out


def project_parts(parts: Parts, fn) -> Parts:
    """An affine map f(x) = A·x + b applied part by part: A·p each, b to the bias part."""
    def f(v: np.ndarray) -> np.ndarray:
        with torch.inference_mode():
            t = torch.as_tensor(np.asarray(v), dtype=torch.float64)
            return fn(t).double().cpu().numpy()

    zero = f(np.zeros_like(next(iter(parts.values()))))
    out = {p: f(v) - zero for p, v in parts.items()}
    out["bias"] = out.get("bias", 0.0) + zero
    return out


def products(q: Parts, k: Parts, scale: float) -> dict[str, float]:
    """The named sums of scale · q_a·k_b over every pair of parts (model/analysis/qkterms.py)."""
    def dot(a: str, b: str) -> float:
        if a not in q or b not in k:
            return 0.0
        return float(np.dot(q[a], k[b]) * scale)

    emb = ("token", "position")
    terms = {"token·token": dot("token", "token"), "token·position": dot("token", "position"),
             "position·token": dot("position", "token"),
             "position·position": dot("position", "position")}
    if np.any(q.get("layers", 0.0)) or np.any(k.get("layers", 0.0)):
        terms["layers·embedding"] = sum(dot("layers", b) for b in emb)
        terms["embedding·layers"] = sum(dot(a, "layers") for a in emb)
        terms["layers·layers"] = dot("layers", "layers")
    terms["bias"] = sum(dot(a, "bias") for a in q) + sum(dot("bias", b) for b in k
                                                         if b != "bias")
    return {name: float(v) for name, v in terms.items()}
