"""The rest of a Hugging Face layer beside its attention: the two norms and the FFN, read from
the parameters (float64), so the tour can compute steps 14 and 15 from the weights.

Each layout's block is found from its attention output projection (projections.py) up to the
stack's entry (the module path's deepest number that holds a layout: T5's attention sits one
level further down, in block.<i>.layer.0); inside it, by architecture:

    BERT/RoBERTa      attention.output.LayerNorm (post), intermediate.dense, its
                      intermediate_act_fn, output.dense, output.LayerNorm (post)
    DistilBERT        sa_layer_norm (post), ffn.lin1, ffn.activation, ffn.lin2,
                      output_layer_norm (post)
    GPT-2             ln_1 (pre, before attention), mlp.c_fc, mlp.act, mlp.c_proj, ln_2 (pre,
                      before the FFN)
    BART/Marian       self_attn_layer_norm, fc1, activation_fn, fc2, final_layer_norm (post or
                      pre, as the model's norm placement says)
    Llama/Mistral/    input_layernorm (RMS, pre), a gated FFN: mlp.gate_proj, mlp.act_fn,
    Qwen2/Gemma       mlp.up_proj, mlp.down_proj, down(act(gate(x)) · up(x));
                      post_attention_layernorm (RMS, pre: before the FFN, despite its name)
    T5 encoder        layer.0.layer_norm (T5LayerNorm: RMS, pre), layer.1.DenseReluDense: wi,
                      act, wo; or gated (feed_forward_proj "gated-gelu"): act(wi_0(x)) · wi_1(x),
                      then wo; layer.1.layer_norm (RMS, pre)

RMS norms have no β and remove no mean: x / √(mean(x²) + eps) · γ. Their γ is checked on a
probe against the module itself (Gemma's norm scales by 1 + weight); a norm that is neither
this nor nn.LayerNorm raises ValueError. So does a block holding a norm the walk would not
apply (a decoder layer's norm after cross-attention, Gemma 2's extra FFN norms) or an FFN of
another shape (Phi-3's fused gate_up_proj): the tour then says it cannot rebuild them.

Shape legend: D model width, F the FFN's width.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import torch

from .capabilities import hf_capabilities
from .projections import projection_modules, projection_weight


class Layout(NamedTuple):
    """Where a block keeps its parts, as attribute paths from the block."""

    ln_attn: str  # the norm after (post) or before (pre) the attention
    fc_in: str  # the FFN's first Linear (gated: the "up" one, not activated)
    act: str  # the activation module or function
    fc_out: str  # the FFN's last Linear
    ln_ffn: str  # the norm after (post) or before (pre) the FFN
    gate: str | None = None  # gated FFNs: the Linear the activation reads
    ffn: str | None = None  # the FFN as one module, run on a probe to check the rebuild


LAYOUTS = (
    Layout("attention.output.LayerNorm", "intermediate.dense",
           "intermediate.intermediate_act_fn", "output.dense", "output.LayerNorm"),
    Layout("sa_layer_norm", "ffn.lin1", "ffn.activation", "ffn.lin2", "output_layer_norm"),
    Layout("ln_1", "mlp.c_fc", "mlp.act", "mlp.c_proj", "ln_2"),
    Layout("self_attn_layer_norm", "fc1", "activation_fn", "fc2", "final_layer_norm"),
    Layout("input_layernorm", "mlp.up_proj", "mlp.act_fn", "mlp.down_proj",
           "post_attention_layernorm", gate="mlp.gate_proj", ffn="mlp"),
    Layout("layer.0.layer_norm", "layer.1.DenseReluDense.wi_1", "layer.1.DenseReluDense.act",
           "layer.1.DenseReluDense.wo", "layer.1.layer_norm",
           gate="layer.1.DenseReluDense.wi_0", ffn="layer.1.DenseReluDense"),
    Layout("layer.0.layer_norm", "layer.1.DenseReluDense.wi", "layer.1.DenseReluDense.act",
           "layer.1.DenseReluDense.wo", "layer.1.layer_norm", ffn="layer.1.DenseReluDense"),
)


def _attr(module: Any, path: str | None) -> Any:
    if path is None:
        return None
    for part in path.split("."):
        module = getattr(module, part, None)
        if module is None:
            return None
    return module


def _probe(width: int, dtype: torch.dtype) -> torch.Tensor:
    """(3, width) fixed numbers with a mean away from 0 (so LayerNorm and RMS norm differ)."""
    x = torch.randn(3, width, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    return (x * 2 + 0.5).to(dtype)


def _tolerance(dtype: torch.dtype) -> float:
    return 1e-4 if dtype in (torch.float32, torch.float64) else 3e-2


def _norm(module: Any) -> dict[str, Any]:
    """{"kind": "layer", gamma, beta, eps} for nn.LayerNorm; {"kind": "rms", gamma, eps} for
    an RMS norm whose output on a probe is x / √(mean(x²) + eps) · γ."""
    if isinstance(module, torch.nn.LayerNorm):
        gamma = module.weight.detach().double().cpu().numpy()
        beta = (module.bias.detach().double().cpu().numpy() if module.bias is not None
                else np.zeros_like(gamma))
        return {"kind": "layer", "gamma": gamma, "beta": beta, "eps": float(module.eps)}
    weight = getattr(module, "weight", None)
    eps = getattr(module, "variance_epsilon", getattr(module, "eps", None))
    if not isinstance(weight, torch.Tensor) or weight.ndim != 1 \
            or getattr(module, "bias", None) is not None:
        raise ValueError(f"{type(module).__name__} is neither a LayerNorm nor an RMS norm")
    if eps is None:  # torch.nn.RMSNorm's default: the dtype's machine epsilon
        eps = torch.finfo(weight.dtype).eps
    w = weight.detach().double().cpu().numpy()
    x = _probe(w.shape[0], weight.dtype)
    try:
        with torch.inference_mode():
            got = module(x).double().cpu().numpy()
    except (RuntimeError, TypeError) as exc:  # a norm that wants more than one tensor
        raise ValueError(f"{type(module).__name__} could not be run on a probe: {exc}") from exc
    x = x.double().numpy()
    scaled = x / np.sqrt((x ** 2).mean(-1, keepdims=True) + float(eps))
    for gamma in (w, 1.0 + w):  # Gemma keeps γ − 1 in its weight
        if np.allclose(scaled * gamma, got, rtol=_tolerance(weight.dtype),
                       atol=_tolerance(weight.dtype)):
            return {"kind": "rms", "gamma": gamma, "eps": float(eps)}
    raise ValueError(f"{type(module).__name__} does not compute x / √(mean(x²) + eps) · γ "
                     "(checked on a probe), so it is not rebuilt here")


def _linear(module: Any) -> tuple[np.ndarray, np.ndarray]:
    """(W (in, out), b (out,)) in the x @ W + b form, float64."""
    w, b = projection_weight(module)
    w = w.astype(np.float64).T
    return w, np.zeros(w.shape[1]) if b is None else b.astype(np.float64)


def _activation(fn: Any) -> Callable[[np.ndarray], np.ndarray]:
    """The model's own activation (its module or function) on float64 numpy arrays."""
    def apply(x: np.ndarray) -> np.ndarray:
        with torch.inference_mode():
            return fn(torch.from_numpy(np.asarray(x, np.float64))).numpy()
    return apply


