"""The head atlas (view=atlas, issue 56): every head of the model over a corpus, as points
placed by two metrics or by MDS of the Jensen–Shannon distances between heads, coloured by
layer or by behaviour group; a click on a point opens the head in the attention view. Below:
the groups (named by what sets them apart, with their typical pattern on one input), one
head's spread over the inputs and the inputs where it departs most, and CSV / JSON export.

The atlas is built once per model, corpus and size for every session (ui/runtime's shared
results), through the admission gate, with a bar and Cancel (ui/sweep); a build estimated over
a few seconds waits for its button.
"""

from __future__ import annotations

import json

import numpy as np
import streamlit as st

from model.analysis.atlas import DEFAULT_INPUTS
from model.backends import is_translator
from ui.common import chart, goto
from ui.context import Ctx
from ui.i18n import N_, Labels, _
from ui.pick import head_chart
from ui.runtime import val_split
from ui.state import seed, sticky, url_value
from ui.text import KIND_LABELS, md
from ui.views.atlas_build import build_atlas, label_room
from ui.views.atlas_compare import compare
from viz import atlas as viz_atlas

SIZES = (50, 100, 200, DEFAULT_INPUTS)
CORPORA = Labels(model=N_("the model's corpus"), typed=N_("the typed lines"))
PLACES = Labels(mds=N_("by behaviour (MDS of the distances)"), metrics=N_("by two metrics"))
COLOURS = Labels(group=N_("group"), layer=N_("layer"))
SOURCES = Labels(
    validation=N_("{n} pairs of this checkpoint's validation split, half English → Korean and "
                  "half Korean → English, each read with its reference translation"),
    builtin=N_("{n} English sentences of the lab's built-in sentence set"),
    corpus=N_("{n} sentences drawn from this project's English–Korean grammar"),
    lines=N_("the {n} typed lines"))


def _from_link(key: str, param: str, allowed, default) -> None:
    """Seed a widget from the link (checked against what it may hold), else the default."""
    raw = url_value(param)
    if raw is not None and raw.isdigit() and int(raw) in allowed:
        seed(key, int(raw))
    seed(key, raw if raw in allowed else default)


def _open_input(line: str, head: tuple[str, int, int]) -> None:
    """Button callback: this input in the sidebar's box, this head in the attention view."""
    st.session_state["text"] = line
    st.session_state["sentence"] = 0
    goto("attention", head)


def _pairs(ctx: Ctx, corpus: str) -> list | None:
    """A translator's validation pairs when the corpus is the model's own, else None."""
    return val_split(ctx.bundle, ctx.key) if corpus == "model" and is_translator(ctx.bundle) \
        else None


def _build(ctx: Ctx, corpus: str, n: int, pairs: list | None):
    """The atlas of the page's model over the chosen corpus (atlas_build.build_atlas)."""
    lines = list(ctx.lines) if corpus == "typed" else None
    return build_atlas(ctx.bundle, ("atlas", ctx.key, corpus, n, tuple(lines or ())), lines,
                       pairs, n, "atlas")


def _points(atlas, kind: str, place: str, mx: str, my: str) -> tuple[np.ndarray, np.ndarray]:
    """(x, y) of every head of a kind, layer-major: MDS of the distances, or two metrics."""
    if place == "mds":
        xy = atlas.embedding(kind)
        return xy[:, 0], xy[:, 1]
    return (atlas.summary(kind, mx)[0].reshape(-1), atlas.summary(kind, my)[0].reshape(-1))


