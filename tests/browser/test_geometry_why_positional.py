"""The why and positional views in presenter mode, as Chromium draws them (1280 x 720, text
at least 16 px): tests/browser/geometry.problems finds nothing on the charts the sweep of
every view flagged.

  * why (paper, minilm): the composition maps' last title, "V-composition (random: 0.089)",
    ran 6 px past the chart's right edge (viz.why.right_margin now holds it);
  * positional on lm: the rotary chart's log axes wrote 2 and 5 between the powers of ten at
    13.5 px, 17 labels under 16 px (viz.positional.decade_step names powers only);
  * positional on minilm: the table's colour bar labels "-1.5" and "-0.5" ran 7.5 px past the
    chart's edge (viz.positional.bar_ticks fixes the bar's ticks).

Cost: four pages on the session server, about 30 s."""

from __future__ import annotations

import pytest

from model.backends import MINILM_FOLDER, minilm_status
from tests.browser.conftest import open_app
from tests.browser.geometry import charts_ready, problems
from tests.browser.test_geometry import MODES
from tests.conftest import ROOT, needs

VIEWPORT, MIN_PX, PRESENT = MODES["presenter"]
MINILM = needs(minilm_status(ROOT / "checkpoints" / MINILM_FOLDER) is None,
               reason="checkpoints/minilm is not installed (make run / make test install it)")


def presenting_problems(page, base: str, ckpt: str, view: str) -> list[str]:
    """Every problem geometry.problems finds on one view of one model presenting."""
    page.set_viewport_size(VIEWPORT)
    open_app(page, base, ckpt=ckpt, view=view, **PRESENT)
    charts_ready(page)
    return problems(page, MIN_PX)


@pytest.mark.parametrize("ckpt, view", [
    ("paper", "why"),
    pytest.param("minilm", "why", marks=MINILM),
    ("lm", "positional"),
    pytest.param("minilm", "positional", marks=MINILM),
])
def test_presenting_draws_every_text_whole_and_legible(page, streamlit_server, ckpt, view):
    found = presenting_problems(page, streamlit_server, ckpt, view)
    assert not found, f"{ckpt} {view} presenting:\n  " + "\n  ".join(found)
