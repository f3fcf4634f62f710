"""The guided tour (view=tour): seed 000's path, one step per screen, on the typed sentence.

Previous / next buttons carry Streamlit's own keyboard shortcuts (st.button(shortcut="Left"/
"Right"), so the arrow keys work without any script in the page; Streamlit ignores them
while a text box has the focus). The step is kept in the session as `tour_step` (0-based)
and written to the link as `step=` (1-based) by ui.state.link_params, so a lecturer can link
to a step. The steps themselves (what each step says and draws) are in steps.py and the
modules beside it, as the heads view keeps its parts in ui/views/heads/.
"""

from __future__ import annotations

import streamlit as st

from ui.context import Ctx
from ui.i18n import _
from ui.state import link_int
from ui.text import md
from ui.views.tour.steps import STEPS, Where

STATE_KEY = "tour_step"
JUMP_KEY = "_w_tour_jump"


def step_from_link(n: int) -> int:
    """The 0-based step named by `step=` in the link (1-based there); bad values warn."""
    raw = st.query_params.get("step")
    if raw is None:
        return 0
    number = link_int(raw)
    if number is not None and 1 <= number <= n:
        return number - 1
    st.warning(_("Step {value} from the link is not between 1 and {n}; showing step 1.")
               .format(value=md(repr(raw[:20])), n=n))
    return 0


def _move(delta: int, n: int) -> None:
    st.session_state[STATE_KEY] = min(n - 1, max(0, st.session_state[STATE_KEY] + delta))


def _jump() -> None:
    st.session_state[STATE_KEY] = int(st.session_state[JUMP_KEY])


def render(ctx: Ctx) -> None:
    ids = list(STEPS)
    n = len(ids)
    state = st.session_state
    if STATE_KEY not in state:
        state[STATE_KEY] = step_from_link(n)
    state[STATE_KEY] = min(n - 1, max(0, int(state[STATE_KEY])))
    i = state[STATE_KEY]
    title, draw = STEPS[ids[i]]
    left, mid, right = st.columns([1, 4, 1], vertical_alignment="center")
    left.button(_("Previous"), key="tour_prev", on_click=_move, args=(-1, n),
                disabled=i == 0, shortcut="Left", width="stretch")
    mid.markdown("**" + md(_("Step {i} of {n}").format(i=i + 1, n=n)) + "**")
    right.button(_("Next"), key="tour_next", on_click=_move, args=(1, n),
                 disabled=i == n - 1, shortcut="Right", width="stretch")
    st.progress((i + 1) / n)
    st.subheader(f"{i + 1}. {md(_(title))}")
    draw(Where(ctx))
    state[JUMP_KEY] = i
    with st.expander(_("All steps")):
        st.selectbox(_("Go to step"), list(range(n)), key=JUMP_KEY, on_change=_jump,
                     format_func=lambda j: f"{j + 1}. {_(STEPS[ids[j]][0])}")
        st.caption(_("The arrow keys ← and → move between steps when no text box has the "
                     "focus; the link (step=…) opens this step."))
