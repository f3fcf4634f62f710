"""Why one query–key score is what it is: the recorded score split into terms that add up to it.

Models with added positions (the lab's sinusoidal and learned models, GPT-2, BERT). The
residual stream at the attention's input is split into parts that add up to it:
    token      the token embedding (the lab: × √D; BERT: + its token-type row)
    position   the position embedding (or sinusoidal row)
    layers     what earlier blocks wrote: the residual minus the embedding (as the flow view
               splits it); 0 at layer 0 of self-attention
    bias       constant vectors: BERT's embedding LayerNorm β
The query and key are affine in the (normalised) residual, q = A·x̃ + b, so each part p gives
A·p̃ and the bias b goes to the bias part. A LayerNorm in the way (pre-LN blocks, GPT-2's ln_1,
the lab's final encoder norm before cross-attention keys, BERT's embedding norm) is not linear;
it is linearised by freezing its scale at the value computed from the whole residual:
LN(x) = Σ_p γ ⊙ (p − mean p)/σ(x) + β, exact for this x because the parts add up to x. β joins
the bias part. Then score = s · q·k = s · Σ_{a,b} q_a·k_b (s the head's scaling), reported as
token·token, token·position, position·token, position·position, layers·embedding,
embedding·layers, layers·layers (left out when both layers parts are 0) and bias (every
product with a bias part).

Rotary models: q and k are recorded after rotation; with the rotate-half layout dimension i
pairs with i + r/2 and turns at θ_i, so score = s · Σ_i (q_i k_i + q_{i+r/2} k_{i+r/2}) splits
into one term per band of neighbouring frequencies (and 'not rotated' for dimensions past r).

T5: the content score q·k (T5 does not scale) plus the relative-position bias of the head.

Shape legend: D model size, Dh head size, H heads, n positions.
"""

from __future__ import annotations

import numpy as np
import torch

from ..backends import capabilities
from ..capture import Trace
from ..hooks import hooks

BANDS = 8  # frequency bands a rotary head's score is split into (fewer if Dh is small)
Parts = dict[str, np.ndarray]


def _check(trace: Trace, kind: str, layer: int, head: int, query: int, key: int,
           batch: int) -> None:
    if kind not in trace.scores:
        raise ValueError(f"the trace has no recorded scores for {kind!r}")
    n_l, n_b, n_h, n_q, n_k = trace.scores[kind].shape
    for name, value, top in (("layer", layer, n_l), ("batch", batch, n_b), ("head", head, n_h),
                             ("query", query, n_q), ("key", key, n_k)):
        if not 0 <= value < top:
            raise ValueError(f"{name} must be between 0 and {top - 1}")


def _split(x: np.ndarray, tok: np.ndarray, pos: np.ndarray) -> Parts:
    """token, position and what earlier layers wrote (x − token − position), the last left
    out where it is only float32 rounding (layer 0 reads the embedding sum itself)."""
    x = x.astype(np.float64)
    parts = {"token": tok.astype(np.float64), "position": pos.astype(np.float64)}
    rest = x - parts["token"] - parts["position"]
    if np.abs(rest).max() > 1e-5 * max(np.abs(x).max(), 1e-12):
        parts["layers"] = rest
    return parts


def _frozen(parts: Parts, ln: torch.nn.Module) -> Parts:
    """LayerNorm with its scale frozen at the whole residual's: each part centred and scaled,
    β added to the bias part."""
    x = sum(parts.values())
    sigma = np.sqrt(x.var() + float(ln.eps))
    gamma = ln.weight.detach().double().cpu().numpy()
    out = {p: (v - v.mean()) * gamma / sigma for p, v in parts.items()}
    if getattr(ln, "bias", None) is not None:
        out["bias"] = out.get("bias", 0.0) + ln.bias.detach().double().cpu().numpy()
    return out


