"""The language of the text inside figures: titles, axis titles, hover labels, annotations.

viz/ imports no streamlit and knows no session, so it translates through whatever function
the caller installs for the duration of a `with translated(fn):` block (the app installs
ui.i18n._, the session's gettext; a notebook may install its own). Outside such a block text
stays as written, in English. Like model/hooks.py, the installed function lives in a
ContextVar: each Streamlit session's script thread, and each notebook cell, sees its own.

In viz code: `_("layer {layer}").format(layer=i)` where a message is shown, `N_()` on a
module-level constant that is translated later with `_()`. `make messages` collects both
from viz/ into the same catalogue as ui/.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_TRANSLATE: ContextVar[Callable[[str], str] | None] = ContextVar("viz_translate", default=None)


def _(message: str) -> str:
    """`message` in the installed language (as written when none is installed)."""
    fn = _TRANSLATE.get()
    return fn(message) if fn is not None else message


def N_(message: str) -> str:
    """Mark a constant for the catalogue; translate it with _() where it is shown."""
    return message


@contextmanager
def translated(fn: Callable[[str], str]) -> Iterator[None]:
    """Figures built inside this block translate their text with fn (message -> message)."""
    token = _TRANSLATE.set(fn)
    try:
        yield
    finally:
        _TRANSLATE.reset(token)
