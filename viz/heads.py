"""Heads and compare views: head statistics, importance, ablation, rollout and side-by-side maps.

Pure functions: numpy arrays and dicts from model/analysis in, plotly Figures out. Token labels
are common.token_labels(numbered=True): "position:piece" with positions 1..n as the model
numbers tokens, escaped by common.plotly_text so pieces like <2ko> show instead of markup.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from model.analysis.heads import METRICS, diff_where_tokens_agree

from .common import (
    DIVERGING,
    SCREEN_W,
    SEQUENTIAL,
    TEXT_MAX,
    cell_text,
    fitting_numbers,
    half_width,
    layer_row_px,
    plotly_text,
    style,
    token_labels,
)
from .i18n import N_, _
from .masks import kind_name

SCALE = SEQUENTIAL[0]  # Viridis: every unsigned map here (shares, entropy, rollout)
SIGNED = DIVERGING  # RdBu, always on a range symmetric about 0
_SHARES = {"pad_share", "special_share", "punct_share", "prev_token", "diagonal", "max_weight",
           "alignment"}
IMPORTANCE_TITLE = N_("Importance scan: loss increase when one head is ablated")
# model.analysis.heads.METRICS marked for the catalogue (model/ is not extracted; a test keeps
# the two equal), and the metrics' names as shown in charts: _() where shown
METRIC_DEFINITIONS = {
    "entropy": N_("mean entropy (nats) of a query's attention over its unblocked keys; "
                  "0 = all on one key, log n = spread evenly over n keys"),
    "distance": N_("mean attention distance |query − key| in positions, weighted by attention "
                   "(ViT, seed 001)"),
    "max_weight": N_("mean of each query's largest attention weight"),
    "pad_share": N_("share of attention on padding keys (must be 0: pad keys are masked)"),
    "special_share": N_("share of attention on the model's own special pieces (its start, "
                        "end, separator and tag pieces; byte pieces count as text)"),
    "punct_share": N_("share of attention on punctuation pieces (., ?, !, ,)"),
    "prev_token": N_("mean weight on the previous position (key = query − 1), over queries "
                     "that have one; self-attention only"),
    "diagonal": N_("mean weight on the same position (key = query)"),
    "alignment": N_("share of gold-aligned target words whose summed cross attention peaks on "
                    "a gold source word (cross attention, teacher-forced on the reference)"),
}
METRIC_NAMES = {"entropy": N_("entropy"), "distance": N_("distance"),
                "max_weight": N_("max_weight"), "pad_share": N_("pad_share"),
                "special_share": N_("special_share"), "punct_share": N_("punct_share"),
                "prev_token": N_("prev_token"), "diagonal": N_("diagonal"),
                "alignment": N_("alignment")}


CROSS_NOTES = {
    "distance": N_("cross attention: distance to the proportional source position"),
    "diagonal": N_("cross attention: on the source position nearest the proportional position"),
}


def metric_definition(metric: str, kind: str, definitions: dict[str, str] | None = None) -> str:
    """A caller's definition as given, else the catalogue's, else model's (English); on cross
    attention followed by what the metric means between two sequences."""
    if definitions and metric in definitions:
        return definitions[metric]
    text = _(METRIC_DEFINITIONS[metric]) if metric in METRIC_DEFINITIONS else \
        METRICS.get(metric, "")
    if kind == "cross" and metric in CROSS_NOTES:
        text += "; " + _(CROSS_NOTES[metric])
    return text


def _layer_head_hover(kind: str) -> str:
    """'encoder self-attention layer %{y} head %{x}', translated (no str.format near %{})."""
    return kind_name(kind) + " " + _("layer") + " %{y} " + _("head") + " %{x}"


def _layers_heads_axes(fig: go.Figure, n_l: int = 1, n_h: int = 1, **where) -> None:
    """Layer and head axes, a tick per layer / head up to 40 of them, then every k-th."""
    fig.update_xaxes(title_text=_("head"), dtick=-(-n_h // 40), **where)
    fig.update_yaxes(title_text=_("layer"), dtick=-(-n_l // 40), autorange="reversed", **where)


def stats_heatmaps(stats: dict[str, np.ndarray], kind: str,
                   definitions: dict[str, str] | None = None) -> list[go.Figure]:
    """One layers × heads heatmap per metric, titled with the metric's definition.

    Shares and weights use a fixed 0..1 range; entropy and distance their own range. x is the
    head and y the layer number, so a selected point names the head; meta holds kind and metric.
    """
    order = [m for m in METRICS if m in stats] + [m for m in stats if m not in METRICS]
    figs = []
    for metric in order:
        z = np.asarray(stats[metric], dtype=np.float64)
        if z.ndim != 2:
            raise ValueError(f"{metric}: expected a (layers, heads) array, got shape {z.shape}")
        n_l, n_h = z.shape
        rng = {"zmin": 0.0, "zmax": 1.0} if metric in _SHARES else {}
        name = _(METRIC_NAMES[metric]) if metric in METRIC_NAMES else metric
        fig = go.Figure(go.Heatmap(
            z=z, x=np.arange(n_h), y=np.arange(n_l), colorscale=SCALE, colorbar_title=name,
            text=fitting_numbers(z, ".2f", layer_row_px(n_l), SCREEN_W - 150),
            texttemplate="%{text}",
            hovertemplate=_layer_head_hover(kind) + f"<br>{name} %{{z:.4f}}<extra></extra>",
            **rng))
        definition = plotly_text(metric_definition(metric, kind, definitions))
        title = f"{kind_name(kind)}: {name}<br><sup>{definition}</sup>"
        style(fig, title, _("head"), _("layer"), height=max(220, 110 + layer_row_px(n_l) * n_l))
        _layers_heads_axes(fig, n_l, n_h)
        fig.update_layout(meta={"kind": kind, "metric": metric})
        figs.append(fig)
    return figs


def importance_figure(scan: dict[str, np.ndarray],
                      title: str = IMPORTANCE_TITLE, unit: str = "nats") -> go.Figure:
    """Loss increase per head (layers × heads) for each kind, one symmetric RdBu range.
    unit (model.backends.Facts.effect_unit): "nats" for a model whose output is scored by
    log-probability, "hidden" for the relative change of an encoder's last hidden states,
    "cosine" for a change in cosine between sentence embeddings (signed: blue = it fell).

    Red = the loss rose without the head (the model needs it), blue = it fell.
    """
    kinds = list(scan)
    if not kinds:
        raise ValueError("the scan is empty")
    m = half_width(*scan.values())
    shown = _(title) if title == IMPORTANCE_TITLE else title  # a caller's title comes translated
    fig = make_subplots(rows=1, cols=len(kinds), horizontal_spacing=0.08,
                        subplot_titles=[kind_name(k) for k in kinds])
    for col, kind in enumerate(kinds, start=1):
        z = np.asarray(scan[kind], dtype=np.float64)
        fig.add_trace(go.Heatmap(
            z=z, x=np.arange(z.shape[1]), y=np.arange(z.shape[0]), colorscale=SIGNED,
            zmin=-m, zmax=m, zmid=0, showscale=col == len(kinds),
            colorbar_title=_("Δ loss (nats)") if unit == "nats" else "‖Δh‖/‖h‖"
            if unit != "cosine" else _("Δ cosine"),
            text=fitting_numbers(z, "+.3f", layer_row_px(z.shape[0]),
                                 (SCREEN_W - 150) / len(kinds)),
            texttemplate="%{text}", name=kind,
            hovertemplate=_layer_head_hover(kind) + "<br>"
                          + (_("Δ loss") if unit == "nats" else "‖Δh‖/‖h‖"
                             if unit != "cosine" else _("Δ cosine"))
                          + " %{z:+.4f}<extra></extra>"), row=1, col=col)
    n_l = max(np.asarray(z).shape[0] for z in scan.values())
    note = (_("mean NLL per target token, teacher-forced on the un-ablated translation; "
              "red = the model needs the head") if unit == "nats" else
            _("mean relative change of the last hidden states, ‖h_after − h_before‖ / "
              "‖h_before‖; red = knocking the head out changes them most") if unit != "cosine"
            else _("cosine without the head − cosine with every head; blue = it fell"))
    style(fig, f"{plotly_text(shown)}<br><sup>{note}</sup>", _("head"), _("layer"),
          height=max(300, 190 + layer_row_px(n_l) * n_l))
    fig.update_layout(margin={"t": 110})  # room for the subtitle above the subplot titles
    _layers_heads_axes(fig, n_l, max(np.shape(z)[1] for z in scan.values()))
    return fig


def ablation_figure(effect: dict, b: int = 0, unit: str = "nats") -> go.Figure:
    """Per-target-token change in log-probability (after − before) for sentence b; unit
    "hidden": per token, minus the relative change of its last hidden state (an encoder)."""
    if unit != "nats":
        return _hidden_ablation_figure(effect, b)
    tokens = effect["tokens"][b]
    change = np.asarray(effect["logp_change"][b], dtype=np.float64)
    before = np.asarray(effect["logp_before"][b], dtype=np.float64)
    after = np.asarray(effect["logp_after"][b], dtype=np.float64)
    m = half_width(change)
    fig = go.Figure(go.Bar(
        x=token_labels(tokens, numbered=True), y=change,
        customdata=np.stack([before, after], axis=-1),
        marker={"color": change, "colorscale": SIGNED, "cmin": -m, "cmax": m, "cmid": 0,
                "colorbar": {"title": "Δ log p"}},
        hovertemplate="%{x}<br>" + _("log p before") + " %{customdata[0]:.3f}<br>"
                      + _("after") + " %{customdata[1]:.3f}<br>" + _("change")
                      + " %{y:+.3f}<extra></extra>"))
    spec = effect.get("ablate_spec") or _("nothing")
    loss = _("loss {before:.3f} → {after:.3f} nats/token").format(
        before=effect["sentence_loss_before"][b], after=effect["sentence_loss_after"][b])
    head = _("Ablating {heads}: change in log-probability of each target token").format(
        heads=plotly_text(spec))
    note = _("teacher-forced on the un-ablated translation; {loss}").format(loss=loss)
    style(fig, f"{head}<br><sup>{note}</sup>",
          _("target token (position:piece)"), _("Δ log p (after − before)"))
    fig.update_xaxes(type="category")
    fig.add_hline(y=0, line_width=1, line_color="gray")
    return fig


def _hidden_ablation_figure(effect: dict, b: int) -> go.Figure:
    """An encoder's knock-out: how far each token's last hidden state moved, relative."""
    tokens = effect["tokens"][b]
    moved = -np.asarray(effect["logp_change"][b], dtype=np.float64)  # stored as minus
    fig = go.Figure(go.Bar(
        x=token_labels(tokens, numbered=True), y=moved,
        marker={"color": moved, "colorscale": "Reds", "cmin": 0,
                "colorbar": {"title": "‖Δh‖/‖h‖"}},
        hovertemplate="%{x}<br>‖Δh‖/‖h‖ %{y:.3f}<extra></extra>"))
    spec = effect.get("ablate_spec") or _("nothing")
    head = _("Knocking out {heads}: relative change of each token's last hidden state").format(
        heads=plotly_text(spec))
    note = _("‖h_after − h_before‖ / ‖h_before‖; mean over the sentence {after:.3f}").format(
        after=effect["sentence_loss_after"][b])
    style(fig, f"{head}<br><sup>{note}</sup>", _("token (position:piece)"), "‖Δh‖/‖h‖")
    fig.update_xaxes(type="category")
    return fig


def rollout_figure(r: np.ndarray, q_tokens: Sequence[str], k_tokens: Sequence[str],
                   title: str) -> go.Figure:
    """A rollout map (queries × keys, rows sum to 1) as a Viridis heatmap with token labels."""
    r = np.asarray(r, dtype=np.float64)
    if r.shape != (len(q_tokens), len(k_tokens)):
        raise ValueError(f"map of shape {r.shape} for {len(q_tokens)} × {len(k_tokens)} tokens")
    small = max(r.shape) <= TEXT_MAX
    top = float(r.max()) if r.size and r.max() > 0 else 1.0
    fig = go.Figure(go.Heatmap(
        z=r, x=token_labels(k_tokens, numbered=True), y=token_labels(q_tokens, numbered=True),
        colorscale=SCALE,
        zmin=0.0, zmax=top, colorbar_title=_("share"), text=cell_text(r) if small else None,
        texttemplate="%{text}" if small else None,
        hovertemplate="%{y} ← %{x}<br>" + _("share") + " %{z:.3f}<extra></extra>"))
    style(fig, plotly_text(title), _("input token (key)"), _("output token (query)"),
          height=int(min(900, max(320, 140 + 24 * r.shape[0]))))
    fig.update_xaxes(type="category")
    fig.update_yaxes(type="category", autorange="reversed")
    return fig


def rollout_bars(r: np.ndarray, tokens: Sequence[str], query_index: int,
                 query_tokens: Sequence[str] | None = None) -> go.Figure:
    """Row `query_index` (0-based) of a rollout map as bars over the key tokens."""
    r = np.asarray(r, dtype=np.float64)
    if not 0 <= query_index < r.shape[0]:
        raise ValueError(f"query_index must be in 0..{r.shape[0] - 1}, got {query_index}")
    if r.shape[1] != len(tokens):
        raise ValueError(f"{r.shape[1]} key columns for {len(tokens)} tokens")
    q_labels = token_labels(query_tokens if query_tokens is not None else tokens,
                            numbered=True)
    query = q_labels[query_index] if query_index < len(q_labels) else str(query_index + 1)
    fig = go.Figure(go.Bar(
        x=token_labels(tokens, numbered=True), y=r[query_index],
        marker={"color": r[query_index], "colorscale": SCALE, "cmin": 0.0, "cmax": 1.0},
        hovertemplate="%{x}<br>" + _("share") + " %{y:.3f}<extra></extra>"))
    style(fig, _("Rollout for query {query}: where its information comes from").format(
        query=query), _("input token (key)"), _("share (row sums to 1)"))
    fig.update_xaxes(type="category")
    return fig


# model.analysis.heads.diff_where_tokens_agree's reasons (English), in the installed language
_NO_DIFF = (
    (re.compile(r"the query tokens differ in number \((\d+) vs (\d+)\)"),
     N_("the query tokens differ in number ({a} vs {b})")),
    (re.compile(r"the key tokens differ in number \((\d+) vs (\d+)\)"),
     N_("the key tokens differ in number ({a} vs {b})")),
    (re.compile(r"the tokens differ in number \((\d+) vs (\d+)\)"),
     N_("the tokens differ in number ({a} vs {b})")),
    (re.compile(r"the query tokens differ at position (\d+) \((.*) vs (.*)\)"),
     N_("the query tokens differ at position {i} ({x} vs {y})")),
    (re.compile(r"the key tokens differ at position (\d+) \((.*) vs (.*)\)"),
     N_("the key tokens differ at position {i} ({x} vs {y})")),
    (re.compile(r"the tokens differ at position (\d+) \((.*) vs (.*)\)"),
     N_("the tokens differ at position {i} ({x} vs {y})")),
    (re.compile(r"the maps differ in shape \((.*) vs (.*)\)"),
     N_("the maps differ in shape ({a} vs {b})")),
)


def no_diff_reason(reason: str) -> str:
    """Why no difference map is drawn, in the installed language (unknown reasons as given)."""
    for pattern, template in _NO_DIFF:
        m = pattern.fullmatch(reason)
        if m:
            names = ("i", "x", "y") if "{i}" in template else ("a", "b")
            return _(template).format(**dict(zip(names, m.groups())))
    return reason


def compare_figure(a: np.ndarray, b: np.ndarray, q_a: Sequence[str], k_a: Sequence[str],
                   q_b: Sequence[str], k_b: Sequence[str], titles: Sequence[str]) -> go.Figure:
    """Two attention maps side by side on one 0..max range, and right − left below when the
    tokens agree (else the title says why not). titles: (left, right) or (left, right, overall).
    """
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    for name, z, q, k in (("left", a, q_a, k_a), ("right", b, q_b, k_b)):
        if z.shape != (len(q), len(k)):
            raise ValueError(f"{name} map has shape {z.shape} for {len(q)} × {len(k)} tokens")
    left, right = (plotly_text(t) for t in titles[:2])
    overall = plotly_text(titles[2]) if len(titles) > 2 else _("Attention compared")
    diff, reason = diff_where_tokens_agree((q_a, k_a), (q_b, k_b), a, b)
    both = diff is not None
    specs = [[{}, {}], [{"colspan": 2}, None]] if both else [[{}, {}]]
    names = [left, right, _("difference (right − left)")] if both else [left, right]
    fig = make_subplots(rows=2 if both else 1, cols=2, specs=specs, subplot_titles=names,
                        horizontal_spacing=0.12, vertical_spacing=0.16)
    top = max([float(z.max()) for z in (a, b) if z.size] + [0.0]) or 1.0
    bar = {"title": _("weight"), "len": 0.42 if both else 1.0, "y": 0.79 if both else 0.5}
    layout: dict = {"coloraxis": {"colorscale": SCALE, "cmin": 0.0, "cmax": top,
                                  "colorbar": bar}}
    weight = _("weight") + " %{z:.3f}"
    panels = [(1, 1, a, q_a, k_a, "coloraxis", weight), (1, 2, b, q_b, k_b, "coloraxis", weight)]
    if both:
        m = half_width(diff)
        layout["coloraxis2"] = {"colorscale": SIGNED, "cmin": -m, "cmax": m, "cmid": 0,
                                "colorbar": {"title": "Δ", "len": 0.42, "y": 0.21}}
        panels.append((2, 1, diff, q_a, k_a, "coloraxis2", _("right − left") + " %{z:+.3f}"))
        note = _("difference shown because both inputs have the same tokens")
    else:
        note = _("no difference map: {reason}").format(
            reason=plotly_text(no_diff_reason(reason)))
    for row, col, z, q, k, axis, value in panels:
        fig.add_trace(go.Heatmap(z=z, x=token_labels(k, numbered=True),
                                 y=token_labels(q, numbered=True), coloraxis=axis,
                                 hovertemplate=f"%{{y}} → %{{x}}<br>{value}<extra></extra>"),
                      row=row, col=col)
    style(fig, f"{overall}<br><sup>{note}</sup>", _("key"), _("query"),
          height=900 if both else 480)
    fig.update_xaxes(type="category", tickangle=-45)  # token labels side by side never collide
    fig.update_yaxes(type="category", autorange="reversed")
    fig.update_yaxes(title_text="", row=1, col=2)  # "query" once: the left panel's axis
    fig.update_layout(margin={"t": 110}, **layout)  # subtitle above the subplot titles
    return fig


def pooled_bars(shares: np.ndarray, tokens: Sequence[str], title: str) -> go.Figure:
    """A pooled sentence vector's rollout (model.analysis.rollout.pooled_rollout) as bars over
    the input tokens."""
    shares = np.asarray(shares, dtype=np.float64)
    if shares.shape != (len(tokens),):
        raise ValueError(f"{shares.shape} shares for {len(tokens)} tokens")
    fig = go.Figure(go.Bar(
        x=token_labels(tokens, numbered=True), y=shares,
        marker={"color": shares, "colorscale": SCALE, "cmin": 0.0, "cmax": 1.0},
        hovertemplate="%{x}<br>" + _("share") + " %{y:.3f}<extra></extra>"))
    style(fig, plotly_text(title), _("input token (key)"), _("share (sums to 1)"))
    fig.update_xaxes(type="category")
    return fig
