"""Textbook area: numbers. Counting with native numbers and counters (개 명 마리 권 잔 병 장),
몇 questions, and (in numbers_time.py) clock minutes, durations, dates, days, ages and prices.

Forms follow the everyday constructions they extend (have: 저는 책이 세 권 있어요; give: 물 두
병 주세요) so one English sentence keeps one Korean form: N이/가 + number + counter + 있어요,
N을/를 + number + counter + verb, "How many N" <-> N + 몇 + counter. A Korean statement without
저는 (책이 세 권 있어요.) is a one-way pair to "I ...", a question without 당신은 to "you".
"""

from __future__ import annotations

import random

from ..everyday import (
    JOBS,
    PETS,
    PLACES_AT,
    THINGS,
    agree_do,
    agree_have,
    pick,
    pronoun_np,
    subject,
)
from ..hangul import particle, pred_words
from ..lexicon import NOUNS, VERBS
from ..render import Keys, Pair, finish, pred_keys
from . import numbers_time
from .numbers_words import BOTTLED, counted, draw_n, drop_subject

_DRINKS = [n for n in NOUNS if "drink" in n.tags and "mass" in n.tags]
# what one has or counts: count things (books, pencils, cats), and drinks by the cup / bottle
_HAVE = THINGS + [n for n in _DRINKS if n.en in BOTTLED]
_PEOPLE = [n for n in JOBS if n.article] + [n for n in NOUNS if n.en in ("child", "person")]
_ANIMALS = PETS
_PLACES = [p for p in PLACES_AT if p.en != "house" and p.article]
_OUTDOOR = [p for p in _PLACES if "p_out" in p.tags]
# buy / eat / drink / order with a counted object (read is left out: "read" is past and present)
_COUNT_VERBS = [v for v in VERBS if v.ko in ("사다", "먹다", "마시다", "주문하다")]
_GIVE = _HAVE + [n for n in _DRINKS if n not in _HAVE]


def _maybe_drop(r: random.Random, p: Pair, first_en: str) -> Pair:
    """A third of the sentences whose subject is 저 (statements) or 당신 (questions) come out
    pro-dropped, as one-way pairs to English."""
    if first_en in ("I", "you") and r.random() < 0.3:
        return drop_subject(p)
    return p


def _first(en: list) -> str:
    return en[0][0] if en else ""


def have_count(r: random.Random) -> Pair:
    """I have three books. <-> 저는 책이 세 권 있어요. / How many books do you have? <-> 당신은
    책이 몇 권 있어요?"""
    keys = Keys()
    question = r.random() < 0.35
    subj = subject(r, keys, question=question)
    noun = pick(r, _HAVE)
    n = None if question else draw_n(r, 30)
    nums_en, nums_ko, k = counted(r, noun, keys, n, question)
    k_pred = keys()
    ko = subj.ko_with("topic") + [(particle(noun.ko, "subject"), k)] + nums_ko + [("있어요",
                                                                                  k_pred)]
    if question:
        en = nums_en + [(agree_do(subj.person, "present"), k_pred)] + subj.en + [("have",
                                                                                 k_pred)]
        p = finish(en, ko, "?")
        return _maybe_drop(r, p, "you" if subj.en == [("you", subj.key)] else "")
    en = subj.en + [(agree_have(subj.person, "present"), k_pred)] + nums_en
    p = finish(en, ko, ".")
    return _maybe_drop(r, p, "I" if subj.person == "1s" else "")


def there_are(r: random.Random) -> Pair:
    """There are five students in the classroom. <-> 교실에 학생이 다섯 명 있어요. / How many
    students are there in the classroom? <-> 교실에 학생이 몇 명 있어요?"""
    keys = Keys()
    question = r.random() < 0.3
    if r.random() < 0.3:
        place, noun = pick(r, _OUTDOOR), pick(r, _ANIMALS)
    else:
        place, noun = pick(r, _PLACES), pick(r, _PEOPLE)
    n = None if question else draw_n(r)
    nums_en, nums_ko, k = counted(r, noun, keys, n, question)
    k_p, k_pred = keys(), keys()
    en_p = [(place.loc or "at", k_p), ("the", None)] + [(w, k_p) for w in place.toks]
    ko = [(place.ko + "에", k_p), (particle(noun.ko, "subject"), k)] + nums_ko + [
        ("있어요", k_pred)]
    if question:
        return finish(nums_en + [("are", k_pred), ("there", None)] + en_p, ko, "?")
    be = "is" if n == 1 else "are"
    return finish([("there", None), (be, k_pred)] + nums_en + en_p, ko, ".")


