"""Embeddings view: hidden states layer by layer for one sentence.

A 2-D PCA (one basis over all layers) with each token's trajectory, token–token cosine similarity
per layer, norms, how much each layer changed each token, and the decoder's logit lens.
Pure functions: a Trace (or a plain dict for the lens) in, a plotly Figure out. `side` is "enc"
or "dec"; trace.hidden[side] is (L+1, B, n, D) with layer 0 = embeddings + positions.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.colors import sample_colorscale

from model.analysis.pca import principal_axes

from .common import DIVERGING, TEXT_MAX, plotly_text, token_labels
from .i18n import N_, _
from .positional import finish_figure

_SIDES = {"enc": "encoder", "dec": "decoder"}  # in error messages, which stay English
_STACKS = {"enc": N_("Encoder"), "dec": N_("Decoder")}  # in titles: _() where shown
_LAYER_AXIS = N_("Layer (0 = embeddings + positions)")


def _sentence(trace, side: str, b: int) -> tuple[np.ndarray, list[str]]:
    """(L+1, n, D) float64 hidden states of sentence b over its unpadded tokens, and labels."""
    if side not in _SIDES:
        raise ValueError(f"side must be 'enc' or 'dec', got {side!r}")
    if side not in trace.hidden:
        raise ValueError(f"the trace has no {_SIDES[side]} hidden states "
                         "(capture with 'hidden' in names, on a model with that stack)")
    tokens = trace.src_tokens[b] if side == "enc" else trace.tgt_tokens[b]
    hidden = np.asarray(trace.hidden[side][:, b, : len(tokens)], dtype=np.float64)
    return hidden, token_labels(tokens, numbered=True)


def _check_layer(layer: int, n_layers: int) -> int:
    if not 0 <= int(layer) < n_layers:
        raise ValueError(f"layer must be in 0..{n_layers - 1}, got {layer}")
    return int(layer)


def _unit(x: np.ndarray) -> np.ndarray:
    """Rows scaled to length 1 (zero rows stay zero)."""
    return x / np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), 1e-12)


def _layer_names(n: int) -> list[str]:
    layer = _("layer {layer}")
    return [_("layer 0 (embeddings)")] + [layer.format(layer=i) for i in range(1, n)]


def pca_trajectories(trace, side: str, b: int, layer: int | None = None) -> go.Figure:
    """Each token's path through the layers in one PCA plane fitted over all layers."""
    hidden, labels = _sentence(trace, side, b)
    n_layers, n = hidden.shape[:2]
    shown = n_layers - 1 if layer is None else _check_layer(layer, n_layers)
    mean, comps, shares = principal_axes(hidden)  # one plane fitted over every layer
    share = float(shares.sum())
    proj = (hidden - mean) @ comps.T  # (L+1, n, 2)
    # all token paths in one trace, separated by gaps: cheap for hundreds of tokens
    gap = np.full((n, 1, 2), np.nan)
    paths = np.concatenate([proj.transpose(1, 0, 2), gap], axis=1).reshape(-1, 2)
    fig = go.Figure(go.Scatter(
        x=paths[:, 0], y=paths[:, 1], mode="lines", name=_("paths"), hoverinfo="skip",
        line={"color": "rgba(120,120,120,0.6)", "width": 1}, opacity=1.0 if layer is None else 0.5,
        connectgaps=False))
    colours = sample_colorscale("Viridis", list(np.linspace(0, 1, max(n_layers, 2))))
    names = _layer_names(n_layers)
    for i in range(n_layers):
        picked = i == shown
        faded = layer is not None and not picked
        text = labels if picked and n <= TEXT_MAX else None
        fig.add_trace(go.Scatter(
            x=proj[i, :, 0], y=proj[i, :, 1], name=names[i],
            mode="markers+text" if text else "markers", text=text, textposition="top center",
            customdata=labels, opacity=0.3 if faded else 1.0,
            marker={"color": colours[i], "size": 11 if picked else 7,
                    "line": {"width": 1, "color": "white"}},
            hovertemplate=f"%{{customdata}}<br>{names[i]}<br>"
                          "PC1 %{x:.3f}, PC2 %{y:.3f}<extra></extra>"))
    title = _("{stack} hidden states, sentence {b}: PCA over all layers (explained variance "
              "{share:.1f}%)").format(stack=_(_STACKS[side]), b=b + 1, share=share * 100)
    # equal units on both axes by shrinking the wider side's domain, not widening its range:
    # the points spanned 41 % of the plot's width (issue 59's coverage check)
    return finish_figure(fig, title, "PC 1", "PC 2", legend_title_text=_("layer"),
                   yaxis_scaleanchor="x", xaxis_constrain="domain", yaxis_constrain="domain")


