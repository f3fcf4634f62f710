"""Textbook area: modal and aspect forms, plus (from modal_means.py) means, company and range.

Experience -아/어 본 적이 있어요/없어요 (I have eaten kimchi. / Have you ever been to Busan?),
obligation -아/어야 해요 (I have to study.), permission -아/어도 돼요 (May I sit here?), third
person wants -고 싶어 해요 (My sister wants to go to Japan.; first person wants stay with
everyday's -고 싶어요) and ability 잘해요 / 잘 못해요 (I am good at swimming. / I am not good at
cooking.; "can't" is 못 + verb, another area's).

Subjects as in the everyday grammar (pronoun, name, my/your + family noun); objects take "a" as
in everyday's "I want to ...". Statements about "I" keep 저는 in both directions, and their
subject-less Korean is a one-way pair (to="en") that reads "I"; questions ask "you" and drop
당신 both ways, as a textbook does. Permission statements are said to the listener (You may sit
here. <-> 여기 앉아도 돼요.) and permission questions ask for the speaker (May I ...?).
"""

from __future__ import annotations

import random

from ..everyday import (
    FORM_VERBS,
    KIN,
    PLACES_AT,
    Phrase,
    name_np,
    pick,
    possessed_np,
    pronoun_np,
    subject,
    vp,
)
from ..hangul import infinitive, lemma_stem, particle, pred_words
from ..lexicon import NOUNS, PRONOUNS, Verb
from ..render import Keys, Pair, Reject, finish
from ..words import agree_be, agree_do, agree_have
from . import modal_means
from .modal_means import emit

# English past participles that differ from the regular -ed past
_PARTICIPLES = {
    "eat": "eaten", "drink": "drunk", "write": "written", "drive": "driven", "swim": "swum",
    "sing": "sung", "make": "made", "buy": "bought", "read": "read", "meet": "met",
    "teach": "taught", "build": "built", "wear": "worn", "ride": "ridden", "bake": "baked",
    "draw": "drawn", "sell": "sold", "catch": "caught", "bring": "brought", "send": "sent",
    "fly": "flown", "speak": "spoken", "run": "run", "take": "taken", "see": "seen",
}
# verbs a textbook asks about having ever done (go is "been to")
_EXPERIENCE = ("eat", "drink", "read", "write", "make", "cook", "bake", "drive", "swim",
               "visit", "learn", "travel", "hike", "camp", "meet", "play", "wear", "buy",
               "sing", "dance", "ride", "draw", "teach")
_OBLIGATION = ("study", "work", "go", "read", "write", "clean", "wash", "buy", "make", "cook",
               "help", "wait for", "exercise", "rest", "get up", "practice", "prepare",
               "finish", "take a shower", "do the laundry", "do the dishes", "come back",
               "learn", "send", "bring", "sleep", "meet")
_PERMISSION = ("sit", "eat", "drink", "go", "read", "open", "close", "use", "turn on",
               "turn off", "borrow", "rest", "sleep", "come", "write", "wait for", "take a walk",
               "come back", "talk", "practice")
# ability: 잘해요 with a -하다 activity noun (English gerund or noun, Korean noun)
_ACTIVITIES = (("swimming", "수영"), ("cooking", "요리"), ("singing", "노래"),
               ("driving", "운전"))
ACTIVITIES = _ACTIVITIES + tuple((n.en, n.ko) for n in NOUNS
                                 if n.tags & {"sport", "lang"} and "mass" in n.tags)


def _verbs(bases: tuple[str, ...]) -> list[Verb]:
    return [v for v in FORM_VERBS if v.en in bases]


EXPERIENCE_VERBS = _verbs(_EXPERIENCE) + [v for v in FORM_VERBS if v.en == "go"]
OBLIGATION_VERBS = _verbs(_OBLIGATION)
PERMISSION_VERBS = _verbs(_PERMISSION)
WANT_VERBS = [v for v in FORM_VERBS]
CITIES = [n for n in NOUNS if "proper" in n.tags and "place" in n.tags]


def participle(v: Verb) -> str:
    """eaten, written, cooked; raises Reject for an irregular past without a known participle."""
    if v.base in _PARTICIPLES:
        return _PARTICIPLES[v.base]
    if v.past != v.base and v.past[-2:] != "ed":
        raise Reject
    return v.past


def third_person(r: random.Random, keys: Keys) -> Phrase:
    """he / she / they, a name, or my/your + family noun."""
    x = r.random()
    if x < 0.3:
        p = pick(r, [p for p in PRONOUNS if p.person in ("3s", "3p")])
        k = keys()
        return Phrase([(p.en, k)], [], p.ko, k, p.person)
    return name_np(r, keys) if x < 0.55 else possessed_np(r, keys, KIN)


def _asker(r: random.Random, keys: Keys, question: bool, first: bool = True) -> Phrase:
    """Statements: any subject; questions: mostly "you", sometimes a third person."""
    if question:
        if r.random() < 0.7:
            return pronoun_np(r, keys, question=True) if first else third_person(r, keys)
        subj = third_person(r, keys)
        if subj.en[0][0] == "my":
            raise Reject  # one asks about your / his family, not "Has my uncle ever ...?"
        return subj
    return subject(r, keys)