def _find(block: Any) -> tuple[Layout, list[Any]]:
    """The first layout whose parts the block holds, and the parts (gate None if ungated)."""
    for layout in LAYOUTS:
        parts = [_attr(block, p) for p in layout[:5]]
        gate = _attr(block, layout.gate)
        if all(p is not None for p in parts) and (layout.gate is None or gate is not None):
            return layout, [*parts, gate]
    raise ValueError(f"{type(block).__name__}: no FFN (Linear–activation–Linear, or gated "
                     "gate/up/down) with two norms found, so it is not rebuilt here")


def _entry(model: Any, path: list[str]) -> tuple[Any, str, Layout, list[Any]]:
    """The block around the attention at `path`: the deepest numbered module holding a
    layout, the attention's path inside it, that layout and its parts."""
    numbered = [i for i, p in enumerate(path) if p.isdigit()]
    for at in reversed(numbered):
        block = model.get_submodule(".".join(path[: at + 1]))
        try:
            layout, parts = _find(block)
        except ValueError:
            if at == numbered[0]:
                raise
            continue
        return block, ".".join(path[at + 1: -1]), layout, parts
    raise ValueError("the attention's module path holds no layer number")


def _check_norms(block: Any, attention: str, used: list[Any]) -> None:
    """Every norm in the block (outside the attention itself, whose q/k norms the recorded
    probabilities already hold) must be one the walk applies."""
    for name, module in block.named_modules():
        inside = attention and (name == attention or name.startswith(attention + "."))
        if "Norm" in type(module).__name__ and not inside and all(module is not u for u in used):
            raise ValueError(f"{type(block).__name__} also normalises at {name}, which the "
                             "walk (one norm around the attention, one around the FFN) "
                             "does not apply, so it is not rebuilt here")


