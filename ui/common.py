"""Widgets and helpers the views share: charts, the head picker, progress bars, view links."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from model import Bundle, Trace, parse_ablate
from model.backends import capabilities
from model.capture import key_side, query_side
from model.inputs import MAX_CHARS, MAX_LINES, clean_lines  # input caps live with the cleaning
from ui.context import Ctx
from ui.i18n import N_, _
from ui.presenter import for_screen
from ui.state import sticky
from ui.text import KIND_LABELS
from viz.attention import head_title, kv_groups
from viz.common import chart_config
from viz.look import themed

NOT_NATIVE = N_("{what} is not supported for this model: it runs this project's own "
                "encoder–decoder with hooks on each head, so it needs one of the shipped "
                "translation checkpoints.")


def clean_input(raw: str) -> tuple[list[str], list[str]]:
    """Text area content -> at most MAX_LINES stripped sentences, and notes on what changed."""
    return clean_lines(raw, MAX_LINES, MAX_CHARS)  # capped before anything is tokenized


def chart(fig, ctx: Ctx, key: str | None = None, share: float = 1.0, **select) -> None:
    """Draw a figure: the one place the app calls st.plotly_chart. share: the part of the row
    it is given (1/3 in three columns), so that its title and cell numbers are fitted to that
    width (ui.presenter.for_screen); select: on_select and selection_mode, for clickable charts.
    theme=None: Streamlit's chart theme bolds a title twice (issue 59), so the figure carries
    the page's look itself (viz.look.themed)."""
    st.plotly_chart(for_screen(themed(fig), share), config=chart_config(ctx.fmt), key=key,
                    theme=None, **select)


def pick_head(kinds: list[str], n_layers: Callable[[str], int], n_heads: int,
              label: Callable[[int], str] = str) -> tuple[str, int, int]:
    """kind / layer / head selectors kept in the shared (URL) state, clamped to what exists."""
    state = st.session_state
    if state["kind"] not in kinds:
        state["kind"] = kinds[0]
    c1, c2, c3 = st.columns(3)
    kind = sticky(c1.selectbox, "kind", _("Attention"), options=kinds, format_func=KIND_LABELS.get)
    if state["layer"] >= n_layers(kind):
        state["layer"] = 0
    layer = sticky(c2.selectbox, "layer", _("Layer"), options=list(range(n_layers(kind))))
    if state["head"] >= n_heads:
        state["head"] = 0
    head = sticky(c3.selectbox, "head", _("Head"), options=list(range(n_heads)), format_func=label)
    return kind, layer, head


def head_picker(ctx: Ctx, kinds: tuple[str, ...] | None = None) -> tuple[str, int, int]:
    """kind / layer / head of this model, shared by the views and kept in the URL."""
    n_heads = ctx.bundle.config.n_heads
    # labels made now: a format_func lives on in the session's widget state, and a closure over
    # ctx would keep this input's whole Trace alive there after the server's cache dropped it
    labels = [head_label(ctx.trace, h) for h in range(n_heads)]
    kind, layer, head = pick_head(list(kinds or ctx.trace.kinds), ctx.trace.n_layers, n_heads,
                                  labels.__getitem__)
    if kv_note(ctx.trace, head):  # grouped-query attention: say which heads share K and V
        st.caption(kv_note(ctx.trace, head))
    if (kind, layer, head) in parse_ablate(ctx.ablate):
        st.info(_("This head is knocked out: its context is zeroed before W_O."))
    return kind, layer, head


def goto(view: str, head: tuple[str, int, int] | None = None) -> None:
    """Button callback: switch view (and head) before the next run draws the view radio."""
    state = st.session_state
    state["view"] = view
    if head is not None:
        state["kind"], state["layer"], state["head"] = head


def side_tokens(trace: Trace, kind: str, b: int) -> tuple[list[str], list[str]]:
    """Unpadded (query, key) pieces of sentence b for an attention kind."""
    return (list(trace.tokens(query_side(kind))[b]),
            list(trace.tokens(key_side(kind))[b]))


def can_ablate(bundle: Bundle) -> bool:
    """Heads can be knocked out: the lab's translators, and Hugging Face models whose
    attention runs through the lab's recorder (model/hf/recorder.py)."""
    return capabilities(bundle).ablates


def kv_note(trace: Trace, head: int) -> str:
    """'' without grouped-query attention, else e.g. 'K and V shared with heads 0–2'."""
    groups = trace.kv_groups
    if groups is None or len(set(groups.tolist())) == len(groups):
        return ""
    mates = [h for h, g in enumerate(groups.tolist()) if g == groups[head]]
    return _("K and V shared with heads {first}–{last} (key/value head {kv})").format(
        first=mates[0], last=mates[-1], kv=groups[head])


def head_label(trace: Trace | None, head: int) -> str:
    """'head 4', or 'head 4 · kv 1' when query heads share key/value heads (as the grids say)."""
    groups = getattr(trace, "kv_groups", None)
    return head_title(head, None if groups is None else kv_groups(trace, len(groups)))


def control_flow(exc: BaseException) -> bool:
    """st.rerun()/st.stop() work by raising; those must pass through the error box."""
    return type(exc).__name__ in {"RerunException", "StopException"}
