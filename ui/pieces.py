"""Pieces read back as words, for messages about typed text: which words of two sentences do
not line up piece by piece, and where a cut sentence ends. Plain strings, no Streamlit.

Pieces are grouped into words by model.backends.word_index with the model's own word mark
(Facts.word_mark: ▁ or Ġ starts a word, ## continues one, none: every piece is a word);
special pieces (</s>, <2ko>, [CLS] …) belong to no word. When the groups match the typed
text's words one for one, the typed word names a group (byte pieces such as <0xEB> are then
still named 많이).
"""

from __future__ import annotations

from dataclasses import dataclass
from difflib import SequenceMatcher

from model.backends import word_index
from model.specials import is_special


@dataclass(frozen=True)
class Word:
    text: str  # the typed word where it can be told, else its pieces joined
    pieces: tuple[str, ...]


def words(pieces: list[str] | tuple[str, ...], text: str, mark: str) -> list[Word]:
    """The pieces of one sentence grouped into words (specials left out); mark: the model's
    Facts.word_mark."""
    groups: list[list[str]] = []
    for piece, word in zip(pieces, word_index(pieces, mark), strict=True):
        if word is None:
            continue
        if word == len(groups):
            groups.append([])
        groups[word].append(piece)
    typed = text.split()
    if len(typed) == len(groups):
        return [Word(w, tuple(g)) for w, g in zip(typed, groups)]
    return [Word(_joined(g), tuple(g)) for g in groups]


def _joined(group: list[str]) -> str:
    return "".join(p.removeprefix("##").lstrip("▁Ġ") for p in group) or " ".join(group)


@dataclass(frozen=True)
class Mismatch:
    """Words of the clean sentence (`clean`) that stand where the corrupted one has
    `corrupted`, with a different number of pieces; one side may be empty (a word added)."""

    clean: tuple[Word, ...]
    corrupted: tuple[Word, ...]


def mismatches(clean_pieces, corrupted_pieces, clean: str, corrupted: str, mark: str
               ) -> list[Mismatch]:
    """Where the two sentences' pieces stop lining up, word by word: added or dropped words,
    and replaced words whose piece counts differ (a word swapped for one of as many pieces is
    not a cause). Empty when the piece counts are equal. mark: the model's Facts.word_mark."""
    if len(clean_pieces) == len(corrupted_pieces):
        return []
    a, b = words(clean_pieces, clean, mark), words(corrupted_pieces, corrupted, mark)
    found = []
    matcher = SequenceMatcher(None, [w.text for w in a], [w.text for w in b], autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            continue
        left, right = a[i1:i2], b[j1:j2]
        if (op == "replace" and len(left) == len(right)
                and all(len(x.pieces) == len(y.pieces) for x, y in zip(left, right))):
            continue  # one word for one word of as many pieces: this is not why they differ
        if op == "replace" and len(left) == len(right):
            pairs = [(x, y) for x, y in zip(left, right) if len(x.pieces) != len(y.pieces)]
            found += [Mismatch((x,), (y,)) for x, y in pairs]
        else:
            found.append(Mismatch(tuple(left), tuple(right)))
    return found


def tail(pieces: list[str] | tuple[str, ...], n: int = 3) -> str:
    """The last n ordinary pieces, where a cut sentence now ends."""
    return " ".join([p for p in pieces if not is_special(p)][-n:])
