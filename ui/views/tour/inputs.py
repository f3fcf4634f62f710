"""Steps 1–6: the typed text becomes pieces, ids, padding, vectors, positions and a mask."""

from __future__ import annotations

import re

import numpy as np
import streamlit as st

from model.analysis.embedding_rows import token_rows, type_rows
from model.backends import backend_for
from model.backends import facts as backend_facts
from model.segments import piece_types
from ui.common import chart
from ui.i18n import _
from ui.model_words import pads_sentence, separator_piece, token_types_sentence
from ui.views.tour.where import TABLES, Where, hf_note, padded, say
from viz import masks as viz_masks
from viz import positional as viz_positional
from viz import tokens as viz_tokens
from viz import tour as viz_tour

SPECIAL = re.compile(r"<[^<>\s]*>|\[[A-Z]+\]")  # <s>, </s>, <pad>, <2ko>, [CLS], [SEP] …


def _tokenizer_sentence(w: Where) -> str:
    kind = w.facts.tokenizer
    if kind == "sentencepiece":
        return _("Each sentence is cut into pieces in SentencePiece's style: ▁ marks a piece "
                 "that starts a word.")
    if kind == "byte_bpe":
        return _("Each sentence is cut into byte-level BPE pieces: the text is read as bytes, "
                 "Ġ stands for the space in front of a word, and a character the vocabulary "
                 "lacks becomes several byte pieces.")
    if kind == "wordpiece":
        return _("Each sentence is cut into WordPiece pieces: ## marks a piece that continues "
                 "the word before it; a piece without ## starts a word.")
    if all(viz_tour.whole_words(p, s) for p, s in zip(w.all_tokens, w.t.sources) if p):
        return _("This tokenizer is word-level: here every word and punctuation mark is one "
                 "piece, and the pieces carry no mark of where a word starts.")
    return _("Each sentence is cut into pieces; this tokenizer's pieces carry no mark of where "
             "a word starts.")


def pieces(w: Where) -> None:
    toks = w.all_tokens
    special = sum(bool(SPECIAL.fullmatch(p)) for p in w.tokens)
    count = _("Every piece has an id in the vocabulary of {v:,} pieces. Sentence {b} has {n} "
              "pieces.").format(v=w.facts.vocab_size, b=w.b + 1, n=len(w.tokens))
    if special:
        count += " " + _("{k} of them are special markers.").format(k=special)
    say(_tokenizer_sentence(w) + " " + count,
        "pieces: " + ", ".join(f"{len(x)}" for x in toks))
    for b, p in enumerate(toks):
        st.markdown(_("**Sentence {b}** · {n} pieces").format(b=b + 1, n=len(p)))
        st.html(viz_tokens.chips_html(p, w.ids[b, : len(p)]))


def padding(w: Where) -> None:
    bs, n, _d, _h = w.dims
    if bs == 1:
        text = _("There is one sentence, so nothing needs padding: its {n} pieces fill the "
                 "batch.").format(n=n)
    elif len({len(p) for p in w.all_tokens}) == 1:
        text = _("Every sentence has {n} pieces, so none needs padding.").format(n=n)
    else:
        text = _("The sentences have different lengths, so the shorter ones are filled up "
                 "with the pad id {pad} to the longest one, {n} pieces. Sentence {b} gets {k} "
                 "pad slot(s).").format(pad=w.t.pad_id, n=n, b=w.b + 1, k=w.pads)
        if w.t.pad_id == 0:
            text += " " + _("Seed 000 pads the same way: `pad_sequence(…, padding_value=0)`.")
    say(text, f"inputs: (bs, {w.seq}) = ({bs}, {n})")
    chart(viz_tokens.id_matrix_figure(w.t, w.side, w.ctx.numbers), w.ctx)


def embedding(w: Where) -> None:
    bs, n, d, _h = w.dims
    tok = w.act("hook_tok")
    # (n, D) this sentence's rows; not recorded (a Hugging Face model): read from the table
    rows = tok[w.b] if tok is not None else token_rows(w.bundle, w.ids[w.b])
    names = w.names
    text = _("`nn.Embedding({vocab}, {width})` looks up one row of {d} numbers per id: the "
             "piece's vector.").format(vocab=names.vocab, width=names.width, d=d)
    if w.facts.raw_hooks:
        text += " " + _("This model multiplies it by √{width} = {s:.1f}, as the paper "
                        "does.").format(width=names.width, s=np.sqrt(d))
    if rows is not None and w.pads and not np.any(rows[len(w.tokens):]):
        text += " " + _("The pad id's row is all zeros.")
    say(text, f"input_embs: (bs, {w.seq}, {names.width}) = ({bs}, {n}, {d})")
    if rows is None:
        hf_note()
        return
    chart(viz_tour.matrix_figure(rows, padded(w), _("input_embs of sentence {b}: one row "
                                                        "per piece").format(b=w.b + 1),
                                 _("dimension")), w.ctx)
    token_type_terms(w, rows)


