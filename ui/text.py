"""Text shared by the sidebar, the URL state and the views; no Streamlit calls here."""

from __future__ import annotations

from ui.i18n import N_, Labels
from ui.markdown import md

__all__ = ["KIND_LABELS", "md"]  # md lives in ui/markdown.py, which ui/i18n imports too

KIND_LABELS = Labels(enc_self=N_("encoder self-attention"),
                     dec_self=N_("decoder self-attention"),
                     cross=N_("cross-attention (decoder → encoder)"))
