"""lang_ui=ko through AppTest: the text of every view (and every tour step) holds no English
message of the catalogue untranslated; lang_ui=en and a bad value behave."""

from __future__ import annotations

import json
import re
import string

import pytest

from tests.app.conftest import run_app
from tests.conftest import ROOT, needs
from tests.unit.test_i18n import catalogue
from ui.views import VIEWS
from ui.views.tour.steps import STEPS

TEXT = "겨울은 추워요.\nThe big dog eats the fish."
HANGUL = re.compile(r"[\uac00-\ud7a3]")
SKIP_FIELDS = {"spec", "body", "srcdoc", "url", "id", "form_id", "type", "css_class",
               "script", "widget_id", "key"}  # chart JSON, HTML pages, identifiers
pytestmark = needs((ROOT / "checkpoints" / "paper" / "config.json").is_file(),
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


# English words a Korean chart may keep: the typed text, special tokens, and technical names
# the Korean lectures write in Latin letters too
KEPT = set(re.findall(r"[A-Za-z]+", TEXT)) | {
    "softmax", "bertviz", "SentencePiece", "LayerNorm", "PCA", "SNE", "FFN", "ReLU", "GELU",
    "pad", "PAD", "bos", "eos", "BOS", "EOS", "unk", "sin", "cos", "max", "NLL", "top", "GQA",
    "sqrt", "Norm", "exp", "logit", "logits", "argmax", "id", "ids", "enc", "dec", "self",
    "cross", "the", "big", "dog", "eats", "fish"}


def chart_texts(at) -> list[str]:
    """What we write inside each plotly chart: its title, axis, colour bar and legend titles,
    annotations, and the names of traces (not the data or the token labels)."""
    def text(title) -> str:
        return (title.get("text") or "") if isinstance(title, dict) else (title or "")

    out: list[str] = []
    for element in at.get("plotly_chart"):
        spec = json.loads(element.proto.spec)
        layout = spec.get("layout", {})
        out.append(text(layout.get("title")))
        for name, part in layout.items():
            if isinstance(part, dict) and name.startswith(("xaxis", "yaxis", "coloraxis",
                                                           "legend")):
                out.append(text(part.get("title")))
                out.append(text(part.get("colorbar", {}).get("title")))
        out += [a.get("text") or "" for a in layout.get("annotations", [])]
        for trace in spec.get("data", []):
            out.append(text(trace.get("colorbar", {}).get("title")))
            if trace.get("showlegend") is not False:
                out.append(str(trace.get("name") or ""))
    return [t for t in out if t]


def english_in_charts(at) -> list[str]:
    """Chart texts with English words of ours and no Hangul at all."""
    return [t for t in chart_texts(at) if not HANGUL.search(t)
            and set(re.findall(r"[A-Za-z]{3,}", re.sub(r"<[^>]+>", " ", t))) - KEPT]


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
    assert not english_in_charts(at), english_in_charts(at)  # titles, axes, legends (viz/)
    assert re.search(r"[\uac00-\ud7a3]{2}", page_text(at))
    assert at.query_params["lang_ui"] in ("ko", ["ko"])  # the link keeps the language


def test_english_by_default_and_bad_value_warns():
    at = run_app({"ckpt": "paper", "text": TEXT, "view": "tour"}, timeout=300)
    assert [h.value for h in at.subheader][-1].startswith("1. Pieces and ids")
    assert len(untranslated(at)) >= 10  # the check does find English messages on a page
    at = run_app({"ckpt": "paper", "text": TEXT, "view": "attention"}, timeout=300)
    assert len(english_in_charts(at)) >= 3  # … and English chart titles and axes
    at = run_app({"ckpt": "paper", "text": TEXT, "view": "tour", "lang_ui": "xx"}, timeout=300)
    assert any("xx" in w.value for w in at.warning)
    assert not at.exception


def test_the_sidebar_toggle_switches_the_language():
    at = run_app({"ckpt": "paper", "text": TEXT, "view": "tour"}, timeout=300)
    at.sidebar.radio(key="lang_ui").set_value("ko").run(timeout=300)
    assert [h.value for h in at.subheader][-1].startswith("1. 조각과 id")
    assert at.button(key="tour_next").label == "다음"
