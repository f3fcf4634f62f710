"""Everyday wh-questions, clock time, prices, ages, dates, weather and set phrases.

뭐/무엇 (이것은 뭐예요?), 어디 (은행이 어디에 있어요? is in everyday.py), 언제 (생일은
언제예요?), 누구 (그는 누구예요?), 왜 (왜 피곤해요?), 몇 시 (지금 몇 시예요?), 얼마 (이거
얼마예요?), 몇 살; numbers: native before counters and hours (세 시, 스무 살), Sino-Korean for
minutes, prices and months (삼십 분, 오천 원, 오월).
"""

from __future__ import annotations

import random

from .everyday import (
    FORM_VERBS,
    KIN,
    NAMES,
    POSSESSIVES,
    agree_be,
    agree_do,
    copula,
    en_number,
    native,
    pick,
    pronoun_np,
    subject,
    topic_ko,
    vp,
)
from .hangul import particle, pred_words
from .lexicon import ADJECTIVES, NOUNS, WEATHER_STATES, read_pairs, read_table
from .render import Keys, Pair, Reject, adj_pred, finish, pred_keys
from .words import NUMBERS

DAYS = read_pairs("days")
MONTHS = read_pairs("months")
EVENTS = [n for n in NOUNS if n.en in ("birthday", "party", "concert", "exam", "meeting", "class")]
PRICED = [n for n in NOUNS if n.tags & {"obj", "food", "drink", "read"} and "place" not in n.tags]
_STATE_ADJ = [a for a in ADJECTIVES if a.state and a.pred]
_WEATHER_TIME = [(("today",), ("오늘",)), (("yesterday",), ("어제",)), (("tomorrow",), ("내일",))]


def sino(n: int) -> str:
    """Sino-Korean number: 3 -> 삼, 30 -> 삼십, 5000 -> 오천."""
    if n in NUMBERS and n < 11:
        return NUMBERS[n][2]
    out = ""
    for unit, word in ((10_000, "만"), (1000, "천"), (100, "백"), (10, "십")):
        q, n = divmod(n, unit)
        if q:
            out += ("" if q == 1 else NUMBERS[q][2]) + word
    return out + (NUMBERS[n][2] if n else "")


