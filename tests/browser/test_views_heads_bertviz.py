"""The bertviz and heads views in real Chromium, every outside request blocked (see conftest).

bertviz's head and model views draw their SVG inside the st.iframe; a hostile input stays text;
ticking a head in the heads view reruns the model and the ablation panel follows.
"""

from __future__ import annotations

import pytest
import torch

from model import ModelConfig, Tokenizer, Transformer, save_checkpoint
from tests.browser.conftest import open_app, wait_for_app

WORDS = ["The cat", "The big dog", "My friend", "A child", "Winter"]
VERBS = ["eats the fish", "reads a book in the park", "is cold", "drinks water"]
KOREAN = ["고양이는 생선을 먹어요.", "큰 개가 생선을 먹어요.", "겨울은 추워요.", "감기 조심하세요."]
HOSTILE = "</script><img src=x onerror=alert(1)> <!-- done"
TEXT = "Winter is cold.\nThe big dog eats the fish."
N_LAYERS, N_HEADS = 2, 4
FRAME = '[data-testid="stMain"] iframe'
CHART = '[data-testid="stPlotlyChart"]'


@pytest.fixture(scope="module")
def server(streamlit_server_factory, tmp_path_factory):
    """The app on a tiny random checkpoint whose tokenizer also knows <, /, !, = …"""
    root = tmp_path_factory.mktemp("heads_bertviz_checkpoints")
    lines = [f"{w} {v}." for w in WORDS for v in VERBS] + KOREAN + [HOSTILE]
    tok = Tokenizer.train(lines * 30, vocab_size=420)
    cfg = ModelConfig(vocab_size=tok.vocab_size, d_model=32, n_heads=N_HEADS, d_ff=64,
                      n_enc_layers=N_LAYERS, n_dec_layers=N_LAYERS, max_len=40)
    torch.manual_seed(0)
    save_checkpoint(Transformer(cfg).eval(), tok, root / "paper", card={"variant": "paper"})
    return streamlit_server_factory({"ATTN_CHECKPOINTS_DIR": str(root)})


def bertviz_frame(page, timeout: float = 30_000):
    """The bertviz iframe once its SVG has attention lines."""
    page.wait_for_selector(FRAME, timeout=timeout)
    frame = page.frame_locator(FRAME)
    frame.locator("#vis svg line").first.wait_for(state="attached", timeout=timeout)
    return frame


def assert_not_cropped(page) -> None:
    """The iframe is as tall as what bertviz drew (no inner scrollbar, nothing cut off)."""
    box = page.locator(FRAME).bounding_box()
    inner = page.frame_locator(FRAME).locator("body").evaluate(
        "b => Math.max(b.scrollHeight, document.documentElement.scrollHeight)")
    assert inner <= box["height"] + 2, (inner, box["height"])


def choose(page, label: str) -> None:
    """Click a radio option in the main area by its label and wait for the rerun."""
    page.locator('[data-testid="stMain"] label').filter(has_text=label).first.click()
    wait_for_app(page)


def test_bertviz_head_and_model_views_draw_offline(page, server):
    open_app(page, server, view="bertviz", text=TEXT)
    frame = bertviz_frame(page)
    assert frame.locator("#vis svg line").count() > 0
    assert frame.locator("#filter option").all_inner_texts() == ["Encoder", "Decoder", "Cross"]
    frame.locator("#filter").select_option("2")  # Cross
    assert frame.locator("#vis svg line").count() > 0
    assert_not_cropped(page)

    choose(page, "model view")
    page.wait_for_function(
        "sel => { const f = document.querySelector(sel);"
        " return f && f.srcdoc.includes('bertviz model view'); }", arg=FRAME)
    frame = bertviz_frame(page)
    thumbnails = frame.locator("#vis svg > g > rect:last-child")
    assert thumbnails.count() == N_LAYERS * N_HEADS
    thumbnails.first.click(force=True)  # the detail panel with the tokens
    assert "Winter" in "".join(frame.locator("#vis svg text").all_text_contents()).replace(" ", "")
    assert_not_cropped(page)


def test_hostile_input_stays_text(page, page_log, server):
    open_app(page, server, view="bertviz", text=HOSTILE)
    frame = bertviz_frame(page)
    shown = "".join(frame.locator("#vis svg text").all_text_contents())
    assert "</script><img src=x onerror=alert(1)>" in shown and "<!--" in shown
    assert frame.locator("img").count() == 0
    assert page.locator("img[src='x']").count() == 0
    frame.locator("#vis svg text").nth(3).hover()  # bertviz's mouse handlers run
    choose(page, "model view")
    frame = bertviz_frame(page)
    assert frame.locator("img").count() == 0
    page.wait_for_timeout(300)
    assert not page_log.dialogs and not page_log.console_errors, page_log.problems()


def ablation_box(page, kind_index: int, layer: int, head: int):
    """The checkbox of one head in the knock-out grid (kinds in model order)."""
    index = (kind_index * N_LAYERS + layer) * N_HEADS + head
    return page.locator('[data-testid="stMain"] [data-testid="stCheckbox"]').nth(index)


def test_toggling_a_head_updates_the_ablation_panel(page, server):
    open_app(page, server, view="heads", text="Winter is cold.")
    choose(page, "Knock out heads")
    main = page.locator('[data-testid="stMain"]')
    main.get_by_text("no head knocked out").wait_for()
    assert page.locator(CHART).count() == 0

    ablation_box(page, 2, 1, 2).locator("label").click()  # cross attention, layer 1, head 2
    page.wait_for_function(
        "() => new URL(location.href).searchParams.get('ablate') === 'cross:1:2'")
    wait_for_app(page)
    main.get_by_text("After: without cross:1:2").wait_for()
    main.get_by_text("Before: sentence 1 with every head").wait_for()
    page.wait_for_selector(f"{CHART} svg.main-svg")
    assert "Ablating cross:1:2" in page.locator(CHART).first.text_content()

    ablation_box(page, 0, 0, 0).locator("label").click()  # and encoder layer 0, head 0
    main.get_by_text("After: without cross:1:2,enc_self:0:0").wait_for()
    page.wait_for_function(
        "sel => document.querySelector(sel).textContent.includes('enc_self:0:0')", arg=CHART)
    box = page.locator('[data-testid="stSidebar"] input[aria-label^="Heads to zero"]')
    assert box.input_value() == "cross:1:2,enc_self:0:0"  # the sidebar shows the same list
