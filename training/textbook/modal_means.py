"""Textbook area modal, second part: means, company and range.

(으)로 for a language as the means (I write the letter in Korean. <-> 저는 한국어로 편지를 써요.;
"by bus" <-> 버스로 and "with a pen" <-> 펜으로 are the original grammar's), 하고 and (이)랑
for company as one-way Korean -> English variants of the original grammar's 와/과 (친구하고 /
친구랑 -> with a friend, which stays 친구와 the other way), and ranges: 에서 ... 까지 for places
(I go from Seoul to Busan by train. <-> 저는 서울에서 부산까지 기차로 가요.) and 부터 ... 까지
for times (I work from Monday to Friday. <-> 저는 월요일부터 금요일까지 일해요.).
"""

from __future__ import annotations

import dataclasses
import random

from ..everyday import FORM_VERBS, PLACES_AT, Phrase, pick, subject, the_np
from ..grammar import verb_clause  # the original clause builder, so the English is its own
from ..hangul import has_batchim, particle, pred_words
from ..lexicon import NOUNS, VEHICLES, VERBS, read_pairs
from ..render import Keys, Pair, Reject, finish, pred_keys, render_verb
from ..words import en_number, native

CITIES = [n for n in NOUNS if "proper" in n.tags and "place" in n.tags]
LANGUAGES = [n for n in NOUNS if "speak" in n.tags]
DAYS = read_pairs("days")  # Monday 월요일 ... in the week's order
# verbs said of a stretch of time (work from nine o'clock to six o'clock)
_RANGE = ("work", "study", "rest", "exercise", "sleep", "practice", "travel", "shop", "swim",
          "camp", "hike")
RANGE_VERBS = [v for v in FORM_VERBS if v.en in _RANGE]
# verbs that take a language as their means (write in English, talk in Korean)
_IN_LANG = ("write", "talk", "send")
LANG_VERBS = [v for v in FORM_VERBS if v.en in _IN_LANG]
# only what is written in a language: the letter, not the bouquet
WRITTEN = [n for n in NOUNS if "write" in n.tags]
BUILDINGS = [n for n in PLACES_AT if n.tags & {"p_bld", "p_city"}]
# the means of transport a textbook goes by (버스로, 기차로), not "by elevator"
RIDES = [n for n in VEHICLES if n.en in (
    "bus", "train", "taxi", "subway", "plane", "ship", "car", "bicycle", "motorcycle", "boat",
    "express bus", "KTX")]
GO = next(v for v in VERBS if v.en == "go" and v.ko == "가다")
COMPANY_VERBS = [v for v in VERBS if v.comps and v.pron_subj]


def emit(r: random.Random, en: list, subj: Phrase | None, ko: list, question: bool,
         front: tuple | list = ()) -> Pair:
    """The pair, with the textbook's subject conventions: a question to "you" has no Korean
    subject; a statement about "I" keeps 저는, or (one time in three) drops it one-way. The
    dropped "you" / "I" aligns to the last Korean word (해요, 있어요, 가요)."""
    punct = "?" if question else "."
    front = list(front)  # time words lead: 오늘 저는 ...
    if subj is None:
        return finish(en, front + ko, punct)
    # a dropped subject aligns to the final predicate word, which carries the person
    dropped = [(w, ko[-1][1] if k == subj.key else k) for w, k in en]
    if question and subj.person == "2":
        return finish(dropped, front + ko, punct)
    if not question and subj.person == "1s" and r.random() < 0.33:
        return dataclasses.replace(finish(dropped, front + ko, punct), to="en")
    return finish(en, front + subj.ko_with("topic") + ko, punct)


def _conj(word: str, kind: str) -> str:
    """친구하고 / 친구랑, 선생님이랑 (company particles other than 와/과)."""
    if kind == "hago":
        return word + "하고"
    return word + ("이랑" if has_batchim(word) else "랑")


def _place_en(noun, k: int, prep: str) -> list:
    if noun.en == "house":
        return [(prep, k), ("home", k)]
    art = [("the", None)] if noun.article and not noun.bare else []
    return [(prep, k)] + art + [(w, k) for w in noun.toks]


def means_language(r: random.Random) -> Pair:
    """I write the letter in Korean. <-> 저는 한국어로 편지를 써요. / She talks in English. <->
    그녀는 영어로 이야기해요."""
    if not LANG_VERBS or not LANGUAGES:
        raise Reject
    keys = Keys()
    v = pick(r, LANG_VERBS)
    s = subject(r, keys)
    lang = pick(r, LANGUAGES)
    en_o: list = []
    ko_o: list = []
    if v.en != "talk":
        nouns = [n for n in v.obj_nouns if n in WRITTEN]
        if not nouns:
            raise Reject
        np = the_np(pick(r, nouns), keys)
        en_o, ko_o = np.en, np.ko_with("object")
    past = r.random() < 0.3
    k_l = keys()
    pred, k_main, _, k_tense = pred_keys(pred_words(v.ko, "past" if past else "present", False,
                                                    "final"), False, keys)
    form = v.past if past else v.s3 if s.person == "3s" else v.base
    if past and v.past == v.base:
        raise Reject
    en = s.en + [(form, (k_main, k_tense) if k_main != k_tense else k_main)]
    en += [(w, k_main) for w in v.part] + en_o + [("in", k_l), (lang.en, k_l)]
    return emit(r, en, s, [(particle(lang.ko, "instrument"), k_l)] + ko_o + pred, False)


