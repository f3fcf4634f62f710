"""A corrupted sentence made from the clean one: one word swapped for another that the model's
own tokenizer reads as as many pieces, but different ones.

Patching needs the two inputs to line up piece by piece (model/pairs.py). Whether a swap does is
the tokenizer's answer, not the typed text's: a word-level vocabulary reads two words it lacks as
the same <unk>, a byte-level BPE splits a rare word in two. So every candidate sentence is
tokenized (one batch, no model run) and the first whose pieces differ from the clean ones at
the same count is kept.

    s = minimal_swap(bundle, "The cat sat on the mat.", swaps=[("cat", "dog")], words=["rug"])
    s.corrupted   # "The dog sat on the mat." where cat and dog are as many pieces
    s.found       # False: no swap lined up (s.corrupted is then the clean sentence)
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..checkpoint import Bundle
from ..specials import is_special

WORD = re.compile(r"^(\W*)(\w+)(\W*)$")  # leading punctuation, the word, trailing punctuation
LIMIT = 256  # candidate sentences tokenized at most (one batch: tokenizing only, milliseconds)


@dataclass(frozen=True)
class Swap:
    """The clean sentence and the corrupted one made from it (the same when none was found)."""

    clean: str
    corrupted: str
    word: str = ""  # the clean sentence's word that was changed
    replacement: str = ""
    clean_pieces: tuple[str, ...] = ()  # the pieces where the two differ, clean side
    corrupted_pieces: tuple[str, ...] = ()  # the same positions, corrupted side
    n_pieces: int = 0  # pieces of each sentence as the model reads them (specials included)
    tried: int = 0  # candidate sentences tokenized

    @property
    def found(self) -> bool:
        return self.corrupted != self.clean


def word_swaps(pairs: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """The one-word differences of minimal pairs (clean, corrupted), both ways, punctuation
    stripped: ("The cat eats fish.", "The dog eats fish.") gives ("cat", "dog"), ("dog", "cat")."""
    found: list[tuple[str, str]] = []
    for clean, corrupted in pairs:
        a, b = clean.split(), corrupted.split()
        diffs = [(x, y) for x, y in zip(a, b) if x != y] if len(a) == len(b) else []
        if len(diffs) != 1:
            continue
        x, y = (WORD.match(w) for w in diffs[0])
        if x and y and x[2] != y[2]:
            found += [(x[2], y[2]), (y[2], x[2])]
    return list(dict.fromkeys(found))


def _cased(like: str, word: str) -> str:
    """word with like's first letter case (a swapped sentence start stays capitalised)."""
    if like[:1].isupper():
        return word[:1].upper() + word[1:]
    return word[:1].lower() + word[1:] if word[1:2].islower() or len(word) == 1 else word


def _script(word: str) -> bool:
    """Whether a word is written in Hangul: a swap keeps the replaced word's script, so an
    English line never gets a Korean word from the pool (or the reverse)."""
    return any("\uac00" <= ch <= "\ud7a3" or "\u3131" <= ch <= "\u318e" for ch in word)


def _candidates(clean: str, swaps: Sequence[tuple[str, str]], words: Iterable[str]
                ) -> list[tuple[str, str, str]]:
    """(sentence, word, replacement): the pairs' own swaps first, then the other words
    (longest first, the clean sentence's own last) at each position (its first word last,
    longer words before shorter: a lecturer's pair changes a noun or a verb, not "the")."""
    tokens = clean.split()
    parts = [(i, m) for i, t in enumerate(tokens) if (m := WORD.match(t))]
    pool = list(dict.fromkeys(m[2] for w in words for t in w.split() if (m := WORD.match(t))))
    own = {m[2].lower() for _i, m in parts}  # its own words last: "The the sat on the mat."
    pool.sort(key=lambda w: (w.lower() in own, -len(w)))  # stable: ties keep the texts' order
    out: list[tuple[str, str, str]] = []

    def add(i: int, m: re.Match, new: str) -> None:
        new = _cased(m[2], new)
        if new.lower() != m[2].lower():
            sentence = " ".join(tokens[:i] + [m[1] + new + m[3]] + tokens[i + 1:])
            out.append((sentence, m[2], new))

    for i, m in parts:
        for a, b in swaps:
            if m[2].lower() == a.lower():
                add(i, m, b)
    for i, m in sorted(parts, key=lambda p: (p[0] == 0, -len(p[1][2]), p[0])):
        for new in pool:
            if _script(new) == _script(m[2]):
                add(i, m, new)
    seen: dict[str, tuple[str, str, str]] = {}
    for c in out:
        seen.setdefault(c[0], c)
    return list(seen.values())[:LIMIT]


def minimal_swap(bundle: Bundle, clean: str, swaps: Sequence[tuple[str, str]] = (),
                 words: Iterable[str] = (), target_lang: str | None = None) -> Swap:
    """The clean sentence with one word changed so that the model reads as many pieces, some
    of them different: first a minimal pair's swap (`swaps`, e.g. word_swaps of the presets)
    where the clean sentence has that word, then any of `words` (texts; their words are
    taken) at any position. A replacement read only as special pieces (<unk>) is taken last.
    Not found (`.found` False): no candidate lined up, or the clean sentence has no word."""
    from ..backends import backend_for

    candidates = _candidates(clean, swaps, words) if clean.strip() else []
    if not candidates:
        return Swap(clean, clean)
    batch = backend_for(bundle).encode([clean] + [c[0] for c in candidates], None, target_lang)
    base = batch.pieces[0]
    fallback: Swap | None = None
    for (sentence, word, new), pieces in zip(candidates, batch.pieces[1:]):
        at = [j for j, (p, q) in enumerate(zip(base, pieces)) if p != q]
        if len(pieces) != len(base) or not at:
            continue  # a different count cannot be patched; the same pieces show nothing
        swap = Swap(clean, sentence, word, new, tuple(base[j] for j in at),
                    tuple(pieces[j] for j in at), len(base), len(candidates))
        if not all(is_special(p) for p in swap.corrupted_pieces):
            return swap
        fallback = fallback or swap
    return fallback or Swap(clean, clean, tried=len(candidates))


__all__ = ["Swap", "minimal_swap", "word_swaps"]