def render(ctx: Ctx) -> None:
    c1, c2 = st.columns(2)
    seed("atlas_corpus", "model")
    corpus = sticky(c1.radio, "atlas_corpus", _("Corpus"), options=list(CORPORA),
                    format_func=CORPORA.get, horizontal=True)
    _from_link("atlas_n", "n", SIZES, 50)  # the first build quick; more on request
    n = sticky(c2.select_slider, "atlas_n", _("Inputs from the corpus"), options=list(SIZES),
               disabled=corpus == "typed")
    try:
        pairs = _pairs(ctx, corpus)
        atlas = _build(ctx, corpus, n, pairs)
    except ValueError as exc:
        st.info(_("No atlas for this corpus: {reason}").format(reason=md(exc)))
        return
    if atlas is None:
        return
    st.caption(_("Corpus: {what}. Knocked-out heads are not applied here.").format(
        what=SOURCES[atlas.source].format(n=len(atlas.inputs))))
    kinds = atlas.kinds
    seed("atlas_kind", st.session_state.get("kind") if st.session_state.get("kind") in kinds
         else kinds[0])
    if st.session_state["atlas_kind"] not in kinds:
        st.session_state["atlas_kind"] = kinds[0]
    kind = sticky(st.radio, "atlas_kind", _("Attention"), options=kinds,
                  format_func=KIND_LABELS.get, horizontal=True)
    metrics = atlas.metrics(kind)
    if not metrics:
        st.info(_("No input of the corpus had this attention."))
        return
    c1, c2, c3, c4 = st.columns([3, 2, 2, 2])
    _from_link("atlas_place", "place", list(PLACES), "mds")
    place = sticky(c1.radio, "atlas_place", _("Place heads"), options=list(PLACES),
                   format_func=PLACES.get)
    _from_link("atlas_colour", "colour", list(COLOURS), "group")
    colour = sticky(c2.radio, "atlas_colour", _("Colour by"), options=list(COLOURS),
                    format_func=COLOURS.get)
    for key, param, default in (("atlas_x", "x", "entropy"), ("atlas_y", "y", "prev_token")):
        _from_link(key, param, metrics, default if default in metrics else metrics[0])
        if st.session_state[key] not in metrics:
            st.session_state[key] = metrics[0]
    mx = sticky(c3.selectbox, "atlas_x", _("x metric"), options=metrics,
                format_func=viz_atlas.metric_name)
    my = sticky(c4.selectbox, "atlas_y", _("y metric"), options=metrics,
                format_func=viz_atlas.metric_name)
    _scatter(ctx, atlas, kind, place, colour, mx, my, metrics)
    _groups(ctx, atlas, kind)
    _head(ctx, atlas, kind, metrics)
    try:
        compare(ctx, atlas, kind, corpus, n, pairs, mx, my)
    except ValueError as exc:
        st.info(_("No comparison: {reason}").format(reason=md(exc)))
    c1, c2 = st.columns(2)
    c1.download_button(_("Download the table (CSV)"), atlas.to_csv(), "head-atlas.csv",
                       "text/csv", key="atlas_csv")
    c2.download_button(_("Download the atlas (JSON)"), json.dumps(atlas.to_json()),
                       "head-atlas.json", "application/json", key="atlas_json")


def _group_names(atlas, kind: str) -> list[str]:
    return [viz_atlas.group_name(g.metric, g.direction, g.z) for g in atlas.groups[kind]]


def _scatter(ctx: Ctx, atlas, kind: str, place: str, colour: str, mx: str, my: str,
             metrics: list[str]) -> None:
    n_l, n_h = atlas.layers[kind], atlas.n_heads
    layers, heads = np.divmod(np.arange(n_l * n_h), n_h)
    names = _group_names(atlas, kind)
    group_of = np.zeros(n_l * n_h, dtype=int)
    for gi, g in enumerate(atlas.groups[kind]):
        for la, h in g.members:
            group_of[la * n_h + h] = gi
    summaries = {m: atlas.summary(kind, m) for m in metrics}
    hovers = [viz_atlas.hover_text(
        int(layers[i]), int(heads[i]), names[group_of[i]],
        [(m, float(s[0].reshape(-1)[i]), float(s[1].reshape(-1)[i]))
         for m, s in summaries.items()]) for i in range(n_l * n_h)]
    x, y = _points(atlas, kind, place, mx, my)
    if place == "mds":
        x_title, y_title = _("MDS axis 1"), _("MDS axis 2")
        title = _("{kind}: heads placed by their Jensen–Shannon distances (near = attend "
                  "alike)").format(kind=KIND_LABELS[kind])
    else:
        x_title, y_title = viz_atlas.metric_name(mx), viz_atlas.metric_name(my)
        title = _("{kind}: each head's mean over the inputs").format(kind=KIND_LABELS[kind])
    if colour == "group":
        colours, colour_names = group_of, names
    else:
        colours = layers
        colour_names = [_("layer {layer}").format(layer=la) for la in range(n_l)]
    fig = viz_atlas.atlas_scatter(np.asarray(x, float), np.asarray(y, float), layers, heads,
                                  colours, colour_names, hovers, kind, x_title, y_title, title)
    shown, total = label_room(fig)
    head_chart(fig, ctx, key="atlas_map", kind=kind)
    st.caption(_("Each point is a head, labelled layer.head where labels do not overlap "
                 "({shown} of {total}); hover for its scores (mean ± standard deviation over "
                 "the inputs), click to open it in the attention view.").format(
        shown=shown, total=total))


