"""Steps 14–19: residual and norm, the FFN, the stack of layers, the decoder and the output."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import streamlit as st

from model.analysis.block_walk import BlockWalk, mean_rms
from model.backends import facts
from ui.common import chart
from ui.i18n import _
from ui.text import md
from ui.views.tour.where import Names, Where, hf_note, percent, say, skip
from viz import attention as viz_attention
from viz import embeddings as viz_embeddings
from viz import masks as viz_masks
from viz import tour as viz_tour
from viz import translation as viz_translation


def residual(w: Where) -> None:
    bs, n, d, _h = w.dims
    pre = w.facts.norm == "pre"
    if w.facts.raw_hooks and pre:
        text = _("Pre-LN (seed 001): `x + Attention(LayerNorm(x))`. The input is normalised "
                 "before attention, and the block's output is added to the unnormalised input "
                 "(the residual connection); a final LayerNorm closes the stack.")
    elif w.facts.raw_hooks:
        text = _("Post-LN (the paper, seeds 000 and 004): `LayerNorm(x + Attention(x))`. The "
                 "block's output is added to its input (the residual connection), then each "
                 "piece's vector is normalised to mean 0 and variance 1 and scaled by γ, "
                 "shifted by β.")
    elif pre:
        text = _("This model normalises before each block (pre-norm, as in seed 001): "
                 "`x + Attention(Norm(x))`. The block's output is added to the unnormalised "
                 "input (the residual connection).")
    else:
        text = _("This model normalises after each block (post-norm, as in the paper and seeds "
                 "000 and 004): `Norm(x + Attention(x))`. The block's output is added to its "
                 "input (the residual connection), and the sum is normalised.")
    block = None if w.facts.raw_hooks else w.block
    if block is not None and block.norm_kind == "rms":  # Llama, T5: read from the layer
        text += " " + _("Its norms are RMS norms: `x / √(mean(x²) + eps) · γ`. They subtract "
                        "no mean and add no β: each piece's vector is only rescaled.")
    say(text, f"x, output, x + output: (bs, {w.seq}, {w.names.width}) = ({bs}, {n}, {d})")
    after = w.act("layers.0.hook_resid_mid")
    out = w.act("layers.0.self_attn.hook_out")
    if after is None or out is None:
        _rebuilt_residual(w, pre)
        return
    m = len(w.tokens)
    mean, std = viz_tour.layer_stats(after[w.b, :m])
    st.caption(_("After this step the pieces' vectors have mean {mean:.3f} and standard "
                 "deviation {std:.3f} on average.").format(mean=mean, std=std))
    parts = {_("x (layer input)"): w.t.hidden[w.hid][0, w.b, :m],
             _("attention output"): out[w.b, :m], _("after the residual step"): after[w.b, :m]}
    chart(viz_tour.norms_figure(parts, w.tokens, _("Vector length per piece")), w.ctx)


def _rebuilt_residual(w: Where, pre: bool) -> None:
    """The residual add of layer 0 from the recorded stream and the attention output rebuilt
    from W_O (Where.walk): x + output, which a pre-norm model keeps as is and a post-norm
    model normalises next; the norm itself is drawn from this layer's weights (Where.block)
    where the backend gives them: a post-norm LayerNorm, or an RMS norm before or after."""
    m = len(w.tokens)
    out = w.walk.out
    if out.shape[1] == 0:  # the backend could not split this layout per head
        hf_note()
        return
    x = w.t.hidden[w.hid][0, w.b, :m].astype(np.float64)  # (m, D) layer 0's input
    added = x + out[:m]  # (m, D)
    mean, std = viz_tour.layer_stats(added)
    block = w.block
    if pre or (block is not None and block.norm_kind == "rms"):  # the RMS caption follows
        st.caption(_("After this step the pieces' vectors have mean {mean:.3f} and standard "
                     "deviation {std:.3f} on average.").format(mean=mean, std=std))
    else:
        st.caption(_("Before the norm, x + output has mean {mean:.3f} and standard deviation "
                     "{std:.3f} on average; the norm brings every piece's vector to mean 0 and "
                     "standard deviation 1, then scales it by γ and shifts it by β.").format(
                         mean=mean, std=std))
    parts = {_("x (layer input)"): x, _("attention output"): out[:m],
             _("x + attention output"): added}
    if block is not None and block.norm_kind == "rms":  # the RMS norm, from this layer's γ
        normed = block.normed if not pre else block.ffn_in  # (m, D)
        st.caption(_("The RMS norm divides each piece's vector by its root mean square ({rms:.3f} "
                     "on average here) and multiplies it by this layer's γ; no mean is "
                     "subtracted, so after it the vectors' mean is {mean:.3f} on average. "
                     "This is what the FFN reads (next step).").format(
                         rms=mean_rms(added), mean=viz_tour.layer_stats(normed)[0]))
        parts[_("after the RMS norm")] = normed
    elif not pre and block is not None:  # the norm itself, from this layer's γ and β
        mean, std = viz_tour.layer_stats(block.normed)
        st.caption(_("After the norm, computed with this layer's own γ and β: mean {mean:.3f} "
                     "and standard deviation {std:.3f} on average. This is what the FFN reads "
                     "(next step).").format(mean=mean, std=std))
        parts[_("after the norm")] = block.normed
    chart(viz_tour.norms_figure(parts, w.tokens, _("Vector length per piece")), w.ctx)


def ffn(w: Where) -> None:
    bs, n, d, _h = w.dims
    hidden = w.act("layers.0.ffn.hook_hidden")
    act = w.facts.activation
    f = hidden.shape[-1] if hidden is not None else w.facts.d_ff
    names = w.names
    m = len(w.tokens)
    block = w.block if hidden is None else None
    if block is not None:  # rebuilt from this layer's weights (model.analysis.block_walk)
        rows, act, f = block.hidden, block.activation, block.hidden.shape[-1]
        if names.ffn == "d_ff" and f == 4 * d:  # the config leaves it unnamed (GPT-2)
            names = replace(names, ffn=f"4 · {names.width}")
        if block.norm_kind == "rms":
            after = (_("then the residual add and the RMS norm (post-norm).")
                     if block.norm == "post" else
                     _("it reads the vector after the layer's second RMS norm, and its output "
                       "is added to the residual stream (pre-norm)."))
        else:
            after = (_("then the residual add and the LayerNorm (post-norm).")
                     if block.norm == "post" else
                     _("it reads the vector after the layer's second norm, and its output is "
                       "added to the residual stream (pre-norm)."))
        if block.gated:
            _gated_text(w, block, names, f, after)
        else:
            say(_("The position-wise FFN, computed here from this layer's weights: Linear "
                  "{width} → {ffn} ({d} → {f}), the activation {act}, Linear back to {d}, for "
                  "each piece separately; {after}").format(width=names.width, ffn=names.ffn,
                                                           d=d, f=f, act=act.upper() or "?",
                                                           after=after),
                f"ff_1: (bs, {w.seq}, {names.ffn}) = ({bs}, {n}, {f})\n"
                f"ff_3: (bs, {w.seq}, {names.width}) = ({bs}, {n}, {d})")
    elif hidden is not None:
        rows = hidden[w.b, :m]
        say(_("The position-wise FFN: Linear {width} → {ffn} ({d} → {f}), the activation "
              "{act}, Linear back to {d}, for each piece separately; then residual and "
              "LayerNorm again, as in the previous step.").format(
                  width=names.width, ffn=names.ffn, d=d, f=f, act=act.upper() or "?"),
            f"ff_1: (bs, {w.seq}, {names.ffn}) = ({bs}, {n}, {f})\n"
            f"ff_3: (bs, {w.seq}, {names.width}) = ({bs}, {n}, {d})")
    else:
        if f:
            text = _("Each layer also has a position-wise feed-forward block (FFN), for each "
                     "piece separately: it widens the vector from {d} to {ffn} = {f} numbers, "
                     "applies a nonlinearity and projects back to {d}; then the residual step "
                     "again.").format(d=d, ffn=names.ffn, f=f)
        else:
            text = _("Each layer also has a position-wise feed-forward block (FFN), for each "
                     "piece separately: it widens the vector, applies a nonlinearity and "
                     "projects back to {d} numbers; then the residual step again.").format(d=d)
        if facts(w.bundle).activation:  # the model's config names it (BERT: gelu)
            text += " " + _("This model's activation is {act}.").format(
                act=facts(w.bundle).activation.upper())
        say(text, f"ffn output: (bs, {w.seq}, {names.width}) = ({bs}, {n}, {d})")
        hf_note()
        return
    if block is not None and block.gated:
        _gated_chart(w, block)
        return
    if act == "relu":
        st.caption(_("ReLU = max(0, x): {z:.0%} of the hidden values are exactly 0 here.")
                   .format(z=viz_tour.zero_share(rows)))
    elif act.startswith("gelu"):
        st.caption(_("GELU lets small negative values through, so few hidden values are "
                     "exactly 0 ({z:.1%} here).").format(z=viz_tour.zero_share(rows)))
    else:
        st.caption(_("{act}: {z:.1%} of the hidden values are exactly 0 here.").format(
            act=act.upper() or "?", z=viz_tour.zero_share(rows)))
    chart(viz_tour.matrix_figure(rows, w.tokens, _("FFN hidden layer after the activation"),
                                 _("unit")), w.ctx)


def spelled(act: str) -> str:
    """The config's activation name as the tour prints it (Llama's "silu" as SiLU)."""
    return "SiLU" if act == "silu" else act.upper() or "?"


def _gated_text(w: Where, block: BlockWalk, names: Names, f: int, after: str) -> None:
    """Step 15's sentence on a gated FFN (Llama's gate/up/down, T5's gated wi_0/wi_1/wo),
    in the model's own names for its Linears."""
    bs, n, d, _h = w.dims
    up, down, gate = block.parts
    say(_("The position-wise FFN, computed here from this layer's weights, is gated: "
          "{act}({gate} · x) × ({up} · x). Two Linear layers {width} → {ffn} ({d} → {f}), "
          "{gate} and {up}, read the same vector; the activation goes on {gate} only (the "
          "gate), the two are multiplied unit by unit, and {down} brings the product back to "
          "{d}, for each piece separately; {after}").format(
              act=spelled(block.activation), gate=gate, up=up, down=down, width=names.width,
              ffn=names.ffn, d=d, f=f, after=after),
        f"{gate}, {up}: (bs, {w.seq}, {names.ffn}) = ({bs}, {n}, {f})\n"
        f"{down}: (bs, {w.seq}, {names.width}) = ({bs}, {n}, {d})")


