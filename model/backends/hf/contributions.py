"""Direct logit attribution for Hugging Face decoder-only models (GPT-2, Llama, Mistral, Qwen …).

The residual before the final norm is read at the recorder's `decoder.layers.{L-1}.hook_resid_post`,
each block's input at `hook_resid_pre`, each head's context at `hook_context`; a head's part is its
context times its slice of W_O, a layer's MLP part is what the block added beyond its attention
output. The final norm is frozen: LayerNorm as x ↦ γ ⊙ (x − mean x)/σ + β, RMSNorm as
x ↦ γ ⊙ x / rms(x) with rms from the whole residual (Gemma's (1 + γ) recognised).

Shape legend: L layers, H heads, D model size, V vocabulary.
"""

from __future__ import annotations

import numpy as np
import torch

from ...forced import StepAttribution, top_tokens
from ...hooks import Head, attn_prefix, hooks
from ...norms import head_slices
from .pieces import piece_names
from .projections import output_projections
from .record import encode_checked
from .recorder import residual_points

_FINAL_NORMS = ("ln_f", "norm", "final_layernorm", "final_layer_norm", "final_norm")


def final_norm(model: torch.nn.Module) -> torch.nn.Module:
    """The norm between the last block and the unembedding (not inside any block)."""
    for name, module in model.named_modules():
        parts = name.split(".")
        if parts[-1] in _FINAL_NORMS and not any(p.isdigit() for p in parts):
            return module
    raise ValueError("no final norm found between the last block and the unembedding")


def _frozen_norm(norm: torch.nn.Module, x: np.ndarray):
    """(through, β) with norm(x) = through(x) + β and `through` linear (the scale frozen at x's):
    LayerNorm or RMSNorm (γ or 1 + γ), whichever reproduces the module's own output."""
    with torch.inference_mode():
        want = norm(torch.from_numpy(x).to(norm.weight.dtype)[None])[0].double().cpu().numpy()
    gamma = norm.weight.detach().double().cpu().numpy()
    bias = getattr(norm, "bias", None)
    beta = np.zeros_like(x) if bias is None else bias.detach().double().cpu().numpy()
    eps = float(getattr(norm, "eps", None) or getattr(norm, "variance_epsilon", None) or 1e-6)
    sigma = np.sqrt(x.var() + eps)
    rms = np.sqrt((x * x).mean() + eps)
    ways = (lambda c: (c - c.mean(-1, keepdims=True)) * gamma / sigma,  # LayerNorm
            lambda c: c * gamma / rms,  # RMSNorm (Llama, Mistral, Qwen)
            lambda c: c * (1 + gamma) / rms)  # RMSNorm with a (1 + γ) scale (Gemma)
    for through in ways:
        if np.allclose(through(x) + beta, want, rtol=1e-4, atol=1e-4 * np.abs(want).max()):
            return through, beta
    raise ValueError("the final norm is neither a LayerNorm nor an RMSNorm, so it cannot be "
                     "frozen into a sum")


def _hf_run(bundle, ids: list[int], step: int, names: list[str]) -> tuple[dict, np.ndarray]:
    """Row `step` of each named hook tensor (context: (H, Dh); residual: (D,)) and the logits
    at `step`, (V,), of one teacher-forced pass."""
    got: dict[str, np.ndarray] = {}

    def keep(x: torch.Tensor, name: str) -> None:
        row = x[0, :, step] if name.endswith("hook_context") else x[0, step]  # (H, Dh) / (D,)
        got[name] = row.detach().to("cpu", torch.float64).numpy()

    model = bundle.model
    device = next(model.parameters()).device
    t = torch.tensor([ids], device=device)
    with torch.inference_mode(), hooks(dict.fromkeys(names, keep)):
        out = model(input_ids=t, attention_mask=torch.ones_like(t), use_cache=False)
    return got, out.logits[0, step].double().cpu().numpy()


