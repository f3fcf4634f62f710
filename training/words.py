"""Small word-level helpers for the everyday constructions: English -ing and agreement,
number words (native Korean before counters, English), the counter a noun takes, the copula."""

from __future__ import annotations

from .hangul import has_batchim
from .lexicon import Noun, read_table

NUMBERS = {int(r[0]): (r[1], r[2], r[3]) for r in read_table("numbers")}
COUNTER_EN = {r[0]: r[1] for r in read_table("counters")}
_EN_ING_DOUBLE = {"run", "swim", "sit", "shop", "get", "cut", "stop", "plan", "jog", "put",
                  "begin", "win"}


def en_ing(base: str) -> str:
    """eat -> eating, make -> making, run -> running, see -> seeing, lie -> lying."""
    if base in _EN_ING_DOUBLE:
        return base + base[-1] + "ing"
    if base.endswith("ie"):
        return base[:-2] + "ying"
    if base.endswith("e") and not base.endswith(("ee", "ye", "oe")) and len(base) > 2:
        return base[:-1] + "ing"
    return base + "ing"


def native(n: int) -> str:
    """Native Korean number before a counter: 1 -> 한, 20 -> 스무, 23 -> 스물세."""
    if n in NUMBERS:
        return NUMBERS[n][1]
    tens, units = divmod(n, 10)
    head = {1: "열", 2: "스물", 3: "서른"}[tens]
    return head + NUMBERS[units][1]


def en_number(n: int) -> str:
    """English number word: 7 -> seven, 23 -> twenty-three."""
    if n in NUMBERS:
        return NUMBERS[n][0]
    tens, units = divmod(n, 10)
    if tens == 1:
        return {3: "thirteen", 4: "fourteen", 5: "fifteen", 6: "sixteen", 7: "seventeen",
                8: "eighteen", 9: "nineteen"}[units]
    return NUMBERS[tens * 10][0] + "-" + NUMBERS[units][0]


def counter(noun: Noun) -> str:
    """The counter word a noun takes: cnt:X tag, else 명 people, 마리 animals, 잔 drinks, 개."""
    for t in noun.tags:
        if t.startswith("cnt:"):
            return t[4:]
    if "person" in noun.tags:
        return "명"
    if "animal" in noun.tags:
        return "마리"
    if "drink" in noun.tags:
        return "잔"
    return "개"


def copula(word: str, tense: str = "present") -> str:
    """N이에요 / N예요 (past N이었어요 / N였어요)."""
    if tense == "past":
        return word + ("이었어요" if has_batchim(word) else "였어요")
    return word + ("이에요" if has_batchim(word) else "예요")


def agree_be(person: str, tense: str) -> str:
    """am / is / are / was / were."""
    if tense == "past":
        return "was" if person in ("1s", "3s") else "were"
    return {"1s": "am", "3s": "is"}.get(person, "are")


def agree_do(person: str, tense: str) -> str:
    return "did" if tense == "past" else "does" if person == "3s" else "do"


def agree_have(person: str, tense: str) -> str:
    return "had" if tense == "past" else "has" if person == "3s" else "have"