def _gated_chart(w: Where, block: BlockWalk) -> None:
    """What the gate does here, and the hidden units (gate × up) as a chart."""
    act, (up, _down, gate) = block.activation, block.parts
    z = viz_tour.zero_share(block.gate)
    if act == "relu":
        text = _("ReLU on the gate: {z:.0%} of the gate values are exactly 0 here, and those "
                 "hidden units are 0 whatever {up} · x is.")
    elif act.startswith("gelu") or act in ("silu", "swish"):
        text = _("{act} on the gate lets small negative values through, so few gate values "
                 "are exactly 0 ({z:.1%} here); each hidden unit is the gate times {up} · x, "
                 "and either factor can be negative.")
    else:
        text = _("{act} on the gate: {z:.1%} of the gate values are exactly 0 here.")
    st.caption(text.format(act=spelled(act), z=z, up=up))
    title = _("FFN hidden layer: {act}({gate} · x) × ({up} · x)").format(
        act=spelled(act), gate=gate, up=up)
    chart(viz_tour.matrix_figure(block.hidden, w.tokens, title, _("unit")), w.ctx)


def next_layer(w: Where) -> None:
    bs, n, d, _h = w.dims
    layers = w.t.hidden[w.hid].shape[0] - 1
    say(_("The layer's output has the shape of its input, so it feeds the next layer: {L} "
          "layers in all. The chart shows how much each layer changes each piece.").format(
              L=layers),
        f"layer output: (bs, {w.seq}, {w.names.width}) = ({bs}, {n}, {d}) × {layers}")
    chart(viz_embeddings.layer_change(w.t, w.hid, w.b), w.ctx)


