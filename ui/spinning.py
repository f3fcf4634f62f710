"""A spinner in the session's interface language around a cached function (ui/runtime.py)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TypeVar

import streamlit as st

from ui.i18n import _

F = TypeVar("F", bound=Callable)


def spinning(message: str) -> Callable[[F], F]:
    """Show `message` in the session's interface language while the cached function below runs.

    st.cache_*'s own show_spinner text is fixed when this module loads, so it would be English
    for every session. Like it, this shows nothing on a hit: st.spinner waits 0.5 s first.
    """
    def wrap(cached: F) -> F:
        @functools.wraps(cached)
        def call(*args, **kwargs):
            with st.spinner(_(message)):
                return cached(*args, **kwargs)

        call.clear = cached.clear  # the cache stays reachable, as st.cache_* gives it
        return call  # type: ignore[return-value]
    return wrap
