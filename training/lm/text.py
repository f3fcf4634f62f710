"""Running text for the language model: paragraphs of grammar sentences, with repetition.

Copying from context must pay off, as it does in real text, so a paragraph
- has one or two made-up speakers whose names recur ("Ravonel: I eat fish."), made of random
  syllables, so only the context can tell their second and later pieces;
- repeats an earlier sentence of its own now and then, word for word.
A share of rows (`RANDOM_SHARE`) is a random token run repeated to the end of the row, the
setting in which induction heads are measured (Olsson et al. 2022).

Two text modes (`MODES`), one per training leg:
    packed  short paragraphs (3 to 9 sentences), several to a row: legs 1 to 3
    story   one excerpt of a long paragraph per row (story.py), whose made-up cast and places
            recur all through it, as real text carries its topic: later pieces become easier
            from context alone, which the in-context learning score measures (leg 4, and the
            held-out rows)
"""

from __future__ import annotations

import random
from collections.abc import Iterator

from ..corpus import make
from .names import english_name, korean_name, language
from .story import excerpt, story

RANDOM_SHARE = 0.25  # rows of repeated random tokens
REPEAT_SENTENCE = 0.25  # chance that a sentence repeats an earlier one of its paragraph
MODES = ("packed", "story")


def paragraph(r: random.Random, sentences: int | None = None) -> str:
    """One paragraph of 3 to 9 sentences (or `sentences`) in English, Korean, or both side by
    side."""
    lang = language(r)
    name = korean_name if lang == "ko" else english_name
    speakers = [name(r) for _ in range(r.randint(0, 2))]
    lines: list[str] = []
    for _ in range(r.randint(3, 9) if sentences is None else sentences):
        if lines and r.random() < REPEAT_SENTENCE:
            lines.append(r.choice(lines))
            continue
        pair = make(r, before_42=True)[1]
        text = {"en": pair.en, "ko": pair.ko, "both": f"{pair.en} = {pair.ko}"}[lang]
        if speakers:
            text = f"{r.choice(speakers)}: {text}"
        lines.append(text)
    return " ".join(lines)


def paragraphs(seed: int, mode: str = "packed") -> Iterator[str]:
    """An endless, deterministic stream of paragraphs of a mode (packed: `paragraph`, story:
    `story.story`)."""
    r = random.Random(seed)
    while True:
        yield paragraph(r) if mode == "packed" else excerpt(r, story(r))
