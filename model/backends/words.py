"""Pieces read back as words: the one piece -> word grouping, by the mark a model's Facts name
(Facts.word_mark). The unknown-word notice, the patch view's hint and the alignment scores all
group pieces here, so a tokenizer's convention is written once."""

from __future__ import annotations

from collections.abc import Sequence

from ..specials import is_special


def word_index(pieces: Sequence[str], mark: str) -> list[int | None]:
    """Word number of each piece, None for a special piece (<s>, </s>, <2ko>, [CLS] …).

    mark is Facts.word_mark: "▁" or "Ġ" opens a word, "##" continues one, "" (a word-level
    tokenizer) makes every piece a word. The first ordinary piece opens a word whatever it
    carries (GPT-2's first word has no Ġ). ['<2ko>', '▁The', '▁wea', 'ther', '.', '</s>'] with
    "▁" -> [None, 0, 1, 1, 1, None]."""
    out: list[int | None] = []
    word = -1
    for piece in pieces:
        if is_special(piece):
            out.append(None)
            continue
        if mark == "##":
            opens = not piece.startswith("##")
        else:
            opens = not mark or piece.startswith(mark)
        if opens or word < 0:
            word += 1
        out.append(word)
    return out