def _project(parts: Parts, fn) -> Parts:
    """An affine map f(x) = A·x + b applied part by part: A·p each, b to the bias part."""
    def f(v: np.ndarray) -> np.ndarray:
        with torch.inference_mode():
            t = torch.as_tensor(np.asarray(v), dtype=torch.float64)
            return fn(t).double().cpu().numpy()

    zero = f(np.zeros_like(next(iter(parts.values()))))
    out = {p: f(v) - zero for p, v in parts.items()}
    out["bias"] = out.get("bias", 0.0) + zero
    return out


def _products(q: Parts, k: Parts, scale: float) -> dict[str, float]:
    """The named sums of scale · q_a·k_b over every pair of parts (module docstring)."""
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


# ---- the lab's own model -----------------------------------------------------------------------


def _lab_run(bundle, trace: Trace, batch: int, names: list[str]) -> dict[str, np.ndarray]:
    """The named hook tensors of sentence `batch` (its padded row, ablation as in the trace)."""
    from ..hooks import ablation_hooks

    got: dict[str, np.ndarray] = {}

    def keep(x: torch.Tensor, name: str) -> None:
        got[name] = x[0].detach().double().cpu().numpy()

    model = bundle.model
    src = torch.tensor(np.asarray(trace.src_ids[batch:batch + 1]))  # a copy: Traces are frozen
    tgt = torch.tensor(np.asarray(trace.tgt_ids[batch:batch + 1]))
    with torch.inference_mode(), hooks(ablation_hooks(trace.ablate)), \
            hooks(dict.fromkeys(names, keep)):
        model(src if model.encoder is not None else None,
              tgt if model.decoder is not None else None)
    return got


def _lab_parts(bundle, trace: Trace, kind: str, layer: int, head: int, query: int, key: int,
               batch: int) -> tuple[Parts, Parts, float]:
    model, cfg = bundle.model, bundle.config
    q_stack = "encoder" if kind == "enc_self" else "decoder"
    k_stack = "decoder" if kind == "dec_self" else "encoder"
    q_in = (f"decoder.layers.{layer}.hook_resid_mid" if kind == "cross"
            else f"{q_stack}.layers.{layer}.hook_resid_pre")
    n_enc = len(model.encoder.layers) if model.encoder is not None else 0
    k_in = (f"encoder.layers.{n_enc - 1}.hook_resid_post" if kind == "cross" else q_in)
    names = [q_in, k_in, f"{q_stack}.hook_tok", f"{q_stack}.hook_pos", f"{k_stack}.hook_tok",
             f"{k_stack}.hook_pos"]
    acts = _lab_run(bundle, trace, batch, sorted(set(names)))
    block = getattr(model, q_stack).layers[layer]
    attn = {"enc_self": "self_attn", "dec_self": "self_attn", "cross": "cross_attn"}[kind]
    module = getattr(block, attn)
    norm = {"enc_self": "attn_block", "dec_self": "self_block", "cross": "cross_block"}[kind]
    pre = cfg.norm == "pre"

    def resid(name: str, stack: str, i: int) -> Parts:
        return _split(acts[name][i], acts[f"{stack}.hook_tok"][i], acts[f"{stack}.hook_pos"][i])

    q_parts = resid(q_in, q_stack, query)
    k_parts = resid(k_in, k_stack, key)
    if kind == "cross" and pre:  # the memory is the encoder's output after its final norm
        k_parts = _frozen(k_parts, model.encoder.final_norm)
    if pre:  # the block normalises its query input (and, in self-attention, its keys)
        q_parts = _frozen(q_parts, getattr(block, norm).norm)
        if kind != "cross":
            k_parts = _frozen(k_parts, getattr(block, norm).norm)
    dh = cfg.d_model // cfg.n_heads
    cut = slice(head * dh, (head + 1) * dh)

    def proj(linear):
        w = linear.weight.detach().double()[cut]
        b = linear.bias.detach().double()[cut]
        return lambda t: t @ w.T + b

    return (_project(q_parts, proj(module.w_q)), _project(k_parts, proj(module.w_k)),
            1.0 / np.sqrt(dh))


# ---- Hugging Face models with added positions (GPT-2, BERT) ----------------------------------


