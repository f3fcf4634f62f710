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

from ...capture import SIDE_STACK, Trace, query_side
from ...qkparts import Parts, frozen_parts, project_parts
from .circuits import attention_of, circuit_weights, pre_norm
from .projections import projection_modules
from .segments import row_types

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


def _recorded(backend, trace: Trace, kind: str, side: str, batch: int) -> tuple[Trace, int]:
    """The trace itself when it holds attn, v and hidden, else a capture of that sentence."""
    if kind in trace.attn and kind in trace.v and side in trace.hidden:
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


class _Run:
    """What the stream of one sentence is rebuilt from: the recorded attention, values and
    hidden states (L+1, n, D), positions, and each layer's circuit_weights."""

    def __init__(self, backend, trace: Trace, kind: str, layer: int, batch: int) -> None:
        bundle = self.bundle = backend.bundle
        self.kind, self.side = kind, SIDE_STACK[query_side(kind)]
        self.rec, self.row = _recorded(backend, trace, kind, self.side, batch)
        self.hidden = self.rec.hidden[self.side][:, self.row].astype(np.float64)
        positions = np.asarray(self.rec.positions[self.side][self.row])
        # a Trace saved before issue 54 holds -1 for pads; the model ran them at their index
        self.positions = np.where(positions >= 0, positions,
                                  np.arange(len(positions)) + max(int(positions[0]), 0))
        self.weights = [circuit_weights(bundle, kind, i) for i in range(layer + 1)]
        self.ablate = set(trace.ablate or ())
        groups = self.rec.kv_groups
        self.kv = groups if groups is not None else np.arange(bundle.config.n_heads)

    def heads(self, i: int, p: int) -> tuple[Parts, np.ndarray]:
        """({"L{i}H{h}": head h's write at p}, the attention's whole output with b_O)."""
        w = self.weights[i]
        attn = self.rec.attn[self.kind][i, self.row, :, p].astype(np.float64)  # (H, n)
        v = self.rec.v[self.kind][i, self.row].astype(np.float64)  # (G, n, Dh)
        parts, total = {}, w["b_O"].copy()
        for h in range(len(attn)):
            out = (attn[h] @ v[self.kv[h]]) @ w["W_O"][h]
            if (self.kind, i, h) in self.ablate:
                out = np.zeros_like(out)
            parts[f"L{i}H{h}"] = out
            total = total + out
        return parts, total


def _add(parts: Parts, writes: Parts) -> Parts:
    out = dict(parts)
    for name, v in writes.items():
        out[name] = out.get(name, 0.0) + v
    return out


def _pre_stream(run: _Run, model, layer: int, p: int) -> Parts:
    """Pre-norm decoder: the embedding, then each block's heads, b_O and MLP added."""
    wpe = next((m for n, m in model.named_modules() if n.endswith("wpe")), None)
    # the recorded input of block 0 (less the position row): the token row as the model
    # scales it (Gemma multiplies by √D)
    parts: Parts = {"embedding": run.hidden[0, p]}
    if wpe is not None:
        parts["position"] = wpe.weight.detach().double().cpu().numpy()[run.positions[p]]
        parts["embedding"] = run.hidden[0, p] - parts["position"]
    for i in range(layer):
        heads, total = run.heads(i, p)
        parts = _add(parts, {**heads, "bias": run.weights[i]["b_O"]})
        parts[f"MLP {i}"] = run.hidden[i + 1, p] - run.hidden[i, p] - total
    return parts


