"""Running text for the language model: paragraphs of grammar sentences, with repetition.

Copying from context must pay off, as it does in real text, so a paragraph
- has one or two made-up speakers whose names recur ("Ravonel: I eat fish."), made of random
  syllables, so only the context can tell their second and later pieces;
- repeats an earlier sentence of its own now and then, word for word.
A share of rows (`RANDOM_SHARE`) is a random token run repeated to the end of the row, the
setting in which induction heads are measured (Olsson et al. 2022).
"""

from __future__ import annotations

import random
from collections.abc import Iterator

from ..corpus import make

RANDOM_SHARE = 0.25  # rows of repeated random tokens
REPEAT_SENTENCE = 0.25  # chance that a sentence repeats an earlier one of its paragraph
BILINGUAL = 0.1  # paragraphs of "English = 한국어" lines

_EN_ONSETS = "b c d f g h k l m n p r s t v z br dr gr kr st tr sh ch th".split()
_EN_VOWELS = "a e i o u ai ea io ou".split()
_EN_CODAS = ["", "", "", "n", "r", "l", "s", "th", "m"]
# Common name syllables, so Korean names look like names but their pairing is random.
_KO_SYLLABLES = list("민서준지영수현우진하은도윤예성재희태경나연주혜원석호동철미정아소")


def english_name(r: random.Random) -> str:
    """A made-up name of two or three syllables, e.g. "Ravonel"."""
    parts = [r.choice(_EN_ONSETS) + r.choice(_EN_VOWELS) for _ in range(r.randint(2, 3))]
    return ("".join(parts) + r.choice(_EN_CODAS)).capitalize()


def korean_name(r: random.Random) -> str:
    """Three random name syllables, e.g. "윤하석"."""
    return "".join(r.choice(_KO_SYLLABLES) for _ in range(3))


def paragraph(r: random.Random, sentences: int | None = None) -> str:
    """One paragraph of 3 to 9 sentences (or `sentences`) in English, Korean, or both side by
    side."""
    lang = "both" if r.random() < BILINGUAL else r.choice(("en", "ko"))
    name = korean_name if lang == "ko" else english_name
    speakers = [name(r) for _ in range(r.randint(0, 2))]
    lines: list[str] = []
    for _ in range(r.randint(3, 9) if sentences is None else sentences):
        if lines and r.random() < REPEAT_SENTENCE:
            lines.append(r.choice(lines))
            continue
        pair = make(r)[1]
        text = {"en": pair.en, "ko": pair.ko, "both": f"{pair.en} = {pair.ko}"}[lang]
        if speakers:
            text = f"{r.choice(speakers)}: {text}"
        lines.append(text)
    return " ".join(lines)


def paragraphs(seed: int) -> Iterator[str]:
    """An endless, deterministic stream of paragraphs."""
    r = random.Random(seed)
    while True:
        yield paragraph(r)
