"""Number words for the numbers chapter: native Korean to 99 (before counters), English
cardinals and ordinals to 99, counted noun phrases, and the pro-drop of a Korean subject.

Conventions (shared with everyday.py / everyday_wh.py, extended past 39): native numbers before
counters, hours and ages (스물세 명, 일흔다섯 살, 세 시간), Sino-Korean for minutes, won, months
and days of the month (사십 분, 사천오백 원, 삼월 오일); Korean numbers are always words.
"""

from __future__ import annotations

import random

from ..render import Keys, Pair, Reject
from ..words import COUNTER_EN, NUMBERS, counter

_NATIVE_TENS = {1: "열", 2: "스물", 3: "서른", 4: "마흔", 5: "쉰", 6: "예순", 7: "일흔", 8: "여든",
                9: "아흔"}
_EN_TENS = {2: "twenty", 3: "thirty", 4: "forty", 5: "fifty", 6: "sixty", 7: "seventy",
            8: "eighty", 9: "ninety"}
_EN_TEENS = {13: "thirteen", 14: "fourteen", 15: "fifteen", 16: "sixteen", 17: "seventeen",
             18: "eighteen", 19: "nineteen"}
_ORDINAL = {1: "first", 2: "second", 3: "third", 4: "fourth", 5: "fifth", 6: "sixth",
            7: "seventh", 8: "eighth", 9: "ninth", 10: "tenth", 11: "eleventh", 12: "twelfth",
            20: "twentieth", 30: "thirtieth"}
# drinks sold in bottles: counted with 병 ("bottles of") as well as 잔 ("cups of")
BOTTLED = ("water", "juice", "beer", "wine", "cola", "milk", "soju", "makgeolli")


def native(n: int) -> str:
    """Native Korean number before a counter, 1..99: 1 -> 한, 20 -> 스무, 75 -> 일흔다섯."""
    if not 0 < n < 100:
        raise ValueError(n)
    if n < 10:
        return NUMBERS[n][1]
    if n == 20:
        return "스무"
    tens, units = divmod(n, 10)
    return _NATIVE_TENS[tens] + (NUMBERS[units][1] if units else "")


def en_num(n: int) -> str:
    """English cardinal, 1..99: 7 -> seven, 15 -> fifteen, 48 -> forty-eight."""
    if not 0 < n < 100:
        raise ValueError(n)
    if n <= 12:
        return NUMBERS[n][0]
    if n < 20:
        return _EN_TEENS[n]
    tens, units = divmod(n, 10)
    return _EN_TENS[tens] + ("-" + NUMBERS[units][0] if units else "")


def en_ordinal(n: int) -> str:
    """English ordinal for a day of the month, 1..31: 3 -> third, 21 -> twenty-first."""
    if n in _ORDINAL:
        return _ORDINAL[n]
    if n < 20:
        return en_num(n) + "th"
    tens, units = divmod(n, 10)
    return _EN_TENS[tens] + "-" + _ORDINAL[units]


def draw_n(r: random.Random, most: int = 99) -> int:
    """A count: mostly small (1-10), sometimes up to most (at most 99)."""
    x = r.random()
    if x < 0.6:
        return 1 + int(r.random() * 5)
    if x < 0.88 or most <= 20:
        return 6 + int(r.random() * 15)
    return 21 + int(r.random() * (most - 20))


# things nobody counts out, buys by the piece or hands over in numbers
UNCOUNTED = {"money", "cash", "coin", "passport", "ID card", "student ID", "credit card", "word",
             "sentence", "question", "title", "message", "email", "report", "note", "letter",
             "story", "poem", "essay", "blog", "article", "document", "resume", "contract",
             "breakfast", "lunch", "dinner", "text message", "receipt", "invitation", "recipe",
             "window", "door", "sink", "bathtub", "bulletin board", "gift", "souvenir"}


def plural_only(noun) -> bool:
    """Nouns English treats as plural (boots, jeans, noodles): no "The boots is ..."."""
    return noun.en.endswith("s") and not noun.en.endswith("ss")


def measure(r: random.Random, noun, n: int) -> tuple[str, list[str]]:
    """(Korean counter, English measure words) for n of noun: 두 권 / two cups of / two
    bottles of; Reject for a mass noun that has no measure word."""
    cnt = counter(noun)
    if noun.en in BOTTLED and cnt in ("잔", "병"):
        cnt = "병" if cnt == "병" or r.random() < 0.5 else "잔"
    words = COUNTER_EN.get(cnt, "").split()
    if not words and not noun.article:
        raise Reject  # a mass noun without a measure word cannot be counted
    if words and n == 1:
        words = [words[0][:-1]] + words[1:]  # one cup of, one bottle of
    return cnt, words


def counted(r: random.Random, noun, keys: Keys, n: int | None, question: bool = False
            ) -> tuple[list, list, int]:
    """English 'three books' / 'how many books' (tokens), Korean number + counter (after the
    noun: 세 권 / 몇 권) and the noun's key; the caller puts the noun with its particle."""
    k, kn = keys(), keys()
    if noun.en in UNCOUNTED or plural_only(noun):
        raise Reject
    cnt, words = measure(r, noun, n or 2)
    if words:
        toks = noun.toks
    else:
        toks = noun.toks if n == 1 else noun.pl_toks
        if toks is None:
            raise Reject
    # the number <-> the Korean number (and the counter when English has no measure word);
    # "cups of" / "bottles of" <-> the counter
    kc = keys() if words else kn
    head = [("how", kn), ("many", kn)] if question else [(en_num(n), kn)]
    en = head + [(w, kc) for w in words] + [(w, k) for w in toks]
    return en, [("몇" if question else native(n), kn), (cnt, kc)], k


def drop_subject(p: Pair) -> Pair:
    """The pro-dropped Korean (first word, the 저는/당신은 topic, left out) as a one-way pair to
    English: Korean statements without a subject mean I, questions mean you. The English
    subject then aligns with the predicate, the word that carries the understood subject."""
    ko = p.ko.split()[1:]
    last = len(ko) - 1
    subject = {i for i, j in p.align if j == 0}
    align = {(i, j - 1) for i, j in p.align if j > 0} | {(i, last) for i in subject}
    return Pair(p.en, " ".join(ko), tuple(sorted(align)), to="en")
