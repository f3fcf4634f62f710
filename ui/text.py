"""Text shared by the sidebar, the URL state and the views; no Streamlit calls here."""

from __future__ import annotations

import re

from ui.i18n import N_, Labels

KIND_LABELS = Labels(enc_self=N_("encoder self-attention"),
                     dec_self=N_("decoder self-attention"),
                     cross=N_("cross-attention (decoder → encoder)"))
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:=])")


def md(text: object) -> str:
    """Text shown literally inside Streamlit markdown (no formatting, links, LaTeX or emoji)."""
    return _MD_SPECIAL.sub(r"\\\1", str(text))
