"""The Korean catalogue: every message the interface marks (_() / N_() in app.py and ui/) has a
Korean translation with the same {placeholders}; the catalogue compiles and is used."""

from __future__ import annotations

import re
import string

import pytest

from tests.conftest import ROOT

pytest.importorskip("babel", reason="Babel is pinned in requirements.txt")

from babel.messages.extract import extract_from_dir, extract_from_file  # noqa: E402
from babel.messages.pofile import read_po  # noqa: E402

from ui import i18n  # noqa: E402

KEYWORDS = {"_": None, "N_": None}
PO, _MO = i18n.catalogue_paths("ko")
HANGUL = re.compile(r"[\uac00-\ud7a3]")


def code_messages() -> dict[str, str]:
    """msgid -> where it is, for every message marked in app.py, ui/ and viz/ (Babel's
    extractor)."""
    found: dict[str, str] = {}
    for line, msg, _comments, _ctx in extract_from_file("python", ROOT / "app.py",
                                                         keywords=KEYWORDS):
        found.setdefault(msg, f"app.py:{line}")
    for room in ("ui", "viz"):
        for path, line, msg, _comments, _ctx in extract_from_dir(
                ROOT / room, method_map=[("**.py", "python")], keywords=KEYWORDS):
            found.setdefault(msg, f"{room}/{path}:{line}")
    return found


def catalogue() -> dict[str, object]:
    with PO.open("rb") as f:
        return {m.id: m for m in read_po(f) if m.id}


def korean() -> dict[str, str]:
    """msgid -> Korean, for every translated message of the committed catalogue."""
    return {m: str(msg.string) for m, msg in catalogue().items() if msg.string}


def fields(text: str) -> set[str]:
    """The str.format fields of a message, e.g. {'n', 'b', 'p:.0%'} -> {'n', 'b', 'p'}."""
    return {name.split(".")[0].split("[")[0] for _lit, name, _spec, _conv
            in string.Formatter().parse(text) if name is not None}


def test_every_message_has_a_korean_translation():
    messages, cat = code_messages(), catalogue()
    assert len(messages) >= 60
    missing = [f"{where}: {msg!r}" for msg, where in messages.items()
               if msg not in cat or not cat[msg].string or cat[msg].fuzzy]
    assert not missing, "no Korean translation (run `make messages`, translate the .po):\n" + \
        "\n".join(missing)


def test_translations_keep_the_placeholders():
    cat = catalogue()
    bad = [m for m in code_messages() if m in cat and fields(m) != fields(cat[m].string)]
    assert not bad, bad


def test_translations_are_korean():
    """Where a message has words, its translation has Hangul (not a copy of the English)."""
    cat = catalogue()
    english = [m for m in code_messages() if m in cat and len(re.findall(r"[A-Za-z]{3,}", m)) >= 3
               and not HANGUL.search(str(cat[m].string))]
    assert not english, english


def test_the_catalogue_compiles_and_translates(monkeypatch):
    mo = i18n.compile_po(PO)
    assert mo[:4] in (b"\xde\x12\x04\x95", b"\x95\x04\x12\xde")  # gettext .mo magic
    i18n.translations.cache_clear()
    monkeypatch.setattr(i18n, "current", lambda: "ko")
    assert i18n._("Previous") == "이전"
    assert i18n._("Step {i} of {n}").format(i=7, n=19) == "19단계 중 7단계"
    monkeypatch.setattr(i18n, "current", lambda: "en")
    assert i18n._("Previous") == "Previous"


def test_compiled_mo_is_not_committed():
    import subprocess

    tracked = subprocess.run(["git", "ls-files", "locales"], cwd=ROOT, capture_output=True,
                             text=True).stdout.split()
    assert not [t for t in tracked if t.endswith(".mo")]


@pytest.mark.parametrize("locale,lang", [("ko-KR", "ko"), ("ko", "ko"), ("en-US", "en"),
                                         (None, "en"), ("kok-IN", "en")])
def test_browser_language_picks_the_default(monkeypatch, locale, lang):
    import streamlit as st

    class Context:
        pass

    ctx = Context()
    ctx.locale = locale
    monkeypatch.setattr(st, "context", ctx)
    assert i18n.browser_lang() == lang


def test_cache_spinners_speak_the_interface_language(monkeypatch):
    """st.cache_*'s show_spinner text is fixed at import (English); ui.runtime.spinning
    translates per call, and no cached function in the app uses a fixed text."""
    import contextlib

    import streamlit as st

    from ui import runtime

    fixed = [f"{p.relative_to(ROOT)}:{i}" for p in [ROOT / "app.py", *(ROOT / "ui").rglob("*.py")]
             for i, line in enumerate(p.read_text().splitlines(), 1)
             if re.search(r"show_spinner\s*=\s*[\"']", line)]
    assert not fixed, fixed

    shown, runs = [], []

    @contextlib.contextmanager
    def spinner(text):
        shown.append(text)
        yield

    @runtime.spinning(i18n.N_("Loading the model…"))
    @st.cache_data(show_spinner=False)
    def slow(x: int) -> int:
        runs.append(x)
        return 2 * x

    monkeypatch.setattr(st, "spinner", spinner)
    monkeypatch.setattr(i18n, "current", lambda: "ko")
    i18n.translations.cache_clear()
    assert slow(3) == 6 and slow(3) == 6  # the second call is a hit
    assert runs == [3]
    assert shown == ["모델을 불러오는 중…"] * 2  # st.spinner shows nothing on a fast hit
    slow.clear()
    assert slow(3) == 6 and runs == [3, 3]
