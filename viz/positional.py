"""Positional view: the position table as a heatmap, chosen dimensions as curves, position–position
similarity, and the size of the token term vs the positional term for a typed sentence.

Pure functions: numpy arrays or a Trace in, a plotly Figure out. Row 0 of every table is the pad
position (tokens are numbered 1..n, pad slots get 0; see model/backends/lab/positional.py).
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .common import DIVERGING, half_width, plotly_text, token_labels
from .i18n import N_, _

WHITE = "plotly_white"  # these views' look (the other views use common.TEMPLATE)
PAD_NOTE = N_("row 0 = pad position; tokens use positions 1..n")
TABLE_TITLE = N_("Positional table")  # table_heatmap's default title
_SIDES = {"enc": "encoder", "dec": "decoder"}  # hook prefixes, never translated
_WORDS = {"encoder": N_("encoder"), "decoder": N_("decoder"), "sinusoidal": N_("sinusoidal"),
          "learned": N_("learned"), "dot": N_("dot product"),
          "cosine": N_("cosine similarity")}  # shown with _(), other values as they are


def _word(value: str) -> str:
    """One of our words (stack, table kind, metric) in the installed language."""
    return _(_WORDS[value]) if value in _WORDS else value


def _note(title: str, note: str | None = None) -> str:
    """A title with the pad-row note under it (`note`: another line, translated; "" none)."""
    note = _(PAD_NOTE) if note is None else plotly_text(note)
    return f"{title}<br><sup>{note}</sup>" if note else title


# colour-bar ticks: steps of 1, 2, 2.5 or 5 times a power of ten, at most BAR_TICKS a side of 0
BAR_STEPS = (1.0, 2.0, 2.5, 5.0)
BAR_TICKS = 3


def bar_ticks(half: float) -> list[float]:
    """Tick values of a colour bar from -half to half: 0 and whole steps either side.

    Fixed by the figure, so the bar's labels do not depend on its length: plotly.js picks
    ticks by the bar's length in px, and where Streamlit draws a chart at plotly's default
    450 px high before its own height, the labels of the first pass ("-1", 18 px wide) set the
    right margin and the wider ones of the second ("-1.5") were drawn at the old bar's place,
    13.5 px past the chart's edge (minilm's table presenting, Chromium)."""
    half = float(half)
    if not np.isfinite(half) or half <= 0:
        return [0.0]
    power = 10.0 ** np.floor(np.log10(half / BAR_TICKS))
    step = next(s * power * k for k in (1.0, 10.0) for s in BAR_STEPS
                if half / (s * power * k) < BAR_TICKS + 1)
    n = int(np.floor(half / step + 1e-9))
    return [float(f"{i * step:.6g}") + 0.0 for i in range(-n, n + 1)]  # + 0.0: no -0


def _bar(title: str, half: float) -> dict:
    """A signed heatmap's colour bar: its title and fixed ticks (bar_ticks)."""
    return {"title": {"text": title}, "tickvals": bar_ticks(half)}


def _table_hover() -> str:
    return (_("position") + " %{y}<br>" + _("dimension") + " %{x}<br>" + _("value")
            + " %{z:.4f}<extra></extra>")


def finish_figure(fig: go.Figure, title: str, x_title: str, y_title: str, **layout) -> go.Figure:
    fig.update_layout(title=title, template=WHITE, xaxis_title=x_title,
                      yaxis_title=y_title, **layout)
    return fig


def _rows(table: np.ndarray, n_positions: int | None) -> np.ndarray:
    """The first n_positions rows of a (max_len, D) table, checked."""
    table = np.asarray(table)
    if table.ndim != 2:
        raise ValueError(f"a position table is 2-D (positions, depth), got shape {table.shape}")
    n = table.shape[0] if n_positions is None else int(n_positions)
    if n < 1:
        raise ValueError(f"n_positions must be at least 1, got {n_positions}")
    return table[: min(n, table.shape[0])]


