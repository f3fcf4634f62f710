"""Compare: one head for two inputs on one checkpoint, or one input on two checkpoints."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from model import Bundle, CheckpointError
from ui.catalog import model_folders, open_folder
from ui.common import chart, clean_input, pick_head, side_tokens
from ui.context import Ctx
from ui.i18n import N_, Labels, _
from ui.runtime import cached_capture
from ui.state import seed
from ui.text import KIND_LABELS, md
from viz import heads as viz_heads
from viz import positional as viz_positional

COMPARE_MODES = Labels(inputs=N_("two inputs, same checkpoint"),
                       checkpoints=N_("two checkpoints, same input"))


def other_checkpoint(name: str, folder: Path) -> tuple[Bundle, str] | None:
    try:
        return open_folder(folder)
    except (CheckpointError, OSError) as exc:
        st.error(_("Checkpoint {name} could not be loaded: {reason}").format(
            name=md(name), reason=md(exc)))
        return None


def render(ctx: Ctx) -> None:
    mode = st.radio(_("Compare"), list(COMPARE_MODES), key="cmp_mode", horizontal=True,
                    format_func=COMPARE_MODES.get)
    sides = compare_inputs(ctx) if mode == "inputs" else compare_checkpoints(ctx)
    if sides is None:
        return
    (name_a, trace_a, b_a, bundle_a), (name_b, trace_b, b_b, bundle_b) = sides
    kinds = [k for k in trace_a.kinds if k in trace_a.attn and k in trace_b.attn]
    if not kinds:
        st.info(_("The two sides have no attention kind in common."))
        return
    n_layers = {k: min(trace_a.n_layers(k), trace_b.n_layers(k)) for k in kinds}
    n_heads = min(trace_a.attn[kinds[0]].shape[2], trace_b.attn[kinds[0]].shape[2])
    kind, layer, head = pick_head(kinds, n_layers.__getitem__, n_heads)
    q_a, k_a = side_tokens(trace_a, kind, b_a)
    q_b, k_b = side_tokens(trace_b, kind, b_b)
    a = trace_a.attn[kind][layer, b_a, head, :len(q_a), :len(k_a)]
    z = trace_b.attn[kind][layer, b_b, head, :len(q_b), :len(k_b)]
    chart(viz_heads.compare_figure(a, z, q_a, k_a, q_b, k_b, titles=(
        name_a, name_b, _("{kind}, layer {layer}, head {head}").format(
            kind=KIND_LABELS[kind], layer=layer, head=head))), ctx)
    if mode == "checkpoints" and viz_positional is not None:
        rows = min(trace_a.pos_table.shape[0], trace_b.pos_table.shape[0])
        n_pos = st.slider(_("Positions shown"), 2, max(rows, 2), min(rows, 64), key="cmp_pos_n")
        chart(viz_positional.compare_tables(trace_a.pos_table, trace_b.pos_table,
                                            (bundle_a.name, bundle_b.name), n_pos), ctx)


def compare_inputs(ctx: Ctx) -> tuple | None:
    others = [line for i, line in enumerate(ctx.lines) if i != ctx.b]
    seed("cmp_text", others[0] if others else ctx.lines[ctx.b])
    raw = st.text_input(_("Second input (one sentence)"), key="cmp_text")
    lines, notes = clean_input(raw)
    for note in notes:
        st.warning(md(note))
    if not lines:
        st.info(_("Type a second sentence to compare with."))
        return None
    trace_b = cached_capture(ctx.bundle, ctx.key, (lines[0],), None, ctx.lang, ctx.ablate,
                             ctx.needs)
    st.caption(_("Left: sentence {b} of the input; right: the second input. Same "
                 "checkpoint, same heads knocked out.").format(b=ctx.b + 1))
    return ((_("sentence {b}").format(b=ctx.b + 1), ctx.trace, ctx.b, ctx.bundle),
            (_("second input"), trace_b, 0, ctx.bundle))


def compare_checkpoints(ctx: Ctx) -> tuple | None:
    catalog = model_folders()
    names = list(catalog)
    if "paper" in names and "seed001" in names:
        pair = ("paper", "seed001")
    else:
        rest = [n for n in names if n != ctx.bundle.name]
        pair = (ctx.bundle.name if ctx.bundle.name in names else names[0],
                rest[0] if rest else names[0])
    for key, default in zip(("cmp_a", "cmp_b"), pair):
        seed(key, default)
        if st.session_state[key] not in names:
            st.session_state[key] = default
    c1, c2 = st.columns(2)
    name_a = c1.selectbox(_("Left checkpoint"), names, key="cmp_a")
    name_b = c2.selectbox(_("Right checkpoint"), names, key="cmp_b")
    if ctx.ablate:
        st.caption(_("Knocked-out heads are not applied when comparing checkpoints."))
    out = []
    for name in (name_a, name_b):
        loaded = other_checkpoint(name, catalog[name])
        if loaded is None:
            return None
        bundle, key = loaded
        try:
            trace = cached_capture(bundle, key, ctx.lines, ctx.targets, ctx.lang, "",
                                   ctx.needs)
        except ValueError as exc:
            st.info(_("Checkpoint {name} cannot run on this input: {reason}").format(
                name=md(name), reason=md(exc)))
            return None
        out.append((name, trace, ctx.b, bundle))
    return tuple(out)