def subsequent(w: Where) -> None:
    t = w.t
    if "dec_self" not in t.masks:
        skip(_("This model has no decoder, so there is no subsequent mask."))
        return
    bs, n = t.tgt_ids.shape
    if w.facts.family == "decoder":
        text = _("This model is a decoder only, so the mask of step 6 is already its "
                 "subsequent (look-ahead) mask (룩-어헤드 마스크): `triu(diagonal=1)` blocks "
                 "every future position, and the pad keys are blocked too.")
    else:
        text = _("The decoder reads the output so far, shifted right. The subsequent "
                 "(look-ahead) mask (룩-어헤드 마스크), `triu(diagonal=1)`, blocks every future "
                 "position, and `attn_pad_mask + attn_dec_mask > 0` adds the decoder's own pad "
                 "keys.")
    say(text, f"attn_dec_mask: (bs, n_dec_seq, n_dec_seq) = ({bs}, {n}, {n})")
    figs = viz_masks.mask_figures(t, w.b)
    cols = st.columns(2)
    for col, name in zip(cols, ("decoder subsequent mask", "combined decoder mask")):
        if name in figs:
            with col:
                chart(figs[name], w.ctx, share=0.5)
    chart(viz_attention.head_figure(t, "dec_self", 0, w.b, w.head, numbers=w.ctx.numbers,
                                    colorscale=w.ctx.colorscale), w.ctx)


