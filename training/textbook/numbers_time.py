"""Numbers chapter, part two: clock minutes (세 시 이십 분), durations (두 시간 동안), dates
(삼월 오일), days of the week (무슨 요일), ages past 39 (일흔다섯 살) and prices of things
(커피는 사천오백 원이에요). Hours and ages are native, minutes, won and dates Sino-Korean;
half past stays with everyday_wh.clock (두 시 반), so 30 minutes is never said 삼십 분 there.
"""

from __future__ import annotations

import random

from ..everyday import FORM_VERBS, KIN, POSSESSIVES, agree_do, pick, subject, vp
from ..everyday_wh import EVENTS, MONTHS, PRICED, sino
from ..hangul import particle, pred_words
from ..lexicon import NOUNS, VERBS
from ..render import Keys, Pair, Reject, finish, pred_keys
from ..words import copula
from .numbers_words import UNCOUNTED, drop_subject, en_num, en_ordinal, native, plural_only

_MINUTES = (10, 15, 20, 25, 35, 40, 45, 50, 55)
# a day's routine at a clock time, and activities asked about by day of the week
_ROUTINE = [v for v in FORM_VERBS if v.en in (
    "get up", "wake up", "sleep", "go", "come", "come back", "leave", "study", "exercise", "work",
    "rest", "cook", "eat", "eat out", "jog", "take a shower", "take a walk", "commute",
    "do the dishes", "do the laundry", "shop", "read")]
_ACTIVITY = [v for v in FORM_VERBS if v.en in (
    "study", "learn", "practice", "exercise", "work", "go", "come", "meet", "cook", "clean",
    "shop", "jog", "hike", "volunteer", "dance", "do the laundry", "do the dishes", "visit",
    "teach", "review", "bake", "take a walk", "eat out", "work overtime", "read", "write")]
_LASTING = [v for v in VERBS if v.ko in ("자다", "공부하다", "쉬다", "일하다", "수영하다",
                                         "운동하다", "걷다", "기다리다")]
_DAYS_IN = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
_WHEN = ((("today",), "오늘", "is"), (("tomorrow",), "내일", "is"),
         (("yesterday",), "어제", "was"))
_PRICED = [n for n in PRICED if n.en not in UNCOUNTED and not plural_only(n)]
_ELDERS = [n for n in KIN if "kid" not in n.tags and n.en not in ("son", "daughter")] + [
    n for n in NOUNS if n.en in ("teacher",)]


def _drop(r: random.Random, p: Pair, person: str) -> Pair:
    """Pro-drop a third of the 1st-person statements (one-way, Korean -> English)."""
    return drop_subject(p) if person == "1s" and r.random() < 0.3 else p


def minutes(r: random.Random) -> Pair:
    """It is three twenty. <-> 세 시 이십 분이에요. / I get up at six forty. <-> 저는 여섯 시
    사십 분에 일어나요. / What time do you get up? <-> 당신은 몇 시에 일어나요?"""
    keys = Keys()
    k_t, k_h, k_m, k_min = keys(), keys(), keys(), keys()
    hour, mins = 1 + int(r.random() * 12), pick(r, _MINUTES)
    # hour <-> 세 시, minutes <-> 이십 분; "is" / "at" <-> the word carrying 이에요 / 에
    ko_t = [(native(hour), k_h), ("시", k_h), (sino(mins), k_m)]
    x = r.random()
    if x < 0.35:
        en = [("it", None), ("is", k_min), (en_num(hour), k_h), (en_num(mins), (k_m, k_min))]
        return finish(en, ko_t + [("분이에요", k_min)], ".")
    question = x > 0.8
    s = subject(r, keys, question=question)
    v = pick(r, _ROUTINE)
    pred, k_main, _, k_tense = pred_keys(pred_words(v.ko, "present", False, "final"), False,
                                          keys)
    part = [(w, k_main) for w in v.part]
    if question:
        en = [("what", k_t), ("time", k_t), (agree_do(s.person, "present"), k_tense)] + s.en
        en += [(v.base, k_main)] + part
        p = finish(en, s.ko_with("topic") + [("몇", k_t), ("시에", k_t)] + pred, "?")
        return drop_subject(p) if s.en == [("you", s.key)] and r.random() < 0.3 else p
    form = v.s3 if s.person == "3s" else v.base
    en = s.en + [(form, (k_main, k_tense) if k_main != k_tense else k_main)] + part
    en += [("at", k_min), (en_num(hour), k_h), (en_num(mins), (k_m, k_min))]
    ko = s.ko_with("topic") + ko_t + [("분에", k_min)] + pred
    return _drop(r, finish(en, ko, "."), s.person)


