"""Steps 7–13: one head of layer 0, from Q, K and V to the concatenated heads and W_O."""

from __future__ import annotations

import numpy as np
import streamlit as st

from model.analysis import qk_terms
from model.backends import facts
from ui.common import chart
from ui.i18n import _
from ui.model_words import fill_words
from ui.tables import dataframe
from ui.text import md
from ui.views.tour.where import Where, hf_note, say
from viz import masks as viz_masks
from viz import qkterms as viz_qkterms
from viz import tour as viz_tour


def factor(name: str) -> str:
    """A size's name as a factor of a product: a formula (n_embd / n_head) in parentheses."""
    return f"({name})" if " " in name else name


def _shape(w: Where, what: str, heads: int, name: str = "") -> str:
    bs, n, _d, _h = w.dims
    return (f"{what}: (bs, {name or w.names.heads}, n_seq, {w.names.head_dim}) = "
            f"({bs}, {heads}, {n}, {w.walk.d_head})")


def _sharing(w: Where) -> list[int]:
    """The query heads that read the same key/value head as the walked one."""
    groups = w.t.kv_groups
    if groups is None or len(groups) != w.n_heads:
        return [w.head]
    return [h for h in range(w.n_heads) if int(groups[h]) == int(groups[w.head])]


def qkv(w: Where) -> None:
    _bs, _n, d, h = w.dims
    dh, kv = w.walk.d_head, w.n_kv_heads
    names = w.names
    width = (_("{width} = {d} numbers").format(width=names.width, d=d) if h * dh == d else
             _("{heads} · {head_dim} = {hd} numbers").format(
                 heads=names.heads, head_dim=factor(names.head_dim), hd=h * dh))
    if kv == h:
        text = _("W_Q, W_K and W_V project every piece's vector to {width}, which are split "
                 "into {heads} = {h} heads of {head_dim} = {dh}. Head {head} of layer 0 uses "
                 "its own {dh} columns of each (head= in the link picks another).").format(
                     width=width, heads=names.heads, h=h, head_dim=names.head_dim, dh=dh,
                     head=w.head)
        shapes = [_shape(w, x, h) for x in ("q_s", "k_s", "v_s")]
    else:
        share = _sharing(w)
        text = _("This model has {h} query heads sharing {kv} key/value heads (grouped-query "
                 "attention). W_Q projects every piece's vector to {width}: {heads_name} = {h} "
                 "heads of {dim_name} = {dh}. W_K and W_V project it to only {kv_name} = {kv} "
                 "heads of {dh} each, and every {g} query heads read the same keys and values. "
                 "Query head {head} of "
                 "layer 0 reads key/value head {k}, shared by query heads {heads}.").format(
                     h=h, kv=kv, width=width, dh=dh, g=h // kv if h % kv == 0 else "?",
                     heads_name=names.heads, dim_name=names.head_dim, kv_name=names.kv_heads,
                     head=w.head, k=w.walk.kv_head,
                     heads=", ".join(str(x) for x in share))
        shapes = [_shape(w, "q_s", h)] + [_shape(w, x, kv, names.kv_heads)
                                          for x in ("k_s", "v_s")]
    say(text, "\n".join(shapes))
    w.draw("Q", "K", "V")


def _score_name(w: Where) -> str:
    return "QKᵀ/√d_k" if w.scale == "sqrt" else _("as this model computed it")


def scores(w: Where) -> None:
    bs, n, _d, h = w.dims
    say(_("`scores = Q·Kᵀ`: one dot product per query and key, a table of {n} × {n} per head. "
          "A large value means the query and the key point the same way.").format(n=n),
        f"scores: (bs, {w.names.heads}, n_q_seq, n_k_seq) = ({bs}, {h}, {n}, {n})")
    w.draw("QKᵀ")
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
    st.caption(_("Why query “{q}” and key “{k}” score {s:.3f} ({how}) in head {h}: the parts "
                 "of the two vectors the score is made of, which add up to it.").format(
                     q=md(w.tokens[q]), k=md(w.tokens[k]), s=score, how=_score_name(w),
                     h=w.head))
    dataframe(viz_qkterms.terms_rows(terms, score))