def direction(r: random.Random) -> Pair:
    """저는 공원으로 가요. -> I go to the park. / 집으로 갔어요. -> I went home. (one-way: the
    direction (으)로 reads like 에, which stays the translation of "to" the other way)."""
    keys = Keys()
    s = subject(r, keys)
    place = pick(r, CITIES + BUILDINGS + [n for n in PLACES_AT if n.en == "house"])
    k = keys()
    tense = "past" if r.random() < 0.3 else "present"
    pred, k_main, _, k_tense = pred_keys(pred_words(GO.ko, tense, False, "final"), False, keys)
    form = GO.past if tense == "past" else GO.s3 if s.person == "3s" else GO.base
    en = s.en + [(form, (k_main, k_tense) if k_main != k_tense else k_main)]
    en += [("home", k)] if place.en == "house" else _place_en(place, k, "to")
    pair = emit(r, en, s, [(particle(place.ko, "direction"), k)] + pred, False)
    return dataclasses.replace(pair, to="en")


def company(r: random.Random) -> Pair:
    """친구하고 같이 ... / 친구랑 ... -> with a friend (one-way; the other way is 친구와)."""
    c = verb_clause(r, COMPANY_VERBS, transitive=None)
    noun = pick(r, c.verb.comps)
    if c.subj.noun is noun or c.manner == "together":
        raise Reject  # no "the friend ... with a friend", no "together with a friend"
    c.adjunct = ("with", noun, False)
    keys = Keys()
    en, ko, _ = render_verb(c, "decl", keys)
    target = particle(noun.ko, "with")
    kind = "hago" if r.random() < 0.55 else "rang"
    ko = [(_conj(noun.ko, kind) if w == target else w, k) for w, k in ko]
    return dataclasses.replace(finish(en, ko, "."), to="en")


# verbs a textbook lists two things with (I bought bread and milk.)
_AND = ("eat", "drink", "buy", "make", "cook", "read", "sell", "order", "bring", "wash",
        "teach", "learn", "study", "prepare", "choose")
AND_VERBS = [v for v in FORM_VERBS if len(v.obj_nouns) > 1 and v.en in _AND]


def _kind(noun) -> str:
    """The sort of thing a noun is, so that two joined nouns go together (bread and milk, not
    lemonade and the shoe)."""
    for kind, tags in (("food", {"food", "drink"}), ("read", {"read"}), ("lang", {"lang"}),
                       ("clothes", {"clothes"}), ("person", {"person"}),
                       ("animal", {"animal"})):
        if noun.tags & tags:
            return kind
    return "thing"


def coordination(r: random.Random) -> Pair:
    """I buy the apple and the banana. <-> 저는 사과와 바나나를 사요. (both ways); 사과하고 /
    사과랑 바나나를 사요 read the same English (one-way)."""
    keys = Keys()
    s = subject(r, keys)
    v = pick(r, AND_VERBS)
    a, b = pick(r, v.obj_nouns), pick(r, v.obj_nouns)
    if a is b or a.toks == b.toks or _kind(a) != _kind(b):
        raise Reject
    np_a, np_b = the_np(a, keys), the_np(b, keys)
    k_and = np_a.key  # "and" <-> the word carrying 와/과 (사과와), as -고 carries "and"
    past = r.random() < 0.3
    if past and v.past == v.base:
        raise Reject
    pred, k_main, _, k_tense = pred_keys(pred_words(v.ko, "past" if past else "present", False,
                                                    "final"), False, keys)
    form = v.past if past else v.s3 if s.person == "3s" else v.base
    en = s.en + [(form, (k_main, k_tense) if k_main != k_tense else k_main)]
    en += [(w, k_main) for w in v.part] + np_a.en + [("and", k_and)] + np_b.en
    x = r.random()
    kind = "with" if x < 0.6 else "hago" if x < 0.8 else "rang"
    word = particle(a.ko, "with") if kind == "with" else _conj(a.ko, kind)
    pair = emit(r, en, s, [(word, np_a.key)] + np_b.ko_with("object") + pred, False)
    return pair if kind == "with" else dataclasses.replace(pair, to="en")