def object_count(r: random.Random) -> Pair:
    """I bought three apples. <-> 저는 사과를 세 개 샀어요. / He drinks two cups of coffee every
    day. <-> 그는 매일 커피를 두 잔 마셔요. / How many apples did you eat? <-> 당신은 사과를 몇
    개 먹었어요?"""
    keys = Keys()
    question = r.random() < 0.25
    v = pick(r, _COUNT_VERBS)
    noun = pick(r, [n for n in v.obj_nouns if n.article or n in _DRINKS])
    subj = pronoun_np(r, keys, question) if r.random() < 0.6 else subject(r, keys,
                                                                          question=question)
    tense = "past" if r.random() < 0.6 else "present"
    n = None if question else draw_n(r, 20)
    nums_en, nums_ko, k = counted(r, noun, keys, n, question)
    pred, k_main, _, k_tense = pred_keys(pred_words(v.ko, tense, False, "final"), False, keys)
    time_en: list = []
    time_ko: list = []
    if tense == "present" and not question and r.random() < 0.4:
        kt = keys()
        time_en, time_ko = [("every", kt), ("day", kt)], [("매일", kt)]
    ko = subj.ko_with("topic") + time_ko + [(particle(noun.ko, "object"), k)] + nums_ko + pred
    k_v = (k_main, k_tense) if k_main != k_tense else k_main
    if question:
        en = nums_en + [(agree_do(subj.person, tense), k_tense)] + subj.en + [(v.base, k_main)]
        return _maybe_drop(r, finish(en, ko, "?"),
                           "you" if subj.en == [("you", subj.key)] else "")
    form = v.past if tense == "past" else (v.s3 if subj.person == "3s" else v.base)
    en = subj.en + [(form, k_v)] + nums_en + time_en
    return _maybe_drop(r, finish(en, ko, "."), "I" if subj.person == "1s" else "")


def give_count(r: random.Random) -> Pair:
    """Please give me two bottles of water. <-> 물 두 병 주세요. / Please give me three
    tickets. <-> 표 세 장 주세요."""
    keys = Keys()
    k_please = keys()
    noun = pick(r, _GIVE)
    nums_en, nums_ko, k = counted(r, noun, keys, draw_n(r, 20))
    en = [("please", k_please), ("give", k_please), ("me", k_please)] + nums_en
    return finish(en, [(noun.ko, k)] + nums_ko + [("주세요", k_please)], ".")


MAKERS: tuple = (
    (0.16, "num_have", have_count),
    (0.14, "num_there_are", there_are),
    (0.16, "num_object", object_count),
    (0.06, "num_give", give_count),
) + numbers_time.MAKERS

DESCRIPTIONS: dict[str, tuple[str, str]] = {
    "num_have": ("Having a number of things: noun + 이/가, native number + counter, 있어요; "
                 "How many ...? asks with 몇 + counter.",
                 "개수 말하기: 명사 + 이/가, 고유어 수 + 단위 명사(권, 개, 마리), 있어요. "
                 "'How many ...?'는 몇 + 단위 명사로 물어요."),
    "num_there_are": ("There are N ... in a place: place + 에, noun + 이/가, number + counter "
                      "(명, 마리), 있어요.",
                      "장소에 있는 수: 장소 + 에, 명사 + 이/가, 수 + 단위 명사(명, 마리), 있어요."),
    "num_object": ("Counting an object: noun + 을/를, number + counter, then the verb "
                   "(사과를 세 개 샀어요).",
                   "목적어 세기: 명사 + 을/를, 수 + 단위 명사, 동사 (사과를 세 개 샀어요)."),
    "num_give": ("Asking for a number of things: noun, number + counter, 주세요 "
                 "(물 두 병 주세요).",
                 "수량 부탁하기: 명사, 수 + 단위 명사, 주세요 (물 두 병 주세요)."),
} | numbers_time.DESCRIPTIONS
