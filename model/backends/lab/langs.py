"""Which language the lab's translators write for each typed line."""

from __future__ import annotations

import re
from collections.abc import Sequence

_HANGUL = re.compile(r"[\uac00-\ud7a3\u1100-\u11ff\u3130-\u318f]")


def target_langs(bundle, sources: Sequence[str], target_lang: str | None) -> list[str | None]:
    """One target language per sentence; None/'auto': Hangul goes to English, the rest to Korean."""
    tok = bundle.tokenizer
    known = getattr(tok, "lang_ids", {}) or {}
    if not known:
        return [None] * len(sources)  # a model that does not translate
    lang = target_lang or bundle.card.get("default_target_lang") or "auto"
    if lang == "auto":
        return ["en" if _HANGUL.search(s) else "ko" for s in sources]
    if lang not in known:
        raise ValueError(f"unknown target language {lang!r}; this model knows {sorted(known)}")
    return [lang] * len(sources)