def range_place(r: random.Random) -> Pair:
    """I go from Seoul to Busan by train. <-> 저는 서울에서 부산까지 기차로 가요. / He went from
    home to the park. <-> 그는 집에서 공원까지 갔어요."""
    keys = Keys()
    s = subject(r, keys)
    places = CITIES if r.random() < 0.5 else BUILDINGS
    a, b = pick(r, places), pick(r, places)
    if a is b or b.en == "house":
        raise Reject
    ka, kb = keys(), keys()
    tense = "past" if r.random() < 0.3 else "present"
    pred, k_main, _, k_tense = pred_keys(pred_words(GO.ko, tense, False, "final"), False, keys)
    form = GO.past if tense == "past" else GO.s3 if s.person == "3s" else GO.base
    en_by: list = []
    ko_by: list = []
    if RIDES and r.random() < 0.5:
        veh = pick(r, RIDES)
        kv = keys()
        en_by = [("by", kv)] + [(w, kv) for w in veh.toks]
        ko_by = [(particle(veh.ko, "instrument"), kv)]
    en = s.en + [(form, (k_main, k_tense) if k_main != k_tense else k_main)]
    en += _place_en(a, ka, "from") + _place_en(b, kb, "to") + en_by
    return emit(r, en, s, [(a.ko + "에서", ka), (b.ko + "까지", kb)] + ko_by + pred, False)


def _moment(r: random.Random, hours: bool, after: int = 0) -> tuple[list, list, int]:
    """(English words, Korean words, index) of a day or an hour later than `after`: Monday /
    월요일, nine o'clock / 아홉 시 (a range runs forward: from nine to five is left out)."""
    if hours:
        h = after + 1 + int(r.random() * (12 - after))
        return [en_number(h), "o'clock"], [native(h), "시"], h
    i = after + int(r.random() * (len(DAYS) - after))
    en, ko = DAYS[i]
    return [en], [ko], i + 1


def range_time(r: random.Random) -> Pair:
    """I work from Monday to Friday. <-> 저는 월요일부터 금요일까지 일해요. / She studies from
    nine o'clock. <-> 그녀는 아홉 시부터 공부해요."""
    if not RANGE_VERBS:
        raise Reject
    keys = Keys()
    s = subject(r, keys)
    v = pick(r, RANGE_VERBS)
    hours = r.random() < 0.5
    a_en, a_ko, i = _moment(r, hours)
    both = r.random() < 0.75
    if both and i == (12 if hours else len(DAYS)):
        raise Reject  # nothing after Sunday or twelve o'clock
    b_en, b_ko, _ = _moment(r, hours, i) if both else ([], [], 0)
    if a_en == b_en:
        raise Reject
    ka, kb = keys(), keys()
    tense = "past" if r.random() < 0.25 else "present"
    pred, k_main, _, k_tense = pred_keys(pred_words(v.ko, tense, False, "final"), False, keys)
    if tense == "past" and v.past == v.base:
        raise Reject
    form = v.past if tense == "past" else v.s3 if s.person == "3s" else v.base
    en = s.en + [(form, (k_main, k_tense) if k_main != k_tense else k_main)]
    en += [(w, k_main) for w in v.part]
    en += [("from", ka)] + [(w, ka) for w in a_en]
    ko_t = [(w, ka) for w in a_ko[:-1]] + [(a_ko[-1] + "부터", ka)]
    if both:
        en += [("to", kb)] + [(w, kb) for w in b_en]
        ko_t += [(w, kb) for w in b_ko[:-1]] + [(b_ko[-1] + "까지", kb)]
    return emit(r, en, s, ko_t + pred, False)


MAKERS = (
    (0.08, "means_language", means_language),
    (0.08, "company_hago_rang", company),
    (0.04, "means_direction", direction),
    (0.07, "noun_and", coordination),
    (0.08, "range_place", range_place),
    (0.10, "range_time", range_time),
)

DESCRIPTIONS = {
    "means_language": (
        "Means: in + language <-> language + (으)로 (한국어로, 영어로)",
        "수단: 언어 + (으)로 (in Korean, in English)"),
    "means_direction": (
        "Direction: place + (으)로 가요 -> go to + place (Korean to English; English gives 에)",
        "방향: 장소 + (으)로 가요 -> go to (영어에서 한국어로는 에)"),
    "company_hago_rang": (
        "Company: noun + 하고 / (이)랑 <-> with + noun (Korean to English; English gives 와/과)",
        "동반: 명사 + 하고 / (이)랑 -> with (영어에서 한국어로는 와/과)"),
    "noun_and": (
        "Nouns joined: A and B <-> A와/과 B (A하고 / A(이)랑 B read the same way)",
        "명사 나열: A와/과 B, A하고 B, A(이)랑 B (A and B)"),
    "range_place": (
        "Range of places: from A to B <-> A에서 B까지",
        "장소의 범위: A에서 B까지 (from A to B)"),
    "range_time": (
        "Range of times: from A (to B) <-> A부터 (B까지)",
        "시간의 범위: A부터 B까지 (from A to B)"),
}
