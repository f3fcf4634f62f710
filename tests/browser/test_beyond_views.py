"""Beyond weights in real Chromium: view=contrib, view=flow, view=qkmap and the α / ‖αf(x)‖
toggle (measure=norms) open from links, draw their charts and show no error box; a hostile
token in the input stays text. The harness fails on console errors and outside requests."""

from __future__ import annotations

from urllib.parse import urlencode

import pytest

from tests.browser.conftest import wait_for_app
from tests.browser.test_views import wait_for_charts
from tests.tiny_model import save_tiny_checkpoint

TEXT = "겨울은 추워요.\nThe big dog eats the fish."
HOSTILE = "<img src=x onerror=alert(1)> **bold** 겨울은"
CHARTS = {"contrib": 2, "flow": 1, "qkmap": 1}
ERROR_BOX = '[data-testid="stAlertContentError"], [data-testid="stException"]'


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    root = tmp_path_factory.mktemp("beyond_checkpoints")
    # a small corpus in the card, so the query–key map's validation split is quick to make
    card = {"variant": "paper", "corpus_seed": 0, "train_pairs_requested": 400,
            "val_pairs_requested": 300, "test_pairs_per_direction": 50}
    save_tiny_checkpoint(root / "paper", card=card)
    return root


@pytest.fixture(scope="module")
def server(streamlit_server_factory, checkpoints):
    return streamlit_server_factory({"ATTN_CHECKPOINTS_DIR": str(checkpoints)})


def open_app(page, base: str, **query) -> None:
    """Open a link and wait generously: the suite shares two cores with other work."""
    page.set_default_navigation_timeout(180_000)
    page.goto(f"{base}/?{urlencode(query)}")
    wait_for_app(page, timeout=240)


def errors(page) -> list[str]:
    return page.locator(ERROR_BOX).all_inner_texts()


@pytest.mark.parametrize("view", list(CHARTS))
def test_new_view_link_draws_its_charts(page, server, view):
    open_app(page, server, view=view, text=TEXT, kind="cross", layer=1, head=2)
    wait_for_charts(page, CHARTS[view], timeout=180_000)
    assert not errors(page), errors(page)


@pytest.mark.parametrize("view", ["attention", "bertviz"])
def test_norms_toggle_from_a_link(page, server, view):
    open_app(page, server, view=view, text=TEXT, measure="norms")
    if view == "attention":
        wait_for_charts(page, 3, timeout=120_000)
    main = page.locator('[data-testid="stMain"]')
    assert "‖α·f(x)‖ as shares" in main.text_content()
    assert not errors(page), errors(page)


@pytest.mark.parametrize("view", ["contrib", "flow"])
def test_hostile_text_stays_text_on_the_new_views(page, server, view):
    open_app(page, server, view=view, text=HOSTILE)
    assert not errors(page), errors(page)
    assert page.locator('[data-testid="stMain"] img[src="x"]').count() == 0
    assert page.locator('[data-testid="stMain"] strong:text("bold")').count() == 0