def token_type_terms(w: Where, rows: np.ndarray) -> None:
    """On a model with a token-type (segment) table: each piece's type row, and the sum of
    the piece, position and type rows, which is what the model's embedding LayerNorm reads
    (or layer 0, without one). Models without token types draw nothing more."""
    bf = backend_facts(w.bundle)
    sep = separator_piece(bf)
    if sep is None:
        return
    # (n,) the walked sentence's types by the model's own rule; pad slots read row 0
    types = np.asarray(piece_types(w.tokens, sep) + [0] * w.pads, dtype=np.int64)
    try:
        seg = type_rows(w.bundle, types)  # (n, D)
    except ValueError:
        seg = None
    if seg is None or seg.shape != rows.shape:
        return
    total = rows.astype(np.float64) + seg  # (n, D)
    pos = w.t.positions.get(w.hid)
    table = w.t.pos_table
    terms = _("piece + token type")
    if w.facts.positional in TABLES and pos is not None and table.shape[0] > 1:
        at = np.asarray(pos[w.b], dtype=np.int64)  # (n,) this sentence's position ids
        if at.min() < 0 or at.max() >= table.shape[0]:
            return
        total = total + table[at]  # (n, D) + (n, D) position rows
        terms = _("piece + position + token type")
    ones = int(types.sum())
    text = _("This model also adds a token-type (segment) row to every piece, read from its "
             "own token-type table.")
    if ones:
        text += " " + _("Sentence {b} is a pair “A {sep} B”: {k} of its pieces (B's and the "
                        "last {sep}) get row 1, the others row 0.").format(
            b=w.b + 1, sep=sep, k=ones)
    else:
        text += " " + _("Sentence {b} is one segment, so every piece gets row 0.").format(
            b=w.b + 1)
    where = _("what the embedding LayerNorm reads") if bf.embedding_norm else \
        _("what layer 0 reads")
    text += " " + _("The last chart adds the rows up ({terms}): {where}.").format(
        terms=terms, where=where)
    bs, n, _d, _h = w.dims
    say(text, f"token_type_ids: (bs, {w.seq}) = ({bs}, {n}); sentence {w.b + 1}: "
        + " ".join(map(str, types.tolist())))
    chart(viz_tour.matrix_figure(seg, padded(w), _("Token-type rows of sentence {b}: row 0 "
                                                   "or 1 per piece").format(b=w.b + 1),
                                 _("dimension")), w.ctx)
    chart(viz_tour.matrix_figure(total, padded(w), _("{terms} of sentence {b}").format(
        terms=terms, b=w.b + 1), _("dimension")), w.ctx)


def position_ids(w: Where) -> tuple[str, str]:
    """(sentence, chart note) on the position ids the Trace holds for the walked sentence."""
    pos = w.t.positions.get(w.hid)
    if pos is None:
        return "", ""
    m = len(w.tokens)
    real = [int(x) for x in pos[w.b, :m]]
    pad = {int(x) for b, row in enumerate(pos) for x in row[len(w.all_tokens[b]):]}
    if not real or real != list(range(real[0], real[0] + m)):
        return "", ""
    text = _("Sentence {b}'s pieces get positions {first} to {last}.").format(
        b=w.b + 1, first=real[0], last=real[-1])
    note = _("rows {first}..{last} are this sentence's positions").format(
        first=real[0], last=real[-1])
    if pad == {0} and real[0] == 1:
        text += " " + _("Pad slots get position 0, so they all read row 0.")  # any sentence's
        note = _("row 0 = pad position; tokens use positions 1..n")
    elif pad:  # any other model's pad slots: what it gives them, from its facts
        text += " " + pads_sentence(backend_facts(w.bundle))
    return text, note


