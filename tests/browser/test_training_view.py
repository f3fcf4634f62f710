"""view=training and view=generate on the shipped language model in real Chromium: the loss
curve, the heads × steps map with the phase change marked, a snapshot picked with the slider,
the Korean page. The harness (conftest.py) fails a test on a console error, a dialog, an
exception box or a request leaving localhost."""

from __future__ import annotations

import json

from tests.browser.conftest import open_app, wait_for_app
from tests.conftest import ROOT

CARD = json.loads((ROOT / "checkpoints" / "lm" / "card.json").read_text())
TEXT = "Ravonel: The cat eats fish. Ravonel: The cat eats fish."
ERROR_BOX = '[data-testid="stAlertContentError"], [data-testid="stException"]'
TITLES_JS = """() => Array.from(document.querySelectorAll(
    '[data-testid="stPlotlyChart"] .js-plotly-plot')).map(g => ({
  title: ((g.layout.title || {}).text || '').replace(/<[^>]+>/g, ''),
  drawn: (g.calcdata || []).length > 0,
  shapes: (g.layout.shapes || []).length}))"""


def charts_drawn(page, n: int = 3) -> list[dict]:
    """The plotly figures once n of them are drawn (streamlit mounts them after the script)."""
    page.wait_for_function(
        "n => document.querySelectorAll('[data-testid=\"stPlotlyChart\"] .js-plotly-plot')"
        ".length >= n", arg=n, timeout=60_000)
    return page.evaluate(TITLES_JS)


def test_training_view_draws_and_a_snapshot_opens(page, streamlit_server):
    open_app(page, streamlit_server, ckpt="lm", view="training", text=TEXT)
    main = page.locator('[data-testid="stMain"]')
    phase = CARD["training"]["phase_change_step"]
    assert f"Phase change at step {phase}" in main.inner_text()
    figs = charts_drawn(page)
    titles = [f["title"] for f in figs]
    assert "Loss and in-context learning over training" in titles
    assert "induction score of every head over training" in titles
    assert all(f["drawn"] for f in figs)
    assert next(f for f in figs if "every head" in f["title"])["shapes"] >= 1  # the phase mark
    slider = page.get_by_role("slider").first
    slider.focus()
    slider.press("Home")  # the first snapshot
    wait_for_app(page)
    first = min(CARD["training"]["snapshots"])
    assert f"At step {first} this head scores" in main.inner_text()
    assert page.locator(ERROR_BOX).count() == 0


def test_training_view_in_korean_and_generation(page, streamlit_server):
    open_app(page, streamlit_server, ckpt="lm", view="training", text=TEXT, lang_ui="ko")
    titles = [f["title"] for f in charts_drawn(page)]
    assert "훈련 중 손실과 문맥 내 학습" in titles
    open_app(page, streamlit_server, ckpt="lm", view="generate", text="Ravonel: I eat fish.")
    page.locator("code").filter(has_text="Ravonel: I eat fish. ⟶").first.wait_for(timeout=60_000)
    assert len(charts_drawn(page, 2)) == 2  # the step's top-k bar and top-k over steps
    assert page.locator(ERROR_BOX).count() == 0


def test_cache_view_draws_the_reads_and_the_budget_chart(page, streamlit_server):
    """view=cache (issue 57) from a link with its policy and budget, in Korean."""
    open_app(page, streamlit_server, ckpt="lm", view="cache", text="Ravonel: I eat fish.",
             policy="window", budget="8", lang_ui="ko")
    page.locator("code").filter(has_text="Ravonel: I eat fish. ⟶").first.wait_for(timeout=60_000)
    titles = [f["title"] for f in charts_drawn(page, 4)]
    assert any(t.startswith("새 조각마다 캐시에서 읽은 것") for t in titles), titles
    assert "캐시 예산에 따른 이어 쓰기의 평균 손실" in titles
    assert "평균 손실, 창" in page.locator('[data-testid="stMain"]').inner_text()
    assert page.locator(ERROR_BOX).count() == 0
