"""The compare view's starting second line: one with as many pieces as the first on this
model's own tokenizer, so that the two attention maps line up position by position.

Defaults written for one tokenizer do not line up on another ("The cat sat on the mat." is 9
WordPiece pieces on BERT, "A cat was sitting on the rug." 10), so the partner is chosen by
tokenizing candidates, never by the model's name. Candidates, most wanted first: the input's
other lines (what the user typed), the line's partner in the model's minimal pairs, the line
with one word swapped as a minimal pair swaps it (model.patching.minimal_swap), the model's
example lines; failing all, the line itself. No Streamlit here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from model import Bundle
from model.dispatch import encode
from model.patching import minimal_swap, word_swaps

# where the line came from; "same": nothing lined up, the line is compared with itself
SOURCES = ("input", "pair", "swap", "example", "same")


@dataclass(frozen=True)
class Partner:
    line: str
    source: str  # one of SOURCES
    pieces: int  # the first line's piece count on this tokenizer, specials included
    word: str = ""  # a swap: the first line's word that was changed, and what it became
    replacement: str = ""


def listed(line: str, groups: Sequence[tuple[str, Sequence[str]]]) -> list[tuple[str, str]]:
    """(candidate, source) from (source, texts) groups in order, without repeats or `line`."""
    seen, out = {line}, []
    for source, texts in groups:
        for text in texts:
            text = text.strip()
            if text and text not in seen:
                seen.add(text)
                out.append((text, source))
    return out


def lined_up_partner(bundle: Bundle, line: str, others: Sequence[str],
                     pairs: Sequence[tuple[str, str]], examples: Sequence[str],
                     target_lang: str | None) -> Partner:
    """The first candidate with as many pieces as `line` on this model's tokenizer (neither
    cut to the model's positions), else `line` itself. Tokenizing only, no model run."""
    partners = [b if a == line else a for a, b in pairs if line in (a, b)]
    found = listed(line, [("input", others), ("pair", partners), ("example", examples)])
    batch = encode(bundle, [line, *(text for text, _source in found)], target_lang=target_lang)
    n = len(batch.pieces[0])
    if batch.cuts[0]:  # a cut line has no partner worth its name: what the box shows is all
        return Partner(line, "same", n)
    fits = [(text, source) for (text, source), pieces, cut
            in zip(found, batch.pieces[1:], batch.cuts[1:]) if len(pieces) == n and not cut]
    first = next(((t, s) for t, s in fits if s in ("input", "pair")), None)
    if first is not None:
        one = word_swaps([(line, first[0])])  # a minimal pair's partner: one word changed
        return Partner(first[0], first[1], n, *(one[0] if one else ("", "")))
    # only the minimal pairs' own swaps (cat -> dog, book -> letter): any word of any line at
    # any position, as the patch view also tries, can put a Korean word in an English line
    swap = minimal_swap(bundle, line, word_swaps(pairs), (), target_lang)
    if swap.found:
        return Partner(swap.corrupted, "swap", n, swap.word, swap.replacement)
    return Partner(fits[0][0], "example", n) if fits else Partner(line, "same", n)
