"""Masks: the encoder pad mask, the decoder subsequent/combined masks, the cross mask, and
what a mask does to one head's scores (before masking, after masking, after softmax)."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from model.capture import KIND_SIDES, key_side, query_side
from model.masks import MASK_FILL

from .common import (
    DIVERGING,
    MASK_COLOURS,
    cell_text,
    heatmap,
    padded_tokens,
    plotly_text,
    query_key_hover,
    token_labels,
    value_hover,
)
from .i18n import N_, _

# English names (the catalogue's msgids): show them as _(KIND_NAMES[kind])
KIND_NAMES = {"enc_self": N_("encoder self-attention"), "dec_self": N_("decoder self-attention"),
              "cross": N_("encoder–decoder (cross) attention")}


def kind_name(kind: str) -> str:
    """An attention kind's name in the installed language (an unknown key shown literally)."""
    return _(KIND_NAMES[kind]) if kind in KIND_NAMES else plotly_text(kind)


MASK_HOVER = "query: %{y}<br>key: %{x}<br>blocked: %{text}<extra></extra>"
MASK_HOVER_LONG = "query: %{y}<br>key: %{x}<br>blocked: %{z} (1 = True)<extra></extra>"
MASK_TEXT_MAX = 24  # True/False printed in the cells up to this many tokens per side


def axis_tokens(trace, kind: str, b: int) -> tuple[list[str], list[str]]:
    """Padded (query, key) pieces of sentence b for an attention kind."""
    src = padded_tokens(trace.src_tokens[b], trace.src_ids.shape[1])
    tgt = (padded_tokens(trace.tgt_tokens[b], trace.tgt_ids.shape[1])
           if trace.tgt_tokens else [])
    if kind not in KIND_SIDES:
        raise ValueError(f"unknown attention kind {kind!r}")
    pieces = {"src": src, "tgt": tgt}
    return pieces[query_side(kind)], pieces[key_side(kind)]


def mask_matrices(trace, b: int) -> dict[str, np.ndarray]:
    """Named bool masks (True = blocked) for sentence b, padded, as the model used them.

    "decoder subsequent" and "decoder pad" are the two parts whose OR is the combined decoder
    mask; they are rebuilt here from the target ids so the parts can be shown separately.
    """
    out: dict[str, np.ndarray] = {}
    if "enc_self" in trace.masks:
        out["encoder pad mask"] = trace.masks["enc_self"][b]
    if "dec_self" in trace.masks:
        t = trace.tgt_ids.shape[1]
        pad_keys = np.broadcast_to(trace.tgt_ids[b] == trace.pad_id, (t, t))
        out["decoder subsequent mask"] = np.triu(np.ones((t, t), dtype=bool), k=1)
        out["decoder pad mask"] = np.array(pad_keys)
        out["combined decoder mask"] = trace.masks["dec_self"][b]
    if "cross" in trace.masks:
        out["cross (encoder–decoder) mask"] = trace.masks["cross"][b]
    return out


MASK_KIND = {"encoder pad mask": "enc_self", "decoder subsequent mask": "dec_self",
             "decoder pad mask": "dec_self", "combined decoder mask": "dec_self",
             "cross (encoder–decoder) mask": "cross"}
MASK_TITLES = {"encoder pad mask": N_("Encoder pad mask"),
               "decoder subsequent mask": N_("Decoder subsequent mask"),
               "decoder pad mask": N_("Decoder pad mask"),
               "combined decoder mask": N_("Combined decoder mask"),
               "cross (encoder–decoder) mask": N_("Cross (encoder–decoder) mask")}


def mask_hover(long: bool = False) -> str:
    """MASK_HOVER (or MASK_HOVER_LONG) in the installed language."""
    value = "%{z} (1 = True)" if long else "%{text}"
    return query_key_hover(_("blocked") + ": " + value + "<extra></extra>")


