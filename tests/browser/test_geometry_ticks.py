"""Tick labels of one axis never overlap, as Chromium draws them (viz.common.fit_ticks), on the
pages a sweep of every view found them overlapping: pieces tilted at -45° whose plotly-chosen
spacing left a short label's box over a long one's (lm's and minilm's masks view, lm's steps
view, lm's compare view presenting), and GPT-2 small's layers × heads grid presenting, whose
level "head n" labels at 18 px were wider than its 35 px panels (its image drew on 80 % of its
plot area too: the click targets' autorange padding). Each page: no "axis labels ... overlap"
and no heatmap short of its plot area (tests/browser/geometry.problems), and every token axis
still names at least three pieces. About 6 s a page; the GPT-2 folder's server about 20 s."""

from __future__ import annotations

import pytest

from model.backends import MINILM_FOLDER, minilm_status
from tests.browser.conftest import open_app
from tests.browser.geometry import charts_ready, problems
from tests.browser.test_geometry import MODES, gpt2_small  # noqa: F401 - a fixture
from tests.conftest import ROOT, needs

LABELS_JS = """() => [...document.querySelectorAll('[data-testid="stMain"] .js-plotly-plot')]
  .map((g) => ['.xaxislayer-above', '.yaxislayer-above'].map((c) => {
    const layer = g.querySelector(c);
    return layer ? [...layer.querySelectorAll('text')].filter((t) => t.textContent.trim()).length
                 : 0; }))"""


def tick_problems(page, base: str, ckpt: str, mode: str, view: str) -> list[str]:
    """The overlap and fill problems on one page, and the charts whose labelled axes keep
    fewer than three labels (thinned too far)."""
    viewport, min_px, extra = MODES[mode]
    page.set_viewport_size(viewport)
    open_app(page, base, ckpt=ckpt, view=view, **extra)
    charts_ready(page)
    found = [p for p in problems(page, min_px) if "overlap" in p or "fills" in p]
    for i, axes in enumerate(page.evaluate(LABELS_JS)):
        found += [f"chart {i} keeps {n} labels on an axis" for n in axes if 0 < n < 3]
    return [f"{ckpt} {view} ({mode}): {p}" for p in found]


@pytest.mark.parametrize("mode, view", [("normal", "masks"), ("normal", "steps"),
                                        ("presenter", "compare")])
def test_lm_tick_labels_stay_apart(page, streamlit_server, mode, view):
    found = tick_problems(page, streamlit_server, "lm", mode, view)
    assert not found, "\n".join(found)


@needs(minilm_status(ROOT / "checkpoints" / MINILM_FOLDER) is None,
       reason="checkpoints/minilm is not installed (make run / make test install it)")
def test_minilm_masks_tick_labels_stay_apart(page, streamlit_server):
    found = tick_problems(page, streamlit_server, "minilm", "normal", "masks")
    assert not found, "\n".join(found)


def test_gpt2_small_grid_labels_and_image_presenting(page, gpt2_small):  # noqa: F811
    found = tick_problems(page, gpt2_small, "gpt2-small", "presenter", "attention")
    assert not found, "\n".join(found)