def _check_ffn(ffn: Any, out: dict[str, Any]) -> None:
    """The rebuilt FFN against the model's own FFN module on a probe."""
    weight = next(ffn.parameters())
    x = _probe(out["W_in"].shape[0], weight.dtype)
    try:
        with torch.inference_mode():
            got = ffn(x).double().cpu().numpy()
    except (RuntimeError, TypeError) as exc:  # an FFN that wants more than one tensor
        raise ValueError(f"{type(ffn).__name__} could not be run on a probe: {exc}") from exc
    x = x.double().numpy()
    up = x @ out["W_in"] + out["b_in"]  # (3, F)
    hidden = out["act"](x @ out["W_gate"] + out["b_gate"]) * up if out["W_gate"] is not None \
        else out["act"](up)
    want = hidden @ out["W_out"] + out["b_out"]  # (3, D)
    tol = _tolerance(weight.dtype) * max(1.0, float(np.abs(want).max()))
    if not np.allclose(want, got, rtol=tol, atol=tol):
        raise ValueError(f"{type(ffn).__name__} does not compute what its parts say (checked "
                         "on a probe), so it is not rebuilt here")


def block_weights(bundle, kind: str, layer: int) -> dict[str, Any]:
    """Backend.block_weights for a Hugging Face bundle: {"norm": "post"|"pre", "norm_kind":
    "layer"|"rms", "ln_attn" and "ln_ffn": {kind, gamma, eps, and beta for "layer"} (post:
    after each residual add; pre: before the attention and before the FFN), "W_in" (D, F),
    "b_in" (F,), "W_out" (F, D), "b_out" (D,), "W_gate" (D, F) and "b_gate" (F,) or None
    (gated: hidden = act(x @ W_gate + b_gate) * (x @ W_in + b_in)), "parts": the model's
    names of the FFN's Linears {"in", "out", "gate"} ("gate" "" if ungated), "activation":
    its name from the config, "act": the model's own function on numpy}."""
    if kind not in bundle.kinds:
        raise ValueError(f"no attention kind {kind!r} here; this model has {bundle.kinds}")
    if kind == "cross":
        raise ValueError("the block walk follows a self-attention layer")
    if not 0 <= layer < bundle.n_layers(kind):
        raise ValueError(f"{kind} has layers 0..{bundle.n_layers(kind) - 1}, not {layer}")
    model = bundle.model
    mods = projection_modules(model, bundle.config.family).get(kind)
    if not mods or len(mods) != bundle.n_layers(kind):
        raise ValueError(f"no per-layer weights for this model's {kind} layout")
    named = {m: n for n, m in model.named_modules()}
    block, attention, layout, parts = _entry(model, named[mods[layer]].split("."))
    ln_attn, ln_ffn = _norm(parts[0]), _norm(parts[4])
    if ln_attn["kind"] != ln_ffn["kind"]:
        raise ValueError(f"{type(block).__name__} mixes a LayerNorm and an RMS norm")
    _check_norms(block, attention, [parts[0], parts[4]])
    w_in, b_in = _linear(parts[1])
    w_out, b_out = _linear(parts[3])
    w_gate, b_gate = _linear(parts[5]) if parts[5] is not None else (None, None)
    hf = bundle.config.hf
    name = str(getattr(hf, "hidden_act", None) or getattr(hf, "activation_function", None)
               or getattr(hf, "activation", None) or getattr(hf, "dense_act_fn", None) or "")
    out = {"norm": hf_capabilities(bundle).norm, "norm_kind": ln_attn["kind"],
           "ln_attn": ln_attn, "ln_ffn": ln_ffn, "W_in": w_in, "b_in": b_in, "W_out": w_out,
           "b_out": b_out, "W_gate": w_gate, "b_gate": b_gate,
           "parts": {"in": layout.fc_in.rsplit(".", 1)[-1],
                     "out": layout.fc_out.rsplit(".", 1)[-1],
                     "gate": (layout.gate or "").rsplit(".", 1)[-1]},
           "activation": name, "act": _activation(parts[2])}
    ffn = _attr(block, layout.ffn)
    if ffn is not None:
        _check_ffn(ffn, out)
    return out