def _en_big(n: int) -> list[str]:
    """English words for prices: 5000 -> five thousand, 500 -> five hundred."""
    for unit, word in ((1000, "thousand"), (100, "hundred")):
        if n % unit == 0 and n // unit < 100:
            return [en_number(n // unit), word]
    return [en_number(n)]


def what_is(r: random.Random) -> Pair:
    """What is this? <-> 이것은 뭐예요? / What is your name? <-> 당신의 이름은 뭐예요?"""
    keys = Keys()
    k_wh, k_s = keys(), keys()
    if r.random() < 0.5:
        en_d, ko_d = ("this", "이것") if r.random() < 0.5 else ("that", "그것")
        return finish([("what", k_wh), ("is", k_wh), (en_d, k_s)],
                       [(particle(ko_d, "topic"), k_s), ("뭐예요", k_wh)], "?")
    thing = pick(r, [n for n in NOUNS if n.en in ("name", "address", "phone number")])
    det_en, det_ko = pick(r, POSSESSIVES)
    kd = keys()
    en = [("what", k_wh), ("is", k_wh), (det_en, kd)] + [(w, k_s) for w in thing.toks]
    return finish(en, [(det_ko, kd), (particle(thing.ko, "topic"), k_s), ("뭐예요", k_wh)], "?")


def my_name(r: random.Random) -> Pair:
    """My name is Minsu. <-> 제 이름은 민수예요."""
    keys = Keys()
    det_en, det_ko = pick(r, POSSESSIVES[:4])
    kd, kn, kp = keys(), keys(), keys()
    en_name, ko_name = pick(r, NAMES)
    return finish([(det_en, kd), ("name", kn), ("is", kp), (en_name, kp)],
                   [(det_ko, kd), ("이름은", kn), (copula(ko_name), kp)], ".")


def when_is(r: random.Random) -> Pair:
    """When is your birthday? <-> 당신의 생일은 언제예요? / The party is on Friday. <-> 파티는
    금요일이에요. / My birthday is in May. <-> 제 생일은 오월이에요."""
    keys = Keys()
    event = pick(r, EVENTS)
    k_e, k_p = keys(), keys()
    if event.en == "birthday":
        det_en, det_ko = pick(r, POSSESSIVES)
        kd = keys()
        en_s, ko_s = [(det_en, kd), ("birthday", k_e)], [(det_ko, kd)]
    else:
        en_s, ko_s = [("the", None)] + [(w, k_e) for w in event.toks], []
    ko_s = ko_s + [(particle(event.ko, "topic"), k_e)]
    if r.random() < 0.4:
        return finish([("when", k_p), ("is", k_p)] + en_s, ko_s + [("언제예요", k_p)], "?")
    if event.en == "birthday" or r.random() < 0.3:
        en_m, ko_m = pick(r, MONTHS)
        return finish(en_s + [("is", k_p), ("in", k_p), (en_m, k_p)], ko_s + [
            (copula(ko_m), k_p)], ".")
    en_d, ko_d = pick(r, DAYS)
    return finish(en_s + [("is", k_p), ("on", k_p), (en_d, k_p)], ko_s + [(copula(ko_d), k_p)],
                   ".")


def who_is(r: random.Random) -> Pair:
    """Who is he? <-> 그는 누구예요? / Who is your teacher? <-> 당신의 선생님은 누구예요? /
    Who is that person? <-> 그 사람은 누구예요?"""
    keys = Keys()
    k_wh = keys()
    x = r.random()
    if x < 0.3:
        s = pronoun_np(r, keys)
        if s.person not in ("3s",):
            raise Reject
        en_s, ko_s = s.en, s.ko_with("topic")
    elif x < 0.7:
        noun = pick(r, [n for n in NOUNS if "job" in n.tags] + KIN)
        det_en, det_ko = pick(r, POSSESSIVES)
        kd, k = keys(), keys()
        en_s = [(det_en, kd)] + [(w, k) for w in noun.toks]
        ko_s = [(det_ko, kd), (particle(noun.ko, "topic"), k)]
    else:
        kd, k = keys(), keys()
        d_en, d_ko = ("this", "이") if r.random() < 0.5 else ("that", "그")
        en_s, ko_s = [(d_en, kd), ("person", k)], [(d_ko, kd), ("사람은", k)]
    return finish([("who", k_wh), ("is", k_wh)] + en_s, ko_s + [("누구예요", k_wh)], "?")


def why_question(r: random.Random) -> Pair:
    """Why are you tired? <-> 왜 피곤해요? / Why do you study Korean? <-> 왜 한국어를
    공부해요?"""
    keys = Keys()
    k_why = keys()
    s = subject(r, keys, question=True)
    tense = "past" if r.random() < 0.3 else "present"
    if r.random() < 0.4:
        adj = pick(r, _STATE_ADJ)
        pred, k_main, _, k_tense = adj_pred(adj.ko, tense, False, "final", keys)
        ko_s = topic_ko(s, True, k_tense)
        en = [("why", k_why), (agree_be(s.person, tense), k_tense)] + s.en + [(adj.en, k_main)]
        return finish(en, ko_s + [("왜", k_why)] + pred, "?")
    v = pick(r, FORM_VERBS)
    en_o, ko_o = vp(r, v, keys, "the")
    pred, k_main, _, k_tense = pred_keys(pred_words(v.ko, tense, False, "final"), False, keys)
    ko_s = topic_ko(s, True, k_tense)
    en = [("why", k_why), (agree_do(s.person, tense), k_tense)] + s.en + [(v.base, k_main)]
    en += [(w, k_main) for w in v.part] + en_o
    return finish(en, ko_s + [("왜", k_why)] + ko_o + pred, "?")


def clock(r: random.Random) -> Pair:
    """What time is it? <-> 몇 시예요? / It is three o'clock. <-> 세 시예요. / It is half past
    two. <-> 두 시 반이에요. / I get up at seven o'clock. <-> 저는 일곱 시에 일어나요."""
    keys = Keys()
    x = r.random()
    k_t = keys()
    if x < 0.15:
        if r.random() < 0.5:
            kn = keys()
            return finish([("what", k_t), ("time", k_t), ("is", k_t), ("it", None), ("now", kn)],
                           [("지금", kn), ("몇", k_t), ("시예요", k_t)], "?")
        return finish([("what", k_t), ("time", k_t), ("is", k_t), ("it", None)],
                       [("몇", k_t), ("시예요", k_t)], "?")
    hour = 1 + int(r.random() * 12)
    half = r.random() < 0.3
    if x < 0.55:
        if half:
            en = [("it", None), ("is", k_t), ("half", k_t), ("past", k_t),
                  (en_number(hour), k_t)]
            return finish(en, [(native(hour), k_t), ("시", k_t), ("반이에요", k_t)], ".")
        en = [("it", None), ("is", k_t), (en_number(hour), k_t), ("o'clock", k_t)]
        return finish(en, [(native(hour), k_t), ("시예요", k_t)], ".")
    # a daily routine at a time: I get up at seven o'clock.
    s = subject(r, keys)
    v = pick(r, [v for v in FORM_VERBS if not v.obj_nouns or v.intr])
    pred, k_main, _, k_tense = pred_keys(pred_words(v.ko, "present", False, "final"), False,
                                          keys)
    form = v.s3 if s.person == "3s" else v.base
    if half:
        en_t = [("at", k_t), ("half", k_t), ("past", k_t), (en_number(hour), k_t)]
        ko_t = [(native(hour), k_t), ("시", k_t), ("반에", k_t)]
    else:
        en_t = [("at", k_t), (en_number(hour), k_t), ("o'clock", k_t)]
        ko_t = [(native(hour), k_t), ("시에", k_t)]
    en = s.en + [(form, (k_main, k_tense) if k_main != k_tense else k_main)]
    en += [(w, k_main) for w in v.part] + en_t
    return finish(en, s.ko_with("topic") + ko_t + pred, ".")


def price(r: random.Random) -> Pair:
    """How much is this? <-> 이거 얼마예요? / How much is the coffee? <-> 커피는 얼마예요? /
    It is five thousand won. <-> 오천 원이에요."""
    keys = Keys()
    k_p = keys()
    x = r.random()
    if x < 0.2:
        k = keys()
        en_d, ko_d = ("this", "이거") if r.random() < 0.5 else ("that", "그거")
        return finish([("how", k_p), ("much", k_p), ("is", k_p), (en_d, k)],
                       [(ko_d, k), ("얼마예요", k_p)], "?")
    if x < 0.55:
        noun = pick(r, PRICED)
        k = keys()
        en = [("how", k_p), ("much", k_p), ("is", k_p), ("the", None)] + [(w, k) for w in noun.toks]
        return finish(en, [(particle(noun.ko, "topic"), k), ("얼마예요", k_p)], "?")
    if r.random() < 0.7:
        n = (1 + int(r.random() * 9)) * 1000
    elif r.random() < 0.5:
        n = (1 + int(r.random() * 9)) * 100
    else:
        n = (1 + int(r.random() * 3)) * 10_000
    words = ["ten", "thousand"] if n == 10_000 else (
        [en_number(n // 10_000 * 10), "thousand"] if n > 10_000 else _en_big(n))
    en = [("it", None), ("is", k_p)] + [(w, k_p) for w in words] + [("won", k_p)]
    return finish(en, [(sino(n), k_p), ("원이에요", k_p)], ".")


def age(r: random.Random) -> Pair:
    """How old are you? <-> 몇 살이에요? / I am twenty years old. <-> 저는 스무 살이에요."""
    keys = Keys()
    s = subject(r, keys, question=r.random() < 0.3)
    k_a = keys()
    if r.random() < 0.3:
        ko_s = topic_ko(s, True, k_a)
        en = [("how", k_a), ("old", k_a), (agree_be(s.person, "present"), k_a)] + s.en
        return finish(en, ko_s + [("몇", k_a), ("살이에요", k_a)], "?")
    if s.person not in ("1s", "3s"):
        raise Reject
    n = 1 + int(r.random() * 39)
    unit = "year" if n == 1 else "years"
    en = s.en + [(agree_be(s.person, "present"), k_a), (en_number(n), k_a), (unit, k_a),
                 ("old", k_a)]
    return finish(en, s.ko_with("topic") + [(native(n), k_a), ("살이에요", k_a)], ".")


def today_is(r: random.Random) -> Pair:
    """Today is Monday. <-> 오늘은 월요일이에요. / Tomorrow is Friday. <-> 내일은 금요일이에요."""
    keys = Keys()
    k_t, k_p = keys(), keys()
    en_t, ko_t = pick(r, _WEATHER_TIME)
    en_d, ko_d = pick(r, DAYS)
    be = "was" if en_t[0] == "yesterday" else "is"
    ko_p = ko_d + ("이었어요" if be == "was" else "이에요")
    return finish([(en_t[0], k_t), (be, k_p), (en_d, k_p)],
                   [(particle(ko_t[0], "topic"), k_t), (ko_p, k_p)], ".")


def weather_everyday(r: random.Random) -> Pair:
    """The weather is nice today. <-> 오늘 날씨가 좋아요. / How is the weather today? <->
    오늘 날씨가 어때요? / It is raining. <-> 비가 오고 있어요."""
    keys = Keys()
    k_w = keys()
    x = r.random()
    if x < 0.15:
        k = keys()
        noun, en_v = ("비", "raining") if r.random() < 0.6 else ("눈", "snowing")
        tense = "past" if r.random() < 0.3 else "present"
        en = [("it", None), (agree_be("3s", tense), k), (en_v, (k_w, k))]
        return finish(en, [(particle(noun, "subject"), k_w), ("오고", k_w),
                            ("있었어요" if tense == "past" else "있어요", k)], ".")
    time = pick(r, _WEATHER_TIME) if r.random() < 0.7 else None
    en_t: list = []
    ko_t: list = []
    if time is not None:
        kt = keys()
        en_t, ko_t = [(time[0][0], kt)], [(time[1][0], kt)]
    if x < 0.3:
        k = keys()
        tense = "past" if time is not None and time[0][0] == "yesterday" else "present"
        if time is not None and time[0][0] == "tomorrow":
            raise Reject
        be = agree_be("3s", tense)
        en = [("how", k), (be, k), ("the", None), ("weather", k_w)] + en_t
        return finish(en, ko_t + [("날씨가", k_w), ("어땠어요" if tense == "past" else "어때요",
                                                     k)], "?")
    tense = {"yesterday": "past", "tomorrow": "future"}.get(time[0][0], "present") if time \
        else "present"
    word, lemma = pick(r, WEATHER_STATES)
    neg = r.random() < 0.15
    pred, k_main, k_neg, k_tense = pred_keys(pred_words(lemma, tense, neg, "final"), neg, keys)
    if tense == "future":
        head = [("will", k_tense)] + ([("not", k_neg)] if neg else []) + [("be", k_main)]
    else:
        head = [(agree_be("3s", tense), k_tense)] + ([("not", k_neg)] if neg else [])
    en = [("the", None), ("weather", k_w)] + head + [(word, k_main)] + en_t
    return finish(en, ko_t + [("날씨가", k_w)] + pred, ".")


def _phrase_pairs() -> list[Pair]:
    out = []
    for row in read_table("phrases"):
        en, ko = row[0], row[1]
        n_en, n_ko = len(en.split()), len(ko.split())
        spec = row[2] if len(row) > 2 else ""
        if spec:
            align = tuple(sorted(tuple(int(x) for x in p.split("-")) for p in spec.split()))
        else:
            align = tuple((i, j) for i in range(n_en) for j in range(n_ko))
        out.append(Pair(en, ko, align))
    return out


PHRASES: list[Pair] = _phrase_pairs()


def phrase(r: random.Random) -> Pair:
    """One of the set phrases (안녕하세요. <-> Hello.)."""
    return pick(r, PHRASES)
