"""Each view in real Chromium: links open it, every chart draws, labels show Korean and ▁,
typing a sentence updates the page. The harness fails on console errors and outside requests.
"""

from __future__ import annotations

import pytest

from model import Tokenizer
from tests.browser.conftest import open_app, settled, wait_for_app
from tests.tiny_model import save_tiny_checkpoint

TEXT = "겨울은 추워요.\nThe big dog eats the fish."
CHARTS = {"tokens": 4, "masks": 8, "attention": 3, "steps": 15, "positional": 4,
          "embeddings": 4, "translation": 4}
OTHERS = ["bertviz", "heads", "compare"]  # views other changes fill in: they must open cleanly
CHART = '[data-testid="stPlotlyChart"]'


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    root = tmp_path_factory.mktemp("browser_checkpoints")
    save_tiny_checkpoint(root / "paper", card={"variant": "paper"})
    return root


@pytest.fixture(scope="module")
def server(streamlit_server_factory, checkpoints):
    return streamlit_server_factory({"ATTN_CHECKPOINTS_DIR": str(checkpoints)})


def wait_for_charts(page, n: int, timeout: float = 60_000) -> None:
    """n plotly charts on the page, each with its SVG drawn."""
    page.wait_for_function(
        """([sel, n]) => {
          const charts = document.querySelectorAll(sel);
          return charts.length === n &&
                 Array.from(charts).every(c => c.querySelector('svg.main-svg'));
        }""",
        arg=[CHART, n], timeout=timeout)


@pytest.mark.parametrize("view", list(CHARTS))
def test_view_link_draws_every_chart(page, server, view):
    open_app(page, server, view=view, text=TEXT, kind="cross", layer=1, head=2)
    wait_for_charts(page, CHARTS[view])
    if view in ("tokens", "attention"):
        shown = page.locator('[data-testid="stMain"]').text_content()
        assert "▁" in shown and "겨" in shown and "<2en>" in shown
    if view == "attention":
        labels = page.locator(CHART).first.text_content()
        assert "▁" in labels and "</s>" in labels  # tick labels, shown literally


@pytest.mark.parametrize("view", OTHERS)
def test_other_views_open_cleanly(page, server, view):
    open_app(page, server, view=view, text=TEXT)
    assert page.locator('[data-testid="stMain"] h1').first.inner_text().strip() == "Attention lab"


def test_typing_a_sentence_updates_the_tokens_view(page, server, checkpoints):
    open_app(page, server, view="tokens", text=TEXT)
    wait_for_charts(page, CHARTS["tokens"])
    sentence = "My friend is cold."
    pieces = Tokenizer(checkpoints / "paper" / "tokenizer.model").pieces(sentence)
    box = page.locator('[data-testid="stSidebar"] textarea').first
    box.fill(sentence)
    box.press("Control+Enter")
    page.wait_for_function(
        "s => new URL(location.href).searchParams.get('text') === s", arg=sentence,
        timeout=30_000)
    wait_for_app(page)
    blocks = page.locator('[data-testid="stHtml"]')
    chips = settled(lambda: blocks.first.text_content() if blocks.count() else "",
                    lambda chips: all(piece in chips for piece in pieces), what=f"{pieces}")
    assert "겨" not in chips
    wait_for_charts(page, CHARTS["tokens"])
