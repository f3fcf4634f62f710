"""Long paragraphs whose made-up cast and places recur: the "story" text mode.

A story is some twenty lines about three or four people (made-up given names, most with a
made-up family name too) and two places (a made-up name with a common noun, "the Brelino
market"): the textbook grammar's sentences said by one of the cast ("Ravonel Dastiko: I eat
fish."), now and then a narrated line that names the cast and places ("Ravonel Dastiko went
to the Brelino market."), or an earlier line repeated. Nothing but the text before can tell
those names' pieces, so an induction head pays off all through a row.

A row is an excerpt that starts at a random word of the story, as rows cut from long
documents do. The cast is spread evenly over the story, so a model that does not read the
context finds the start of a row as hard as its end (the in-context learning score of such a
model is about 0); only copying from earlier in the row makes later pieces easier.
"""

from __future__ import annotations

import random

from ..corpus import make
from .names import english_name, korean_name, language

SENTENCES = (18, 24)  # about 17 pieces each: an excerpt from the first half fills a row
CAST = (3, 4)
TAGGED = 0.85  # share of grammar lines said by one of the cast
NARRATED = 0.25  # share of lines that narrate the cast and places instead
REPEATED = 0.15  # share of lines that repeat an earlier line of the story
SURNAME = 0.6  # share of people with a made-up family name as well

_EN_PLACES = "market bridge library station garden harbor school tower river bakery".split()
_EN_ADJECTIVES = ["", "", "old ", "new ", "little ", "north "]
_KO_PLACES = "시장 다리 도서관 역 공원 항구 학교 탑 강 빵집".split()

_EN_NARRATION = ("{a} went to {p}.", "{a} saw {b} at {p}.", "{a} and {b} left {p}.",
                 "{a} waited for {b} near {p}.", "{b} called {a} from {p}.")
_KO_NARRATION = ("{a}{neun} {p}에 갔어요.", "{a}{neun} {p}에서 {b}{reul} 봤어요.",
                 "{a}{wa} {b}{neun} {p}에서 나왔어요.",
                 "{a}{neun} {p} 근처에서 {b}{reul} 기다렸어요.",
                 "{b}{neun} {p}에서 {a}에게 전화했어요.")


def _batchim(word: str) -> bool:
    """Whether a Hangul word ends in a final consonant (it picks 은/는, 을/를, 과/와)."""
    code = ord(word[-1]) - 0xAC00
    return 0 <= code < 11172 and code % 28 != 0


def _particles(word: str) -> dict[str, str]:
    end = _batchim(word)
    return {"neun": "은" if end else "는", "reul": "을" if end else "를",
            "wa": "과" if end else "와"}


def _person(r: random.Random, korean: bool) -> str:
    if korean:
        if r.random() < SURNAME:  # a one-syllable family name first, then two or three
            return korean_name(r)[0] + korean_name(r)[:r.choice((2, 3))]
        return korean_name(r)
    first = english_name(r)
    return f"{first} {english_name(r)}" if r.random() < SURNAME else first


def _place(r: random.Random, korean: bool) -> str:
    if korean:
        return f"{korean_name(r)[:2]} {r.choice(_KO_PLACES)}"
    return f"the {r.choice(_EN_ADJECTIVES)}{english_name(r)} {r.choice(_EN_PLACES)}"


def _narrate(r: random.Random, korean: bool, cast: list[str], places: list[str],
             templates: tuple[str, ...]) -> str:
    a, b = r.sample(cast, 2)
    line = r.choice(templates).format(a=a, b=b, p=r.choice(places), **(
        _particles(a) if korean else {}))
    if korean:  # the particles after b follow b
        line = line.replace(f"{b}{_particles(a)['neun']}", f"{b}{_particles(b)['neun']}")
        line = line.replace(f"{b}{_particles(a)['reul']}", f"{b}{_particles(b)['reul']}")
    return line[0].upper() + line[1:]


def story(r: random.Random) -> str:
    """One story in English, Korean, or both side by side (see the module doc)."""
    lang = language(r)
    korean = lang == "ko"
    cast = [_person(r, korean) for _ in range(r.randint(*CAST))]
    places = [_place(r, korean) for _ in range(2)]
    narration = _KO_NARRATION if korean else _EN_NARRATION
    lines: list[str] = []
    for _ in range(r.randint(*SENTENCES)):
        x = r.random()
        if x < REPEATED and lines:
            lines.append(r.choice(lines))
        elif x < REPEATED + NARRATED:
            lines.append(_narrate(r, korean, cast, places, narration))
        else:
            pair = make(r, before_42=True)[1]
            said = {"en": pair.en, "ko": pair.ko, "both": f"{pair.en} = {pair.ko}"}[lang]
            lines.append(f"{r.choice(cast)}: {said}" if r.random() < TAGGED else said)
    return " ".join(lines)


def excerpt(r: random.Random, story_text: str) -> str:
    """The story from a random word in its first half on (a row keeps its first 128 pieces)."""
    words = story_text.split(" ")
    return " ".join(words[r.randrange(len(words) // 2 + 1):])