def _object(r: random.Random, v: Verb, keys: Keys, article: str = "a") -> tuple[list, list]:
    if v.motion and v.en == "go":
        place = pick(r, CITIES + PLACES_AT)
        if place.en == "house":
            raise Reject
        k = keys()
        art = [("the", None)] if place.article and not place.bare else []
        return [("to", k)] + art + [(w, k) for w in place.toks], [(place.ko + "에", k)]
    return vp(r, v, keys, article)


def experience(r: random.Random) -> Pair:
    """I have eaten kimchi. <-> 저는 김치를 먹어 본 적이 있어요. / I have never been to Busan.
    <-> 저는 부산에 가 본 적이 없어요. / Have you ever ridden a horse? <-> 말을 타 본 적이
    있어요?"""
    keys = Keys()
    v = pick(r, EXPERIENCE_VERBS)
    question = r.random() < 0.3
    neg = not question and r.random() < 0.35
    subj = _asker(r, keys, question)
    en_o, ko_o = _object(r, v, keys)
    if not en_o and (v.en == "go" or v.obj_nouns and not v.intr) or (
            not en_o and v.en in ("eat", "drink", "read", "write", "make", "buy", "wear")):
        raise Reject  # "Has he ever eaten?" asks about a thing: keep the object
    pp = "been" if v.en == "go" else participle(v)
    k_main, k_ever, k_have = keys(), keys(), keys()
    have = agree_have(subj.person, "present")
    ever: list = [("ever", k_ever)] if question else [("never", (k_ever, k_have))] if neg else []
    if not ever:  # "I have eaten": have carries 본 적이 too
        k_ever = k_have
    verb = [(pp, k_main)] + [(w, k_main) for w in v.part]
    if question:
        en = [(have, k_have)] + subj.en + ever + verb + en_o
    else:
        en = subj.en + [(have, k_have)] + ever + verb + en_o
    ko = ko_o + [(infinitive(v.ko), k_main), ("본", k_ever), ("적이", k_ever),
                 ("없어요" if neg else "있어요", k_have)]
    return emit(r, en, subj, ko, question)


def obligation(r: random.Random) -> Pair:
    """I have to study. <-> 저는 공부해야 해요. / He had to wait. <-> 그는 기다려야 했어요. /
    Do you have to work today? <-> 오늘 일해야 해요? / She does not have to go. <-> 그녀는 가지
    않아도 돼요."""
    keys = Keys()
    v = pick(r, OBLIGATION_VERBS)
    question = r.random() < 0.25
    past = r.random() < 0.25
    subj = _asker(r, keys, question)
    en_o, ko_o = _object(r, v, keys, "the")
    k_main, k_have = keys(), keys()
    verb = [("to", k_main), (v.base, k_main)] + [(w, k_main) for w in v.part]
    time_en: list = []
    time_ko: list = []
    if r.random() < 0.25:
        kt = keys()
        word = ("yesterday", "어제") if past else pick(r, [("today", "오늘"), ("tomorrow", "내일")])
        time_en, time_ko = [(word[0], kt)], [(word[1], kt)]
    if not question and not past and r.random() < 0.15:
        # no need: do not have to <-> -지 않아도 돼요
        k_not = keys()
        en = subj.en + [(agree_do(subj.person, "present"), k_not), ("not", k_not),
                        ("have", k_have)] + verb + en_o + time_en
        ko = ko_o + [(lemma_stem(v.ko) + "지", k_main), ("않아도", k_not), ("돼요", k_have)]
        return emit(r, en, subj, ko, question, front=time_ko)
    if question:
        en = [(agree_do(subj.person, "past" if past else "present"), k_have)] + subj.en
        en += [("have", k_have)] + verb + en_o + time_en
    else:
        en = subj.en + [("had" if past else agree_have(subj.person, "present"), k_have)]
        en += verb + en_o + time_en
    ko = ko_o + [(infinitive(v.ko) + "야", k_main), ("했어요" if past else "해요", k_have)]
    return emit(r, en, subj, ko, question, front=time_ko)


def permission(r: random.Random) -> Pair:
    """May I sit here? <-> 여기 앉아도 돼요? / You may go home now. <-> 지금 집에 가도 돼요. /
    May I open the window? <-> 창문을 열어도 돼요?"""
    keys = Keys()
    v = pick(r, PERMISSION_VERBS)
    question = r.random() < 0.6
    if v.motion:
        if r.random() < 0.6:
            k = keys()
            en_o, ko_o = [("home", k)], [("집에", k)]
        else:
            en_o, ko_o = [], []
    else:
        en_o, ko_o = vp(r, v, keys, "the")
    here_en: list = []
    here_ko: list = []
    if not v.motion and r.random() < 0.4:
        k = keys()
        here_en = [("here", k)]
        # 여기 앉아요 (where one sits), 여기에서 먹어요 (where something is done)
        here_ko = [("여기" if v.en in ("sit", "rest", "sleep") else "여기에서", k)]
    now_en: list = []
    now_ko: list = []
    if r.random() < 0.2:
        k = keys()
        now_en, now_ko = [("now", k)], [("지금", k)]
    k_main, k_may = keys(), keys()
    verb = [(v.base, k_main)] + [(w, k_main) for w in v.part]
    ko = now_ko + here_ko + ko_o + [(infinitive(v.ko) + "도", k_main), ("돼요", k_may)]
    if question:
        # the unsaid "I" / "you" aligns to 돼요, as a dropped subject does elsewhere
        en = [("may", k_may), ("I", k_may)] + verb + en_o + here_en + now_en
        return finish(en, ko, "?")
    if r.random() < 0.7:
        en = [("you", k_may), ("may", k_may)] + verb + en_o + here_en + now_en
        return finish(en, ko, ".")
    subj = third_person(r, keys)
    en = subj.en + [("may", k_may)] + verb + en_o + here_en + now_en
    return finish(en, now_ko + subj.ko_with("topic") + ko[len(now_ko):], ".")


