import os

import pytest

from tests.browser.conftest import open_app
from tests.conftest import ROOT

SCREENSHOT = ROOT / "docs" / "screenshot.png"


def test_page_loads_with_title(page, page_log, streamlit_server):
    open_app(page, streamlit_server)
    title = page.locator('[data-testid="stApp"] h1')
    assert title.first.inner_text().strip() == "Attention lab"
    page_log.assert_clean()
    # Written only after every check passed, so the README never shows a broken page.
    SCREENSHOT.parent.mkdir(exist_ok=True)
    tmp = SCREENSHOT.with_suffix(".tmp.png")
    page.screenshot(path=str(tmp), full_page=True)
    os.replace(tmp, SCREENSHOT)


@pytest.mark.xfail(strict=False, reason="needs the model views")
def test_default_view_draws_a_plotly_chart(page, streamlit_server):
    open_app(page, streamlit_server)
    charts = page.locator('[data-testid="stPlotlyChart"] svg')
    charts.first.wait_for(state="attached", timeout=5_000)
    assert charts.count() >= 1