def _bert_stream(run: _Run, model, paths: list[str], layer: int, p: int) -> Parts:
    """BERT-like post-LN encoder: LayerNorm(word + token type + position), then per block
    LN(x + attention) and LN(x + MLP), each norm frozen at the whole sum's scale; the MLP's
    output is recomputed from the rebuilt stream."""
    emb = next(m for m in model.modules() if hasattr(m, "word_embeddings")
               and hasattr(m, "position_embeddings"))
    ids = run.rec.src_ids[run.row]

    def row(table, i: int) -> np.ndarray:  # one row in float64, not the whole table: MiniLM's
        # 30,522 × 384 word table converted per key made ov_components 12-18 s at 62 keys
        return table.weight[int(i)].detach().double().cpu().numpy()

    tok = row(emb.word_embeddings, ids[p])
    if getattr(emb, "token_type_embeddings", None) is not None:
        tok = tok + row(emb.token_type_embeddings, row_types(run.bundle, ids)[p])
    parts = frozen_parts({"embedding": tok, "position": row(emb.position_embeddings,
                                                            run.positions[p])}, emb.LayerNorm)
    for i in range(layer):
        attn_path = paths[i]
        block = model.get_submodule(attn_path.rsplit(".", 1)[0])
        heads, _ = run.heads(i, p)
        parts = _add(parts, {**heads, "bias": run.weights[i]["b_O"]})
        parts = frozen_parts(parts, model.get_submodule(f"{attn_path}.output.LayerNorm"))
        with torch.inference_mode():
            x = torch.tensor(sum(parts.values()), dtype=torch.float32)[None]
            mlp = block.output.dense(block.intermediate(x))[0].double().numpy()
        parts = frozen_parts(_add(parts, {f"MLP {i}": mlp}), block.output.LayerNorm)
    return parts


def _t5_mlp(parts: Parts, ff: torch.nn.Module) -> Parts:
    """T5's feed-forward sublayer adds DenseReluDense(layer_norm(x)) to the stream."""
    with torch.inference_mode():
        x = torch.tensor(sum(parts.values()), dtype=torch.float32)[None]
        out = ff.DenseReluDense(ff.layer_norm(x))[0].double().numpy()
    return _add(parts, {f"MLP {len([p for p in parts if p.startswith('MLP ')])}": out})


class Streams:
    """What one head's query (`query(p)`) and key and value (`key(p)`) read at a position:
    the stream's parts after the norm before the head, its scale and positions."""

    def __init__(self, query, key, positions: np.ndarray | None, scale: float) -> None:
        self.query, self.key, self.positions, self.scale = query, key, positions, scale


def _t5_streams(backend, trace: Trace, kind: str, layer: int, batch: int) -> Streams:
    """T5: pre-RMSNorm blocks (self-attention, cross-attention in the decoder, feed-forward),
    no position parts. Cross keys read the encoder's output after its final RMSNorm."""
    bundle = backend.bundle
    model = bundle.model
    runs: dict[str, _Run] = {}

    def run(k: str, upto: int) -> _Run:
        if k not in runs:
            runs[k] = _Run(backend, trace, k, upto, batch)
        return runs[k]

    def encoder(p: int, upto: int) -> Parts:
        r = run("enc_self", bundle.n_layers("enc_self") - 1)
        parts: Parts = {"embedding": r.hidden[0, p]}
        for i in range(upto):
            heads, _ = r.heads(i, p)
            parts = _add(parts, {**heads, "bias": r.weights[i]["b_O"]})
            parts = _t5_mlp(parts, model.encoder.block[i].layer[-1])
        return parts

    def decoder(p: int, upto: int, cross: bool) -> Parts:
        own, other = run("dec_self", layer), run("cross", layer)
        parts: Parts = {"embedding": own.hidden[0, p]}
        for i in range(upto + 1):
            if i == upto and not cross:
                break
            heads, _ = own.heads(i, p)
            parts = _add(parts, {**heads, "bias": own.weights[i]["b_O"]})
            if i == upto:
                break
            heads, _ = other.heads(i, p)
            parts = _add(parts, {**{f"{n} cross": v for n, v in heads.items()},
                                 "bias": other.weights[i]["b_O"]})
            parts = _t5_mlp(parts, model.decoder.block[i].layer[-1])
        return parts

    scale = float(getattr(model.get_submodule("encoder.block.0.layer.0.SelfAttention"),
                          "scaling", 1.0))
    if kind == "cross":
        q_norm = model.decoder.block[layer].layer[1].layer_norm
        return Streams(lambda p: _frozen_rms(decoder(p, layer, True), q_norm),
                       lambda p: _frozen_rms(encoder(p, bundle.n_layers("enc_self")),
                                             model.encoder.final_layer_norm), None, scale)
    if kind == "enc_self":
        norm = model.encoder.block[layer].layer[0].layer_norm

        def stream(p: int) -> Parts:
            return _frozen_rms(encoder(p, layer), norm)
    else:
        norm = model.decoder.block[layer].layer[0].layer_norm

        def stream(p: int) -> Parts:
            return _frozen_rms(decoder(p, layer, False), norm)
    return Streams(stream, stream, None, scale)


