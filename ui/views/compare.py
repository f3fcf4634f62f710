"""Compare: one head for two inputs on one checkpoint, or one input on two checkpoints."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from model import Bundle, CheckpointError
from model.backends import capabilities
from ui.catalog import model_folders, open_folder
from ui.common import chart, clean_input, pick_head, side_tokens
from ui.context import Ctx
from ui.i18n import N_, Labels, _
from ui.line_partner import Partner, lined_up_partner
from ui.runtime import cached_capture
from ui.sidebar import presets_for
from ui.state import seed
from ui.text import KIND_LABELS, md
from ui.views.patch import presets as minimal_pairs
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


def starting_partner(ctx: Ctx) -> Partner:
    """The second input a session starts with: a line with as many pieces as sentence b on
    this model's tokenizer (ui/line_partner.py), from the input, the model's minimal pairs and
    its examples."""
    line = ctx.lines[ctx.b]
    others = [text for i, text in enumerate(ctx.lines) if i != ctx.b]
    examples = [text for preset in presets_for(ctx.bundle).values()
                for text in preset.splitlines()]
    lang = ctx.lang if capabilities(ctx.bundle).translates else None
    return lined_up_partner(ctx.bundle, line, others, minimal_pairs(ctx.bundle), examples, lang)


def partner_note(ctx: Ctx, typed: str) -> None:
    """Why the second input starts as it does, while it is still the chosen line for this
    sentence (the user's own other line needs no word)."""
    chosen = st.session_state.get("cmp_partner")
    if chosen is None or chosen[:2] != (ctx.lines[ctx.b], typed):
        return
    source, n, word, new = chosen[2:]
    if word and source != "input":  # one word changed: a minimal pair's or a swap
        st.caption(_("The second input is sentence {b} with “{word}” changed to “{new}”: "
                     "both are {n} pieces on this model's tokenizer, so their pieces line up "
                     "position by position.").format(
            b=ctx.b + 1, word=md(word), new=md(new), n=n))
    elif source == "same":
        st.caption(_("No other line of the input, minimal pair, one-word swap or example has "
                     "as many pieces as sentence {b} on this model's tokenizer ({n}), so the "
                     "second input starts as the same sentence: type another one to compare.")
                   .format(b=ctx.b + 1, n=n))
    elif source != "input":
        st.caption(_("The second input starts as a line with as many pieces as sentence {b} "
                     "on this model's tokenizer ({n}), so their pieces line up position by "
                     "position.").format(b=ctx.b + 1, n=n))


def compare_inputs(ctx: Ctx) -> tuple | None:
    state, chosen = st.session_state, st.session_state.get("cmp_partner")
    # chosen on the first visit, and again for a new sentence b while the box still holds the
    # line chosen for the last one (a line the user typed is kept)
    if "cmp_text" not in state or (chosen is not None and state["cmp_text"] == chosen[1]
                                   and chosen[0] != ctx.lines[ctx.b]):
        partner = starting_partner(ctx)
        state["cmp_text"] = partner.line
        state["cmp_partner"] = (ctx.lines[ctx.b], partner.line, partner.source, partner.pieces,
                                partner.word, partner.replacement)
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
    partner_note(ctx, lines[0])
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
