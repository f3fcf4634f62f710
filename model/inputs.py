"""Typed text -> the sentences the model may see: capped, cleaned, one per line.

Pure and cheap: the caps apply before anything is tokenized, so no input can make a tensor
larger than MAX_LINES × the model's max_len (the tokenizer path cuts the pieces).
"""

from __future__ import annotations

import unicodedata

MAX_LINES = 16  # sentences per batch
MAX_CHARS = 20_000  # characters kept before anything else happens
LINE_BREAKS = ("\r\n", "\r", "\u2028", "\u2029")  # read as "\n": one sentence per line
KEEP_CONTROLS = "\n\t"


def _category(c: str) -> str:
    return "" if c in KEEP_CONTROLS else unicodedata.category(c)


def clean_lines(text: object, max_lines: int = MAX_LINES, max_chars: int = MAX_CHARS
                ) -> tuple[list[str], list[str]]:
    """Text -> at most max_lines stripped, non-empty sentences, and notes on what changed."""
    raw = "" if text is None else str(text)
    notes = []
    if len(raw) > max_chars:
        notes.append(f"The text has {len(raw):,} characters; only the first {max_chars:,} "
                     "are used.")
        raw = raw[:max_chars]
    for brk in LINE_BREAKS:
        raw = raw.replace(brk, "\n")
    cats = [_category(c) for c in raw]
    controls, surrogates = cats.count("Cc"), cats.count("Cs")  # Cs cannot be encoded as UTF-8
    if controls:
        notes.append(f"{controls} control character(s) were removed from the text.")
    if surrogates:
        notes.append(f"{surrogates} invalid character(s) (lone UTF-16 surrogates) were removed "
                     "from the text.")
    if controls or surrogates:
        raw = "".join(c for c, cat in zip(raw, cats) if cat not in ("Cc", "Cs"))
    lines = [line.strip() for line in raw.split("\n") if line.strip()]
    if len(lines) > max_lines:
        notes.append(f"{len(lines)} lines were given; only the first {max_lines} are used "
                     "(one sentence per line, one batch).")
        lines = lines[:max_lines]
    return lines, notes