def want_third(r: random.Random) -> Pair:
    """My sister wants to go to Japan. <-> 제 여동생은 일본에 가고 싶어 해요. / He does not want
    to eat the fish. <-> 그는 생선을 먹고 싶어 하지 않아요."""
    keys = Keys()
    v = pick(r, WANT_VERBS)
    question = r.random() < 0.2
    neg = not question and r.random() < 0.25
    past = r.random() < 0.2
    tense = "past" if past else "present"
    subj = third_person(r, keys)
    en_o, ko_o = vp(r, v, keys, "a")
    k_main, k_want, k_aux = keys(), keys(), keys()
    ko_v = [(lemma_stem(v.ko) + "고", k_main), ("싶어", k_want)]
    ko_v += [(w, k_aux) for w in pred_words("하다", tense, neg, "final")]
    if neg or question:
        head = [(agree_do(subj.person, tense), k_aux)] + ([("not", k_aux)] if neg else [])
        head += [("want", (k_want, k_aux))]
    else:
        form = "wanted" if past else "want" if subj.person == "3p" else "wants"
        head = [(form, (k_want, k_aux))]
    en = subj.en + head + [("to", k_main), (v.base, k_main)] + [(w, k_main) for w in v.part]
    en += en_o
    if question:
        en = [en[len(subj.en)]] + en[:len(subj.en)] + en[len(subj.en) + 1:]
    return finish(en, subj.ko_with("topic") + ko_o + ko_v, "?" if question else ".")


def ability(r: random.Random) -> Pair:
    """I am good at swimming. <-> 저는 수영을 잘해요. / My brother is not good at cooking. <->
    제 남동생은 요리를 잘 못해요. / Are you good at soccer? <-> 축구를 잘해요?"""
    keys = Keys()
    en_act, ko_act = pick(r, ACTIVITIES)
    question = r.random() < 0.25
    neg = not question and r.random() < 0.4
    past = not question and r.random() < 0.1
    subj = _asker(r, keys, question)
    k_act, k_good, k_be = keys(), keys(), keys()
    ko_o = [(particle(ko_act, "object"), k_act)]
    be = agree_be(subj.person, "past" if past else "present")
    tail = "했어요" if past else "해요"
    if neg:
        ko_v = [("잘", k_good), ("못" + tail, (k_be))]
        head = [(be, k_be), ("not", k_be), ("good", k_good)]
    else:
        ko_v = [("잘" + tail, k_good)]
        k_be = k_good
        head = [(be, k_be), ("good", k_good)]
    act = [("at", k_act)] + [(w, k_act) for w in en_act.split()]
    en = ([head[0]] + subj.en + head[1:] if question else subj.en + head) + act
    return emit(r, en, subj, ko_o + ko_v, question)


MAKERS = (
    (0.16, "modal_experience", experience),
    (0.16, "modal_obligation", obligation),
    (0.14, "modal_permission", permission),
    (0.12, "modal_want_third", want_third),
    (0.12, "modal_ability", ability),
) + modal_means.MAKERS

DESCRIPTIONS = {
    "modal_experience": (
        "Experience: have (ever / never) + past participle <-> -아/어 본 적이 있어요 / 없어요",
        "경험: -아/어 본 적이 있어요 / 없어요 (have ever, never + 과거분사)"),
    "modal_obligation": (
        "Obligation: have to / had to + verb <-> -아/어야 해요 / 했어요; do not have to <-> "
        "-지 않아도 돼요",
        "의무: -아/어야 해요 / 했어요 (have to, had to); 불필요: -지 않아도 돼요 (do not have to)"),
    "modal_permission": (
        "Permission: May I ...? / You may ... <-> -아/어도 돼요(?)",
        "허락: -아/어도 돼요 (May I ...? / You may ...)"),
    "modal_want_third": (
        "Third-person wants: he wants to ... <-> -고 싶어 해요",
        "3인칭의 희망: -고 싶어 해요 (he/she wants to ...)"),
    "modal_ability": (
        "Ability: be (not) good at ... <-> 잘해요 / 잘 못해요",
        "능력: 잘해요 / 잘 못해요 (be good at, not good at)"),
} | modal_means.DESCRIPTIONS
