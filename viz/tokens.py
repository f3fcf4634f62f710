"""Tokens & padding: pieces as chips, the padded id matrix, position ids, lengths."""

from __future__ import annotations

import html

import numpy as np
import plotly.graph_objects as go

from model.capture import SIDE_STACK
from model.specials import is_special

from .common import heatmap, padded_tokens, plotly_text
from .i18n import N_, _

# (what, short): show `what` as _(what)
SIDES = {"src": (N_("encoder input (source)"), "enc"),
         "tgt": (N_("decoder input (target)"), "dec")}
# a model with one stack (BERT, GPT-2, the lm) has no source or target: its one input is named
# without the translators' words
ALONE = {"src": N_("encoder input"), "tgt": N_("decoder input")}


def side_name(trace, side: str) -> str:
    """What a side's input is called on this model: "(source)"/"(target)" only where the model
    has both stacks (cross attention between them)."""
    return _(SIDES[side][0]) if "cross" in trace.attn else _(ALONE[side])


# a strip of sentences: ROW_PX a row under MARGINS_PX of margins: the title's 60 above, and
# below what plotly.js grows for the tick labels and the axis title (52 px upright, 65 tilted:
# lm's 25 positions at 1280 x 800), with room to spare. plotly.js never draws a plot area lower
# than its minreducedheight (64 px): it takes the lacking px from the margins, the title's
# included (lm's one-row decoder strips, 160 px high: top margin 60 -> 44 px, the two-line
# title's box 2.8 px over the plot in Chromium)
ROW_PX, MARGINS_PX, PLOT_FLOOR_PX = 40, 140, 64


def strip_height(rows: int) -> int:
    """A sentence strip's height: ROW_PX a row, and never a plot area under plotly's floor."""
    return MARGINS_PX + max(ROW_PX * rows, PLOT_FLOOR_PX)


_CHIP = ("display:inline-block;margin:2px 3px;padding:2px 6px;border-radius:6px;"
         "border:1px solid #8a8a8a;font-family:monospace;white-space:pre")
_SPECIAL = "background:#e8e8e8;color:#333"
_PIECE = "background:#dbe9f6;color:#102a43"


def _side(trace, side: str) -> tuple[list[list[str]], np.ndarray, np.ndarray]:
    if side not in SIDES:
        raise ValueError(f"side must be 'src' or 'tgt', not {side!r}")
    return trace.tokens(side), trace.ids(side), trace.positions.get(SIDE_STACK[side])


def chips_html(tokens: list[str], ids: list[int] | np.ndarray) -> str:
    """Pieces as chips with their ids underneath; every piece is HTML-escaped."""
    chips = []
    for piece, idx in zip(tokens, ids):
        colour = _SPECIAL if is_special(piece) else _PIECE
        chips.append(f'<span style="{_CHIP};{colour}">{html.escape(piece)}'
                     f'<sub style="margin-left:4px;color:#555">{int(idx)}</sub></span>')
    return '<div style="line-height:2.2">' + "".join(chips) + "</div>"


def id_matrix_figure(trace, side: str = "src", numbers: bool = True) -> go.Figure:
    """The padded id matrix [B, n] (seed 000's `tensor([[3207, …, 0, 0], …])`), pads marked."""
    tokens, ids, _pos = _side(trace, side)
    is_pad = np.zeros(ids.shape, dtype=np.float32)
    for b, toks in enumerate(tokens):
        is_pad[b, len(toks):] = 1.0
    text = np.array([[f"{int(i)}" for i in row] for row in ids], dtype=object)
    pieces = [[plotly_text(t) for t in padded_tokens(toks, ids.shape[1])] for toks in tokens]
    custom = np.empty(ids.shape + (2,), dtype=object)
    for b, row in enumerate(pieces):
        for j, piece in enumerate(row):
            custom[b, j] = (piece, text[b, j])
    rows = [_("sentence {b}").format(b=b + 1) for b in range(ids.shape[0])]
    cols = [str(j) for j in range(ids.shape[1])]
    short = SIDES[side][1]
    name = "n_enc_seq" if short == "enc" else "n_dec_seq"
    title = _("Padded {what} ids, shape (bs={bs}, {name}={n}); dark cells are padding "
              "(id {pad})").format(what=side_name(trace, side), bs=ids.shape[0], name=name,
                                   n=ids.shape[1], pad=trace.pad_id)
    fig = heatmap(is_pad, cols, rows, title=title,
                  x_title=_("position in the padded batch"), y_title=_("sentence"),
                  colorscale=[[0, "#dbe9f6"], [1, "#4d4d4d"]], zmin=0, zmax=1,
                  text=text if numbers else None,
                  hover="%{y}, " + _("position") + " %{x}<br>" + _("piece")
                        + ": %{customdata[0]}<br>id: %{customdata[1]}<extra></extra>",
                  height=strip_height(ids.shape[0]))
    fig.update_traces(customdata=custom, showscale=False)
    return fig


