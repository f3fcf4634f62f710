"""What the tour walks and what the model is: every step's sentences are chosen from these.

`Facts` is read from the model's capabilities (model.backends.capabilities) and from the Trace
itself (the position table, the position ids, the key/value heads, the vocabulary's pieces), so
a step states only what this model backs: its tokenizer's marks, its positional scheme, its
norm placement, grouped key/value heads, encoder–decoder, decoder-only or encoder-only.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np
import streamlit as st

from model import Bundle, Trace
from model.analysis.block_walk import BlockWalk, block_walk
from model.backends import backend_for, capabilities
from model.backends import facts as backend_facts
from ui.common import chart
from ui.context import Ctx
from ui.i18n import _
from ui.model_words import fill_label
from ui.runtime import cached_vocab, cached_weights
from viz import steps as viz_steps
from viz import tour as viz_tour

# how positions reach the model: a table added to the embeddings, or inside attention
TABLES = ("sinusoidal", "learned")

# Config names a model may give its sizes, most specific first ({stack}: Marian's and BART's
# encoder_* and decoder_*); the tour prints the one this model's config.json holds.
WIDTH = ("n_embd", "hidden_size", "d_model", "dim")
FFN = ("n_inner", "intermediate_size", "d_ff", "{stack}_ffn_dim", "ffn_dim", "hidden_dim")
VOCAB = ("vocab_size", "n_vocab")
HEADS = ("n_head", "num_attention_heads", "{stack}_attention_heads", "n_heads", "num_heads")
KV_HEADS = ("num_key_value_heads", "n_kv_heads", "num_kv_heads")
HEAD_DIM = ("head_dim", "d_kv", "d_head")
POSITIONS = ("n_positions", "max_position_embeddings", "max_len", "n_ctx")


@dataclass(frozen=True)
class Facts:
    """What the model is, as far as the tour speaks of it."""

    family: str  # "seq2seq", "decoder" (decoder-only) or "encoder" (encoder-only)
    raw_hooks: bool  # the lab's own code, every intermediate recorded (√d_model, LayerNorm)
    tokenizer: str  # "sentencepiece" ▁, "byte_bpe" Ġ, "wordpiece" ##, "plain" (no marks)
    positional: str  # "sinusoidal", "learned", "rotary", "relative_bias" or "none"
    sinusoid: str | None  # the fixed table's layout ("interleaved", "halves") where sinusoidal
    norm: str  # "pre" or "post"
    activation: str  # the FFN's activation where the model says ("" unknown)
    d_ff: int  # the FFN's width where known (0 unknown)
    vocab_size: int  # pieces in the tokenizer's vocabulary


def model_facts(bundle: Bundle, trace: Trace, vocab: list[str]) -> Facts:
    """Facts of a model from its capabilities, its Trace's position table and its vocabulary."""
    caps = capabilities(bundle)
    layout = viz_tour.sinusoid_layout(trace.pos_table)
    positional = caps.positional
    has_table = trace.pos_table.shape[0] > 1 and bool(np.any(trace.pos_table))
    if positional in ("learned", "none") and layout:
        positional = "sinusoidal"  # a fixed sine/cosine table (Marian's), not a trained one
    elif positional in TABLES and not has_table:
        positional = "none"
    return Facts(family=caps.family, raw_hooks=caps.raw_hooks,
                 tokenizer=viz_tour.tokenizer_kind(vocab), positional=positional,
                 sinusoid=layout if positional == "sinusoidal" else None, norm=caps.norm,
                 activation=caps.activation, d_ff=int(caps.d_ff or 0), vocab_size=len(vocab))


@dataclass(frozen=True)
class Names:
    """What the tour calls the walked stack's sizes: the model's own config names (GPT-2's
    n_embd, Llama's hidden_size, the lab's d_model), or the paper's notation where its config
    has none; never another code base's variable names."""

    width: str
    ffn: str
    vocab: str
    heads: str
    kv_heads: str
    head_dim: str
    positions: str