def duration(r: random.Random) -> Pair:
    """I slept for eight hours. <-> 저는 여덟 시간 동안 잤어요. / We waited for forty minutes.
    <-> 우리는 사십 분 동안 기다렸어요."""
    keys = Keys()
    s = subject(r, keys)
    v = pick(r, _LASTING)
    tense = "past" if r.random() < 0.7 else "present"
    pred, k_main, _, k_tense = pred_keys(pred_words(v.ko, tense, False, "final"), False, keys)
    k_for, k_n, k_u = keys(), keys(), keys()
    if r.random() < 0.6:
        n = 1 + int(r.random() * 10)
        en_n = [(en_num(n), k_n), ("hour" if n == 1 else "hours", k_u)]
        ko_n = [(native(n), k_n), ("시간", k_u)]
    else:
        n = 10 * (1 + int(r.random() * 5))
        en_n = [(en_num(n), k_n), ("minutes", k_u)]
        ko_n = [(sino(n), k_n), ("분", k_u)]
    form = v.past if tense == "past" else (v.s3 if s.person == "3s" else v.base)
    en = s.en + [(form, (k_main, k_tense) if k_main != k_tense else k_main),
                 ("for", k_for)] + en_n
    ko = s.ko_with("topic") + ko_n + [("동안", k_for)] + pred
    return _drop(r, finish(en, ko, "."), s.person)


def _date(r: random.Random, keys: Keys) -> tuple[list, str, int, str, int]:
    """(English month + ordinal tokens, Korean day word before its copula, the key)."""
    m = int(r.random() * 12)
    d = 1 + int(r.random() * _DAYS_IN[m])
    en_m, ko_m = MONTHS[m]
    k_m, k_d = keys(), keys()
    return [(en_m, k_m), (en_ordinal(d), k_d)], ko_m, k_m, sino(d) + "일", k_d


def date(r: random.Random) -> Pair:
    """Today is March fifth. <-> 오늘은 삼월 오일이에요. / My birthday is on May third. <-> 제
    생일은 오월 삼일이에요. / What is the date today? <-> 오늘은 며칠이에요?"""
    keys = Keys()
    k_s, k_p = keys(), keys()
    x = r.random()
    if x < 0.15:
        (en_t,), ko_t, be = _WHEN[int(r.random() * 2)]
        en = [("what", k_p), ("is", k_p), ("the", None), ("date", k_p), (en_t, k_s)]
        return finish(en, [(particle(ko_t, "topic"), k_s), ("며칠이에요", k_p)], "?")
    en_d, ko_m, k_m, ko_d, k_d = _date(r, keys)
    if x < 0.55:
        (en_t,), ko_t, be = pick(r, _WHEN)
        tense = "past" if be == "was" else "present"
        return finish([(en_t, k_s), (be, k_d)] + en_d,
                      [(particle(ko_t, "topic"), k_s), (ko_m, k_m), (copula(ko_d, tense), k_d)],
                      ".")
    event, en_s, ko_s = _event_subject(r, keys, k_s)
    en = en_s + [("is", k_d), ("on", k_d)] + en_d
    return finish(en, ko_s + [(particle(event.ko, "topic"), k_s), (ko_m, k_m),
                              (copula(ko_d), k_d)], ".")


def _event_subject(r: random.Random, keys: Keys, k_s: int) -> tuple:
    """An event as a subject: (event, English tokens, Korean tokens before the event word):
    "my birthday" <-> 제 (생일), "the party" <-> (파티)."""
    event = pick(r, EVENTS)
    if event.en == "birthday":
        det_en, det_ko = pick(r, POSSESSIVES)
        kd = keys()
        return event, [(det_en, kd), ("birthday", k_s)], [(det_ko, kd)]
    return event, [("the", None)] + [(w, k_s) for w in event.toks], []