def _is_sinusoidal(table: np.ndarray) -> bool:
    """Whether the table is the paper's sin/cos formula (else: a learned table)."""
    n, d = table.shape
    pos = np.arange(n, dtype=np.float64)[:, None]
    angle = pos / np.power(10000.0, np.arange(0, d, 2, dtype=np.float64) / d)[None, :]
    ref = np.empty((n, d))
    ref[:, 0::2] = np.sin(angle)[:, : (d + 1) // 2]
    ref[:, 1::2] = np.cos(angle)[:, : d // 2]
    return bool(np.allclose(table, ref, atol=1e-4))


def table_heatmap(pos_table: np.ndarray, n_positions: int | None = None,
                  title: str = TABLE_TITLE, note: str | None = None) -> go.Figure:
    """Position × depth heatmap on the shared DIVERGING scale (red high) centred on 0, as seed
    000's pcolormesh; `note` (translated by the caller) replaces the lab's "row 0 = pad
    position" line, "" drops it."""
    z = _rows(pos_table, n_positions)
    m = half_width(z)
    fig = go.Figure(go.Heatmap(
        z=z, x=np.arange(z.shape[1]), y=np.arange(z.shape[0]), colorscale=DIVERGING,
        zmin=-m, zmax=m, zmid=0, colorbar=_bar(_("value"), m), hovertemplate=_table_hover()))
    shape = _("{n} positions × {d} dimensions").format(n=z.shape[0], d=z.shape[1])
    title = _(title) if title == TABLE_TITLE else title  # a caller's title comes translated
    note = _(PAD_NOTE) if note is None else note
    sub = f"{shape}; {plotly_text(note)}" if note else shape
    return finish_figure(fig, f"{plotly_text(title)}<br><sup>{sub}</sup>",
                   _("Depth (dimension)"), _("Position"))


def dimension_curves(pos_table: np.ndarray, dims: list[int], n_positions: int,
                     kind: str | None = None, note: str | None = None) -> go.Figure:
    """Each chosen dimension's value over position; kind "sinusoidal"/"learned" (None: detect)."""
    rows = _rows(pos_table, n_positions)
    depth = rows.shape[1]
    bad = [d for d in dims if not 0 <= int(d) < depth]
    if bad:
        raise ValueError(f"dimensions {bad} outside 0..{depth - 1}")
    if kind is None:
        kind = "sinusoidal" if _is_sinusoidal(np.asarray(pos_table)) else "learned"
    x = np.arange(rows.shape[0])
    fig = go.Figure()
    for d in dims:
        d = int(d)
        name = (_("dim {d} ({fn})").format(d=d, fn="sin" if d % 2 == 0 else "cos")
                if kind == "sinusoidal" else _("dim {d}").format(d=d))
        fig.add_trace(go.Scatter(
            x=x, y=rows[:, d], mode="lines", name=name,
            hovertemplate=name + "<br>" + _("position") + " %{x}<br>" + _("value")
            + " %{y:.4f}<extra></extra>"))
    title = _("Positional table ({kind}): chosen dimensions over position").format(
        kind=_word(kind))
    return finish_figure(fig, _note(title, note), _("Position"), _("Value"),
                   legend_title_text=_("dimension"))


def position_similarity(pos_table: np.ndarray, n_positions: int,
                        metric: str = "dot", note: str | None = None) -> go.Figure:
    """Position × position similarity of the table rows: "dot" product or "cosine"."""
    rows = _rows(pos_table, n_positions).astype(np.float64)
    if metric == "dot":
        sim = rows @ rows.T
        m = half_width(sim)
    elif metric == "cosine":
        unit = rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)
        sim, m = unit @ unit.T, 1.0
    else:
        raise ValueError(f"metric must be 'dot' or 'cosine', got {metric!r}")
    name, position = _word(metric), _("position")
    pos = np.arange(rows.shape[0])
    fig = go.Figure(go.Heatmap(
        z=sim, x=pos, y=pos, colorscale=DIVERGING, zmin=-m, zmax=m, zmid=0, colorbar=_bar(name, m),
        hovertemplate=position + " %{y} · " + position + " %{x}<br>" + name
        + " %{z:.4f}<extra></extra>"))
    return finish_figure(fig, _note(_("Position–position {measure}").format(measure=name), note),
                   _("Position"), _("Position"), yaxis_autorange="reversed")


def term_sizes(trace, b: int, side: str = "enc") -> go.Figure:
    """L2 norm per position of the token-embedding term (×√D) vs the positional term."""
    if side not in _SIDES:
        raise ValueError(f"side must be 'enc' or 'dec', got {side!r}")
    stack = _SIDES[side]
    names = (f"{stack}.hook_tok", f"{stack}.hook_pos")
    missing = [n for n in names if n not in trace.acts]
    if missing:
        raise ValueError(f"the trace lacks {missing}; capture with names including {list(names)}")
    tokens = trace.src_tokens[b] if side == "enc" else trace.tgt_tokens[b]
    n = len(tokens)
    labels = token_labels(tokens, numbered=True)
    fig = go.Figure()
    for name, legend in zip(names, (_("token embedding × √d_model"), _("positional term"))):
        norms = np.linalg.norm(np.asarray(trace.acts[name][b, :n], dtype=np.float64), axis=-1)
        fig.add_trace(go.Bar(
            x=labels, y=norms, name=legend,
            hovertemplate="%{x}<br>" + legend + ": ‖·‖ = %{y:.3f}<extra></extra>"))
    title = _("Token term vs positional term, {stack} input, sentence {b}").format(
        stack=_word(stack), b=b + 1)
    return finish_figure(fig, title, _("Token (position:piece)"), _("L2 norm"), barmode="group",
                   xaxis_type="category")


def compare_tables(a: np.ndarray, b: np.ndarray, names: tuple[str, str],
                   n_positions: int) -> go.Figure:
    """Two position tables side by side on one symmetric colour range."""
    za, zb = _rows(a, n_positions), _rows(b, n_positions)
    m = half_width(za, zb)
    fig = make_subplots(rows=1, cols=2, shared_yaxes=True, horizontal_spacing=0.06,
                        subplot_titles=[plotly_text(n) for n in names])
    for col, z in ((1, za), (2, zb)):
        fig.add_trace(go.Heatmap(
            z=z, x=np.arange(z.shape[1]), y=np.arange(z.shape[0]), colorscale=DIVERGING,
            zmin=-m, zmax=m, zmid=0, showscale=col == 2, colorbar=_bar(_("value"), m),
            name=plotly_text(names[col - 1]), hovertemplate=_table_hover()),
            row=1, col=col)
        fig.update_xaxes(title_text=_("Depth (dimension)"), row=1, col=col)
    fig.update_yaxes(title_text=_("Position"), row=1, col=1)
    fig.update_layout(title=_note(_("Positional tables compared")), template=WHITE)
    return fig


# ---- Hugging Face models without a position table (model/hf/positions.py) -----------------


LOG_LABELS = 6  # a log axis names at most about this many powers of ten


def decade_step(values: np.ndarray) -> int:
    """dtick of a log axis over values: every k-th power of ten, k so that about LOG_LABELS
    are named. Left to itself, plotly.js also writes 2 and 5 between the powers at 0.75 of
    the tick font, which no figure setting sizes: 13.5 px in presenter mode's 18 px ticks
    (lm's rotary chart, Chromium), under the projector's 16 px."""
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v) & (v > 0)]
    if not v.size:
        return 1
    decades = np.ceil(np.log10(v.max())) - np.floor(np.log10(v.min()))
    return max(1, int(np.ceil(decades / LOG_LABELS)))


