"""The bertviz pages in a real Chromium: drawn offline, and hostile tokens stay text."""

from __future__ import annotations

import dataclasses

import pytest

from tests.unit.test_bertviz_embed import INJECTIONS, synthetic_trace
from viz.bertviz_embed import bertviz_html, display_token


@pytest.fixture(scope="module")
def trace():
    base = synthetic_trace(len(INJECTIONS) + 1, len(INJECTIONS))
    return dataclasses.replace(base, src_tokens=[[*INJECTIONS, "▁plain"]],
                               tgt_tokens=[list(reversed(INJECTIONS))])


def _open(page, html: str) -> None:
    page.set_content(html, wait_until="load")
    page.wait_for_selector("#vis svg", state="attached", timeout=10_000)


def _texts(page, selector: str) -> list[str]:
    return page.locator(selector).all_text_contents()


def _assert_no_markup_ran(page) -> None:
    assert page.locator("img").count() == 0
    assert page.evaluate("() => document.querySelectorAll('script').length") == 4


def test_head_view_draws_and_shows_tokens_as_text(page, page_log, trace):
    _open(page, bertviz_html(trace, 0, "head"))
    assert page.locator("#vis svg line").count() > 0  # attention arcs
    opacity = page.eval_on_selector_all(
        "#vis svg line", "els => els.map(e => +e.getAttribute('stroke-opacity'))")
    assert 0 < max(opacity) <= 1  # thousandths were turned back into probabilities
    shown = _texts(page, "#vis svg text")
    for token in INJECTIONS:
        assert display_token(token) in shown
    assert "</script><img src=x onerror=alert(1)>" in shown
    page.locator("#vis svg text").nth(2).hover()  # bertviz's mouseover handlers run
    for option in ("1", "2"):  # Decoder, Cross
        page.select_option("#filter", option)
        assert page.locator("#vis svg line").count() > 0
    page.select_option("#layer", "1")
    _assert_no_markup_ran(page)
    page.wait_for_timeout(200)
    page_log.assert_clean()


def test_model_view_draws_and_shows_tokens_as_text(page, page_log, trace):
    _open(page, bertviz_html(trace, 0, "model"))
    assert page.locator("#vis svg line").count() > 0
    thumbnails = page.locator("#vis svg > g > rect:last-child")
    assert thumbnails.count() == 2 * 4  # layers x heads
    thumbnails.first.click(force=True)  # opens the detail panel with the tokens
    shown = _texts(page, "#vis svg text.token")
    for token in INJECTIONS:
        assert display_token(token) in shown
    page.select_option("#filter", "2")  # Cross
    assert page.locator("#vis svg line").count() > 0
    _assert_no_markup_ran(page)
    page.wait_for_timeout(200)
    page_log.assert_clean()


def test_head_view_gives_each_of_twelve_heads_its_own_colour(page, page_log):
    """GPT-2 and BERT have 12 heads a layer; bertviz's palette has 10, so heads 10 and 11 were
    drawn in heads 0 and 1's colours. The colour boxes, as Chromium fills them."""
    _open(page, bertviz_html(synthetic_trace(5, 0, n_heads=12, kinds=("enc_self",)), 0, "head"))
    fills = page.eval_on_selector_all(
        "#vis svg rect", "els => els.filter(e => e.getAttribute('width') === '20'"
                         " && e.getAttribute('height') === '20').map(e => e.getAttribute('fill'))")
    assert len(fills) == 12, fills
    assert len(set(fills)) == 12, fills
    page_log.assert_clean()
