"""Training: how the shipped language model's heads formed, snapshot by snapshot.

Loss and in-context learning over steps, each detector's score for every head over steps,
the phase change where the induction score jumps, and one head's attention on the typed
text at a chosen snapshot. Reads the folder's training/log.jsonl and snapshots/ (written by
training/lm/train.py).
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import streamlit as st

from model import Bundle, CheckpointError
from ui.catalog import folder_stamp
from ui.common import chart
from ui.context import Ctx, key_folder
from ui.i18n import N_, _
from ui.snapshots import cached_history, snapshot_trace
from ui.tables import dataframe
from viz import attention as viz_attention
from viz import training as viz_training

DETECTOR_NAMES = {"induction": N_("induction"), "previous_token": N_("previous token"),
                  "sink": N_("attention sink (first position)")}


def applies(bundle: Bundle) -> str | None:
    """Only a model trained here keeps its training log and snapshots."""
    if isinstance(bundle.card.get("training"), dict):
        return None
    return _("This view shows a model trained in this project, with its training log and "
             "snapshots (the shipped language model, “lm”). {name} keeps none.").format(
                 name=bundle.name)


def history_csv(h) -> str:
    """One row per probe: step, the series, then every detector's score per head."""
    s, n_l, n_h = h.heads["induction"].shape
    heads = viz_training.head_labels(n_l, n_h)
    out = io.StringIO()
    w = csv.writer(out)
    w.writerow(["step", *h.series, *(f"{d} {x}" for d in h.heads for x in heads)])
    for i, step in enumerate(h.steps):
        w.writerow([int(step), *(f"{h.series[n][i]:.5g}" for n in h.series),
                    *(f"{v:.4f}" for d in h.heads for v in h.heads[d][i].ravel())])
    return out.getvalue()


def _history(ctx: Ctx):
    found = key_folder(ctx.key)
    if found is None:
        return None
    folder = found[0]
    try:
        return folder, cached_history(folder, folder_stamp(Path(folder)))
    except (CheckpointError, OSError) as exc:
        st.error(_("The training log cannot be read: {why}").format(why=str(exc)))
        return None


def _measured(ctx: Ctx, key: str, fallback: float) -> float:
    """The card's figure (measured on the held-out documents), else the log's last probe."""
    value = ctx.bundle.card.get("figures", {}).get(key)
    return float(value) if isinstance(value, (int, float)) else float(fallback)


def _card_best(ctx: Ctx, detector: str) -> tuple[int, int, float] | None:
    """(layer, head, score) of the card's best head for a detector (figures.detectors, the
    numbers the heads view and the README give), None when the card has none."""
    grid = ctx.bundle.card.get("figures", {}).get("detectors", {}).get(detector)
    try:
        rows = [[float(v) for v in row] for row in grid]
    except (TypeError, ValueError):
        return None
    if not rows or not rows[0]:
        return None
    score, layer, head = max((v, i, j) for i, row in enumerate(rows) for j, v in enumerate(row))
    return layer, head, score


