"""No internal names in the pickers, in either language, and Korean where English was left
(issue 39, item 7): attention kinds are "decoder self-attention", "cross-attention" …, never
dec_self / cross; the query–key map's colour-by options and compare's subtitle are Korean."""

from __future__ import annotations

import json
import re

import pytest

from tests.app.conftest import run_app
from tests.app.test_views import charts, ok

INTERNAL = re.compile(r"(?<![\w-])(enc_self|dec_self|cross)(?![\w-])")
HANGUL = re.compile(r"[\uac00-\ud7a3]")
CLEAN, CORRUPT = "The cat eats fish.", "The dog eats fish."
PAGES = [{"view": "patch", "corrupt": CORRUPT}, {"view": "heads", "detector": "sink"},
         {"view": "attention"}, {"view": "steps"}, {"view": "compare"}, {"view": "contrib"},
         {"view": "heads"}, {"view": "masks"}]


def _pickers(at) -> list[str]:
    """Every option label of every selectbox, radio and multiselect on the page."""
    labels = []
    for kind in ("selectbox", "radio", "multiselect"):
        for widget in at.get(kind):
            labels += [str(o) for o in widget.options]
    return labels


@pytest.mark.parametrize("lang_ui", ["en", "ko"])
@pytest.mark.parametrize("page", PAGES, ids=lambda p: "-".join(p.values())[:24])
def test_no_internal_kind_names_in_pickers(page, lang_ui):
    at = run_app({"ckpt": "paper", "text": CLEAN, "lang_ui": lang_ui, **page}, timeout=180)
    ok_page(at)
    found = [label for label in _pickers(at) if INTERNAL.search(label)]
    assert not found, found


def ok_page(at) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def test_query_key_map_colour_options_are_korean():
    at = run_app({"ckpt": "paper", "view": "qkmap", "text": CLEAN, "lang_ui": "ko"},
                 timeout=300)
    ok_page(at)
    options = at.radio(key="_w_qk_colour").options
    assert len(options) == 4 and all(HANGUL.search(o) for o in options), options


def test_compare_subtitle_is_korean():
    # the second line is the second input: one run (AppTest re-formats a Korean radio's
    # value in English on a second run, and would fail before the page does)
    at = run_app({"ckpt": "paper", "view": "compare", "text": CLEAN + "\nThe big dog eats "
                  "the fish.", "lang_ui": "ko"}, timeout=180)
    ok_page(at)
    title = charts(at)[0]["layout"]["title"]["text"]
    subtitle = title.split("<sup>")[1]
    assert HANGUL.search(subtitle) and "differ" not in subtitle, title
    assert "tokens" not in json.dumps(title)


def test_english_pages_still_read_english():
    at = run_app({"ckpt": "paper", "view": "patch", "text": CLEAN, "corrupt": CORRUPT},
                 timeout=180)
    ok(at)
    assert any("cross-attention" in label for label in _pickers(at))
