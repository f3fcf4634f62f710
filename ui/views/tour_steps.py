"""The guided tour's steps: seed 000's path on the typed sentence, with the model's numbers.

Each step draws a title, two or three sentences, the tensor shapes in the seeds' notation
(bs, n_enc_seq, d_hidn, n_head, d_head …) and figures from viz/. A step a model cannot show
(a Hugging Face model records no W_O input or FFN; a decoder-only model has no encoder) says
so in a note and keeps its number, so `step=7` means the same step for every model.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import streamlit as st

from model import Bundle, Trace
from model.analysis import qk_terms
from model.backends import capabilities
from ui.common import chart
from ui.context import Ctx
from ui.i18n import N_, _
from ui.runtime import cached_vocab, cached_weights
from ui.text import md
from viz import attention as viz_attention
from viz import embeddings as viz_embeddings
from viz import masks as viz_masks
from viz import positional as viz_positional
from viz import qkterms as viz_qkterms
from viz import steps as viz_steps
from viz import tokens as viz_tokens
from viz import tour as viz_tour
from viz import translation as viz_translation


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
    def tokens(self) -> list[str]:
        return (self.t.src_tokens if self.encoder else self.t.tgt_tokens)[self.b]

    @property
    def ids(self) -> np.ndarray:
        return self.t.src_ids if self.encoder else self.t.tgt_ids

    @property
    def native(self) -> bool:
        """Every intermediate has a named hook (the lab's own models)."""
        return capabilities(self.bundle).raw_hooks

    @property
    def head(self) -> int:
        h = int(st.session_state.get("head", 0))
        return h if 0 <= h < self.t.attn[self.kind].shape[2] else 0

    @property
    def dims(self) -> tuple[int, int, int, int]:
        """(bs, n (padded), d_hidn, n_head) of the walked stack."""
        bs, n = self.ids.shape
        return bs, n, int(self.t.hidden[self.hid].shape[-1]), int(self.t.attn[self.kind].shape[2])

    def act(self, name: str) -> np.ndarray | None:
        return self.t.acts.get(f"{self.stack}.{name}")

    @cached_property
    def walk(self) -> viz_steps.Walk:
        prefix = f"{self.stack}.layers.0.self_attn"
        if self.native and f"{prefix}.hook_in" in self.t.acts:
            weights = cached_weights(self.bundle, self.ctx.key, self.kind, 0)
            return viz_steps.walkthrough(self.t, weights, self.kind, 0, self.b, self.head)
        return viz_tour.trace_walk(self.t, self.kind, 0, self.b, self.head)

    @cached_property
    def step_figures(self) -> list[viz_steps.Step]:
        return viz_steps.steps(self.walk, self.t, hide_pad=False, numbers=self.ctx.numbers,
                               colorscale=self.ctx.colorscale)


def say(text: str, shape: str | None = None) -> None:
    st.markdown(text)
    if shape:
        st.code(shape, language=None, wrap_lines=True)


def skip(reason: str) -> None:
    st.info(reason)


def hf_note() -> None:
    skip(_("This step needs this project's own checkpoints: a Hugging Face model's recorder "
           "keeps the attention (q, k, v, scores, weights) but not this intermediate tensor. "
           "Go on with the next step."))


def pieces(w: Where) -> None:
    t = w.t
    side, toks = w.side, (t.src_tokens if w.encoder else t.tgt_tokens)
    say(_("Each sentence is cut into SentencePiece pieces; ▁ marks the start of a word. Every "
          "piece has an id in the vocabulary of {v:,} pieces. Sentence {b} has {n} pieces, "
          "special markers included.").format(v=_vocab_size(w.bundle), b=w.b + 1,
                                              n=len(w.tokens)),
        "pieces: " + ", ".join(f"{len(x)}" for x in toks))
    ids = t.src_ids if side == "src" else t.tgt_ids
    for b, p in enumerate(toks):
        st.markdown(_("**Sentence {b}** · {n} pieces").format(b=b + 1, n=len(p)))
        st.html(viz_tokens.chips_html(p, ids[b, : len(p)]))


def padding(w: Where) -> None:
    bs, n, _d, _h = w.dims
    pads = n - len(w.tokens)
    say(_("The sentences have different lengths, so the shorter ones are filled up with the pad "
          "id {pad} to the longest one, {n} pieces, as `pad_sequence(…, padding_value=0)` does "
          "in seed 000. Sentence {b} gets {k} pad slot(s).").format(
              pad=w.t.pad_id, n=n, b=w.b + 1, k=pads),
        f"inputs: (bs, {w.seq}) = ({bs}, {n})")
    chart(viz_tokens.id_matrix_figure(w.t, w.side, w.ctx.numbers), w.ctx)


def embedding(w: Where) -> None:
    bs, n, d, _h = w.dims
    tok = w.act("hook_tok")
    say(_("`nn.Embedding(n_vocab, d_hidn)` looks up one row of {d} numbers per id: the "
          "piece's vector. This model multiplies it by √d_hidn = {s:.1f}, as the paper does; "
          "the pad id's row is all zeros.").format(d=d, s=np.sqrt(d)),
        f"input_embs: (bs, {w.seq}, d_hidn) = ({bs}, {n}, {d})")
    if tok is None:
        hf_note()
        return
    chart(viz_tour.matrix_figure(tok[w.b], _padded(w), _("input_embs of sentence {b}: one row "
                                                           "per piece").format(b=w.b + 1),
                                 _("dimension")), w.ctx)


def positional(w: Where) -> None:
    bs, n, d, _h = w.dims
    sinus = capabilities(w.bundle).positional == "sinusoidal"
    if sinus:
        text = _("Positional encoding: PE(pos, 2i) = sin(pos / 10000^(2i/d_hidn)) and "
                 "PE(pos, 2i+1) = cos(…), a fixed table with one row per position. Real pieces "
                 "get positions 1, 2, 3, …; pad slots get position 0, so they all read row 0.")
    else:
        text = _("This model learns its position table (as in seed 001) instead of the "
                 "sine/cosine formula: one trained row per position. Position ids number the "
                 "pieces; the chart shows the table's first rows.")
    rows = w.t.pos_table.shape[0]
    say(text, f"pos_encoding: (n_seq, d_hidn) = ({rows}, {d}); "
              f"positions: (bs, {w.seq}) = ({bs}, {n})")
    if w.hid in w.t.positions:
        chart(viz_tokens.positions_figure(w.t, w.side, w.ctx.numbers), w.ctx)
    chart(viz_positional.table_heatmap(w.t.pos_table, min(rows, max(n + 1, 16)),
                                       title=_("Positional table, first rows")), w.ctx)


def embedding_sum(w: Where) -> None:
    bs, n, d, _h = w.dims
    say(_("`input_sums = input_embs + pos_embs`: both are ({n} × {d}) per sentence, so they "
          "add element by element, and every piece's vector now also says where it stands. "
          "This sum is what the first layer reads.").format(n=n, d=d),
        f"input_sums: (bs, {w.seq}, d_hidn) = ({bs}, {n}, {d})")
    chart(viz_tour.matrix_figure(w.t.hidden[w.hid][0, w.b], _padded(w),
                                 _("input_sums of sentence {b}").format(b=w.b + 1),
                                 _("dimension")), w.ctx)
    if w.act("hook_tok") is not None:
        chart(viz_positional.term_sizes(w.t, w.b, w.hid), w.ctx)


def pad_mask(w: Where) -> None:
    bs, n, _d, _h = w.dims
    pads = n - len(w.tokens)
    figs = viz_masks.mask_figures(w.t, w.b)
    if w.encoder:
        say(_("The pad mask (패딩 마스크): `attn_mask = inputs.eq(0)`, True where the key is a "
              "pad piece, the same for every query row. Sentence {b} has {k} pad slot(s), so "
              "its last {k} column(s) are True.").format(b=w.b + 1, k=pads),
            f"attn_mask: (bs, n_q_seq, n_k_seq) = ({bs}, {n}, {n})")
        chart(figs["encoder pad mask"], w.ctx)
    else:
        say(_("A decoder-only model has one self-attention mask: the pad keys and every future "
              "position are blocked (True). Sentence {b} has {k} pad slot(s).").format(
                  b=w.b + 1, k=pads),
            f"attn_mask: (bs, n_q_seq, n_k_seq) = ({bs}, {n}, {n})")
        chart(figs.get("combined decoder mask") or next(iter(figs.values())), w.ctx)


def _head_shape(w: Where, what: str) -> str:
    bs, n, _d, h = w.dims
    return f"{what}: (bs, n_head, n_seq, d_head) = ({bs}, {h}, {n}, {w.walk.d_head})"


def qkv(w: Where) -> None:
    _bs, _n, d, h = w.dims
    say(_("W_Q, W_K and W_V project every piece's vector to d_hidn = {d} numbers, which are "
          "split into n_head = {h} heads of d_head = {dh}. Head {head} of layer 0 uses its own "
          "{dh} columns of each (head= in the link picks another).").format(
              d=d, h=h, dh=w.walk.d_head, head=w.head),
        "\n".join(_head_shape(w, x) for x in ("q_s", "k_s", "v_s")))
    for step in w.step_figures[1:4]:
        chart(step.figure, w.ctx)


def scores(w: Where) -> None:
    bs, n, _d, h = w.dims
    say(_("`scores = Q·Kᵀ`: one dot product per query and key, an {n} × {n} table per head. "
          "A large value means the query and the key point the same way.").format(n=n),
        f"scores: (bs, n_head, n_q_seq, n_k_seq) = ({bs}, {h}, {n}, {n})")
    chart(w.step_figures[4].figure, w.ctx)
    _qk_table(w)


def _qk_table(w: Where) -> None:
    """The most-attended pair's score split into the terms it is made of (qk_terms)."""
    m = len(w.tokens)
    if not m or w.kind not in w.t.scores:
        return
    q, k, _p = viz_tour.top_pair(w.walk.probs, m, m)
    try:
        terms = qk_terms(w.bundle, w.t, w.kind, 0, w.head, q, k, batch=w.b)
    except ValueError:
        return  # no decomposition for this model's positions: the step is complete without
    score = float(w.t.scores[w.kind][0, w.b, w.head, q, k])
    st.caption(_("Why query “{q}” and key “{k}” score {s:.3f} (QKᵀ/√d_k) in head {h}: the "
                 "parts of the two vectors the score is made of, which add up to it.").format(
                     q=md(w.tokens[q]), k=md(w.tokens[k]), s=score, h=w.head))
    st.dataframe(viz_qkterms.terms_rows(terms, score), hide_index=True)


def scale(w: Where) -> None:
    bs, n, _d, h = w.dims
    dh = w.walk.d_head
    before = float(np.max(w.walk.qk[0]))
    say(_("The scores are divided by √d_k = √{dh} = {s:.2f}, so that their spread does not "
          "grow with the head size and softmax is not pushed to 0 or 1 too early. The first "
          "query's largest score goes from {a:.2f} to {c:.2f}.").format(
              dh=dh, s=np.sqrt(dh), a=before, c=before / np.sqrt(dh)),
        f"scores: (bs, n_head, n_q_seq, n_k_seq) = ({bs}, {h}, {n}, {n})")
    chart(w.step_figures[5].figure, w.ctx)


def mask_fill(w: Where) -> None:
    bs, n, _d, h = w.dims
    say(_("`scores.masked_fill_(attn_mask, -1e9)`: every blocked cell gets −1e9, so softmax "
          "will turn it into 0. Here {k} of the {m} cells are blocked; blank cells in the "
          "chart hold −1e9.").format(k=int(w.walk.blocked.sum()), m=w.walk.blocked.size),
        f"scores: (bs, n_head, n_q_seq, n_k_seq) = ({bs}, {h}, {n}, {n})")
    chart(w.step_figures[6].figure, w.ctx)


def softmax(w: Where) -> None:
    bs, n, _d, h = w.dims
    m = len(w.tokens)
    q, k, p = viz_tour.top_pair(w.walk.probs, m, m)
    say(_("Softmax over each row turns the scores into weights that sum to 1; blocked cells "
          "are exactly 0. Query “{q}” puts {p:.0%} of its weight on “{k}”.").format(
              q=md(w.tokens[q]), k=md(w.tokens[k]), p=p),
        f"attn_prob: (bs, n_head, n_q_seq, n_k_seq) = ({bs}, {h}, {n}, {n})")
    chart(w.step_figures[7].figure, w.ctx)


def context(w: Where) -> None:
    say(_("`context = attn_prob · V`: each query's output is the weighted sum of the value "
          "vectors, with the weights of the previous step. It has the shape of Q."),
        _head_shape(w, "context"))
    chart(w.step_figures[8].figure, w.ctx)


def concat(w: Where) -> None:
    bs, n, d, h = w.dims
    say(_("The {h} heads' contexts are put side by side again (transpose and view: "
          "n_head · d_head = {d}) and multiplied by W_O, a {d} × {d} linear layer. The result "
          "has the shape of the input again.").format(h=h, d=d),
        f"context: (bs, n_seq, n_head·d_head) = ({bs}, {n}, {d})\n"
        f"output: (bs, n_seq, d_hidn) = ({bs}, {n}, {d})")
    if w.walk.concat.shape[1] == 0:
        hf_note()
        return
    for step in w.step_figures[9:11]:
        chart(step.figure, w.ctx)


def residual(w: Where) -> None:
    bs, n, d, _h = w.dims
    pre = capabilities(w.bundle).norm == "pre"
    if pre:
        text = _("Pre-LN (seed 001): `x + Attention(LayerNorm(x))`. The input is normalised "
                 "before attention, and the block's output is added to the unnormalised input "
                 "(the residual connection); a final LayerNorm closes the stack.")
    else:
        text = _("Post-LN (the paper, seeds 000 and 004): `LayerNorm(x + Attention(x))`. The "
                 "block's output is added to its input (the residual connection), then each "
                 "piece's vector is normalised to mean 0 and variance 1 and scaled by γ, "
                 "shifted by β.")
    say(text, f"x, output, LayerNorm(x + output): (bs, {w.seq}, d_hidn) = ({bs}, {n}, {d})")
    after = w.act("layers.0.hook_resid_mid")
    out = w.act("layers.0.self_attn.hook_out")
    if after is None or out is None:
        hf_note()
        return
    m = len(w.tokens)
    mean, std = viz_tour.layer_stats(after[w.b, :m])
    st.caption(_("After this step the pieces' vectors have mean {mean:.3f} and standard "
                 "deviation {std:.3f} on average.").format(mean=mean, std=std))
    parts = {_("x (layer input)"): w.t.hidden[w.hid][0, w.b, :m],
             _("attention output"): out[w.b, :m], _("after the residual step"): after[w.b, :m]}
    chart(viz_tour.norms_figure(parts, w.tokens, _("Vector length per piece")), w.ctx)


def ffn(w: Where) -> None:
    bs, n, d, _h = w.dims
    hidden = w.act("layers.0.ffn.hook_hidden")
    act = capabilities(w.bundle).activation
    f = hidden.shape[-1] if hidden is not None else capabilities(w.bundle).d_ff
    say(_("The position-wise FFN: Linear d_hidn → d_ff ({d} → {f}), the activation {act}, "
          "Linear back to {d}, for each piece separately; then residual and LayerNorm again, "
          "as in the previous step.").format(d=d, f=f, act=act.upper() or "?"),
        f"ff_1: (bs, {w.seq}, d_ff) = ({bs}, {n}, {f})\n"
        f"ff_3: (bs, {w.seq}, d_hidn) = ({bs}, {n}, {d})")
    if hidden is None:
        hf_note()
        return
    m = len(w.tokens)
    if act == "relu":
        st.caption(_("ReLU = max(0, x): {z:.0%} of the hidden values are exactly 0 here.")
                   .format(z=viz_tour.zero_share(hidden[w.b, :m])))
    else:
        st.caption(_("GELU lets small negative values through, so few hidden values are "
                     "exactly 0 ({z:.1%} here).").format(z=viz_tour.zero_share(hidden[w.b, :m])))
    chart(viz_tour.matrix_figure(hidden[w.b, :m], w.tokens, _("FFN hidden layer after the "
                                                                "activation"), _("unit")), w.ctx)


def next_layer(w: Where) -> None:
    bs, n, d, _h = w.dims
    layers = w.t.hidden[w.hid].shape[0] - 1
    say(_("The layer's output has the shape of its input, so it feeds the next layer: {L} "
          "layers in all. The chart shows how much each layer changes each piece.").format(
              L=layers),
        f"layer output: (bs, {w.seq}, d_hidn) = ({bs}, {n}, {d}) × {layers}")
    chart(viz_embeddings.layer_change(w.t, w.hid, w.b), w.ctx)


def subsequent(w: Where) -> None:
    t = w.t
    if "dec_self" not in t.masks:
        skip(_("This model has no decoder, so there is no subsequent mask."))
        return
    bs, n = t.tgt_ids.shape
    say(_("The decoder reads the output so far, shifted right. The subsequent (look-ahead) "
          "mask (룩-어헤드 마스크), `triu(diagonal=1)`, blocks every future position, and "
          "`attn_pad_mask + attn_dec_mask > 0` adds the decoder's own pad keys."),
        f"attn_dec_mask: (bs, n_dec_seq, n_dec_seq) = ({bs}, {n}, {n})")
    figs = viz_masks.mask_figures(t, w.b)
    cols = st.columns(2)
    for col, name in zip(cols, ("decoder subsequent mask", "combined decoder mask")):
        if name in figs:
            with col:
                chart(figs[name], w.ctx)
    chart(viz_attention.head_figure(t, "dec_self", 0, w.b, w.head, numbers=w.ctx.numbers,
                                    colorscale=w.ctx.colorscale), w.ctx)


def cross(w: Where) -> None:
    t = w.t
    if "cross" not in t.attn:
        skip(_("This model has no encoder, so there is no cross-attention "
               "(인코더-디코더 어텐션); its decoder attends to itself only."))
        return
    layer = t.n_layers("cross") - 1
    bs, n_t = t.tgt_ids.shape
    n_s = t.src_ids.shape[1]
    m_t, m_s = len(t.tgt_tokens[w.b]), len(t.src_tokens[w.b])
    q, k, p = viz_tour.top_pair(t.attn["cross"][layer, w.b, w.head], m_t, m_s)
    say(_("Cross-attention (인코더-디코더 어텐션): the queries come from the decoder, keys and "
          "values from the encoder output, so the table is n_dec_seq × n_enc_seq. In layer "
          "{L}, head {h}, decoder piece “{q}” looks most at source piece “{k}” ({p:.0%}).")
        .format(L=layer, h=w.head, q=md(t.tgt_tokens[w.b][q]), k=md(t.src_tokens[w.b][k]),
                p=p),
        f"attn_prob: (bs, n_head, n_dec_seq, n_enc_seq) = ({bs}, {t.attn['cross'].shape[2]}, "
        f"{n_t}, {n_s})")
    chart(viz_attention.head_figure(t, "cross", layer, w.b, w.head, numbers=w.ctx.numbers,
                                    colorscale=w.ctx.colorscale), w.ctx)


def output(w: Where) -> None:
    t = w.t
    if t.logits is None or not t.tgt_tokens[w.b]:
        skip(_("This model has no output layer over the vocabulary (an encoder only)."))
        return
    vocab = _vocab(w.bundle, w.ctx.key)
    steps = viz_translation.steps_from_logits(t, w.b, vocab)
    bs, n_t, v = t.logits.shape
    first = steps[0]
    say(_("The last decoder layer's vectors are multiplied by the output matrix: one score "
          "(logit) per vocabulary piece, and softmax makes them probabilities. After “{prev}” "
          "the most likely piece is “{top}” ({p:.0%}); piece by piece the output reads: {text}")
        .format(prev=md(t.tgt_tokens[w.b][0]), top=md(first.top[0][0]), p=first.top[0][1],
                text=md(" ".join(s.chosen for s in steps))),
        f"logits: (bs, n_dec_seq, n_vocab) = ({bs}, {n_t}, {v})")
    chart(viz_translation.step_bar_figure(first, 0), w.ctx)
    chart(viz_translation.topk_figure(steps), w.ctx)


STEPS = {  # id -> (title, renderer); titles marked for translation, translated when shown
    "pieces": (N_("SentencePiece pieces and ids"), pieces),
    "padding": (N_("Padding with 0"), padding),
    "embedding": (N_("Embedding lookup"), embedding),
    "positional": (N_("Positional encoding (포지셔널 인코딩)"), positional),
    "sum": (N_("Embedding + position"), embedding_sum),
    "pad_mask": (N_("The pad mask"), pad_mask),
    "qkv": (N_("Q, K and V of one head"), qkv),
    "qk": (N_("QKᵀ"), scores),
    "scale": (N_("÷√d_k"), scale),
    "mask": (N_("Mask with −1e9"), mask_fill),
    "softmax": (N_("Softmax"), softmax),
    "context": (N_("·V"), context),
    "concat": (N_("Heads concatenated, ·W_O"), concat),
    "residual": (N_("Residual and LayerNorm"), residual),
    "ffn": (N_("FFN and its activation"), ffn),
    "next": (N_("The next layer"), next_layer),
    "subsequent": (N_("Decoder: the subsequent mask"), subsequent),
    "cross": (N_("Cross-attention"), cross),
    "output": (N_("Output softmax and the predicted piece"), output),
}


# The hook groups each step reads (the app records only these; model.backends.NEED_GROUPS).
# Every step reads attention and hidden states through Where.dims and Where.head.
_BASE = frozenset({"attn", "hidden"})
_HEAD_STEPS = _BASE | {"q", "k", "v", "scores", "steps"}  # one head's walk, step by step
NEEDS: dict[str, frozenset[str]] = {
    "pieces": _BASE, "padding": _BASE, "embedding": _BASE | {"embed"}, "positional": _BASE,
    "sum": _BASE | {"embed"}, "pad_mask": _BASE,
    **dict.fromkeys(("qkv", "qk", "scale", "mask", "softmax", "context", "concat"), _HEAD_STEPS),
    "residual": _BASE | {"steps", "tour"}, "ffn": _BASE | {"tour"}, "next": _BASE,
    "subsequent": _BASE, "cross": _BASE, "output": _BASE | {"logits"},
}


def _padded(w: Where) -> list[str]:
    n = w.ids.shape[1]
    return list(w.tokens) + ["<pad>"] * (n - len(w.tokens))


def _vocab_size(bundle: Bundle) -> int:
    return int(bundle.config.vocab_size or 0)


def _vocab(bundle: Bundle, key: str) -> list[str]:
    return cached_vocab(bundle, key)  # ui/runtime.py: one list per model, bounded