def cosine_by_layer(trace, side: str, b: int, layer: int) -> go.Figure:
    """Token × token cosine similarity of the hidden states at one layer."""
    hidden, labels = _sentence(trace, side, b)
    layer = _check_layer(layer, hidden.shape[0])
    unit = _unit(hidden[layer])
    sim = unit @ unit.T
    cells = {"texttemplate": "%{z:.2f}"} if len(labels) <= TEXT_MAX else {}
    fig = go.Figure(go.Heatmap(
        z=sim, x=labels, y=labels, colorscale=DIVERGING, zmin=-1, zmax=1, zmid=0,
        colorbar_title=_("cosine"), **cells,
        hovertemplate="%{y} · %{x}<br>" + _("cosine") + " %{z:.3f}<extra></extra>"))
    title = _("{stack} layer {layer}: token–token cosine similarity, sentence {b}").format(
        stack=_(_STACKS[side]), layer=layer, b=b + 1)
    return finish_figure(fig, title, _("Token"), _("Token"),
                   xaxis_type="category", yaxis_type="category", yaxis_autorange="reversed")


def norms_by_layer(trace, side: str, b: int) -> go.Figure:
    """Hidden-state L2 norm per token (columns) per layer (rows)."""
    hidden, labels = _sentence(trace, side, b)
    norms = np.linalg.norm(hidden, axis=-1)  # (L+1, n)
    cells = {"texttemplate": "%{z:.1f}"} if len(labels) <= TEXT_MAX else {}
    fig = go.Figure(go.Heatmap(
        z=norms, x=labels, y=np.arange(norms.shape[0]), colorscale="Viridis",
        colorbar_title="‖h‖", **cells,
        hovertemplate="%{x}<br>" + _("layer") + " %{y}<br>‖h‖ = %{z:.3f}<extra></extra>"))
    title = _("{stack} hidden-state norm per layer, sentence {b}").format(
        stack=_(_STACKS[side]), b=b + 1)
    return finish_figure(fig, title, _("Token"), _(_LAYER_AXIS), xaxis_type="category",
                   yaxis_dtick=1)


def layer_change(trace, side: str, b: int, metric: str = "cosine") -> go.Figure:
    """How much each layer changed each token: 1 − cos(h_l, h_{l−1}) or ‖h_l − h_{l−1}‖ / ‖h_{l−1}‖
    (metric "cosine" or "relative"); the other one is shown on hover."""
    hidden, labels = _sentence(trace, side, b)
    if hidden.shape[0] < 2:
        raise ValueError("layer_change needs at least one layer after the embeddings")
    before, after = hidden[:-1], hidden[1:]
    turn = 1.0 - np.sum(_unit(after) * _unit(before), axis=-1)  # (L, n)
    rel = np.linalg.norm(after - before, axis=-1) / np.maximum(
        np.linalg.norm(before, axis=-1), 1e-12)
    if metric == "cosine":
        z, other, name, other_name = turn, rel, _("1 − cosine"), _("relative change")
    elif metric == "relative":
        z, other, name, other_name = rel, turn, _("relative change"), _("1 − cosine")
    else:
        raise ValueError(f"metric must be 'cosine' or 'relative', got {metric!r}")
    cells = {"texttemplate": "%{z:.2f}"} if len(labels) <= TEXT_MAX else {}
    fig = go.Figure(go.Heatmap(
        z=z, x=labels, y=np.arange(1, hidden.shape[0]), customdata=other, colorscale="Viridis",
        zmin=0, colorbar_title=name, **cells,
        hovertemplate="%{x}<br>" + _("layer") + f" %{{y}}<br>{name} %{{z:.3f}}<br>"
                      f"{other_name} %{{customdata:.3f}}<extra></extra>"))
    title = _("{stack}: how much each layer changed each token ({measure}), sentence {b}"
              ).format(stack=_(_STACKS[side]), measure=name, b=b + 1)
    return finish_figure(fig, title, _("Token"), _("Layer"), xaxis_type="category", yaxis_dtick=1)


def logit_lens_figure(lens: dict, k: int = 5) -> go.Figure:
    """Layers × decoder positions: top-1 prob as colour, top-1 piece as text, top-k on hover."""
    layers, tokens, top = list(lens["layers"]), list(lens["tokens"]), lens["top"]
    if len(top) != len(layers) or any(len(row) != len(tokens) for row in top):
        raise ValueError("lens['top'] must be a list over layers of a list over positions")
    labels = token_labels(tokens, numbered=True)
    prob = np.full((len(layers), len(tokens)), np.nan)
    best = [["" for _t in tokens] for _l in layers]
    hover = [["" for _t in tokens] for _l in layers]
    where = _("layer {layer} · after {piece}")
    for i, row in enumerate(top):
        for j, cands in enumerate(row):
            cands = list(cands)[:k]
            if cands:
                prob[i, j] = float(cands[0][1])
                best[i][j] = plotly_text(cands[0][0])
            lines = [f"{plotly_text(p)}  {float(q):.3f}" for p, q in cands]
            hover[i][j] = where.format(layer=layers[i], piece=labels[j]) + "<br>" + \
                "<br>".join(lines)
    small = len(tokens) <= TEXT_MAX
    fig = go.Figure(go.Heatmap(
        z=prob, x=labels, y=layers, colorscale="Viridis", zmin=0, zmax=1,
        colorbar_title=_("top-1 prob"), customdata=hover,
        text=best if small else None, texttemplate="%{text}" if small else None,
        hovertemplate="%{customdata}<extra></extra>"))
    return finish_figure(fig, _("Logit lens: the next piece read out from every decoder layer"),
                   _("Decoder input (position:piece); each cell predicts the next piece"),
                   _(_LAYER_AXIS), xaxis_type="category", yaxis_dtick=1)