def weekday(r: random.Random) -> Pair:
    """What day is it today? <-> 오늘은 무슨 요일이에요? / What day is the party? <-> 파티는
    무슨 요일이에요? / What day do you study Korean? <-> 당신은 무슨 요일에 한국어를 공부해요?"""
    keys = Keys()
    k_wh, k_s, k_p = keys(), keys(), keys()
    x = r.random()
    if x < 0.3:
        (en_t,), ko_t, be = pick(r, _WHEN)
        ko_p = "요일이었어요" if be == "was" else "요일이에요"
        return finish([("what", k_wh), ("day", k_p), (be, k_p), ("it", None), (en_t, k_s)],
                      [(particle(ko_t, "topic"), k_s), ("무슨", k_wh), (ko_p, k_p)], "?")
    if x < 0.5:
        event, en_s, ko_s = _event_subject(r, keys, k_s)
        return finish([("what", k_wh), ("day", k_p), ("is", k_p)] + en_s,
                      ko_s + [(particle(event.ko, "topic"), k_s), ("무슨", k_wh),
                              ("요일이에요", k_p)], "?")
    # on which day someone does something: 무슨 요일에 + the verb phrase
    s = subject(r, keys, question=True)
    v = pick(r, _ACTIVITY)
    en_o, ko_o = vp(r, v, keys, "the")
    pred, k_main, _, k_tense = pred_keys(pred_words(v.ko, "present", False, "final"), False,
                                          keys)
    en = [("what", k_wh), ("day", k_p), (agree_do(s.person, "present"), k_tense)] + s.en
    en += [(v.base, k_main)] + [(w, k_main) for w in v.part] + en_o
    p = finish(en, s.ko_with("topic") + [("무슨", k_wh), ("요일에", k_p)] + ko_o + pred, "?")
    return drop_subject(p) if s.en == [("you", s.key)] and r.random() < 0.3 else p


def age_big(r: random.Random) -> Pair:
    """My grandfather is seventy-five years old. <-> 제 할아버지는 일흔다섯 살이에요."""
    keys = Keys()
    noun = pick(r, _ELDERS)
    det_en, det_ko = pick(r, POSSESSIVES)
    kd, k, k_n, k_a = keys(), keys(), keys(), keys()
    n = 40 + int(r.random() * 60)
    en = [(det_en, kd)] + [(w, k) for w in noun.toks] + [("is", k_a), (en_num(n), k_n),
                                                         ("years", k_a), ("old", k_a)]
    return finish(en, [(det_ko, kd), (particle(noun.ko, "topic"), k), (native(n), k_n),
                       ("살이에요", k_a)], ".")


def _won(r: random.Random) -> int:
    """A price: hundreds (500), thousands with hundreds (4,500) or tens of thousands (32,000)."""
    x = r.random()
    if x < 0.2:
        return 100 * (1 + int(r.random() * 9))
    if x < 0.75:
        return 500 * (2 + int(r.random() * 18))
    return 1000 * (10 + int(r.random() * 40))