def scale(w: Where) -> None:
    bs, n, _d, h = w.dims
    dh = w.walk.d_head
    shape = f"scores: (bs, {w.names.heads}, n_q_seq, n_k_seq) = ({bs}, {h}, {n}, {n})"
    if w.scale == "sqrt":
        before = float(np.max(w.walk.qk[0]))
        say(_("The scores are divided by √d_k = √{dh} = {s:.2f}, so that their spread does "
              "not grow with the head size and softmax is not pushed to 0 or 1 too early. The "
              "first query's largest score goes from {a:.2f} to {c:.2f}.").format(
                  dh=dh, s=np.sqrt(dh), a=before, c=before / np.sqrt(dh)), shape)
        w.draw("÷√d_k")
        return
    if w.scale in ("none", "none_bias"):
        text = _("This model does not divide its scores by √d_k = √{dh}.").format(dh=dh)
        if w.scale == "none":
            text += " " + _("The scores it recorded are Q·Kᵀ itself.")
    elif w.scale == "sqrt_bias":
        text = _("The scores are divided by √d_k = √{dh} = {s:.2f}.").format(
            dh=dh, s=np.sqrt(dh))
    else:
        text = _("The scores this model recorded are not Q·Kᵀ/√d_k alone, nor Q·Kᵀ plus a "
                 "bias by distance.")
    if w.scale.endswith("_bias"):
        text += " " + _("A bias that depends only on the distance between query and key is "
                        "added to them.")
        if w.facts.positional == "relative_bias":
            text += " " + _("It is this model's relative position bias (step 4).")
    text += " " + _("The chart shows the scores as the model computed them.")
    say(text, shape)
    q_tok, k_tok = viz_masks.axis_tokens(w.t, w.kind, w.b)
    chart(viz_tour.scores_figure(w.walk.scaled, q_tok, k_tok,
                                 _("scores as the model computed them, head {h}").format(
                                     h=w.head)), w.ctx)


def mask_fill(w: Where) -> None:
    bs, n, _d, h = w.dims
    blocked, cells = int(w.walk.blocked.sum()), w.walk.blocked.size
    f = facts(w.bundle)  # what this model puts in a blocked cell
    if f.mask_fill != "-1e9":
        text = _("Every blocked cell gets {fill}, the most negative number the scores' type "
                 "holds (as transformers' attention does), so softmax turns it into exactly 0. "
                 "Here {k} of the {m} cells are blocked; blank cells in the chart are the "
                 "blocked ones.").format(fill=fill_words(f), k=blocked, m=cells)
    elif w.facts.raw_hooks:
        text = _("`scores.masked_fill_(attn_mask, -1e9)`: every blocked cell gets −1e9, so "
                 "softmax will turn it into 0. Here {k} of the {m} cells are blocked; blank "
                 "cells in the chart hold −1e9.").format(k=blocked, m=cells)
    else:
        text = _("Seed 000 writes `scores.masked_fill_(attn_mask, -1e9)`: a blocked cell gets "
                 "a large negative score, so softmax turns it into 0. Here {k} of the {m} "
                 "cells are blocked; blank cells in the chart are the blocked ones.").format(
                     k=blocked, m=cells)
        if blocked and viz_tour.blocked_zero(w.walk):
            text += " " + _("In this model's recorded weights every blocked cell is exactly 0.")
    say(text, f"scores: (bs, {w.names.heads}, n_q_seq, n_k_seq) = ({bs}, {h}, {n}, {n})")
    w.draw("masked")


def softmax(w: Where) -> None:
    bs, n, _d, h = w.dims
    m = len(w.tokens)
    q, k, p = viz_tour.top_pair(w.walk.probs, m, m)
    say(_("Softmax over each row turns the scores into weights that sum to 1; blocked cells "
          "are exactly 0. Query “{q}” puts {p:.0%} of its weight on “{k}”.").format(
              q=md(w.tokens[q]), k=md(w.tokens[k]), p=p),
        f"attn_prob: (bs, {w.names.heads}, n_q_seq, n_k_seq) = ({bs}, {h}, {n}, {n})")
    w.draw("softmax")


def context(w: Where) -> None:
    text = _("`context = attn_prob · V`: each query's output is the weighted sum of the value "
             "vectors, with the weights of the previous step. It has the shape of Q.")
    if w.n_kv_heads != w.n_heads:
        text += " " + _("Query head {head} reads the values of key/value head {k}.").format(
            head=w.head, k=w.walk.kv_head)
    say(text, _shape(w, "context", w.n_heads))
    w.draw("·V")


def concat(w: Where) -> None:
    bs, n, d, h = w.dims
    hd = h * w.walk.d_head
    names = w.names
    say(_("The {h} heads' contexts are put side by side again (transpose and view: "
          "{heads} · {head_dim} = {hd}) and multiplied by W_O, a {hd} × {d} linear layer. The "
          "result has the shape of the input again.").format(
              h=h, heads=names.heads, head_dim=factor(names.head_dim), hd=hd, d=d),
        f"context: (bs, n_seq, {names.heads}·{factor(names.head_dim)}) = ({bs}, {n}, {hd})\n"
        f"output: (bs, n_seq, {names.width}) = ({bs}, {n}, {d})")
    if w.walk.concat.shape[1] == 0:
        hf_note()
        return
    w.draw("concat", "·W_O")