def cross(w: Where) -> None:
    t = w.t
    if "cross" not in t.attn:
        if w.facts.family == "encoder":
            skip(_("This model has no decoder, so there is no cross-attention "
                   "(인코더-디코더 어텐션)."))
        else:
            skip(_("This model has no encoder, so there is no cross-attention "
                   "(인코더-디코더 어텐션); its decoder attends to itself only."))
        return
    layer = t.n_layers("cross") - 1
    bs, n_t = t.tgt_ids.shape
    n_s = t.src_ids.shape[1]
    m_t, m_s = len(t.tgt_tokens[w.b]), len(t.src_tokens[w.b])
    head = w.head if w.head < t.attn["cross"].shape[2] else 0
    q, k, p = viz_tour.top_pair(t.attn["cross"][layer, w.b, head], m_t, m_s)
    say(_("Cross-attention (인코더-디코더 어텐션): the queries come from the decoder, keys and "
          "values from the encoder output, so the table is n_dec_seq × n_enc_seq. In layer "
          "{L}, head {h}, decoder piece “{q}” looks most at source piece “{k}” ({p:.0%}).")
        .format(L=layer, h=head, q=md(t.tgt_tokens[w.b][q]), k=md(t.src_tokens[w.b][k]),
                p=p),
        f"attn_prob: (bs, {w.names.heads}, n_dec_seq, n_enc_seq) = "
        f"({bs}, {t.attn['cross'].shape[2]}, "
        f"{n_t}, {n_s})")
    chart(viz_attention.head_figure(t, "cross", layer, w.b, head, numbers=w.ctx.numbers,
                                    colorscale=w.ctx.colorscale), w.ctx)


def output(w: Where) -> None:
    t = w.t
    if t.logits is None or not t.tgt_tokens[w.b]:
        if w.facts.family == "encoder":
            skip(_("This encoder-only model has no output layer over the vocabulary here: it "
                   "ends with the last layer's vectors (step 16).") + pooling_words(w))
        else:
            skip(_("This model recorded no scores over the vocabulary, so there is no output "
                   "step to show."))
        return
    steps = [replace(s, chosen=s.top[0][0], prob=s.top[0][1])  # what the model predicts
             for s in viz_translation.steps_from_logits(t, w.b, w.vocab)]
    bs, n_t, v = t.logits.shape
    first, tokens = steps[0], t.tgt_tokens[w.b]
    top, p = first.top[0]
    guesses = " ".join(s.chosen for s in steps)
    if w.facts.family == "decoder":
        hits = sum(s.chosen == nxt for s, nxt in zip(steps, tokens[1:]))
        text = _("This model continues text: at every position the last layer's vector is "
                 "multiplied by the output matrix, one score (logit) per vocabulary piece, and "
                 "softmax makes them the probabilities of the next piece. After “{prev}” the "
                 "most likely next piece is “{top}” ({p}). Its most likely next piece after "
                 "each piece of sentence {b} reads: {text}; it matches the typed next piece at "
                 "{k} of {n} positions.").format(
                     prev=md(tokens[0]), top=md(top), p=percent(p), b=w.b + 1, text=md(guesses),
                     k=hits, n=len(tokens) - 1)
    else:
        text = _("The last decoder layer's vectors are multiplied by the output matrix: one "
                 "score (logit) per vocabulary piece, and softmax makes them probabilities. "
                 "After “{prev}” the most likely piece is “{top}” ({p}); piece by piece, the "
                 "most likely pieces read: {text}").format(
                     prev=md(tokens[0]), top=md(top), p=percent(p), text=md(guesses))
    if v and max(s.top[0][1] for s in steps) < 2 / v:
        text += " " + _("No probability here is even twice 1/{v} = {u}: the model hardly "
                        "prefers any piece over the others.").format(v=v, u=percent(1 / v))
    say(text, f"logits: (bs, n_dec_seq, {w.names.vocab}) = ({bs}, {n_t}, {v})")
    chart(viz_translation.step_bar_figure(first, 0, after=tokens[0]), w.ctx)
    chart(viz_translation.topk_figure(steps, title=_("The most likely next pieces at each "
                                                     "position")), w.ctx)


def pooling_words(w: Where) -> str:
    """How an encoder that makes sentence vectors pools them (its sentence-transformers files),
    or nothing."""
    f = facts(w.bundle)
    if f.pooling == "none":
        return ""
    how = {"mean": _("the mean of the last layer's vectors over the real pieces (pads left "
                     "out)"),
           "cls": _("the first piece's last-layer vector"),
           "max": _("the largest value of each dimension over the real pieces")}[f.pooling]
    text = " " + _("As a sentence-embedding model it then takes {how}: one vector of {d} "
                   "numbers per sentence.").format(how=how, d=w.dims[2])
    if f.normalize:
        text += " " + _("That vector is scaled to length 1, so the dot product of two "
                        "sentences' vectors is their cosine similarity.")
    return text