def en_won(n: int) -> list[str]:
    """English words of a price below 100,000: 4500 -> four thousand five hundred."""
    th, h = divmod(n, 1000)
    out = [en_num(th), "thousand"] if th else []
    if h % 100:
        raise Reject
    return out + ([en_num(h // 100), "hundred"] if h else [])


def price_of(r: random.Random) -> Pair:
    """The coffee is four thousand five hundred won. <-> 커피는 사천오백 원이에요. / This book is
    fifteen thousand won. <-> 이 책은 만오천 원이에요. / How much is this book? <-> 이 책은
    얼마예요?"""
    keys = Keys()
    noun = pick(r, _PRICED)
    k, k_p, k_n = keys(), keys(), keys()
    if r.random() < 0.5 and noun.article:
        kd = keys()
        d_en, d_ko = ("this", "이") if r.random() < 0.5 else ("that", "그")
        en_s, ko_s = [(d_en, kd)] + [(w, k) for w in noun.toks], [(d_ko, kd)]
    else:
        en_s, ko_s = [("the", None)] + [(w, k) for w in noun.toks], []
    ko_s = ko_s + [(particle(noun.ko, "topic"), k)]
    if r.random() < 0.2:
        return finish([("how", k_p), ("much", k_p), ("is", k_p)] + en_s,
                      ko_s + [("얼마예요", k_p)], "?")
    n = _won(r)
    en = en_s + [("is", k_p)] + [(w, k_n) for w in en_won(n)] + [("won", k_p)]
    return finish(en, ko_s + [(sino(n), k_n), ("원이에요", k_p)], ".")


_INDOORS = [n for n in NOUNS if n.en in (
    "office", "classroom", "restaurant", "cafe", "bookstore", "pharmacy", "bathroom", "library",
    "gym", "hair salon", "convenience store", "dental clinic", "karaoke room", "coffee shop",
    "cafeteria", "clothing store", "shoe store", "bakery")]


def floor(r: random.Random) -> Pair:
    """The office is on the third floor. <-> 사무실이 삼 층에 있어요. / What floor is the
    bookstore on? <-> 서점이 몇 층에 있어요? (places take 이/가 as in everyday.exist_sentence)"""
    keys = Keys()
    place = pick(r, _INDOORS)
    k, k_f, k_pred = keys(), keys(), keys()
    en_s = [("the", None)] + [(w, k) for w in place.toks]
    ko_s = [(particle(place.ko, "subject"), k)]
    if r.random() < 0.25:
        en = [("what", k_f), ("floor", k_f), ("is", k_pred)] + en_s + [("on", k_f)]
        return finish(en, ko_s + [("몇", k_f), ("층에", k_f), ("있어요", k_pred)], "?")
    n = 1 + int(r.random() * 15)
    en = en_s + [("is", k_pred), ("on", k_f), ("the", None), (en_ordinal(n), k_f),
                 ("floor", k_f)]
    return finish(en, ko_s + [(sino(n), k_f), ("층에", k_f), ("있어요", k_pred)], ".")


MAKERS: tuple = (
    (0.03, "num_floor", floor),
    (0.12, "num_minutes", minutes),
    (0.10, "num_duration", duration),
    (0.10, "num_date", date),
    (0.06, "num_weekday", weekday),
    (0.04, "num_age", age_big),
    (0.06, "num_price", price_of),
)

DESCRIPTIONS: dict[str, tuple[str, str]] = {
    "num_floor": ("Floors with Sino-Korean numbers + 층 (on the third floor <-> 삼 층에); "
                  "몇 층 asks which floor.",
                  "층: 한자어 수 + 층 (삼 층에 있어요). '몇 층'으로 물어요."),
    "num_minutes": ("Clock time with minutes: native hour + 시, Sino-Korean minutes + 분 "
                    "(세 시 이십 분); 몇 시에 asks what time.",
                    "분까지 말하는 시각: 고유어 수 + 시, 한자어 수 + 분 (세 시 이십 분). "
                    "'몇 시에'로 시간을 물어요."),
    "num_duration": ("How long: native number + 시간 or Sino-Korean number + 분, then 동안 "
                     "(for eight hours <-> 여덟 시간 동안).",
                     "기간: 고유어 수 + 시간, 한자어 수 + 분, 그리고 동안 (여덟 시간 동안)."),
    "num_date": ("Dates with Sino-Korean numbers: month + 월, day + 일 (삼월 오일); "
                 "며칠 asks the date.",
                 "날짜: 한자어 수 + 월, 한자어 수 + 일 (삼월 오일). '며칠'로 날짜를 물어요."),
    "num_weekday": ("Days of the week: 무슨 요일이에요? asks which day; 무슨 요일에 + verb asks "
                    "on which day.",
                    "요일: '무슨 요일이에요?'로 요일을 묻고, '무슨 요일에' + 동사로 어느 요일에 "
                    "하는지 물어요."),
    "num_age": ("Ages with native numbers up to 99 + 살 (일흔다섯 살).",
                "나이: 고유어 수(아흔아홉까지) + 살 (일흔다섯 살)."),
    "num_price": ("Prices with Sino-Korean numbers + 원: 백, 천, 만 (사천오백 원, 만오천 원).",
                  "가격: 한자어 수 + 원. 백, 천, 만 (사천오백 원, 만오천 원)."),
}
