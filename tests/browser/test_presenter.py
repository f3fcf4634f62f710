"""Presenter mode (present=1) at a 1280×720 projector: sidebar collapsed, no view bar, text and
chart labels about 1.5× larger, the tour's controls on screen. ATTN_SCREENSHOT=1 refreshes
docs/presenter.png (the README links it); otherwise the shot goes to a temporary folder."""

from __future__ import annotations

import os

from tests.browser.conftest import open_app
from tests.conftest import ROOT

SCREENSHOT = ROOT / "docs" / "presenter.png"
TEXT = "겨울은 추워요.\n감기 조심하세요."
SIZE_JS = """(sel) => {
  const el = document.querySelector(sel);
  if (!el) return null;
  const r = el.getBoundingClientRect();
  return {h: r.height, w: r.width, top: r.top, bottom: r.bottom, right: r.right};
}"""
TOP_JS = "() => document.querySelectorAll('*').forEach(e => { if (e.scrollTop) e.scrollTop = 0; })"
COUNTER = '[data-testid="stMainBlockContainer"] [data-testid="stMarkdownContainer"] strong'
CHART_TITLE = '[data-testid="stMainBlockContainer"] .js-plotly-plot .gtitle'


def _open(page, base, **extra):
    page.set_viewport_size({"width": 1280, "height": 720})
    open_app(page, base, view="tour", step="11", text=TEXT, ckpt="paper", **extra)
    page.wait_for_selector(CHART_TITLE, timeout=60_000)
    page.evaluate(TOP_JS)  # what the projector shows first: the top of the page


def test_presenter_mode_is_readable_at_1280x720(page, streamlit_server, tmp_path):
    _open(page, streamlit_server)
    normal_counter = page.evaluate(SIZE_JS, COUNTER)
    normal_title = page.evaluate(SIZE_JS, CHART_TITLE)
    assert page.locator('[data-testid="stRadio"]').count() >= 1  # the view bar, normally

    _open(page, streamlit_server, present="1")
    sidebar = page.locator('[data-testid="stSidebar"]')
    assert sidebar.get_attribute("data-collapsed") == "true"
    assert page.locator('[data-testid="stMainBlockContainer"] h1').count() == 0  # no title
    main_radios = page.locator('[data-testid="stMainBlockContainer"] [data-testid="stRadio"]')
    assert main_radios.count() == 0  # no view bar: only the tour
    counter = page.evaluate(SIZE_JS, COUNTER)
    title = page.evaluate(SIZE_JS, CHART_TITLE)
    # text and chart labels ~1.5× (rendered height of the same line of text)
    assert 1.35 <= counter["h"] / normal_counter["h"] <= 1.65, (counter, normal_counter)
    assert 1.35 <= title["h"] / normal_title["h"] <= 1.65, (title, normal_title)
    # the controls and the step's heading fit the projector's first screen, nothing sideways
    for name in ("Previous", "Next"):
        box = page.get_by_role("button", name=name).bounding_box()
        assert box and box["y"] + box["height"] <= 720 and box["x"] + box["width"] <= 1280
    assert counter["bottom"] <= 720 and counter["right"] <= 1280
    header = page.evaluate(SIZE_JS, '[data-testid="stHeader"]')
    assert header is None or counter["top"] >= header["bottom"], (counter, header)  # not hidden
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= 1280, width
    assert "present=1" in page.url and "step=11" in page.url

    target = SCREENSHOT if os.environ.get("ATTN_SCREENSHOT") == "1" else tmp_path / "p.png"
    tmp = target.with_suffix(".tmp.png")
    page.evaluate(TOP_JS)
    page.screenshot(path=str(tmp))  # the viewport: what the projector shows
    os.replace(tmp, target)
