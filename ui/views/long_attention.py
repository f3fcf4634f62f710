"""The attention view's long mode: one long text (pasted or a .txt file), up to 32,768 pieces
or the model's own position limit, whichever is less (long_cap; said before the paste).

The attention view calls `render_if_long(ctx)` first; it offers the long text's box and, when
a text above LONG_FROM pieces is given, draws the long mode (and the view stops there): the
grid and one head from the pooled maps, an exact block on request (LongTrace.block), the
detectors from the statistics and a per-layer distance plot. The LongTrace of the session's
last long text is kept in its session state (one per session), never at module level.
"""

from __future__ import annotations

import hashlib
import weakref
from functools import partial

import numpy as np
import streamlit as st

from model import LONG_CAP, LONG_FROM, LongTrace, capture_long
from model.backends import capabilities, facts
from model.dispatch import encode, estimate_long, long_pieces
from ui.admission import admitted, or_warning, server_gate
from ui.common import chart
from ui.context import Ctx
from ui.i18n import _
from ui.tables import dataframe
from ui.text import KIND_LABELS
from viz import long as viz_long

MAX_CHARS = 2_000_000  # characters read from a box or file before anything is tokenized
# a .txt file at most (MiB): the uploader itself refuses larger ones, and says so, before any
# byte is sent (Streamlit's default would announce 200 MB)
MAX_UPLOAD_MB = 8
PIXELS = 512
HELD = "_long_trace"  # session state: (key, LongTrace, release) of the session's last long text
DRAG_KEY = "long_map"  # the pooled map's selection (a dragged box opens that block)


def read_upload(data: bytes) -> str | None:
    """A .txt file's text, or None when it is not UTF-8 text (binary, another encoding)."""
    if b"\x00" in data[:65536]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def long_cap(bundle) -> int:
    """The most pieces long mode reads for this model: its own position limit (a text past it
    would be cut, and the distance bins beyond it would mean nothing), at most LONG_CAP."""
    return min(LONG_CAP, int(facts(bundle).max_positions or LONG_CAP))


def _given_text(cap: int) -> str:
    """The long text from the box or the uploaded file (the file wins), '' when none."""
    with st.expander(_("Long text: paste or upload up to {cap:,} pieces").format(cap=cap),
                     expanded=bool(st.session_state.get("long_text"))):
        st.text_area(_("Long text"), key="long_text", height=120)
        upload = st.file_uploader(_("or a .txt file"), type=["txt"], key="long_file",
                                  max_upload_size=MAX_UPLOAD_MB)
    if upload is not None:
        data = upload.getvalue()
        if len(data) > MAX_UPLOAD_MB * 2**20:
            st.warning(_("That file is larger than {mb} MB; long mode reads at most that.")
                       .format(mb=MAX_UPLOAD_MB))
            return ""
        text = read_upload(data)
        if text is None:
            st.warning(_("That file is not UTF-8 text, so long mode cannot read it."))
            return ""
        return text[:MAX_CHARS]
    return str(st.session_state.get("long_text") or "")[:MAX_CHARS]


def _capture(ctx: Ctx, text: str) -> LongTrace | None:
    """The LongTrace of text, from the session's state or through the admission gate."""
    key = (ctx.key, hashlib.sha256(text.encode("utf-8", "replace")).hexdigest())
    held = st.session_state.get(HELD)
    if held is not None and held[0] == key:
        return held[1]
    if held is not None:  # a new text: the old trace's bytes stop counting before it asks
        st.session_state.pop(HELD)
        held[2]()
    batch = encode(ctx.bundle, [text])
    n = long_pieces(batch)
    cap = long_cap(ctx.bundle)
    if n > cap:
        st.warning(_("This text has {n:,} pieces; long mode takes at most {cap:,}. Use a "
                     "shorter text.").format(n=n, cap=cap))
        return None
    if n <= LONG_FROM:
        st.info(_("This text has {n:,} pieces: short enough for the ordinary view below. Long "
                  "mode starts above {start:,} pieces.").format(n=n, start=LONG_FROM))
        return None
    if batch.cuts[0]:
        st.info(_("The model reads at most {m:,} positions: the first {m:,} of the {n:,} "
                  "pieces are shown.").format(m=len(batch.src_lists[0]), n=n))
    est = estimate_long(ctx.bundle, batch, pixels=PIXELS)

    def run() -> LongTrace:
        with st.spinner(_("Reading {n:,} pieces through every head…").format(
                n=len(batch.src_lists[0]))):
            return capture_long(ctx.bundle, batch, pixels=PIXELS)

    trace = or_warning(lambda: admitted(est, lambda: None, run))
    if trace is not None:
        st.session_state[HELD] = (key, trace, _keep(trace))
    return trace


def _keep(trace: LongTrace) -> weakref.finalize:
    """Count the kept trace against the gate's budget (up to ~2 GB at 32,768 pieces) until it
    is replaced (the finalizer is called) or collected with its session."""
    gate = server_gate()
    return weakref.finalize(trace, gate.release, gate.hold(trace.nbytes()))


def render_if_long(ctx: Ctx) -> bool:
    """Draw the long mode when a long text is given; False: the ordinary view goes on."""
    if not capabilities(ctx.bundle).long_context:
        return False
    cap = long_cap(ctx.bundle)
    if cap <= LONG_FROM:  # said here, before anyone pastes a long text
        st.caption(_("Long mode reads texts above {start:,} pieces; this model's positions end "
                     "at {cap:,}, so it has none.").format(start=LONG_FROM, cap=cap))
        return False
    text = _given_text(cap)
    if not text.strip():
        return False
    trace = _capture(ctx, text)
    if trace is None:
        return False
    _draw(ctx, trace)
    return True