def _attention_module(bundle, kind: str, layer: int) -> tuple[str, torch.nn.Module]:
    """(path, module) of the attention that calls the lab's recorder for (kind, layer)."""
    from ..backends.hf.recorder import site_of, sites

    if sites(bundle.model, bundle.config.family) is None:
        raise ValueError("this model's attention does not run through the lab's recorder")
    for name, module in bundle.model.named_modules():
        site = site_of(module)
        if site is not None and site.kind == kind and site.layer == layer:
            return name, module
    raise ValueError(f"no attention module found for {kind} layer {layer}")


def _hidden(bundle, trace: Trace, side: str, batch: int) -> tuple[np.ndarray, int]:
    """(hidden (L+1, n, D) of the sentence, row): the trace's, or a capture of that sentence."""
    if side in trace.hidden:
        return trace.hidden[side][:, batch], batch
    from ..dispatch import capture

    again = capture(bundle, [trace.sources[batch]], names=["hidden"], ablate=trace.ablate)
    return again.hidden[side][:, 0], batch


def _hf_added_parts(bundle, trace: Trace, kind: str, layer: int, head: int, query: int,
                    key: int, batch: int) -> tuple[Parts, Parts, float]:
    model = bundle.model
    if kind == "cross":
        raise ValueError("the decomposition covers self-attention of added-position models")
    side = "enc" if kind == "enc_self" else "dec"
    ids = (trace.src_ids if side == "enc" else trace.tgt_ids)[batch]
    positions = np.asarray(trace.positions[side][batch])
    # padding is recorded as -1; the model itself ran pads at their index (+ the table offset)
    positions = np.where(positions >= 0, positions,
                         np.arange(len(positions)) + max(int(positions[0]), 0))
    hidden, _ = _hidden(bundle, trace, side, batch)
    path, attn = _attention_module(bundle, kind, layer)
    scale = float(getattr(attn, "scaling", attn.head_dim ** -0.5 if hasattr(attn, "head_dim")
                          else 1.0))
    modules = dict(model.named_modules())
    emb = next((m for m in modules.values() if hasattr(m, "word_embeddings")
                and hasattr(m, "position_embeddings")), None)

    def table(mod: torch.nn.Module, rows) -> np.ndarray:
        return mod.weight.detach().double().cpu().numpy()[np.asarray(rows)]

    if emb is not None:  # BERT: LN(word + token type + position), then post-LN blocks
        tok = table(emb.word_embeddings, ids)
        types = getattr(emb, "token_type_embeddings", None)
        if types is not None:
            tok = tok + table(types, np.zeros_like(ids))
        pos = table(emb.position_embeddings, positions)

        def resid(i: int) -> Parts:
            parts = _frozen({"token": tok[i], "position": pos[i]}, emb.LayerNorm)
            rest = hidden[layer, i].astype(np.float64) - hidden[0, i]
            if layer > 0:  # at layer 0 the residual is the embedding's output itself
                parts["layers"] = rest
            return parts

        q_parts, k_parts = resid(query), resid(key)
        dh = attn.attention_head_size
        cut = slice(head * dh, (head + 1) * dh)
        q_fn, k_fn = _linear(attn.query, cut), _linear(attn.key, cut)
    elif hasattr(attn, "c_attn"):  # GPT-2: wte + wpe, pre-LN blocks with ln_1
        wte = model.get_input_embeddings()
        wpe = next(m for n, m in modules.items() if n.endswith("wpe"))
        tok, pos = table(wte, ids), table(wpe, positions)
        block = modules[path.rsplit(".", 1)[0]]

        def resid(i: int) -> Parts:
            return _frozen(_split(hidden[layer, i], tok[i], pos[i]), block.ln_1)

        q_parts, k_parts = resid(query), resid(key)
        d, dh = attn.split_size, attn.head_dim
        q_fn = _conv1d(attn.c_attn, slice(head * dh, (head + 1) * dh))
        k_fn = _conv1d(attn.c_attn, slice(d + head * dh, d + (head + 1) * dh))
    else:
        raise ValueError("no query–key decomposition for this family's layout")
    return _project(q_parts, q_fn), _project(k_parts, k_fn), scale


