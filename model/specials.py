"""Which pieces are markers rather than text, in any vocabulary the lab opens."""

from __future__ import annotations

import re

_BYTE_PIECE = re.compile(r"<0x[0-9A-Fa-f]{2}>")  # SentencePiece byte fallback: one UTF-8 byte


def is_special(piece: str) -> bool:
    """Whether a piece is a marker rather than text: <s>, </s>, <pad>, <unk>, <2ko>, GPT-2's
    <|endoftext|>, T5's <extra_id_0>, and BERT-style [CLS], [SEP], [PAD], [MASK].

    Byte-fallback pieces such as <0x41> are not special: each stands for one byte of the typed
    text (a character the vocabulary lacks), so it is content like any other piece.
    """
    if len(piece) > 2 and piece[0] == "<" and piece[-1] == ">":
        return _BYTE_PIECE.fullmatch(piece) is None
    return len(piece) > 2 and piece[0] == "[" and piece[-1] == "]" and piece[1:-1].isupper()
