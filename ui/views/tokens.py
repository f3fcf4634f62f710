"""Tokens & padding: the pieces, their ids and positions, padding and the decoder's shift."""

from __future__ import annotations

import streamlit as st

from model import Trace
from model.backends import Facts, facts, is_translator
from model.segments import is_pair, piece_types
from ui.common import chart
from ui.context import Ctx
from ui.i18n import _
from ui.model_words import pads_sentence, pair_sentence, pieces_caption, separator_piece
from ui.notices import (
    confidence_notice,
    marked_chips_html,
    piece_marks,
    unknown_in,
    warn_unknown,
)
from ui.runtime import cached_translate
from ui.tables import dataframe
from ui.text import md
from viz import tokens as viz_tokens


def decoder_heading(t: Trace, f: Facts) -> str:
    """The decoder side's heading, from the pieces fed: shifted right only when a start piece
    comes first (the translators' and lm's <s>); GPT-2's tokenizer adds none, so its first
    piece is read but never predicted."""
    roles = dict(f.specials)
    first = next((p[0] for p in t.tgt_tokens if p), "")
    if roles.get(first) in ("start", "bos"):
        return _("**Decoder**: input pieces (shifted right, starting with {piece})").format(
            piece=first)
    return _("**Decoder**: input pieces, as typed: no start piece comes first, so the first "
             "piece is read but never predicted")


def render(ctx: Ctx) -> None:
    t = ctx.trace
    st.subheader(_("Tokens and padding"))
    st.caption(md(pieces_caption(ctx.bundle, t)))  # tokenizer, specials: the model's facts
    f = facts(ctx.bundle)
    if any(t.src_tokens):  # a decoder-only model (GPT-2) has text on the decoder side only
        # words the training corpus never contained: named once for every sentence (not a
        # warning per line), and their pieces marked
        unknown = [unknown_in(ctx, b) for b in range(len(t.src_tokens))]
        warn_unknown(list(dict.fromkeys(w for _flags, words in unknown for w in words)))
        for b, pieces in enumerate(t.src_tokens):
            st.markdown(_("**Sentence {b}** · encoder input, {n} pieces")
                        .format(b=b + 1, n=len(pieces)))
            marks = piece_marks(ctx, b, unknown[b][0])
            st.html(viz_tokens.chips_html(pieces, t.src_ids[b, : len(pieces)]) if marks is None
                    else marked_chips_html(pieces, t.src_ids[b, : len(pieces)], marks))
        chart(viz_tokens.id_matrix_figure(t, "src", ctx.numbers), ctx)
        chart(viz_tokens.positions_figure(t, "src", ctx.numbers,
                                          pads_counted=f.pad_positions == "counted"), ctx)
        st.caption(pads_sentence(f))
        sep = separator_piece(f)
        if sep is not None:  # BERT: the segment each piece belongs to, as the model types it
            chart(viz_tokens.token_types_figure(
                t.src_tokens, [piece_types(p, sep) for p in t.src_tokens], t.src_ids.shape[1],
                ctx.numbers), ctx)
            pairs = [b + 1 for b, p in enumerate(t.src_tokens) if is_pair(p, sep)]
            st.caption(md(pair_sentence(f, pairs)))
    # up to seven long column names: presenting, a grid needed 759 of its 692 px; an HTML
    # table wraps them
    st.table(viz_tokens.lengths_rows(t))
    if any(t.tgt_tokens):
        st.markdown(decoder_heading(t, f).replace("<", "\\<"))
        for b, pieces in enumerate(t.tgt_tokens):
            st.html(viz_tokens.chips_html(pieces, t.tgt_ids[b, : len(pieces)]))
        if ctx.targets is None and is_translator(ctx.bundle):
            # the decoder input is the model's own translation: say when it is a guess
            # (a cache hit: the run decoded these lines through the same function)
            confidence_notice(ctx.bundle, cached_translate(ctx.bundle, ctx.key, ctx.lines,
                                                           ctx.lang, ctx.ablate)[ctx.b])
        chart(viz_tokens.id_matrix_figure(t, "tgt", ctx.numbers), ctx)
        chart(viz_tokens.positions_figure(t, "tgt", ctx.numbers), ctx)
        st.caption(_("Sentence {b}: what each decoder position reads and predicts")
                   .format(b=ctx.b + 1))
        dataframe(viz_tokens.decoder_rows(t, ctx.b))