def positions_figure(trace, side: str = "src", numbers: bool = True,
                     pads_counted: bool = False) -> go.Figure:
    """Position ids per sentence: the lab's tokens numbered 1 … n with pad slots 0 (seed
    000's convention), a Hugging Face model's 0 … n−1 with pad slots −1; the title says which.
    pads_counted: the model numbers pad slots on like any slot (BERT's position ids are
    0 … width−1 for every row), so they are drawn with the position the model gives them."""
    tokens, ids, pos = _side(trace, side)
    if pos is None:
        raise ValueError(f"the trace has no positions for side {side!r}")
    if pads_counted:  # a Trace saved before issue 54 holds −1 for pads: the model's own
        # numbering is row first + slot, as a new Trace records it
        start = np.array([[row[0] if len(tokens[b]) else 0] for b, row in enumerate(pos)])
        pos = np.where(pos < 0, start + np.arange(pos.shape[1])[None, :], pos)
    rows = [_("sentence {b}").format(b=b + 1) for b in range(pos.shape[0])]
    cols = [str(j) for j in range(pos.shape[1])]
    text = np.array([[str(int(p)) for p in row] for row in pos], dtype=object)
    what = side_name(trace, side)
    pads = {int(p) for b, row in enumerate(pos) for p in row[len(tokens[b]):]}
    first = {int(row[0]) for b, row in enumerate(pos) if len(tokens[b])}
    if pads_counted:
        title = _("Position ids for the {what}, shape {shape}; pad slots numbered on like "
                  "every slot")
    elif first == {1} and pads <= {0}:  # the lab's convention: 1 … n, pad slots 0
        title = _("Position ids for the {what}, shape {shape}; pad slots get 0")
    elif pads == {-1}:
        title = _("Position ids for the {what}, shape {shape}; pad slots −1 (no position)")
    else:
        title = _("Position ids for the {what}, shape {shape}")
    fig = heatmap(pos.astype(np.float32), cols, rows,
                  title=title.format(what=what, shape=tuple(pos.shape)),
                  x_title=_("position in the padded batch"), y_title=_("sentence"),
                  colorscale="Cividis", zmin=0, zmax=max(1, int(pos.max())),
                  text=text if numbers else None,
                  hover="%{y}, " + _("slot") + " %{x}<br>" + _("position id")
                        + ": %{z:.0f}<extra></extra>",
                  height=strip_height(pos.shape[0]))
    fig.update_traces(showscale=False)
    return fig


def token_types_figure(tokens: list[list[str]], types: list[list[int]], width: int,
                       numbers: bool = True) -> go.Figure:
    """Token type (segment) of every piece, one row per sentence: 0 = segment A, 1 = segment
    B (model.segments); pad slots blank. width: the padded batch's positions."""
    z = np.full((len(tokens), width), np.nan, dtype=np.float32)
    for b, row in enumerate(types):
        z[b, : len(row)] = row
    text = np.array([["" if np.isnan(v) else str(int(v)) for v in row] for row in z],
                    dtype=object)
    pieces = [[plotly_text(t) for t in padded_tokens(toks, width)] for toks in tokens]
    rows = [_("sentence {b}").format(b=b + 1) for b in range(len(tokens))]
    fig = heatmap(z, [str(j) for j in range(width)], rows,
                  title=_("Token-type (segment) ids, shape {shape}: 0 = first segment, 1 = "
                          "second").format(shape=(len(tokens), width)),
                  x_title=_("position in the padded batch"), y_title=_("sentence"),
                  colorscale=[[0.0, "#dbe9f6"], [1.0, "#f4a261"]], zmin=0, zmax=1,
                  text=text if numbers else None,
                  hover="%{y}, " + _("slot") + " %{x}: %{customdata}<br>" + _("token type")
                        + " %{z:.0f}<extra></extra>",
                  height=strip_height(len(tokens)))
    fig.update_traces(showscale=False, customdata=np.array(pieces, dtype=object))
    return fig


def lengths_rows(trace) -> list[dict]:
    """One row per sentence: lengths with and without padding, pieces cut, target language;
    only the columns of the sides the model has (an encoder-only BERT has no decoder input
    or target language, a decoder-only LM no source), so no column reads 0 or "—" for all."""
    encodes, decodes = any(trace.src_tokens), any(trace.tgt_tokens)
    langs = [trace.target_langs[b] if b < len(trace.target_langs) else None
             for b in range(len(trace.src_tokens))]
    # one stack (BERT, GPT-2, the lm): its input is neither a source nor a target
    src, tgt = (("source pieces", "padded source width"),
                ("decoder input pieces", "padded target width")) if encodes and decodes else \
        (("pieces", "padded width"),) * 2
    rows = []
    for b in range(len(trace.src_tokens)):
        row: dict = {"sentence": b + 1}
        if encodes:
            row[src[0]] = len(trace.src_tokens[b])
            row[src[1]] = int(trace.src_ids.shape[1])
        if decodes:
            row[tgt[0]] = len(trace.tgt_tokens[b])
            row[tgt[1]] = int(trace.tgt_ids.shape[1])
        # a decoder-only Hugging Face model's cut is kept on this side too (hf/record.py)
        row["pieces cut"] = int(trace.src_cut[b]) if b < len(trace.src_cut) else 0
        if any(langs):
            row["target language"] = langs[b] or "—"
        rows.append(row)
    return rows


def decoder_rows(trace, b: int, eos: str = "</s>") -> list[dict]:
    """Decoder input at each position and the piece that position is trained to predict next."""
    toks = trace.tgt_tokens[b] if trace.tgt_tokens else []
    ids = trace.tgt_ids[b]
    nxt = list(toks[1:]) + [eos]
    return [{"position": t, "decoder input": toks[t], "id": int(ids[t]),
             "predicts next": nxt[t]} for t in range(len(toks))]
