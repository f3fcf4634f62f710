"""view=why in real Chromium on the shipped `paper` checkpoint, in English and Korean: the
component × component heatmap, the composition maps and what the head writes are drawn, the
top terms are written in words, and the JSON export is offered. The harness (conftest.py)
fails a test on a console error, a dialog, an exception box or a request leaving localhost."""

from __future__ import annotations

from tests.browser.conftest import open_app
from tests.conftest import ROOT, needs

pytestmark = needs((ROOT / "checkpoints" / "paper").is_dir(),
                                reason="the shipped paper checkpoint is not here")

MAIN = '[data-testid="stMain"]'
LINK = {"ckpt": "paper", "view": "why", "text": "The cat eats fish.", "kind": "cross",
        "layer": "2", "head": "1"}


CHART = '[data-testid="stMain"] [data-testid="stPlotlyChart"]'


def test_why_panel_draws_in_both_languages(page, streamlit_server):
    for lang_ui, words in (("en", "of this score"), ("ko", "이 점수의")):
        open_app(page, streamlit_server, **LINK, lang_ui=lang_ui)
        main = page.locator(MAIN)
        main.get_by_text(words).first.wait_for(timeout=60_000)
        # terms, composition, what the head writes, its tokens
        page.wait_for_function("sel => document.querySelectorAll(sel).length >= 4", arg=CHART,
                               timeout=60_000)
        assert main.locator('[data-testid="stDownloadButton"]').count() == 1
        assert page.locator('[data-testid="stException"]').count() == 0


def test_query_and_key_from_the_link_stay_in_the_address_bar(page, streamlit_server):
    """A link naming query 0 (<s>) and key 2 (▁cat) opens on them and keeps them, so copying
    the address bar reproduces the panel; a key the head cannot reach is a note, not a crash."""
    open_app(page, streamlit_server, **LINK, query="0", key="2")
    main = page.locator(MAIN)
    main.get_by_text("of this score").first.wait_for(timeout=60_000)
    page.wait_for_function("() => location.search.includes('key=2')", timeout=30_000)
    assert "query=0" in page.url and "▁cat" in main.inner_text()
    open_app(page, streamlit_server, **LINK, query="0", key="99")
    main.get_by_text("Key position '99'").first.wait_for(timeout=60_000)
    assert page.locator('[data-testid="stException"]').count() == 0
