"""The key/value cache during generation: what each new piece read from the cache, the first
positions' share over the steps, positions nobody read, the cache's bytes per layer, and
eviction what-ifs (ui/views/cache_evict.py).

The continuation is the model's own, through its cache (model.generate with record=True);
greedy, or top-k sampling with a seed. Knocked-out heads (sidebar) stay out at every step.
"""

from __future__ import annotations

import json

import numpy as np
import streamlit as st

from model import Bundle
from model.analysis.cache_reads import first_share, layer_mean, strongest_read
from model.backends import capabilities
from ui.common import chart
from ui.context import Ctx
from ui.i18n import _
from ui.presenter import MIN_PX, PLOT_WIDTH, PLOTLY_FONT, presenting
from ui.snapshots import cached_recorded
from ui.state import seed
from ui.tables import dataframe
from ui.text import md
from ui.views import cache_evict
from viz import cache as viz_cache
from viz.common import SCREEN_W

MAX_NEW = 24
MEAN = -1  # the layer's (or the heads') mean in the pickers


def applies(bundle: Bundle) -> str | None:
    """Decoder-only models whose backend generates: they keep a key/value cache."""
    if capabilities(bundle).generates:
        return None
    return _("The key/value cache belongs to decoder-only models, which continue text one "
             "piece at a time; this model does not generate that way.")


def _controls() -> tuple[int, int, int]:
    seed("cache_max_new", MAX_NEW)
    seed("cache_sample", 0)
    seed("cache_seed", 0)
    c1, c2, c3 = st.columns(3)
    max_new = c1.slider(_("New pieces"), 1, 64, key="cache_max_new")
    sample = c2.number_input(_("Sample among the top k (0 = greedy)"), 0, 50, step=1,
                             key="cache_sample")
    draw = c3.number_input(_("Sampling seed"), 0, 2**31 - 1, step=1, key="cache_seed",
                           disabled=int(sample) == 0)
    return int(max_new), int(sample), int(draw)


def _pick(n_layers: int, n_heads: int) -> tuple[int, int]:
    seed("cache_layer", 0)
    seed("cache_head", MEAN)
    c1, c2 = st.columns(2)
    layer = c1.selectbox(_("Layer"), [MEAN, *range(n_layers)], key="cache_layer",
                         format_func=lambda i: _("mean of the layers") if i == MEAN else str(i))
    head = c2.selectbox(_("Head"), [MEAN, *range(n_heads)], key="cache_head",
                        format_func=lambda i: _("mean of the heads") if i == MEAN else str(i))
    return int(layer), int(head)


def _map(attn: list[np.ndarray], layer: int, head: int) -> np.ndarray:
    """(S, P): one head, a layer's mean, or the mean over layers and heads."""
    layers = attn if layer == MEAN else [attn[layer]]
    rows = [a[:, head] if head != MEAN else layer_mean(a) for a in layers]
    return np.mean(rows, axis=0).astype(np.float32)


def _reads(ctx: Ctx, g) -> None:
    layer, head = _pick(len(g.attn), g.attn[0].shape[1])
    who = (_("mean of the heads") if head == MEAN else _("head {h}").format(h=head))
    where = _("mean of the layers") if layer == MEAN else _("layer {l}").format(l=layer)
    fig = viz_cache.read_map_figure(_map(g.attn, layer, head), g.tokens, g.pieces
                                    + (["</s>"] if g.finished else []),
                                    _("What each new piece read from the cache ({where}, "
                                      "{who})").format(where=where, who=who))
    # the position labels at this mode's width and tick font (presenter: 1.5x, >= MIN_PX)
    width, font = (PLOT_WIDTH, MIN_PX) if presenting() else (SCREEN_W, PLOTLY_FONT)
    chart(viz_cache.fit_position_ticks(fig, width, font), ctx)
    seed("cache_first", 1)
    first = st.slider(_("First positions counted as the sink"), 1,
                      max(1, min(4, len(g.prompt))), key="cache_first")
    share = first_share(g.attn, first)  # (L, S, H)
    per_head = share.mean(axis=0) if layer == MEAN else share[layer]  # (S, H)
    chart(viz_cache.first_share_figure(per_head, per_head.mean(axis=1),
                                       _("Share on the first {k} position(s), {where}").format(
                                           k=first, where=where)), ctx)
    st.metric(_("Share on the first {k} position(s) at the last step, every layer and head")
              .format(k=first), f"{float(share[:, -1].mean()):.3f}")
    seed("cache_threshold", 0.05)
    threshold = st.number_input(_("Read threshold"), 0.0, 1.0, step=0.01, format="%.2f",
                                key="cache_threshold")
    strongest = strongest_read(g.attn)
    cold = np.flatnonzero(strongest <= threshold)
    if cold.size:
        names = ", ".join(f"{p}:{g.tokens[p]}" for p in cold[:40])
        st.markdown(_("**{n} of {total} cached positions** were never read above {t:.2f} by "
                      "any head of any layer at any step: {names}").format(
            n=cold.size, total=strongest.size, t=threshold, names=md(names)
            + (" …" if cold.size > 40 else "")))
    else:
        st.markdown(_("Every cached position was read above {t:.2f} by some head at some "
                      "step.").format(t=threshold))


def _sizes(g) -> None:
    sizes = g.cache_bytes
    st.markdown(_("**The cache's size**: keys and values of {n} positions, as the model "
                  "holds them").format(n=g.cache_positions))
    dataframe({_("layer"): list(range(len(sizes))), _("bytes"): sizes,
               _("bytes per position"): [s // max(1, g.cache_positions) for s in sizes]},
              content=True)
    st.caption(_("{total:,} bytes in all.").format(total=sum(sizes)))


def _export(g, extra: dict) -> None:
    data = {"prompt": g.prompt, "pieces": g.pieces, "finished": g.finished,
            "sample": g.sample, "seed": g.seed, "cache_bytes": g.cache_bytes,
            "cache_positions": g.cache_positions,
            "attn": [a.round(6).tolist() for a in g.attn], **extra}
    st.download_button(_("Download the cache's reads and the what-ifs (JSON)"),
                       json.dumps(data, ensure_ascii=False), file_name="kv-cache.json",
                       mime="application/json", key="cache_download")


def render(ctx: Ctx) -> None:
    max_new, sample, draw = _controls()
    try:
        g = cached_recorded(ctx.bundle, ctx.key, ctx.lines[ctx.b], ctx.ablate, max_new,
                            sample, draw)[0]
    except ValueError as exc:
        st.error(str(exc))
        return
    how = (_("greedy") if sample == 0
           else _("sampled among the top {k}, seed {s}").format(k=sample, s=draw))
    st.markdown(_("**Continuation** ({how}, one forward per new piece through the model's "
                  "own cache)").format(how=how))
    # pieces the tokenizer cannot write out (rows past its end, specials) are still named
    said = g.text or " ".join(g.pieces) or _("(empty)")
    st.code(ctx.lines[ctx.b] + " ⟶ " + said, language=None,
            wrap_lines=True)  # a long continuation wraps, not runs past the window
    if not g.steps:
        st.info(_("No generation steps: the input already fills the model's positions."))
        return
    _reads(ctx, g)
    _sizes(g)
    extra = cache_evict.render(ctx, g)
    _export(g, extra)
