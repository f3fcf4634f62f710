"""The guided tour walked with the keyboard (→ on every step, ← once) in a real browser, on both
shipped checkpoints and on a tiny random decoder-only GPT-2 listed through ATTN_MODELS: no
error box on any step, and the link follows the step (step=N)."""

from __future__ import annotations

import re
from urllib.parse import urlencode

import pytest

from tests.browser.conftest import wait_for_app
from tests.conftest import ROOT
from ui.views.tour.steps import STEPS

N = len(STEPS)
TEXT = "겨울은 추워요.\n감기 조심하세요."
ERROR_BOX = '[data-testid="stAlertContentError"], [data-testid="stException"]'
HEADING = '[data-testid="stMainBlockContainer"] h3'


@pytest.fixture(scope="module")
def gpt2_folder(tmp_path_factory):
    from tests.hf_folders import make_tokenizer
    from tests.unit.test_hf import make_model

    folder = tmp_path_factory.mktemp("hf") / "tiny-gpt2"
    model, template = make_model("gpt2")
    model.save_pretrained(folder, safe_serialization=True)
    make_tokenizer(template).save_pretrained(folder)
    return folder


def heading(page) -> str:
    return page.locator(HEADING).last.inner_text()


def walk_with_keys(page, base: str, ckpt: str, text: str) -> None:
    # generous waits: the suite shares two cores with trainings and other servers
    page.set_default_navigation_timeout(180_000)
    page.set_default_timeout(180_000)
    page.goto(f"{base}/?{urlencode(dict(view='tour', ckpt=ckpt, text=text))}")
    wait_for_app(page, timeout=400)
    page.wait_for_selector(HEADING, timeout=120_000)
    assert heading(page).startswith("1. ")
    for i in range(2, N + 1):
        # a key pressed while the script still reruns the last step can be dropped by the
        # page: press only once the app has settled
        wait_for_app(page, timeout=180)
        # the focus on the page, not in a text box (where Streamlit ignores the shortcuts)
        page.evaluate("() => document.activeElement && document.activeElement.blur()")
        page.keyboard.press("ArrowRight")
        page.wait_for_function(
            "([sel, prefix]) => { const h = [...document.querySelectorAll(sel)].pop();"
            " return h && h.innerText.startsWith(prefix); }", arg=[HEADING, f"{i}. "],
            timeout=180_000)
        page.wait_for_url(re.compile(rf"[?&]step={i}(&|$)"), timeout=60_000)
        errors = page.locator(ERROR_BOX).all_inner_texts()
        assert not errors, (ckpt, i, errors)
    wait_for_app(page, timeout=180)
    page.keyboard.press("ArrowLeft")
    page.wait_for_url(re.compile(rf"[?&]step={N - 1}(&|$)"), timeout=60_000)
    assert heading(page).startswith(f"{N - 1}. ")


@pytest.mark.parametrize("ckpt", ["paper", "seed001"])
def test_tour_by_keyboard_on_shipped_checkpoints(page, streamlit_server, ckpt):
    if not (ROOT / "checkpoints" / ckpt / "config.json").is_file():
        pytest.skip(f"checkpoints/{ckpt} is not here")
    walk_with_keys(page, streamlit_server, ckpt, TEXT)


def test_tour_by_keyboard_on_a_decoder_only_hf_model(page, streamlit_server_factory,
                                                     gpt2_folder):
    base = streamlit_server_factory({"ATTN_MODELS": str(gpt2_folder), "HF_HUB_OFFLINE": "1"})
    walk_with_keys(page, base, "tiny-gpt2", "the cat eats fish\nwinter is cold")
