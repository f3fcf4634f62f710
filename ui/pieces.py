"""Pieces read back as words, for messages about typed text: which words of two sentences do
not line up piece by piece, and where a cut sentence ends. Plain strings, no Streamlit.

Word starts are read from the tokenizer's own marks: ▁ (SentencePiece) and Ġ (byte-level BPE)
start a word, ## (WordPiece) continues one; special pieces (</s>, <2ko>, [CLS] …) belong to no
word. When the groups match the typed text's words one for one, the typed word names a group
(byte pieces such as <0xEB> are then still named 많이).
"""

from __future__ import annotations

from dataclasses import dataclass
from difflib import SequenceMatcher

from model.specials import is_special

STARTS = ("▁", "Ġ")


@dataclass(frozen=True)
class Word:
    text: str  # the typed word where it can be told, else its pieces joined
    pieces: tuple[str, ...]


def style(*sentences) -> str:
    """How these pieces mark words: "wordpiece" (## continues), "marks" (▁ or Ġ starts) or
    "plain" (a word-level tokenizer: every piece is a word). Read from all the sentences
    compared, so two sentences are grouped alike."""
    every = [p for pieces in sentences for p in pieces if not is_special(p)]
    if any(p.startswith("##") for p in every):
        return "wordpiece"
    return "marks" if any(p.startswith(STARTS) for p in every) else "plain"


def words(pieces: list[str] | tuple[str, ...], text: str, how: str | None = None
          ) -> list[Word]:
    """The pieces of one sentence grouped into words (specials left out); how: style()."""
    plain = [p for p in pieces if not is_special(p)]
    how = how or style(plain)
    groups: list[list[str]] = []
    for p in plain:
        if how == "wordpiece":
            starts = not p.startswith("##")
        elif how == "marks":
            starts = p.startswith(STARTS) or not groups
        else:
            starts = True
        if starts:
            groups.append([p])
        else:
            groups[-1].append(p)
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


def mismatches(clean_pieces, corrupted_pieces, clean: str, corrupted: str) -> list[Mismatch]:
    """Where the two sentences' pieces stop lining up, word by word: added or dropped words,
    and replaced words whose piece counts differ (a word swapped for one of as many pieces is
    not a cause). Empty when the piece counts are equal."""
    if len(clean_pieces) == len(corrupted_pieces):
        return []
    how = style(clean_pieces, corrupted_pieces)
    a, b = words(clean_pieces, clean, how), words(corrupted_pieces, corrupted, how)
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