def render(ctx: Ctx) -> None:
    got = _history(ctx)
    if got is None:
        return
    _folder, h = got
    if h is None:
        st.info(applies(ctx.bundle) or "")
        return
    names = {k: _(v) for k, v in DETECTOR_NAMES.items()}
    phase = h.phase_change()
    last = len(h.steps) - 1
    best = h.heads["induction"][last]
    layer, head = divmod(int(best.argmax()), best.shape[1])
    st.markdown(_("**{steps:,} training steps.** Held-out loss {loss:.2f} at the end; "
                  "in-context learning score {icl:+.2f} (loss late in the context minus "
                  "early). Best induction head: layer {layer}, head {head} ({score:.2f}).")
                .format(steps=int(h.steps[-1]), loss=_measured(ctx, "held_out_loss",
                                                                h.series["val_loss"][last]),
                        icl=_measured(ctx, "icl", h.series["icl"][last]), layer=layer, head=head,
                        score=float(best.max())))
    source = _card_best(ctx, "induction")
    if source is not None and (source[:2] != (layer, head)
                               or round(source[2], 2) != round(float(best.max()), 2)):
        st.caption(_("Where the figures differ: this page reads the training log's probe rows "
                     "at step {step:,}; the heads view and the model card measure layer "
                     "{layer}, head {head} at {score:.3f} on {docs} held-out documents with the "
                     "shipped weights.").format(
            step=int(h.steps[last]), layer=source[0], head=source[1], score=source[2],
            docs=ctx.bundle.card.get("figures", {}).get("held_out_documents", "?")))
    if phase is not None:
        st.markdown(_("**Phase change at step {step}**: the best induction score rises most "
                      "between two probes there (dashed red line).").format(step=phase))
    else:
        st.info(_("No phase change: the induction score never jumps between two probes."))
    legs = ctx.bundle.card.get("training", {}).get("schedule")
    if isinstance(legs, list) and len(legs) > 1 and all(isinstance(x, dict) for x in legs):
        st.caption(_("Share of repeated random-token rows in training: {legs}.").format(
            legs="; ".join(_("{share:.0%} from step {step}").format(
                share=float(x.get("random_share", 0)), step=int(x.get("from_step", 0)))
                for x in legs)))
    if h.skipped:
        st.warning(_("{n} lines of the training log could not be read and are left out.")
                   .format(n=h.skipped))
    snaps = ctx.bundle.card.get("training", {}).get("snapshot_figures")
    valid = isinstance(snaps, dict) and all(
        isinstance(v, dict) and {"held_out_loss", "icl"} <= set(v) and str(k).isdigit()
        for k, v in snaps.items())
    chart(viz_training.loss_figure(h, phase, snaps if valid else None), ctx)
    detector = st.radio(_("Detector"), list(DETECTOR_NAMES), horizontal=True, key="trn_det",
                        format_func=lambda d: names[d])
    chart(viz_training.heads_steps_figure(h, detector, names[detector], phase), ctx)
    _snapshot_panel(ctx, h, layer, head, names)
    st.download_button(_("Download the training history (.csv)"), data=history_csv(h),
                       file_name=f"{ctx.bundle.name}-training.csv", mime="text/csv")


def _snapshot_panel(ctx: Ctx, h, layer: int, head: int, names: dict[str, str]) -> None:
    st.subheader(_("One head at one snapshot"))
    steps = sorted(h.snapshots)
    if not steps:
        st.info(_("This folder keeps no snapshots (snapshots/step_NNNNNN.safetensors)."))
        return
    n_l, n_h = h.heads["induction"].shape[1:]
    c1, c2, c3 = st.columns([3, 1, 1])
    step = c1.select_slider(_("Snapshot (training step)"), steps, value=steps[-1],
                            key="trn_step") if len(steps) > 1 else steps[0]
    layer = c2.selectbox(_("Layer"), list(range(n_l)), index=layer, key="trn_layer")
    head = c3.selectbox(_("Head"), list(range(n_h)), index=head, key="trn_head")
    i = h.at(step)
    dataframe(viz_training.best_heads_rows(h, i, names), content=True)
    st.caption(_("At step {step} this head scores: {scores}.").format(
        step=int(h.steps[i]), scores=", ".join(
            f"{names[d]} {h.heads[d][i, layer, head]:.2f}" for d in DETECTOR_NAMES)))
    try:
        with st.spinner(_("Loading the snapshot…")):
            t = snapshot_trace(ctx.bundle, ctx.key, str(h.snapshots[step]), step, ctx.lines)
    except CheckpointError as exc:
        st.error(_("This snapshot cannot be opened: {why}").format(why=str(exc)))
        return
    kind = next(iter(t.attn))
    chart(viz_attention.head_figure(t, kind, layer, min(ctx.b, len(ctx.lines) - 1), head,
                                    hide_pad=ctx.hide_pad, colorscale=ctx.colorscale), ctx)