def positional(w: Where) -> None:
    bs, n, d, _h = w.dims
    f = w.facts
    ids_text, note = position_ids(w)
    if f.positional == "sinusoidal":
        text = _("Positional encoding: PE(pos, 2i) = sin(pos / 10000^(2i/{width})) and "
                 "PE(pos, 2i+1) = cos(…), a fixed table with one row per position, not "
                 "trained.").format(width=w.names.width)
        if f.sinusoid == "halves":
            text += " " + _("This model lays the sines out in the first half of the columns "
                            "and the cosines in the second.")
    elif f.positional == "learned":
        text = _("This model learns its position table (as in seed 001) instead of the "
                 "sine/cosine formula: one trained row per position, {rows} rows.").format(
                     rows=w.t.pos_table.shape[0])
    elif f.positional == "rotary":
        text = _("This model has no position table: it uses rotary positions (RoPE). In every "
                 "layer each query and key vector is rotated, dimension pair by pair, by an "
                 "angle of position × θ_i, so Q·Kᵀ depends on how far apart two pieces are. "
                 "Nothing is added to the piece vectors.")
    elif f.positional == "relative_bias":
        text = _("This model has no position table: it uses relative positions. Each head "
                 "adds a learned bias, one per distance bucket, to its attention scores. "
                 "Nothing is added to the piece vectors.")
    else:
        text = _("No position table, rotary embedding or relative bias was found in this "
                 "model, so this step has no positional term to show.")
    if f.positional in TABLES:
        shape = (f"pos_encoding: ({w.names.positions}, {w.names.width}) = "
                 f"({w.t.pos_table.shape[0]}, {d}); "
                 f"positions: (bs, {w.seq}) = ({bs}, {n})")
    else:
        shape = f"positions: (bs, {w.seq}) = ({bs}, {n})"
    say(" ".join(x for x in (text, ids_text) if x), shape)
    if w.hid in w.t.positions and f.positional != "none":
        counted = backend_facts(w.bundle).pad_positions == "counted"
        chart(viz_tokens.positions_figure(w.t, w.side, w.ctx.numbers, pads_counted=counted),
              w.ctx)
    if f.positional in TABLES:
        rows = w.t.pos_table.shape[0]
        chart(viz_positional.table_heatmap(w.t.pos_table, min(rows, max(n + 1, 16)),
                                           title=_("Positional table, first rows"),
                                           note=note), w.ctx)
    elif f.positional == "rotary":
        theta = backend_for(w.bundle).rotary_frequencies()
        if theta is not None:
            chart(viz_positional.rotary_frequencies(theta), w.ctx)
    elif f.positional == "relative_bias":
        biases = backend_for(w.bundle).relative_bias(n)
        if w.stack in biases:
            chart(viz_positional.t5_bias_heatmap(biases[w.stack], w.head, w.stack), w.ctx)


def embedding_sum(w: Where) -> None:
    bs, n, d, _h = w.dims
    f = w.facts
    tok = w.act("hook_tok")
    if f.positional in TABLES and tok is not None:
        text = _("`input_sums = input_embs + pos_embs`: both are ({n} × {d}) per sentence, so "
                 "they add element by element, and every piece's vector now also says where "
                 "it stands. This sum is what the first layer reads.").format(n=n, d=d)
        title = _("input_sums of sentence {b}").format(b=w.b + 1)
    else:
        if f.positional in TABLES:
            text = _("This model adds its position row to each piece's vector here, so every "
                     "vector also says where it stands.")
        elif f.positional == "rotary":
            text = _("Nothing is added here: this model's positions enter inside attention, "
                     "where each query and key is rotated by its position (step 4).")
        elif f.positional == "relative_bias":
            text = _("Nothing is added here: this model's positions enter as a bias on the "
                     "attention scores (step 4).")
        else:
            text = _("No position term is added here.")
        text += " " + _("The chart shows the embedding layer's output ({n} × {d} per "
                        "sentence), which is what layer 0 reads.").format(n=n, d=d)
        title = _("Embedding layer output of sentence {b}").format(b=w.b + 1)
    text += embedding_extras(w)
    say(text, f"input_sums: (bs, {w.seq}, {w.names.width}) = ({bs}, {n}, {d})")
    chart(viz_tour.matrix_figure(w.t.hidden[w.hid][0, w.b], padded(w), title, _("dimension")),
          w.ctx)
    if tok is not None:
        chart(viz_positional.term_sizes(w.t, w.b, w.hid), w.ctx)


def embedding_extras(w: Where) -> str:
    """What else the model adds or does before layer 0: token types, a LayerNorm (facts)."""
    bf, extra = backend_facts(w.bundle), ""
    types = token_types_sentence(bf, w.all_tokens)
    if types:
        extra += " " + types
    if bf.embedding_norm:
        extra += " " + _("Before layer 0 this model normalises the sum with a LayerNorm of its "
                         "own (the embedding LayerNorm), so layer 0 reads vectors of mean 0 "
                         "and variance 1, scaled by γ and shifted by β.")
    return extra


def pad_mask(w: Where) -> None:
    bs, n, _d, _h = w.dims
    figs = viz_masks.mask_figures(w.t, w.b)
    mask = w.t.masks[w.kind][w.b]
    if w.encoder:
        k = int(mask.all(axis=0).sum())
        text = _("The pad mask: `attn_mask = inputs.eq({pad})`, True where the key "
                 "is a pad piece, the same for every query row.").format(pad=w.t.pad_id)
        if k:
            text += " " + _("Sentence {b} has {k} pad slot(s), so its last {k} column(s) are "
                            "True.").format(b=w.b + 1, k=k)
        else:
            text += " " + _("Sentence {b} has no pad slot, so no column is True.").format(
                b=w.b + 1)
        say(text,
            f"attn_mask: (bs, n_q_seq, n_k_seq) = ({bs}, {n}, {n})")
        chart(figs["encoder pad mask"], w.ctx)
    else:
        say(_("A decoder-only model has one self-attention mask: the pad keys and every future "
              "position are blocked (True). Sentence {b} has {k} pad slot(s).").format(
                  b=w.b + 1, k=w.pads),
            f"attn_mask: (bs, n_q_seq, n_k_seq) = ({bs}, {n}, {n})")
        chart(figs.get("combined decoder mask") or next(iter(figs.values())), w.ctx)
