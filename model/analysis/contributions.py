"""What each head contributes to the token the decoder predicts at one step.

Two measures:
- direct logit attribution (pre-LN models only): the decoder's final residual stream x is a sum
  of parts (embedding, each head's output, each block's output bias, each FFN). With the final
  LayerNorm's scale frozen at its value on x, LN(x) = Σ_c γ ⊙ (c − mean c)/σ + β is linear in
  the parts, so logit_v = Σ_c [γ ⊙ (c − mean c)/σ] · w_v + β · w_v exactly. On a post-LN model
  every sublayer's LayerNorm rescales what came before, so no such sum exists.
- knock-out (every model): the token's logit with one head's context zeroed minus the logit
  without, teacher-forced on the same decoder input; one forward per `chunk` heads.

Top tokens a head promotes and suppresses: the vocabulary through the same frozen final LN and
unembedding (pre-LN), and, on every model, the tokens whose logit falls (promoted) or rises
(suppressed) most when the head is knocked out.

Hugging Face decoder-only models (GPT-2, Llama, Mistral, Qwen …): the residual before the final
norm is read at the recorder's `decoder.layers.{L-1}.hook_resid_post`, each block's input at
`hook_resid_pre`, each head's context at `hook_context`; a head's part is its context times its
slice of W_O, a layer's MLP part is what the block added beyond its attention output. The final
norm is frozen the same way: LayerNorm as above, RMSNorm as x ↦ γ ⊙ x / rms(x) with rms from the
whole residual (Gemma's (1 + γ) recognised). Both pass the same sum-to-logit identity.

Shape legend: L layers, H heads, T decoder positions, D model size, V vocabulary.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from ..dispatch import capture
from ..hooks import Head, attn_prefix, hooks
from ..norms import head_outputs, native_projections
from .ablation import all_heads, is_native, row_ablation_hooks

TOP_K = 8


@dataclass
class Contributions:
    """Head contributions to one predicted token (see the module docstring)."""

    step: int  # decoder position whose output is explained
    token_id: int
    token: str
    logit: float  # the model's own logit for token_id at that step
    knockout: dict[str, np.ndarray]  # kind -> (L, H) logit change when the head is knocked out
    knockout_top: dict[Head, dict[str, list[tuple[str, float]]]]  # promotes / suppresses
    dla: dict[str, np.ndarray] | None = None  # "dec_self"/"cross" -> (L, H); pre-LN only
    other: dict[str, float] = field(default_factory=dict)  # the remaining terms of the sum
    dla_top: dict[Head, dict[str, list[tuple[str, float]]]] = field(default_factory=dict)
    tgt_tokens: list[str] = field(default_factory=list)  # decoder input pieces
    src_tokens: list[str] = field(default_factory=list)

    def dla_total(self) -> float:
        """Σ of every DLA term and the other terms: equals `logit` on a pre-LN model."""
        if self.dla is None:
            return float("nan")
        return float(sum(a.sum() for a in self.dla.values()) + sum(self.other.values()))


def _resid_names(n_layers: int) -> list[str]:
    return ["decoder.hook_embed"] + [f"decoder.layers.{i}.hook_resid_{p}"
                                     for i in range(n_layers) for p in ("cross", "post")]


def _unembedding(model) -> torch.Tensor:
    """(V, D) rows w_v with logit_v = h · w_v."""
    return (model.tok_embed.weight if model.out_proj is None else model.out_proj.weight).detach()


def _top(scores: np.ndarray, pieces: list[str], k: int) -> dict[str, list[tuple[str, float]]]:
    order = np.argsort(scores)
    return {"promotes": [(pieces[i], float(scores[i])) for i in order[::-1][:k]],
            "suppresses": [(pieces[i], float(scores[i])) for i in order[:k]]}


def _direct(bundle, tr, step: int, token_id: int, k: int):
    """DLA per head, the other terms, and each head's top tokens through the frozen final LN."""
    model = bundle.model
    norm = model.decoder.final_norm
    n_layers = bundle.n_layers("dec_self")
    acts = tr.acts
    x = acts[f"decoder.layers.{n_layers - 1}.hook_resid_post"][0, step].astype(np.float64)
    sigma = np.sqrt(x.var() + norm.eps)
    gamma = norm.weight.detach().double().numpy()
    beta = norm.bias.detach().double().numpy()
    w_u = _unembedding(model).double().numpy()  # (V, D)
    w_v = w_u[token_id]

    def through(c: np.ndarray) -> np.ndarray:
        """Part(s) (..., D) -> what they add after the frozen final LN, (..., D)."""
        return (c - c.mean(-1, keepdims=True)) * gamma / sigma

    other = {"embedding": float(through(acts["decoder.hook_embed"][0, step]) @ w_v),
             "final LayerNorm bias": float(beta @ w_v)}
    dla: dict[str, np.ndarray] = {}
    tops: dict[Head, dict] = {}
    pieces = bundle.tokenizer.ids_to_pieces(list(range(w_u.shape[0])))
    for kind in ("dec_self", "cross"):
        if kind not in tr.attn:
            continue
        proj = native_projections(model, kind, n_layers)
        table = np.zeros((n_layers, bundle.config.n_heads))
        for layer, (w_o, bias) in enumerate(proj):
            attn = tr.attn[kind][layer, :1, :, step:step + 1]  # (1, H, 1, K)
            out = head_outputs(attn, tr.v[kind][layer, :1], w_o)[0, :, 0]  # (H, D)
            moved = through(out)  # (H, D)
            table[layer] = moved @ w_v
            if bias is not None:
                other[f"{kind} layer {layer} output bias"] = float(through(bias) @ w_v)
            for h in range(out.shape[0]):
                tops[(kind, layer, h)] = _top(moved[h] @ w_u.T, pieces, k)
        dla[kind] = table
    for i in range(n_layers):
        ffn = acts[f"decoder.layers.{i}.hook_resid_post"][0, step] - \
            acts[f"decoder.layers.{i}.hook_resid_cross"][0, step]
        other[f"FFN layer {i}"] = float(through(ffn.astype(np.float64)) @ w_v)
    return dla, other, tops