def mask_figure(mask: np.ndarray, q_tokens: list[str], k_tokens: list[str],
                title: str) -> go.Figure:
    """A True/False matrix: dark = blocked (True), light = allowed (False)."""
    mask = np.asarray(mask, dtype=bool)
    small = max(mask.shape) <= MASK_TEXT_MAX
    text = np.where(mask, "True", "False").astype(object) if small else None
    fig = heatmap(mask.astype(np.uint8), token_labels(k_tokens), token_labels(q_tokens),
                  title=_("{title} {shape}: True = blocked").format(title=title,
                                                                    shape=tuple(mask.shape)),
                  x_title=_("key (attended to)"), y_title=_("query (attending)"),
                  colorscale=MASK_COLOURS, zmin=0, zmax=1, text=text,
                  hover=mask_hover(long=not small), text_max=MASK_TEXT_MAX)
    fig.update_traces(showscale=False)
    return fig


def mask_figures(trace, b: int) -> dict[str, go.Figure]:
    """Every mask of sentence b as a labelled figure, keyed by its name."""
    figs = {}
    for name, mask in mask_matrices(trace, b).items():
        q, k = axis_tokens(trace, MASK_KIND[name], b)
        figs[name] = mask_figure(mask, q, k, _(MASK_TITLES[name]))
    return figs


def masked_scores(trace, kind: str, layer: int, b: int, head: int,
                  fill_value: float = MASK_FILL) -> np.ndarray:
    """Scores after masking, as the model computes them: blocked cells = its fill value (the
    lab's -1e9; Hugging Face models through the recorder: the dtype's minimum)."""
    scores = trace.scores[kind][layer, b, head]
    return np.where(trace.masks[kind][b], np.float32(fill_value), scores).astype(np.float32)


def mask_effect_figures(trace, kind: str, layer: int, b: int, head: int, *,
                        colorscale: str = "Viridis", numbers: bool = True,
                        fill_value: float = MASK_FILL, fill: str = "-1e9"
                        ) -> list[go.Figure]:
    """Same head, three stages: scores, scores with blocked cells at the fill value (`fill`
    as the page writes it), softmax."""
    q, k = axis_tokens(trace, kind, b)
    x, y = token_labels(k), token_labels(q)
    scores = trace.scores[kind][layer, b, head]
    blocked = trace.masks[kind][b]
    masked = masked_scores(trace, kind, layer, b, head, fill_value)
    probs = trace.attn[kind][layer, b, head]
    shape = f"(n_q_seq={scores.shape[0]}, n_k_seq={scores.shape[1]})"
    where = _("{kind}, layer {layer}, head {head}").format(kind=_(KIND_NAMES[kind]),
                                                           layer=layer, head=head)
    bound = float(np.abs(scores).max()) or 1.0
    common = {"x_title": _("key"), "y_title": _("query"), "numbers": numbers}
    before = heatmap(scores, x, y, title=_("1. Scores QKᵀ/√d_k before masking {shape} · {where}")
                     .format(shape=shape, where=where),
                     colorscale=DIVERGING, zmid=0, zmin=-bound, zmax=bound, **common)
    # blocked cells: no colour (they would flatten the scale) but the text names the fill
    shown = np.where(blocked, np.nan, masked)
    text = cell_text(masked, fill=fill) if numbers and max(masked.shape) <= 40 else None
    after = heatmap(shown, x, y, title=_("2. After masking: blocked cells set to {fill} {shape}")
                    .format(fill=fill, shape=shape),
                    colorscale=DIVERGING, zmid=0, zmin=-bound, zmax=bound, text=text,
                    hover=query_key_hover(_("value") + ": %{customdata}<extra></extra>"),
                    x_title=_("key"), y_title=_("query"))
    if max(masked.shape) <= 40:  # long inputs: hover shows the value, blank cells are blocked
        after.update_traces(customdata=np.where(blocked, fill + " (" + _("blocked") + ")",
                                                np.char.mod("%.4f", masked)).astype(object))
    else:
        after.update_traces(hovertemplate=value_hover())
    soft = heatmap(probs, x, y, title=_("3. After softmax: blocked cells exactly 0 {shape}")
                   .format(shape=shape),
                   colorscale=colorscale, zmin=0, zmax=1, **common)
    return [before, after, soft]