def _pick(trace: LongTrace) -> tuple[str, int, int]:
    kinds = trace.kinds
    c1, c2, c3, c4 = st.columns(4)
    kind = c1.selectbox(_("Attention"), kinds, key="long_kind", format_func=KIND_LABELS.get)
    n_layers, n_heads = trace.shape(kind)
    layer = c2.number_input(_("Layer"), 0, n_layers - 1, 0, key="long_layer")
    head = c3.number_input(_("Head"), 0, n_heads - 1, 0, key="long_head")
    c4.radio(_("Pixel value"), ["mean", "max"], key="long_pool", horizontal=True,
             format_func=lambda v: _("mean") if v == "mean" else _("max"))
    return kind, int(layer), int(head)


def _draw(ctx: Ctx, trace: LongTrace) -> None:
    st.info(_("Long mode: {n:,} pieces. Every head's weights were reduced as they were "
              "computed: maps are pooled to {p} × {p} pixels (each the mean or the max of its "
              "cells), and a region you zoom into is recomputed exactly.").format(
                  n=trace.n, p=trace.pixels))
    kind, layer, head = _pick(trace)
    pool = st.session_state.get("long_pool", "mean")
    maps = trace.pooled[kind][pool]
    fig = viz_long.pooled_figure(maps[layer, head], trace.n, _(
        "Layer {layer}, head {head} ({pool} per pixel)").format(
            layer=layer, head=head, pool=_("mean") if pool == "mean" else _("max")),
        ctx.colorscale)
    st.caption(_("Drag a box on the map to open that region exactly below (at most "
                 "1,024 × 1,024 cells), or type its corner and size."))
    chart(viz_long.drag_targets(fig, trace.n), ctx, key=DRAG_KEY,
          on_select=partial(_dragged, trace.n), selection_mode="box")
    _zoom(ctx, trace, kind, layer, head)
    chart(viz_long.grid_figure(maps, (layer, head), ctx.colorscale), ctx)
    _detectors(trace, kind)
    chart(viz_long.distance_figure(trace.summary[kind]["bands"]), ctx)
    chart(viz_long.head_distances(trace.stats[kind]["mean_distance"][layer]), ctx)


def _dragged(n: int) -> None:
    """Selection callback: the dragged box becomes the zoom's corner and size before the
    next run draws the zoom's inputs."""
    region = viz_long.box_region(st.session_state.get(DRAG_KEY, {}).get("selection"), n)
    if region is not None:
        q0, k0, side = region
        st.session_state.update(long_q0=q0, long_k0=k0, long_size=side)


@st.fragment
def _zoom(ctx: Ctx, trace: LongTrace, kind: str, layer: int, head: int) -> None:
    """Exact weights of a region of at most 1,024 × 1,024 (default: the last 512 queries).
    A fragment: a new region reruns this function alone, so the app, the pooled maps and the
    grid are neither rebuilt nor sent again, and only the block's chart is redrawn."""
    n = trace.n
    side = min(512, n)
    c1, c2, c3 = st.columns(3)
    q0 = c1.number_input(_("Zoom: first query"), 0, n - 1, n - side, key="long_q0")
    k0 = c2.number_input(_("first key"), 0, n - 1, n - side, key="long_k0")
    size = c3.number_input(_("cells per side"), 1, 1024, side, key="long_size")
    q1, k1 = min(n, int(q0) + int(size)), min(n, int(k0) + int(size))
    z = trace.block(kind, layer, head, int(q0), q1, int(k0), k1)
    chart(viz_long.block_figure(z, int(q0), int(k0), trace.tokens, _(
        "Exact weights: queries {q0}–{q1}, keys {k0}–{k1}").format(
            q0=int(q0), q1=q1 - 1, k0=int(k0), k1=k1 - 1), ctx.colorscale), ctx)


def _detectors(trace: LongTrace, kind: str) -> None:
    """The strongest heads for each detector, from the statistics alone."""
    st.subheader(_("Heads by what they do"))
    stats, summary = trace.stats[kind], trace.summary[kind]
    scores = [  # (name, score per head, higher is stronger)
        (_("sink (share on the first piece)"), summary["sink"]),
        (_("previous piece"), stats["previous"].mean(-1)),
        (_("local (≤ 64 pieces)"), summary["bands"][..., 0]),
        (_("far (> 1,024 pieces)"), summary["bands"][..., 2]),
        (_("focused (lowest mean entropy, nats)"), -stats["entropy"].mean(-1)),
    ]
    share, offset = trace.positional(kind)
    # previous-piece heads are positional at distance 1 and have their own row: the positional
    # row names the strongest head at any other distance
    other = np.where(offset != 1, share, -1.0)
    rows = []
    for name, s in scores + ([(None, other)] if other.max() >= 0 else []):
        flat = int(np.argmax(s))
        layer, head = divmod(flat, s.shape[1])
        if name is None:
            name = _("positional (share of queries whose strongest key is {d:,} pieces back)"
                     ).format(d=int(offset.flat[flat]))
        rows.append({_("detector"): name, _("layer"): layer, _("head"): head,
                     _("score"): round(abs(float(s.flat[flat])), 4)})
    dataframe(rows)
