"""Per-head W_Q, W_K, W_V, W_O of a Hugging Face model's attention, for circuit analyses
(model/analysis/composition.py), read straight from the parameters, float64.

Shape legend: D model size, H query heads, G key/value heads, Dh head size.

Each layout's projections, found from the output projection (projections.py) upwards:

    GPT-2             attn.c_attn (Conv1D, Q|K|V side by side), pre-LN ln_1
    Llama/Mistral/Qwen/Gemma   self_attn.{q,k,v}_proj (G ≤ H key/value heads), pre-RMSNorm
                      input_layernorm (Gemma's scales by 1 + w)
    BERT/RoBERTa      attention.self.{query,key,value}, post-LN: no norm before the head
    DistilBERT        attention.{q,k,v}_lin, post-LN
    BART/Marian       {self_attn,encoder_attn}.{q,k,v}_proj, post-LN
    T5                layer.<j>.{SelfAttention,EncDecAttention}.{q,k,v}, pre-RMSNorm layer_norm;
                      the cross keys and values read encoder.final_layer_norm's output

Grouped key/value heads are repeated per query head (query head h reads kv head h // (H/G),
as transformers' repeat_kv does). Biases come separately
(b_Q, b_K, b_V per head, b_O); composition scores ignore them.
"""

from __future__ import annotations

import numpy as np
import torch

from .capabilities import hf_capabilities
from .projections import projection_modules, projection_weight

# attribute names of the query, key and value projections, per layout
_QKV = (("q_proj", "k_proj", "v_proj"), ("query", "key", "value"), ("q", "k", "v"),
        ("q_lin", "k_lin", "v_lin"))


def _out(module: torch.nn.Module) -> np.ndarray:
    """(in, out) float64: the x @ W form of a Linear or Conv1D's weight."""
    return projection_weight(module)[0].astype(np.float64).T


def _bias(module: torch.nn.Module, width: int) -> np.ndarray:
    """(out,) float64 bias of a Linear or Conv1D, zeros where it has none."""
    b = projection_weight(module)[1]
    return np.zeros(width) if b is None else b.astype(np.float64)


def attention_of(model: torch.nn.Module, o_proj: torch.nn.Module) -> tuple[str, torch.nn.Module]:
    """(path, module) holding the query/key/value projections that feed `o_proj`."""
    named = dict(model.named_modules())
    path = next(n for n, m in named.items() if m is o_proj)
    while "." in path:
        path = path.rsplit(".", 1)[0]
        module = named[path]
        if hasattr(module, "c_attn") or any(all(hasattr(module, a) for a in names)
                                            for names in _QKV):
            return path, module
        inner = getattr(module, "self", None)  # BERT: attention.self.{query,key,value}
        if inner is not None and all(hasattr(inner, a) for a in _QKV[1]):
            return path, inner
    raise ValueError("no query/key/value projections found beside the output projection")


def _qkv(attn: torch.nn.Module, d_model: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """[(W (D, n·Dh), b (n·Dh,)) of Q, K, V] of one attention module, x @ W + b form."""
    if getattr(attn, "q_norm", None) is not None or getattr(attn, "k_norm", None) is not None:
        raise ValueError("per-head query/key norms (Qwen3, OLMo-2) are not linear: no W_QK")
    if hasattr(attn, "c_attn"):
        w, b = _out(attn.c_attn), _bias(attn.c_attn, 3 * d_model)  # Q | K | V side by side
        return [(w[:, i * d_model:(i + 1) * d_model], b[i * d_model:(i + 1) * d_model])
                for i in range(3)]
    names = next(n for n in _QKV if all(hasattr(attn, a) for a in n))
    mods = [getattr(attn, a) for a in names]
    return [(_out(m), _bias(m, _out(m).shape[1])) for m in mods]


def _gamma(norm: torch.nn.Module) -> np.ndarray:
    w = norm.weight.detach().double().cpu().numpy()
    return 1.0 + w if type(norm).__name__.startswith("Gemma") else w  # Gemma: x·(1 + w)


def pre_norm(model: torch.nn.Module, path: str) -> torch.nn.Module:
    """The norm a pre-norm block applies before the attention at `path` (GPT-2 ln_1, Llama
    input_layernorm, T5 layer_norm); ValueError where none is found."""
    parent = model.get_submodule(path.rsplit(".", 1)[0])
    for attr in ("ln_1", "input_layernorm", "layer_norm"):
        norm = getattr(parent, attr, None)
        if isinstance(norm, torch.nn.Module):
            return norm
    raise ValueError(f"no pre-norm found beside {path}: its norms cannot be folded")


def _norms(model, path: str, kind: str) -> dict:
    """γ of the pre-norm each side reads through, and whether it removes the mean (LayerNorm;
    RMSNorm does not)."""
    norm = pre_norm(model, path)
    q = _gamma(norm)
    kv = q
    if kind == "cross":
        final = next((m for n, m in model.named_modules()
                      if n.endswith("encoder.final_layer_norm")), None)
        if final is None:
            raise ValueError("the encoder's final norm (what cross keys read) was not found")
        kv = _gamma(final)
    return {"norm_q": q, "norm_k": kv, "norm_v": kv,
            "centred": isinstance(norm, torch.nn.LayerNorm)}


def circuit_weights(bundle, kind: str, layer: int) -> dict:
    """Backend.circuit_weights for a Hugging Face bundle (see base.py)."""
    cfg, model = bundle.config, bundle.model
    if kind not in bundle.kinds:
        raise ValueError(f"no attention kind {kind!r} here; this model has {bundle.kinds}")
    if not 0 <= layer < bundle.n_layers(kind):
        raise ValueError(f"{kind} has layers 0..{bundle.n_layers(kind) - 1}, not {layer}")
    mods = projection_modules(model, cfg.family).get(kind)
    if not mods or len(mods) != bundle.n_layers(kind):
        raise ValueError(f"no per-head weights for this model's {kind} attention layout")
    path, attn = attention_of(model, mods[layer])
    w_o = _out(mods[layer])  # (H·Dh, D)
    d, n_heads = w_o.shape[1], cfg.n_heads
    (w_q, b_q), (w_k, b_k), (w_v, b_v) = _qkv(attn, d)
    dh = w_q.shape[1] // n_heads
    n_kv = w_k.shape[1] // dh
    if w_q.shape[1] != n_heads * dh or w_k.shape[1] != n_kv * dh or n_heads % n_kv:
        raise ValueError(f"{kind} layer {layer}: projections of widths {w_q.shape[1]}, "
                         f"{w_k.shape[1]} do not split into {n_heads} heads")
    kv_of = np.arange(n_heads) // (n_heads // n_kv)

    def heads(w: np.ndarray, idx) -> np.ndarray:  # (D, n·Dh) -> (H, D, Dh)
        return w.reshape(d, -1, dh).transpose(1, 0, 2)[idx].copy()

    out = {"W_Q": heads(w_q, np.arange(n_heads)), "W_K": heads(w_k, kv_of),
           "W_V": heads(w_v, kv_of), "W_O": w_o.reshape(n_heads, dh, d).copy(),
           "b_Q": b_q.reshape(n_heads, dh), "b_K": b_k.reshape(-1, dh)[kv_of],
           "b_V": b_v.reshape(-1, dh)[kv_of], "b_O": _bias(mods[layer], d),
           "kv_groups": kv_of}
    if hf_capabilities(bundle).norm == "post":  # the norm sits after the residual add
        out.update(norm_q=None, norm_k=None, norm_v=None, centred=False)
    else:
        out.update(_norms(model, path, kind))
    return out
