"""User text shown literally in Streamlit markdown; imports nothing of the app's (i18n uses it)."""

from __future__ import annotations

import re

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:=])")


def md(text: object) -> str:
    """Text shown literally inside Streamlit markdown (no formatting, links, LaTeX or emoji)."""
    return _MD_SPECIAL.sub(r"\\\1", str(text))