def head_contributions(bundle, source: str, target: str | None = None, *,
                       target_lang: str | None = None, step: int | None = None,
                       token_id: int | None = None, k: int = TOP_K,
                       chunk: int = 64, knockout: bool = True) -> Contributions:
    """Each head's effect on the token predicted at decoder position `step` of one sentence.

    target None: the model's own greedy translation. step None: the last position (the one
    that predicts </s>); token_id None: the model's argmax at that step. knockout False skips
    the sweep of heads + 1 rows (knockout and knockout_top stay empty): the direct attribution
    alone is one pass, where the sweep of a model with thousands of heads takes minutes.
    """
    if not is_native(bundle, "head contributions"):
        return _hf_contributions(bundle, source, target, step=step, token_id=token_id, k=k,
                                 chunk=chunk, knockout=knockout)
    model, cfg = bundle.model, bundle.config
    n_dec = bundle.n_layers("dec_self")
    tr = capture(bundle, [source], None if target is None else [target],
                 target_lang=target_lang, names=["attn", "v", "logits", *_resid_names(n_dec)])
    n_t = tr.length("tgt", 0)
    step = n_t - 1 if step is None else int(step)
    if not 0 <= step < n_t:
        raise ValueError(f"step must be between 0 and {n_t - 1}")
    logits = tr.logits[0, step].astype(np.float64)  # (V,)
    if token_id is None:
        token_id = int(logits.argmax())
    if not 0 <= token_id < logits.shape[0]:
        raise ValueError(f"token id must be between 0 and {logits.shape[0] - 1}")
    pieces = bundle.tokenizer.ids_to_pieces(list(range(logits.shape[0])))

    # knock-out: row 0 untouched, row r ablates heads[r - 1]
    src = torch.from_numpy(tr.src_ids[:1])
    tgt = torch.from_numpy(tr.tgt_ids[:1, :n_t])
    heads = all_heads(bundle) if knockout else []
    rows: list[Head | None] = [None, *heads] if knockout else []
    picked: list[np.ndarray] = []
    for start in range(0, len(rows), max(1, chunk)):
        part = rows[start:start + chunk]
        with torch.inference_mode(), hooks(row_ablation_hooks(part)):
            out = model(src.repeat(len(part), 1), tgt.repeat(len(part), 1))  # (n, T, V)
        picked.append(out[:, step].double().numpy())  # (n, V)
    change = np.concatenate(picked)[1:] - picked[0][:1] if picked else []  # (heads, V)
    knock = {kd: np.zeros((bundle.n_layers(kd), cfg.n_heads))
             for kd in bundle.kinds} if knockout else {}
    knock_top: dict[Head, dict] = {}
    for (kind, layer, h), row in zip(heads, change):
        knock[kind][layer, h] = row[token_id]
        knock_top[(kind, layer, h)] = _top(-row, pieces, k)  # falls when removed = promoted
    result = Contributions(step=step, token_id=token_id, token=pieces[token_id],
                           logit=float(logits[token_id]), knockout=knock, knockout_top=knock_top,
                           tgt_tokens=tr.tgt_tokens[0], src_tokens=tr.src_tokens[0])
    if cfg.norm == "pre" and model.decoder.final_norm is not None:
        result.dla, result.other, result.dla_top = _direct(bundle, tr, step, token_id, k)
    return result