def _linear(linear: torch.nn.Module, cut: slice):
    """x -> (W x + b)[cut] of an nn.Linear in float64, the shared module left as it is."""
    w = linear.weight.detach().double().cpu()[cut]
    b = linear.bias.detach().double().cpu()[cut]
    return lambda t: t @ w.T + b


def _conv1d(conv: torch.nn.Module, cut: slice):
    """x -> (x W + b)[cut] of GPT-2's Conv1D (weight stored (in, out)), in float64."""
    w = conv.weight.detach().double().cpu()[:, cut]
    b = conv.bias.detach().double().cpu()[cut]
    return lambda t: t @ w + b


# ---- rotary and T5 -------------------------------------------------------------------------------


def _rotary_terms(bundle, trace: Trace, kind: str, layer: int, head: int, query: int, key: int,
                  batch: int) -> dict[str, float]:
    from ..backends.hf.positions import rotary_frequencies

    theta = rotary_frequencies(bundle.model)
    if getattr(bundle.config.hf, "attn_logit_softcapping", None):
        raise ValueError("a softcapped score is not a sum over dimensions")
    _, attn = _attention_module(bundle, kind, layer)
    scale = float(getattr(attn, "scaling", trace.q[kind].shape[-1] ** -0.5))
    q = trace.q[kind][layer, batch, head, query].astype(np.float64)
    kv = int(trace.kv_groups[head]) if trace.kv_groups is not None else head
    k = trace.k[kind][layer, batch, kv, key].astype(np.float64)
    half = len(theta)
    prod = q * k * scale
    per_freq = prod[:half] + prod[half:2 * half]  # pair i with i + r/2 (rotate-half layout)
    n_bands = min(BANDS, half)
    terms = {}
    for idx in np.array_split(np.arange(half), n_bands):
        lo, hi = 2 * np.pi / theta[idx[0]], 2 * np.pi / theta[idx[-1]]
        terms[f"θ{idx[0]}–{idx[-1]} (λ {lo:,.0f}–{hi:,.0f})"] = float(per_freq[idx].sum())
    if 2 * half < len(q):
        terms["not rotated"] = float(prod[2 * half:].sum())
    return terms


def _t5_terms(bundle, trace: Trace, kind: str, layer: int, head: int, query: int, key: int,
              batch: int) -> dict[str, float]:
    from ..backends.hf.positions import t5_bias

    _, attn = _attention_module(bundle, kind, layer)
    scale = float(getattr(attn, "scaling", 1.0))
    q = trace.q[kind][layer, batch, head, query].astype(np.float64)
    kv = int(trace.kv_groups[head]) if trace.kv_groups is not None else head
    k = trace.k[kind][layer, batch, kv, key].astype(np.float64)
    terms = {"content q·k": float(q @ k) * scale}
    if kind != "cross":  # encoder–decoder attention has no relative bias
        side = "encoder" if kind == "enc_self" else "decoder"
        n = max(query, key) + 1
        bias = t5_bias(bundle.model, n).get(side)
        terms["relative-position bias"] = float(bias[head, query, key]) if bias is not None \
            else 0.0
    return terms


def qk_terms(bundle, trace: Trace, kind: str, layer: int, head: int, query: int, key: int,
             batch: int = 0) -> dict[str, float]:
    """{term: value} adding up to trace.scores[kind][layer, batch, head, query, key]
    (within 1e-4); the terms depend on how the model knows positions (module docstring)."""
    _check(trace, kind, layer, head, query, key, batch)
    caps = capabilities(bundle)
    args = (bundle, trace, kind, layer, head, query, key, batch)
    if caps.positional == "rotary":
        return _rotary_terms(*args)
    if caps.positional == "relative_bias":
        return _t5_terms(*args)
    if caps.lab and caps.positional in ("sinusoidal", "learned"):
        return _products(*_lab_parts(*args))
    if caps.positional == "learned":
        return _products(*_hf_added_parts(*args))
    raise ValueError(f"no query–key decomposition for {caps.positional!r} positions")
