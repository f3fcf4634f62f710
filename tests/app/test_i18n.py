"""lang_ui=ko through AppTest: the text of every view (and every tour step) holds no English
message of the catalogue untranslated; lang_ui=en and a bad value behave."""

from __future__ import annotations

import re
import string

import pytest

from tests.app.conftest import run_app
from tests.conftest import ROOT
from tests.unit.test_i18n import catalogue
from ui.views import VIEWS
from ui.views.tour_steps import STEPS

TEXT = "겨울은 추워요.\nThe big dog eats the fish."
SKIP_FIELDS = {"spec", "body", "srcdoc", "url", "id", "form_id", "type", "css_class",
               "script", "widget_id", "key"}  # chart JSON, HTML pages, identifiers
pytestmark = pytest.mark.skipif(
    not (ROOT / "checkpoints" / "paper" / "config.json").is_file(),
    reason="the shipped paper checkpoint is not here")


def strings(message, out: list[str]) -> None:
    """Every string inside a protobuf message, except chart specs, HTML and identifiers."""
    for desc, value in message.ListFields():
        if desc.name in SKIP_FIELDS:
            continue
        single = isinstance(value, str | bytes | int | float) or hasattr(value, "ListFields")
        values = [value] if single else list(value)  # repeated fields
        for v in values:
            if isinstance(v, str):
                out.append(v)
            elif hasattr(v, "ListFields"):
                strings(v, out)


def page_text(at) -> str:
    out: list[str] = []

    def walk(node) -> None:
        proto = getattr(node, "proto", None)
        if proto is not None and hasattr(proto, "ListFields"):
            strings(proto, out)
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at._tree)
    # markdown escapes (\. \( …) are not part of the words
    return re.sub(r"\\(.)", r"\1", "\n".join(out))


def english_chunks() -> list[tuple[str, str]]:
    """(chunk, msgid): literal runs of 3+ words of each message whose translation differs."""
    found = []
    for msgid, msg in catalogue().items():
        if not msg.string or msg.string == msgid:
            continue
        for literal, *_ in string.Formatter().parse(msgid):
            chunk = re.sub(r"[*`]", "", literal).strip(" .,:;()“”")
            if len(re.findall(r"[A-Za-z]{2,}", chunk)) >= 3 and chunk not in msg.string:
                found.append((chunk, msgid))
    return found


def untranslated(at) -> list[str]:
    text = page_text(at)
    return sorted({msgid for chunk, msgid in english_chunks() if chunk in text})


def pages():
    for view in VIEWS:
        if view != "tour":
            yield {"view": view}
    for i in range(1, len(STEPS) + 1):
        yield {"view": "tour", "step": str(i)}


@pytest.mark.parametrize("query", list(pages()), ids=lambda q: "-".join(q.values()))
def test_korean_page_has_no_untranslated_catalogue_message(query):
    at = run_app({"ckpt": "paper", "text": TEXT, "lang_ui": "ko", **query}, timeout=300)
    assert not at.exception, [str(x.value)[:300] for x in at.exception]
    assert not untranslated(at), untranslated(at)
    assert re.search(r"[\uac00-\ud7a3]{2}", page_text(at))
    assert at.query_params["lang_ui"] in ("ko", ["ko"])  # the link keeps the language


def test_english_by_default_and_bad_value_warns():
    at = run_app({"ckpt": "paper", "text": TEXT, "view": "tour"}, timeout=300)
    assert [h.value for h in at.subheader][-1].startswith("1. SentencePiece pieces")
    assert len(untranslated(at)) >= 10  # the check does find English messages on a page
    at = run_app({"ckpt": "paper", "text": TEXT, "view": "tour", "lang_ui": "xx"}, timeout=300)
    assert any("xx" in w.value for w in at.warning)
    assert not at.exception


def test_the_sidebar_toggle_switches_the_language():
    at = run_app({"ckpt": "paper", "text": TEXT, "view": "tour"}, timeout=300)
    at.sidebar.radio(key="lang_ui").set_value("ko").run(timeout=300)
    assert [h.value for h in at.subheader][-1].startswith("1. SentencePiece 조각과 id")
    assert at.button(key="tour_next").label == "다음"