# ---- Hugging Face decoder-only models ------------------------------------------------------------

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
    from ..backends.hf.projections import output_projections
    from ..backends.hf.recorder import residual_points
    from ..norms import head_slices

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
    pieces = [str(p) for p in bundle.tokenizer.convert_ids_to_tokens(list(range(w_u.shape[0])))]
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
            tops[("dec_self", layer, h)] = _top(scores[h], pieces, k)
    return logits, token_id, {"dec_self": table}, other, tops, pieces


def _hf_contributions(bundle, source: str, target: str | None, *, step: int | None,
                      token_id: int | None, k: int, chunk: int,
                      knockout: bool = True) -> Contributions:
    """head_contributions for a Hugging Face decoder-only model: DLA and knock-out."""
    from ..backends import capabilities
    from ..backends.hf.record import encode_checked

    caps = capabilities(bundle)
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
    # knock-out: row 0 untouched, row r knocks out heads[r - 1]
    model = bundle.model
    device = next(model.parameters()).device
    heads = all_heads(bundle) if knockout else []
    rows: list[Head | None] = [None, *heads] if knockout else []
    picked: list[np.ndarray] = []
    t = torch.tensor([ids], device=device)
    for start in range(0, len(rows), max(1, chunk)):
        part = rows[start:start + chunk]
        batch = t.repeat(len(part), 1)
        with torch.inference_mode(), hooks(row_ablation_hooks(part)):
            out = model(input_ids=batch, attention_mask=torch.ones_like(batch), use_cache=False)
        picked.append(out.logits[:, step].double().cpu().numpy())  # (n, V)
    change = np.concatenate(picked)[1:] - picked[0][:1] if picked else []  # (heads, V)
    knock = {"dec_self": np.zeros((bundle.n_layers("dec_self"), cfg.n_heads))} if knockout else {}
    knock_top: dict[Head, dict] = {}
    for (kind, layer, h), row in zip(heads, change):
        knock[kind][layer, h] = row[token_id]
        knock_top[(kind, layer, h)] = _top(-row, pieces, k)
    tokens = [str(p) for p in tok.convert_ids_to_tokens(ids)]
    return Contributions(step=step, token_id=token_id, token=pieces[token_id],
                         logit=float(logits[token_id]), knockout=knock, knockout_top=knock_top,
                         dla=dla, other=other, dla_top=tops, tgt_tokens=tokens, src_tokens=[])
