"""Activation patching figures: layer × head per attention kind, layer × position for the
residual stream and the attention outputs, and the effects as CSV text.

Pure functions: a model.patching.Patching in, plotly Figures or text out. Effects are shares of
the clean run recovered (0 = corrupted run, 1 = clean run), on one RdBu range symmetric about 0
that always reaches ±1, so red reads "carries the clean answer" at any size.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from model.capture import SIDE_STACK, query_side
from model.patching import Patching

from .common import DIVERGING, cell_text, half_width, heatmap, plotly_text, style
from .i18n import N_, _
from .masks import kind_name

SIDE_NAMES = {"enc": N_("encoder"), "dec": N_("decoder")}
METHOD_NAMES = {"exact": N_("exact patching"), "attribution": N_("attribution patching")}


def _range(*arrays: np.ndarray) -> float:
    return max(1.0, half_width(*arrays))


def position_labels(clean: Sequence[str], corrupted: Sequence[str]) -> list[str]:
    """'position:piece', and 'position:clean→corrupted' where the two inputs differ."""
    out = []
    for i, c in enumerate(clean, start=1):
        r = corrupted[i - 1] if i - 1 < len(corrupted) else c
        shown = plotly_text(c) if c == r else f"{plotly_text(c)}→{plotly_text(r)}"
        out.append(f"{i}:{shown}")
    return out


def heads_figure(p: Patching) -> go.Figure:
    """Effect of patching each head's context (layers × heads), one panel per kind."""
    kinds = list(p.heads)
    if not kinds:
        raise ValueError("this result has no head effects (parts without 'heads')")
    m = _range(*p.heads.values())
    fig = make_subplots(rows=1, cols=len(kinds), horizontal_spacing=0.08,
                        subplot_titles=[kind_name(k) for k in kinds])
    hover = (_("layer") + " %{y} · " + _("head") + " %{x}<br>" + _("recovered")
             + " %{z:.3f}<extra></extra>")
    for col, kind in enumerate(kinds, start=1):
        z = np.asarray(p.heads[kind], dtype=np.float64)
        small = z.size <= 200
        fig.add_trace(go.Heatmap(
            z=z, x=np.arange(z.shape[1]), y=np.arange(z.shape[0]), colorscale=DIVERGING,
            zmin=-m, zmax=m, zmid=0, showscale=col == len(kinds),
            colorbar_title=_("recovered"), text=cell_text(z, ".2f") if small else None,
            texttemplate="%{text}" if small else None, name=kind, hovertemplate=hover),
            row=1, col=col)
    n_l = max(z.shape[0] for z in p.heads.values())
    title = _("Patching one head from the clean run: {method}").format(
        method=_(METHOD_NAMES.get(p.method, p.method)))
    note = _("share of the clean run recovered: 0 = corrupted, 1 = clean")
    style(fig, f"{title}<br><sup>{note}</sup>", _("head"), _("layer"),
          height=max(300, 170 + 32 * n_l))
    fig.update_layout(margin={"t": 110})
    fig.update_yaxes(autorange="reversed", dtick=1)
    fig.update_xaxes(dtick=1)
    return fig


def positions_figure(grid: np.ndarray, labels: Sequence[str], rows: Sequence[str],
                     title: str) -> go.Figure:
    """Layer (rows) × position (columns) effects with the pieces on the x axis."""
    m = _range(grid)
    hover = ("%{y}<br>" + _("position") + " %{x}<br>" + _("recovered")
             + " %{z:.3f}<extra></extra>")
    return heatmap(np.asarray(grid, dtype=np.float64), list(labels), list(rows), title=title,
                   x_title=_("position"), y_title=_("layer"), colorscale=[
                       [0.0, "#2166ac"], [0.5, "#f7f7f7"], [1.0, "#b2182b"]],
                   zmin=-m, zmax=m, zmid=0, numbers=True, hover=hover)


def resid_figure(p: Patching, side: str) -> go.Figure:
    """The residual stream of one side: each block's input, then the last block's output."""
    grid = p.resid[side]
    n_blocks = grid.shape[0] - 1
    rows = [_("block {i} input").format(i=i) for i in range(n_blocks)] + [_("output")]
    labels = position_labels(p.pieces.get(side, []), p.corrupted_pieces.get(side, []))
    return positions_figure(grid, labels[: grid.shape[1]], rows, _(
        "Residual stream ({side}): patched at one position").format(
            side=_(SIDE_NAMES.get(side, side))))


def attn_out_figure(p: Patching, kind: str) -> go.Figure:
    """One attention kind's block outputs (after W_O) patched at one position."""
    grid = p.attn_out[kind]
    side = SIDE_STACK[query_side(kind)]
    rows = [_("layer {i}").format(i=i) for i in range(grid.shape[0])]
    labels = position_labels(p.pieces.get(side, []), p.corrupted_pieces.get(side, []))
    return positions_figure(grid, labels[: grid.shape[1]], rows, _(
        "Attention output ({kind}): patched at one position").format(kind=kind_name(kind)))


def patch_csv(p: Patching) -> str:
    """Every effect as CSV rows: part, where (kind or side), layer, head or position, piece,
    effect; metadata first as comment-free header rows."""
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["method", p.method, "clean_metric", p.clean_metric, "corrupted_metric",
                p.corrupted_metric, "answer", p.answer, "wrong", p.wrong, "position",
                p.position])
    w.writerow(["part", "where", "layer", "head_or_position", "piece", "effect"])
    for kind, grid in p.heads.items():
        for (layer, head), v in np.ndenumerate(grid):
            w.writerow(["head", kind, layer, head, "", f"{v:.6g}"])
    for kind, grid in p.attn_out.items():
        pieces = p.pieces.get(SIDE_STACK[query_side(kind)], [])
        for (layer, pos), v in np.ndenumerate(grid):
            w.writerow(["attn_out", kind, layer, pos, pieces[pos] if pos < len(pieces) else "",
                        f"{v:.6g}"])
    for side, grid in p.resid.items():
        pieces = p.pieces.get(side, [])
        for (layer, pos), v in np.ndenumerate(grid):
            w.writerow(["resid", side, layer, pos, pieces[pos] if pos < len(pieces) else "",
                        f"{v:.6g}"])
    return buf.getvalue()
