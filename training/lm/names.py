"""What every paragraph of the language model's text draws first: its language, and made-up
names of people (random syllables, so that only the context can tell a name's later pieces)."""

from __future__ import annotations

import random

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


def language(r: random.Random) -> str:
    """The language of one paragraph: "en", "ko" or "both" (English = Korean lines)."""
    return "both" if r.random() < BILINGUAL else r.choice(("en", "ko"))