def _hf_direct(bundle, ids: list[int], step: int, token_id: int | None, k: int):
    """(logits at step, dla {"dec_self": (L, H)}, other terms, top tokens per head)."""
    model, cfg = bundle.model, bundle.config
    if getattr(cfg.hf, "final_logit_softcapping", None):
        raise ValueError("the final logits are softcapped, so they are not a sum of parts")
    if not residual_points(model, cfg.family):
        raise ValueError("this model's blocks are not known to the recorder")
    n_layers = bundle.n_layers("dec_self")
    pre = [f"decoder.layers.{i}.hook_resid_pre" for i in range(n_layers)]
    last = f"decoder.layers.{n_layers - 1}.hook_resid_post"
    ctx = [f"{attn_prefix('dec_self', i)}.hook_context" for i in range(n_layers)]
    got, logits = _hf_run(bundle, ids, step, [*pre, last, *ctx])
    token_id = int(logits.argmax()) if token_id is None else int(token_id)
    if not 0 <= token_id < logits.shape[0]:
        raise ValueError(f"token id must be between 0 and {logits.shape[0] - 1}")
    x = got[last]  # the residual before the final norm, (D,)
    through, beta = _frozen_norm(final_norm(model), x)
    head = model.get_output_embeddings()
    w_u = head.weight.detach().double().cpu().numpy()  # (V, D)
    w_v = w_u[token_id]
    other = {"embedding": float(through(got[pre[0]]) @ w_v),
             "final norm bias": float(beta @ w_v)}
    if getattr(head, "bias", None) is not None:
        other["unembedding bias"] = float(head.bias[token_id])
    projections = output_projections(bundle)["dec_self"]
    n_heads = cfg.n_heads
    table = np.zeros((n_layers, n_heads))
    tops: dict[Head, dict] = {}
    pieces = piece_names(bundle.tokenizer, range(w_u.shape[0]))
    w_u32 = w_u.astype(np.float32)
    for layer, (w_o, bias) in enumerate(projections):
        slices = head_slices(w_o, n_heads).astype(np.float64)  # (H, Dh, D)
        out = np.einsum("hd,hde->he", got[ctx[layer]], slices)  # (H, D) each head's write
        moved = through(out)
        table[layer] = moved @ w_v
        wrote = out.sum(0)
        if bias is not None:
            wrote = wrote + bias
            other[f"attention layer {layer} output bias"] = float(through(bias) @ w_v)
        nxt = got[pre[layer + 1]] if layer + 1 < n_layers else x
        mlp = nxt - got[pre[layer]] - wrote  # what the block added beyond its attention
        other[f"MLP layer {layer}"] = float(through(mlp) @ w_v)
        scores = moved.astype(np.float32) @ w_u32.T  # (H, V)
        for h in range(n_heads):
            tops[("dec_self", layer, h)] = top_tokens(scores[h], pieces, k)
    return logits, token_id, {"dec_self": table}, other, tops, pieces


def attribution(backend, source: str, target: str | None, target_lang: str | None,
                step: int | None, token_id: int | None, k: int) -> StepAttribution:
    """The step's logits and the DLA of a pre-LN decoder-only model (ValueError otherwise)."""
    bundle = backend.bundle
    caps = backend.caps
    if caps.family != "decoder" or not caps.logit_attribution:
        raise ValueError("head contributions need this project's encoder–decoder checkpoints "
                         "or a pre-LN decoder-only Hugging Face model (GPT-2, Llama, Mistral, "
                         "Qwen …) whose attention runs through the recorder")
    if target is not None:
        raise ValueError("a decoder-only model reads one text; pass no target")
    tok, cfg = bundle.tokenizer, bundle.config
    ids = encode_checked(tok, [source], cfg.max_len)[0][0]
    n_t = len(ids)
    step = n_t - 1 if step is None else int(step)
    if not 0 <= step < n_t:
        raise ValueError(f"step must be between 0 and {n_t - 1}")
    logits, token_id, dla, other, tops, pieces = _hf_direct(bundle, ids, step, token_id, k)
    device = next(bundle.model.parameters()).device
    return StepAttribution(step=step, token_id=token_id, logits=logits, pieces=pieces,
                           inputs={"input_ids": torch.tensor([ids], device=device)}, dla=dla,
                           other=other, dla_top=tops,
                           tgt_tokens=[str(p) for p in tok.convert_ids_to_tokens(ids)])