def config_fields(bundle: Bundle) -> dict:
    """The model's config as its file names it: a Hugging Face config's to_dict (without the
    aliases its attribute_map adds, so GPT-2 says n_embd, not hidden_size), or the lab's
    ModelConfig's fields and properties; {} for a model without a config."""
    cfg = getattr(bundle.model, "config", None)
    if cfg is None:
        return {}
    if hasattr(cfg, "to_dict"):
        return dict(cfg.to_dict())
    fields = dict(vars(cfg))
    for name, member in vars(type(cfg)).items():
        if isinstance(member, property):
            try:
                fields[name] = getattr(cfg, name)
            except Exception:  # noqa: BLE001 - a property this model cannot answer is left out
                continue
    return fields


def _named(fields: dict, candidates: tuple[str, ...], value: int | None, stack: str) -> str:
    """The first candidate the config holds (with `value`, where one is given), else ''."""
    for name in (c.format(stack=stack) for c in candidates):
        if fields.get(name) is not None and (value is None or fields[name] == value):
            return name
    return ""


def model_names(fields: dict, stack: str, d: int, f: int, h: int, dh: int,
                rows: int) -> Names:
    """Names of the sizes d (width), f (FFN), h (heads), dh (head size) and rows (position
    table) from the config's fields; the paper's notation, or a formula of named sizes that is
    true here (GPT-2's FFN is 4 · n_embd), where the config names none."""
    width = _named(fields, WIDTH, d, stack) or "d_model"
    heads = _named(fields, HEADS, h, stack) or "h"
    ffn = _named(fields, FFN, f or None, stack) or (f"4 · {width}" if f == 4 * d else "d_ff")
    head_dim = _named(fields, HEAD_DIM, dh, stack) or (
        f"{width} / {heads}" if h * dh == d else "d_k")
    return Names(width=width, ffn=ffn, vocab=_named(fields, VOCAB, None, stack) or "vocab_size",
                 heads=heads, kv_heads=_named(fields, KV_HEADS, None, stack) or "kv_heads",
                 head_dim=head_dim,
                 positions=_named(fields, POSITIONS, rows, stack) or _("positions"))