def _groups(ctx: Ctx, atlas, kind: str) -> None:
    groups = atlas.groups[kind]
    names = _group_names(atlas, kind)
    score = groups[0].silhouette if groups else float("nan")
    if np.isfinite(score):
        st.markdown(_("**{n} groups** by behaviour: agglomerative clustering of the distances, "
                      "the number of groups (2–8) chosen by the best silhouette ({s:.2f}). "
                      "Each is named by the metric that sets it apart most from the other "
                      "heads (z: in standard deviations across heads).")
                    .format(n=len(groups), s=score))
    else:
        st.markdown(_("**One group**: too few heads, or heads that all attend alike, to "
                      "split."))
    example = atlas.examples.get(kind)
    for gi, (g, name) in enumerate(zip(groups, names)):
        members = ", ".join(f"{la}.{h}" for la, h in g.members)
        with st.expander(f"{gi + 1}. {name}: {members}", expanded=gi == 0 and len(groups) < 4):
            if example is None:
                st.caption(_("No input of the corpus had this attention."))
                continue
            title = _("Mean attention of the group's {n} heads on input {i}").format(
                n=len(g.members), i=example.index + 1)
            chart(viz_atlas.group_pattern(example.attn, g.members, example.q_pieces,
                                          example.k_pieces, title), ctx,
                  key=f"atlas_group_{kind}_{gi}")
            st.caption(md(atlas.inputs[example.index].source))


def _head(ctx: Ctx, atlas, kind: str, metrics: list[str]) -> None:
    n_l, n_h = atlas.layers[kind], atlas.n_heads
    st.markdown(_("**One head over the inputs**: how reliably it does what it does"))
    heads = [(la, h) for la in range(n_l) for h in range(n_h)]
    state = st.session_state
    if state.get("kind") == kind and (state.get("layer"), state.get("head")) in heads:
        seed("atlas_head", (state["layer"], state["head"]))
    seed("atlas_head", heads[0])
    if state["atlas_head"] not in heads:
        state["atlas_head"] = heads[0]
    c1, c2 = st.columns(2)
    layer, head = c1.selectbox(_("Head"), heads, key="atlas_head",
                               format_func=lambda x: viz_atlas.head_label(*x))
    seed("atlas_metric", metrics[0])
    if state["atlas_metric"] not in metrics:
        state["atlas_metric"] = metrics[0]
    metric = c2.selectbox(_("Metric"), metrics, key="atlas_metric",
                          format_func=viz_atlas.metric_name)
    st.caption(md(_(viz_atlas.METRIC_DEFINITIONS[metric])))
    mean, std, n = (a[layer, head] for a in atlas.summary(kind, metric))
    values = atlas.values[kind][metric][:, layer, head]
    texts = atlas.lines if metric != "induction" else [
        _("repeated random sequence {i}").format(i=i + 1) for i in range(len(values))]
    chart(viz_atlas.spread_figure(
        values, texts, _("{head}: {metric} = {mean:.3f} ± {std:.3f} over {n} inputs").format(
            head=viz_atlas.head_label(layer, head), metric=viz_atlas.metric_name(metric),
            mean=mean, std=std, n=int(n)), viz_atlas.metric_name(metric)), ctx, key="atlas_spread")
    far = atlas.departures(kind, metric, layer, head, top=3)
    if far:
        st.markdown(_("Inputs where it departs most from its mean:"))
    for rank, (i, value) in enumerate(far):
        c1, c2 = st.columns([4, 1], vertical_alignment="center")
        c1.markdown(f"{value:.3f} · " + md(atlas.inputs[i].source))
        c2.button(_("Open"), key=f"atlas_open_{rank}", on_click=_open_input,
                  args=(atlas.inputs[i].source, (kind, layer, head)))