def rotary_frequencies(theta: np.ndarray) -> go.Figure:
    """Rotary positions: the angle per position θ_i of each rotated dimension pair (log scale)
    and its wavelength 2π/θ_i in positions."""
    theta = np.asarray(theta, dtype=np.float64)
    pairs = np.arange(len(theta))
    wavelength = 2 * np.pi / np.maximum(theta, 1e-30)
    fig = make_subplots(rows=1, cols=2, subplot_titles=(
        _("rotation per position θ_i (radians)"), _("wavelength 2π/θ_i (positions)")))
    pair = _("pair") + " %{x}<br>"
    fig.add_trace(go.Scatter(x=pairs, y=theta, mode="lines+markers", name="θ_i",
                             hovertemplate=pair + "θ %{y:.3g} rad<extra></extra>"), 1, 1)
    fig.add_trace(go.Scatter(x=pairs, y=wavelength, mode="lines+markers", name=_("wavelength"),
                             hovertemplate=pair + "%{y:.3g} " + _("positions")
                             + "<extra></extra>"),
                  1, 2)
    for col, values in ((1, theta), (2, wavelength)):
        fig.update_yaxes(type="log", dtick=decade_step(values), row=1, col=col)
    fig.update_xaxes(title_text=_("dimension pair i (dimensions 2i, 2i+1 of each head)"))
    return finish_figure(fig, _("Rotary positions: q and k of each pair are rotated by position × "
                          "θ_i"), "", "", showlegend=False, height=380)