@dataclass
class Where:
    """Which stack the tour walks (the encoder, or the decoder of a decoder-only model)."""

    ctx: Ctx

    @property
    def t(self) -> Trace:
        return self.ctx.trace

    @property
    def bundle(self) -> Bundle:
        return self.ctx.bundle

    @property
    def b(self) -> int:
        return self.ctx.b

    @cached_property
    def vocab(self) -> list[str]:
        return cached_vocab(self.bundle, self.ctx.key)  # ui/runtime.py: one list per model

    @cached_property
    def facts(self) -> Facts:
        return model_facts(self.bundle, self.t, self.vocab)

    @cached_property
    def names(self) -> Names:
        """The model's own names for the walked stack's sizes (Names)."""
        _bs, _n, d, h = self.dims
        q = self.t.q.get(self.kind)  # not every step records q: then the even split
        dh = int(q.shape[-1]) if q is not None else d // max(h, 1)
        return model_names(config_fields(self.bundle), self.stack, d, self.facts.d_ff, h, dh,
                           int(self.t.pos_table.shape[0]))

    @cached_property
    def encoder(self) -> bool:
        return "enc_self" in self.t.attn and any(self.t.src_tokens)

    @property
    def side(self) -> str:
        return "src" if self.encoder else "tgt"

    @property
    def stack(self) -> str:
        return "encoder" if self.encoder else "decoder"

    @property
    def hid(self) -> str:
        return "enc" if self.encoder else "dec"

    @property
    def kind(self) -> str:
        return "enc_self" if self.encoder else "dec_self"

    @property
    def seq(self) -> str:
        return "n_enc_seq" if self.encoder else "n_dec_seq"

    @property
    def all_tokens(self) -> list[list[str]]:
        return self.t.tokens(self.side)

    @property
    def tokens(self) -> list[str]:
        return self.all_tokens[self.b]

    @property
    def ids(self) -> np.ndarray:
        return self.t.ids(self.side)

    @property
    def head(self) -> int:
        h = int(st.session_state.get("head", 0))
        return h if 0 <= h < self.t.attn[self.kind].shape[2] else 0

    @property
    def n_heads(self) -> int:
        return int(self.t.attn[self.kind].shape[2])

    @property
    def n_kv_heads(self) -> int:
        """Key/value heads of the walked attention (fewer than query heads under GQA)."""
        k = self.t.k.get(self.kind)
        return int(k.shape[2]) if k is not None else self.n_heads

    @property
    def dims(self) -> tuple[int, int, int, int]:
        """(bs, n (padded), width, heads) of the walked stack."""
        bs, n = self.ids.shape
        return bs, n, int(self.t.hidden[self.hid].shape[-1]), self.n_heads

    @property
    def pads(self) -> int:
        return self.ids.shape[1] - len(self.tokens)

    def act(self, name: str) -> np.ndarray | None:
        return self.t.acts.get(f"{self.stack}.{name}")

    @cached_property
    def walk(self) -> viz_steps.Walk:
        prefix = f"{self.stack}.layers.0.self_attn"
        if self.facts.raw_hooks and f"{prefix}.hook_in" in self.t.acts:
            weights = cached_weights(self.bundle, self.ctx.key, self.kind, 0)
            return viz_steps.walkthrough(self.t, weights, self.kind, 0, self.b, self.head)
        walk = viz_tour.trace_walk(self.t, self.kind, 0, self.b, self.head)
        # the block's output from the recorded attention and the layer's W_O, b_O; a backend
        # without per-head weights (none, or a layout it cannot split): steps 13-14 say so
        read = getattr(backend_for(self.bundle), "circuit_weights", None)
        if read is None:
            return walk
        try:
            weights = read(self.kind, 0)
        except ValueError:
            return walk
        concat, out = viz_tour.attention_block(self.t, weights, self.kind, 0, self.b)
        # post-norm: layer 0's attention reads the embedding output itself, hidden state 0
        x = self.t.hidden[self.hid][0, self.b].astype(np.float64) \
            if self.facts.norm == "post" else walk.x
        return replace(walk, x=x, x_kv=x if self.facts.norm == "post" else walk.x_kv,
                       concat=concat, out=out)

    @cached_property
    def block(self) -> BlockWalk | None:
        """Layer 0 after its attention, rebuilt from the weights (model.analysis.block_walk):
        for a model whose recorder keeps no norm or FFN intermediates; None where the backend
        cannot give them (the step then says so)."""
        if self.facts.raw_hooks:
            return None
        try:
            return block_walk(self.bundle, self.t, self.kind, 0, self.b)
        except ValueError:
            return None

    @cached_property
    def figures(self) -> dict[str, viz_steps.Step]:
        """The walkthrough's figures by step name (viz.steps: X, Q, K, V, QKᵀ, ÷√d_k, masked,
        softmax, ·V, concat, ·W_O)."""
        return {s.name: s for s in viz_steps.steps(
            self.walk, self.t, hide_pad=False, numbers=self.ctx.numbers,
            colorscale=self.ctx.colorscale, fill=fill_label(backend_facts(self.bundle)))}

    def draw(self, *names: str) -> None:
        """Chart the walkthrough's figures with these names, in this order."""
        for name in names:
            chart(self.figures[name].figure, self.ctx)

    @cached_property
    def scale(self) -> str:
        """How this head's recorded scores relate to QKᵀ: "sqrt", "none" or "other"."""
        return viz_tour.score_scale(self.walk)


def say(text: str, shape: str | None = None) -> None:
    st.markdown(text)
    if shape:
        st.code(shape, language=None, wrap_lines=True)


def skip(reason: str) -> None:
    st.info(reason)


def hf_note() -> None:
    skip(_("The lab records this intermediate tensor inside its own checkpoints' code only; "
           "for a Hugging Face model its recorder keeps the attention (q, k, v, scores, "
           "weights), so this step has no chart here. Go on with the next step."))


def percent(p: float) -> str:
    """A probability as a percentage that never reads 0 % for a non-zero value."""
    if p >= 0.01 or p == 0:
        return f"{p:.0%}"
    return f"{p:.2%}" if p >= 0.0001 else f"{p:.1e}"


def padded(w: Where) -> list[str]:
    return list(w.tokens) + ["<pad>"] * w.pads
