"""Family nouns as a learner reads them: a bare 형 is the speaker's own ("my older brother"),
and "my brother" names the lexicon's 형. Both act on drawn pairs and draw nothing themselves."""

from __future__ import annotations

import re
from collections.abc import Iterable

from .lexicon import NOUNS
from .render import Pair
from .textbook.glue import drop_word

# Korean names one's own family bare: 형이 사과를 먹어요 is "My older brother eats ...", not
# "The older brother ...". The older grammar's renderers put "the" before every counted noun;
# the glue (textbook/glue.py) and the bare-kin construction already say "my". The rewrite
# reads the English alone and draws nothing, so every stream stays where it was.
_KIN_EN = "|".join(sorted((re.escape(n.en) for n in NOUNS if "kin" in n.tags), key=len,
                          reverse=True))
# "the" right before a kin noun, unless a relative clause follows ("the older brother who
# rests", "the older brother I will wait for": there "the" picks one out and stays)
_THE_KIN = re.compile(rf"\b([Tt])he (?=(?:{_KIN_EN})s?\b(?! (?:who|that|which|I|you|he|she|we|"
                      rf"they)\b))")


def my_kin(p: Pair) -> Pair:
    """The pair with "the" before a bare kin noun read as "my", Korean -> English only.

    Only that direction: English "my older brother" is 제 형 (the possessives, the glue), so
    the pair cannot teach English -> Korean; a one-way pair also stays out of val and test."""
    if p.to == "ko" or not _THE_KIN.search(p.en):
        return p
    en = _THE_KIN.sub(lambda m: "My " if m.group(1) == "T" else "my ", p.en)
    return Pair(en, p.ko, p.align, "en")


def short_kin_pairs(pairs: Iterable[Pair], n: int) -> list[Pair]:
    """n English -> Korean pairs that say "my brother" / "my sister" for 제 형 / 제 누나: the
    pairs' "my older brother" ↔ 제 형 with "older" dropped, in turn (repeats are
    oversampling). A learner writes "my brother" and means the lexicon's 형; the grammar
    names siblings by age only, so the short form is otherwise (nearly) never seen. Added
    beside the splits, like the copies, so no draw moves; Korean -> English keeps the full
    "my older brother"."""
    out: list[Pair] = []
    for p in pairs:
        if p.to == "en" or not ("제 형" in p.ko or "제 누나" in p.ko):
            continue
        words = p.en.split()
        i = next((i for i in range(len(words) - 2) if words[i].lower() == "my"
                  and words[i + 1] == "older"
                  and words[i + 2].rstrip(".?!,") in ("brother", "sister")), None)
        if i is not None:
            out.append(drop_word(p, "en", i + 1, "ko"))
    return [out[i % len(out)] for i in range(n)] if out else []
