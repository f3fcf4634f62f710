"""Greedy decoding step by step: top-k next pieces per step and that step's cross-attention."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from model.analysis.lens import piece_name

from .common import heatmap, plotly_text, style, token_labels
from .i18n import _


@dataclass(frozen=True)
class DecodeStep:
    """What the model believed at one decoder position."""

    chosen: str  # the piece that came next (greedy choice, or the typed target's next piece)
    prob: float  # its probability
    top: list[tuple[str, float]]  # top-k (piece, probability), best first


def steps_from_translation(translation) -> list[DecodeStep]:
    """Steps of a model.Translation (greedy; the eos step included when it finished)."""
    chosen = list(translation.pieces) + (["</s>"] if translation.finished else [])
    return [DecodeStep(chosen=c, prob=float(p), top=[(s, float(q)) for s, q in top])
            for c, p, top in zip(chosen, translation.probs, translation.steps)]


def steps_from_logits(trace, b: int, vocab: Sequence[str], k: int = 5,
                      eos: str = "</s>") -> list[DecodeStep]:
    """Steps read from the captured logits (teacher forcing: the next piece is the typed one)."""
    if trace.logits is None:
        raise ValueError("the trace has no logits (a model without a decoder?)")
    n = trace.length("tgt", b)
    logits = trace.logits[b, :n].astype(np.float64)  # (T_b, V)
    p = np.exp(logits - logits.max(axis=-1, keepdims=True))
    p /= p.sum(axis=-1, keepdims=True)
    nxt = list(trace.tgt_ids[b, 1:n]) + [None]
    out = []
    for t in range(n):
        order = np.argsort(-p[t])[:k]
        top = [(piece_name(vocab, int(i)), float(p[t, i])) for i in order]  # rows past the
        # tokenizer (the GPT-2-small shape's 50,257 over a word list) are "[id i]"
        if nxt[t] is None:
            chosen = eos
            idx = vocab.index(eos) if eos in vocab else int(order[0])
        else:
            idx = int(nxt[t])
            chosen = vocab[idx]
        out.append(DecodeStep(chosen=chosen, prob=float(p[t, idx]), top=top))
    return out


def prob_text(p: float, digits: int) -> str:
    """A probability in `digits` decimals, or in powers of ten when that would round it to
    0: a random GPT-2-small-shaped model spreads its 50,257 pieces to ~2e-05 each, and every
    candidate read "0.000"."""
    return f"{p:.{digits}f}" if p == 0 or p >= 0.5 * 10.0 ** -digits else f"{p:.1e}"


def step_labels(steps: Sequence[DecodeStep]) -> list[str]:
    return [f"{t}: {plotly_text(s.chosen)}" for t, s in enumerate(steps)]


def topk_figure(steps: Sequence[DecodeStep], title: str = "") -> go.Figure:
    """Steps (rows) × rank (columns): each cell names a candidate piece and its probability."""
    k = max((len(s.top) for s in steps), default=0)
    z = np.full((len(steps), k), np.nan, dtype=np.float32)
    text = np.full((len(steps), k), "", dtype=object)
    for t, s in enumerate(steps):
        for r, (piece, p) in enumerate(s.top):
            z[t, r] = p
            text[t, r] = f"{plotly_text(piece)} {prob_text(p, 2)}"
    fig = heatmap(z, [f"#{r + 1}" for r in range(k)], step_labels(steps),
                  title=title or _("Top candidates at each decoding step"),
                  x_title=_("rank"), y_title=_("step: piece chosen"), colorscale="Viridis",
                  zmin=0, zmax=1, text=text,
                  hover=_("step") + " %{y}<br>" + _("rank") + " %{x}<br>%{text}<extra></extra>")
    fig.update_traces(text=text)
    return fig


def step_bar_figure(step: DecodeStep, t: int, after: str | None = None) -> go.Figure:
    """The top-k candidates of one step as bars; `after`: the piece read at that step, named
    in the title instead of the step's number."""
    labels = token_labels([piece for piece, _p in step.top])
    probs = [p for _piece, p in step.top]
    fig = go.Figure(go.Bar(x=probs, y=labels, orientation="h", marker={"color": "#2166ac"},
                           text=[prob_text(p, 3) for p in probs], textposition="auto",
                           hovertemplate="%{y}: %{x:.4f}<extra></extra>"))
    fig.update_yaxes(autorange="reversed", type="category")
    fig.update_xaxes(range=[0, 1])
    if after is None:
        title = _("Step {t}: top {k} next pieces (chosen: {piece})").format(
            t=t, k=len(probs), piece=plotly_text(step.chosen))
    else:
        title = _("After “{prev}”: the {k} most likely next pieces").format(
            prev=plotly_text(after), k=len(probs))
    return style(fig, title,
                 _("probability"), _("piece"), height=max(260, 60 + 36 * len(probs)))


def _cross(trace, b: int, layer: int, head: int | None) -> np.ndarray:
    n_src = trace.length("src", b)
    a = trace.attn["cross"][layer, b, :, :, :n_src]  # (H, T, S_b)
    return a.mean(axis=0) if head is None else a[head]


def cross_row_figure(trace, b: int, layer: int, head: int | None, t: int) -> go.Figure:
    """Step t's cross-attention row: how much the decoder looked at each source piece."""
    row = _cross(trace, b, layer, head)[t]
    labels = token_labels(trace.src_tokens[b])
    fig = go.Figure(go.Bar(x=labels, y=row, marker={"color": "#1b7837"},
                           hovertemplate=_("source") + " %{x}<br>" + _("weight")
                           + " %{y:.4f}<extra></extra>"))
    fig.update_xaxes(type="category")
    fig.update_yaxes(range=[0, 1])
    return style(fig, _("Step {t}: cross-attention over the source (layer {layer}, {who})")
                 .format(t=t, layer=layer, who=_who(head)),
                 _("source piece"), _("attention weight"), height=300)


def _who(head: int | None) -> str:
    return _("mean of heads") if head is None else _("head {head}").format(head=head)


def cross_steps_figure(trace, b: int, layer: int, head: int | None,
                       steps: Sequence[DecodeStep]) -> go.Figure:
    """Every step's cross-attention row stacked: steps × source pieces."""
    z = _cross(trace, b, layer, head)[: len(steps)]
    return heatmap(z, token_labels(trace.src_tokens[b]), step_labels(steps)[: z.shape[0]],
                   title=_("Cross-attention at each step (layer {layer}, {who})")
                   .format(layer=layer, who=_who(head)),
                   x_title=_("source piece (key)"), y_title=_("step: piece chosen (query)"),
                   colorscale="Viridis", zmin=0, zmax=1)
