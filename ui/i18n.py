"""The interface language: standard gettext catalogues, `_()` for every message on the page.

Messages are English in the code and translated through locales/<lang>/LC_MESSAGES/
attention_lab.po (the source, committed) compiled to .mo (`make locales`, run by `make run`
and `make test`; not committed). If the .mo is missing or older than its .po, the .po is
compiled in memory with Babel, so a fresh checkout still shows Korean.

The language comes from `lang_ui=ko|en` in the link, then the sidebar toggle; without either,
Korean when the browser's language (st.context.locale) is Korean, otherwise English.
`N_()` marks a module-level constant for extraction; `_()` translates it where it is shown.
"""

from __future__ import annotations

import functools
import gettext
import io
from contextlib import AbstractContextManager
from pathlib import Path

import streamlit as st

from ui.markdown import md
from viz.i18n import translated

DOMAIN = "attention_lab"
LOCALE_DIR = Path(__file__).resolve().parents[1] / "locales"
LANGS = {"en": "English", "ko": "한국어"}
STATE_KEY = "lang_ui"


def catalogue_paths(lang: str) -> tuple[Path, Path]:
    """(.po, .mo) of a language."""
    folder = LOCALE_DIR / lang / "LC_MESSAGES"
    return folder / f"{DOMAIN}.po", folder / f"{DOMAIN}.mo"


def compile_po(po: Path) -> bytes:
    """A .po catalogue compiled to .mo bytes with Babel (fuzzy entries left out)."""
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po

    with po.open("rb") as f:
        catalog = read_po(f)
    buf = io.BytesIO()
    write_mo(buf, catalog)
    return buf.getvalue()


@functools.cache
def translations(lang: str) -> gettext.NullTranslations:
    """The catalogue of `lang` (English: the messages as written), loaded once per process."""
    if lang not in LANGS or lang == "en":
        return gettext.NullTranslations()
    po, mo = catalogue_paths(lang)
    if mo.is_file() and (not po.is_file() or mo.stat().st_mtime >= po.stat().st_mtime):
        with mo.open("rb") as f:
            return gettext.GNUTranslations(f)
    if po.is_file():
        return gettext.GNUTranslations(io.BytesIO(compile_po(po)))
    return gettext.NullTranslations()


def current() -> str:
    """The session's interface language ("en" before anything chose one)."""
    lang = st.session_state.get(STATE_KEY, "en")
    return lang if lang in LANGS else "en"


def _(message: str) -> str:
    """`message` in the session's interface language."""
    return translations(current()).gettext(message)


def N_(message: str) -> str:
    """Mark a constant for the catalogue; translate it with _() where it is shown."""
    return message


def browser_lang() -> str:
    """"ko" when the browser says Korean (st.context.locale, e.g. "ko-KR"), else "en"."""
    try:
        locale = st.context.locale or ""
    except Exception:  # no browser session (bare script run)
        locale = ""
    return "ko" if str(locale).lower().split("-")[0].split("_")[0] == "ko" else "en"


def choose(url: dict[str, str], warnings: list[str]) -> str:
    """Settle the session's language on its first run: lang_ui from the link, else the
    browser's; a bad lang_ui value adds a (translated) warning. Returns the language."""
    state = st.session_state
    if STATE_KEY not in state:
        raw = url.get("lang_ui")
        state[STATE_KEY] = raw if raw in LANGS else browser_lang()
        if raw is not None and raw not in LANGS:
            warnings.append(_("Unknown interface language {value} in the link (use ko or en).")
                            .format(value=md(repr(raw[:20]))))
    return current()


def language_toggle() -> None:
    """The sidebar's language switch; the page is drawn again in the chosen language."""
    st.radio(_("Interface language"), list(LANGS), key=STATE_KEY, format_func=LANGS.get,
             horizontal=True)


class Labels(dict):
    """A dict of N_()-marked labels that are translated when read (x[k], x.get(k)), so
    `format_func=LABELS.get` shows the session's language without touching each use."""

    def __getitem__(self, key):
        return _(super().__getitem__(key))

    def get(self, key, default=None):
        return self[key] if key in self else default


def in_figures() -> AbstractContextManager[None]:
    """A block whose figures (viz/) write their text in the session's interface language."""
    return translated(_)