def _t5_constant(model, kind: str, head: int, query: int, key: int) -> float:
    """T5's relative position bias of the pair (encoder–decoder attention has none)."""
    from .positions import t5_bias

    if kind == "cross":
        return 0.0
    bias = t5_bias(model, max(query, key) + 1).get("encoder" if kind == "enc_self"
                                                   else "decoder")
    return float(bias[head, query, key]) if bias is not None else 0.0


def _is_t5(backend) -> bool:
    model = backend.bundle.model
    return backend.caps.positional == "relative_bias" and hasattr(model, "encoder") \
        and hasattr(model.encoder, "block")


def streams(backend, trace: Trace, kind: str, layer: int, batch: int) -> Streams:
    """The Streams of one head of a Hugging Face pre-norm decoder-only model, a BERT-like
    post-LN encoder or T5 (ValueError for another layout)."""
    model, caps = backend.bundle.model, backend.caps
    if _is_t5(backend):
        return _t5_streams(backend, trace, kind, layer, batch)
    if caps.positional not in ("learned", "rotary"):
        raise ValueError(f"no component split for {caps.positional!r} positions")
    mods = projection_modules(model, caps.family)[kind]
    paths = [attention_of(model, m)[0] for m in mods[:layer + 1]]
    attn_mod = attention_of(model, mods[layer])[1]
    run = _Run(backend, trace, kind, layer, batch)
    if caps.family == "decoder" and caps.norm == "pre":
        norm = pre_norm(model, paths[layer])
        freeze = frozen_parts if isinstance(norm, torch.nn.LayerNorm) else _frozen_rms

        def stream(p: int) -> Parts:
            return freeze(_pre_stream(run, model, layer, p), norm)
    elif caps.family == "encoder" and caps.norm == "post" and hasattr(attn_mod, "query"):
        def stream(p: int) -> Parts:
            return _bert_stream(run, model, paths, layer, p)
    else:
        raise ValueError("component parts cover pre-norm decoder-only and BERT-like "
                         "Hugging Face models")
    dh = run.weights[layer]["W_Q"].shape[2]
    return Streams(stream, stream, run.positions if caps.positional == "rotary" else None,
                   float(getattr(attn_mod, "scaling", dh ** -0.5)))


def qk_parts(backend, trace: Trace, kind: str, layer: int, head: int, query: int, key: int,
             batch: int) -> tuple[Parts, Parts, float, float]:
    """Backend.qk_parts for a Hugging Face pre-norm decoder-only model, a BERT-like post-LN
    encoder or T5 (see base.py)."""
    s = streams(backend, trace, kind, layer, batch)
    w = circuit_weights(backend.bundle, kind, layer)
    wq, bq = torch.from_numpy(w["W_Q"][head]), torch.from_numpy(w["b_Q"][head])
    wk, bk = torch.from_numpy(w["W_K"][head]), torch.from_numpy(w["b_K"][head])
    q = project_parts(s.query(query), lambda t: t @ wq + bq)
    k = project_parts(s.key(key), lambda t: t @ wk + bk)
    if s.positions is not None:
        model = backend.bundle.model
        q = _rotate(q, model, int(s.positions[query]))
        k = _rotate(k, model, int(s.positions[key]))
    constant = _t5_constant(backend.bundle.model, kind, head, query, key) \
        if _is_t5(backend) else 0.0
    return q, k, s.scale, constant
