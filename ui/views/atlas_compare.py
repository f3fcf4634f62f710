"""The head atlas beside another model of the same shape, or beside one of this model's own
training snapshots (view=atlas, issue 56): both atlases over the same inputs, every head a
line from where it was to where it is on the two picked metrics, so a change of role (the
language model's phase change) shows as motion."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import streamlit as st

from model.backends import is_translator
from ui.catalog import model_folders, open_folder
from ui.context import Ctx, key_folder
from ui.i18n import _
from ui.pick import head_chart
from ui.snapshots import cached_history, snapshot_model
from ui.state import seed
from ui.text import KIND_LABELS
from ui.views.atlas_build import build_atlas, label_room
from viz import atlas as viz_atlas

NONE = ""


def _choices(ctx: Ctx) -> dict[str, tuple[str, str]]:
    """label -> ("ckpt", name) for the other models the picker offers, ("snap", step) for
    this model's training snapshots (a folder with a training log)."""
    here = key_folder(ctx.key)
    folder = Path(here[0]) if here else None
    out: dict[str, tuple[str, str]] = {}
    for name, path in model_folders().items():
        if folder is None or path.resolve() != folder.resolve():
            out[_("checkpoint {name}").format(name=name)] = ("ckpt", name)
    history = cached_history(str(folder), here[1]) if folder is not None else None
    for step in sorted(history.snapshots) if history is not None else ():
        out[_("this model at training step {step}").format(step=step)] = ("snap", str(step))
    return out


def _other(ctx: Ctx, pick: tuple[str, str]):
    """(bundle, cache key) of the picked model or snapshot."""
    what, value = pick
    if what == "ckpt":
        return open_folder(model_folders()[value])
    here = key_folder(ctx.key)
    history = cached_history(here[0], here[1])
    step = int(value)
    return (snapshot_model(ctx.bundle, ctx.key, str(history.snapshots[step]), step),
            f"{ctx.key}#step{step}")


def compare(ctx: Ctx, atlas, kind: str, corpus: str, n: int, pairs: list | None,
            mx: str, my: str) -> None:
    """The comparison block: a picker, then both atlases' heads in one scatter on (mx, my)."""
    choices = _choices(ctx)
    if not choices:
        return
    st.markdown(_("**Beside another model or snapshot**: the same inputs, each head's move on "
                  "the two metrics picked above"))
    seed("atlas_vs", NONE)
    if st.session_state["atlas_vs"] not in (NONE, *choices):
        st.session_state["atlas_vs"] = NONE
    label = st.selectbox(_("Compare with"), [NONE, *choices], key="atlas_vs",
                         format_func=lambda c: c or _("(nothing)"))
    if label == NONE:
        return
    bundle, key = _other(ctx, choices[label])
    same = (kind in bundle.kinds and bundle.n_layers(kind) == atlas.layers[kind]
            and int(bundle.config.n_heads) == atlas.n_heads)
    if not same:
        st.info(_("{other} has another shape of {kind} ({layers} layers × {heads} heads here): "
                  "its heads cannot be paired with these.").format(
                      other=label, kind=KIND_LABELS[kind], layers=atlas.layers[kind],
                      heads=atlas.n_heads))
        return
    both = pairs is not None and is_translator(bundle)
    lines = None if both else atlas.lines
    other = build_atlas(bundle, ("atlas", key, "beside", ctx.key, corpus, n), lines,
                        pairs if both else None, n, "atlas_vs")
    if other is None:
        return
    n_l, n_h = atlas.layers[kind], atlas.n_heads
    layers, heads = np.divmod(np.arange(n_l * n_h), n_h)
    a = tuple(atlas.summary(kind, m)[0].reshape(-1) for m in (mx, my))
    if mx not in other.values.get(kind, {}) or my not in other.values.get(kind, {}):
        st.info(_("The other model has no such metric for this attention."))
        return
    b = tuple(other.summary(kind, m)[0].reshape(-1) for m in (mx, my))
    here = _("this model")
    fig = viz_atlas.motion_figure(
        a, b, layers, heads, kind, (here, label), viz_atlas.metric_name(mx),
        viz_atlas.metric_name(my), _("{kind}: each head from {a} (hollow) to {b} (filled)")
        .format(kind=KIND_LABELS[kind], a=here, b=label))
    label_room(fig)  # the filled points' labels, where they do not collide
    head_chart(fig, ctx, key="atlas_motion", kind=kind)
    moved = np.hypot(b[0] - a[0], b[1] - a[1])
    if np.isfinite(moved).any():
        i = int(np.nanargmax(moved))
        st.caption(_("Moved furthest: {head} ({x} {xa:.3f} → {xb:.3f}, {y} {ya:.3f} → "
                     "{yb:.3f}).").format(
            head=viz_atlas.head_label(int(layers[i]), int(heads[i])),
            x=viz_atlas.metric_name(mx), xa=a[0][i], xb=b[0][i],
            y=viz_atlas.metric_name(my), ya=a[1][i], yb=b[1][i]))
