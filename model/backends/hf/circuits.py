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
as transformers' repeat_kv does). Biases are not returned.
"""

from __future__ import annotations

import numpy as np
import torch

from .projections import projection_modules, projection_weight

# attribute names of the query, key and value projections, per layout
_QKV = (("q_proj", "k_proj", "v_proj"), ("query", "key", "value"), ("q", "k", "v"),
        ("q_lin", "k_lin", "v_lin"))
_POST_LN = {"bert", "roberta", "distilbert", "marian", "bart", "electra"}


def _out(module: torch.nn.Module) -> np.ndarray:
    """(in, out) float64: the x @ W form of a Linear or Conv1D's weight."""
    return projection_weight(module)[0].astype(np.float64).T


def _attention(model: torch.nn.Module, o_proj: torch.nn.Module) -> tuple[str, torch.nn.Module]:
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


def _qkv(attn: torch.nn.Module, d_model: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """W_Q (D, H·Dh), W_K, W_V (D, G·Dh) of one attention module, x @ W form."""
    if getattr(attn, "q_norm", None) is not None or getattr(attn, "k_norm", None) is not None:
        raise ValueError("per-head query/key norms (Qwen3, OLMo-2) are not linear: no W_QK")
    if hasattr(attn, "c_attn"):
        w = _out(attn.c_attn)  # (D, 3D): Q | K | V
        return w[:, :d_model], w[:, d_model:2 * d_model], w[:, 2 * d_model:]
    names = next(n for n in _QKV if all(hasattr(attn, a) for a in n))
    q, k, v = (_out(getattr(attn, a)) for a in names)
    return q, k, v


def _gamma(norm: torch.nn.Module) -> np.ndarray:
    w = norm.weight.detach().double().cpu().numpy()
    return 1.0 + w if type(norm).__name__.startswith("Gemma") else w  # Gemma: x·(1 + w)


def _norms(model, path: str, kind: str) -> dict:
    """γ of the pre-norm each side reads through, and whether it removes the mean (LayerNorm;
    RMSNorm does not)."""
    named = dict(model.named_modules())
    parent = named[path.rsplit(".", 1)[0]]
    norm = None
    for attr in ("ln_1", "input_layernorm", "layer_norm"):  # GPT-2, Llama-like, T5
        if isinstance(getattr(parent, attr, None), torch.nn.Module):
            norm = getattr(parent, attr)
            break
    if norm is None:
        raise ValueError(f"no pre-norm found beside {path}: its norms cannot be folded")
    q = _gamma(norm)
    kv = q
    if kind == "cross":
        final = next((m for n, m in named.items() if n.endswith("encoder.final_layer_norm")),
                     None)
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
    path, attn = _attention(model, mods[layer])
    w_o = _out(mods[layer])  # (H·Dh, D)
    d, n_heads = w_o.shape[1], cfg.n_heads
    w_q, w_k, w_v = _qkv(attn, d)
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
           "kv_groups": kv_of}
    if cfg.model_type in _POST_LN:
        out.update(norm_q=None, norm_k=None, norm_v=None, centred=False)
    else:
        out.update(_norms(model, path, kind))
    return out