def rotary_distance(theta: np.ndarray, max_distance: int,
                    recorded: tuple[np.ndarray, np.ndarray] | None = None,
                    head: str = "") -> go.Figure:
    """q·k as a function of relative distance d: for q = k = (1, …, 1) it is Σ_i 2·cos(d·θ_i)
    (the rotation alone, RoFormer's long-range decay), and, when given, one head's recorded
    mean score per distance (key − query) on the typed text."""
    theta = np.asarray(theta, dtype=np.float64)
    d = np.arange(-max_distance, max_distance + 1)
    ideal = 2 * np.cos(d[:, None] * theta[None, :]).sum(-1)
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    distance = _("distance") + " %{x}<br>"
    fig.add_trace(go.Scatter(x=d, y=ideal, mode="lines", name="q = k = 1: Σ 2cos(dθ_i)",
                             hovertemplate=distance + "%{y:.3f}<extra></extra>"))
    if recorded is not None and len(recorded[0]):
        fig.add_trace(go.Scatter(x=recorded[0], y=recorded[1], mode="lines+markers",
                                 name=_("{head} mean score").format(head=plotly_text(head)),
                                 hovertemplate=distance + _("mean") + " %{y:.3f}"
                                               "<extra></extra>"), secondary_y=True)
    fig.update_yaxes(title_text=_("recorded mean score"), secondary_y=True)
    return finish_figure(fig, _("q·k against relative distance (key − query)"),
                   _("relative distance"), _("rotation alone"), height=380)


def t5_bias_heatmap(bias: np.ndarray, head: int, side: str) -> go.Figure:
    """One head's T5 relative position bias, query position × key position."""
    z = np.asarray(bias, dtype=np.float64)[head]
    m = half_width(z)
    fig = go.Figure(go.Heatmap(
        z=z, x=np.arange(z.shape[1]), y=np.arange(z.shape[0]), colorscale=DIVERGING, zmin=-m,
        zmax=m, zmid=0, colorbar=_bar(_("bias"), m),
        hovertemplate=_("query") + " %{y}<br>" + _("key") + " %{x}<br>" + _("bias")
        + " %{z:.4f}<extra></extra>"))
    fig.update_yaxes(autorange="reversed")
    title = _("T5 relative position bias, {side}, head {head}").format(side=_word(side),
                                                                        head=head)
    note = _("added to the scores; distances share buckets, far ones logarithmically")
    return finish_figure(fig, f"{title}<br><sup>{note}</sup>", _("key position"),
                   _("query position"), height=460)
