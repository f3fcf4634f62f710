"""In real Chromium on the shipped paper checkpoint: view=knows opens from its link and its
search box filters; the tokens view names and marks a word training never saw; hostile text
in both boxes stays text. No error box, no console error, nothing fetched from outside."""

from __future__ import annotations

from tests.browser.conftest import open_app, wait_for_app
from tests.conftest import ROOT, needs

pytestmark = needs((ROOT / "checkpoints" / "paper" / "corpus_words.txt").is_file(),
    reason="the shipped paper checkpoint (with its corpus word list) is not here")

EXPANDER = '[data-testid="stMain"] [data-testid="stExpander"]'
ERROR_BOX = '[data-testid="stAlertContentError"], [data-testid="stException"]'
HOSTILE = '</script><img src=x onerror=alert(1)> **bold** مرحبا'


def main_text(page) -> str:
    text = page.locator('[data-testid="stMain"]').inner_text()
    return text.replace("\u2068", "").replace("\u2069", "")  # the notice isolates each word


def test_knows_opens_from_its_link_and_searches(page, streamlit_server):
    open_app(page, streamlit_server, ckpt="paper", view="knows", text="Winter is cold.")
    assert "What this model knows" in main_text(page)
    assert "Constructions" in main_text(page)
    assert page.locator(EXPANDER).count() == 17  # one per lexicon category
    box = page.get_by_label("Search words and constructions (English or Korean)")
    box.fill("weather")
    box.press("Enter")
    page.wait_for_function(  # the rerun replaces the 17 categories by the matching ones
        "sel => { const n = document.querySelectorAll(sel).length; return n > 0 && n < 17; }",
        arg=EXPANDER, timeout=60_000)
    wait_for_app(page)
    box.fill(HOSTILE)
    box.press("Enter")
    page.get_by_text("No lexicon entry matches").wait_for(timeout=60_000)
    wait_for_app(page)
    assert page.locator("img[src=x]").count() == 0
    assert page.locator(ERROR_BOX).count() == 0


def test_tokens_view_names_and_marks_an_unknown_word(page, streamlit_server):
    open_app(page, streamlit_server, ckpt="paper", view="tokens",
             text=f"The quokka is cold.\n{HOSTILE}")
    text = main_text(page)
    assert "Never seen in training: quokka" in text
    assert "</script><img" in text  # the hostile word is named as text, not markup
    assert page.locator("img[src=x]").count() == 0
    marked = page.locator('span[title="never seen in training"]')
    # the one warning for every line comes before the sentences' chips, and under load the
    # second sentence's chips were once in the page before the first's (stop 46's CI): wait
    # until a marked chip of quokka is there rather than reading the first four in DOM order
    page.wait_for_function(
        """sel => [...document.querySelectorAll(sel)]
                   .some(s => s.textContent.startsWith("\u2581q"))""",
        arg='span[title="never seen in training"]', timeout=60_000)
    assert marked.count() >= 2
    firsts = [marked.nth(i).inner_text().split("\n")[0] for i in range(marked.count())]
    assert any(f.startswith("▁q") for f in firsts)
    assert any(f.startswith("<0x3C>") for f in firsts)  # the hostile word, marked as text
    assert page.locator(ERROR_BOX).count() == 0


def test_in_lexicon_sentence_has_no_notice(page, streamlit_server):
    open_app(page, streamlit_server, ckpt="paper", view="tokens", text="Winter is cold.")
    assert "Never seen in training" not in main_text(page)
    assert page.locator('span[title="never seen in training"]').count() == 0
    assert page.locator(ERROR_BOX).count() == 0
