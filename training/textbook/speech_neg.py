"""Negation makers of the textbook's speech area: 안 / 못 + predicate, -지 못해요, "Don't ...",
"don't have" and "is there a ... near here?".

Conventions that keep the corpus a function in each direction (the old grammar already has
"does not" <-> -지 않아요, "cannot" <-> -(으)ㄹ 수 없어요, "Please do not" <-> -지 마세요 and
"does not have" <-> 없어요):

* English contractions mark the short forms: don't / doesn't / didn't / won't <-> 안 + verb
  (won't <-> 안 + -(으)ㄹ 거예요; "will not" stays -지 않을 거예요),
  isn't / aren't / wasn't / weren't / I'm not <-> 안 + adjective, can't / couldn't <-> 못 + verb;
  a noun + 하다 verb puts the adverb before 하다 (공부 안 해요, 수영 못 해요).
* Objects of 안 / 못 are generic: bare plurals or mass nouns ("I don't eat apples." <->
  "저는 사과를 안 먹어요."), unlike the old grammar's "the apple".
* -지 못해요 has no English of its own: it is a one-way pair (to="en") read as can't.
* "Don't V ... here." <-> "여기서 ... V지 마세요." both ways; without "here" the Korean is the
  old grammar's "Please do not ..." sentence, so that pair is one-way (to="ko").
* "don't have" gives the old grammar's Korean (저는 돈이 없어요), one-way (to="ko").
* Pro-drop: a statement whose subject is "I" also comes without 저는, one-way (to="en").
"""

from __future__ import annotations

import random

from ..everyday import FORM_VERBS, MASS_THINGS, PLACES_AT, THINGS, name_np, pick, pronoun_np
from ..hangul import lemma_stem, particle, pred_words
from ..lexicon import (
    PRED_ADJ,
    PRON_ADJ,
    PRONOUNS,
    REQUEST,
    TIMES_BY_TENSE,
    VERBS,
    WEATHER_ADJECTIVES,
    WEATHER_TIMES,
    Noun,
    Verb,
)
from ..render import SPLIT_ADJ, Keys, Pair, Reject, finish, time_pair
from ..words import agree_be, agree_do

# ------------------------------------------------------------------------------ word lists

_BY_KO = {v.ko: v for v in VERBS}
_STATIVE = {"like", "love", "hate", "want", "see", "receive", "lose", "remember", "understand",
             "find", "know"}


def _own_objects(v: Verb) -> list[Noun]:
    """The objects no other sense of v's English or Korean verb takes: play <-> 치다 with the
    guitar, 하다 with soccer; watch <-> 보다 with movies (see <-> 보다 with animals)."""
    others = [u for u in VERBS if u is not v and (u.en == v.en or u.ko == v.ko)]
    return [n for n in v.obj_nouns if not any(n in u.obj_nouns for u in others)]


# verbs whose English or Korean has another sense: only with an object that tells them apart
SHARED = [v for v in VERBS if v not in FORM_VERBS and v.pron_subj and v.obj
          and v.base not in _STATIVE and v.neg_ko is None
          and not (v.need_loc or v.arrive or v.motion)]
OWN_OBJECTS = {id(v): _own_objects(v) for v in SHARED}
SHARED = [v for v in SHARED if OWN_OBJECTS[id(v)] and v.en != "call"]  # "call cats"
# 안 + verb: the everyday verbs (one sense per English and Korean verb), 'like' and SHARED
NEG_VERBS = [v for v in FORM_VERBS if v.ko != "춤추다"] + [_BY_KO["좋아하다"]] + SHARED
# what happens to one rather than what one does: 못 (can't) makes no sense with these
_INVOLUNTARY = {"fall", "shiver", "cough", "sneeze", "yawn", "faint", "fail", "vomit", "starve",
                "rejoice", "hiccup", "succeed", "win", "sweat", "burp", "grieve", "envy"}
# 못 + verb: as 안, and swimming (수영하다; its other sense 헤엄치다 is for animals)
CAN_VERBS = [v for v in FORM_VERBS if v.ko != "춤추다" and v.base not in _INVOLUNTARY] + (
    SHARED + [v for v in VERBS if (v.en, v.ko) == ("swim", "수영하다")])
# 'Don't ...': verbs the old grammar already uses in requests, one sense each, not motion
_EN_N: dict[str, int] = {}
_KO_N: dict[str, int] = {}
for _v in VERBS:
    _EN_N[_v.en] = _EN_N.get(_v.en, 0) + 1
    _KO_N[_v.ko] = _KO_N.get(_v.ko, 0) + 1
DONT_VERBS = [v for v in REQUEST if _EN_N[v.en] == 1 and _KO_N[v.ko] == 1 and not v.motion
              and not v.arrive and not v.need_loc]
# 안 + adjective: 있다-adjectives negate as 없다 (맛없어요), so they are left out
_NO_SHORT = {"맛있다", "재미있다"}
# the Korean of weather adjectives: alone (안 추워요.) it says the weather, never "I"
WEATHER_KO = frozenset(ko for _, ko in WEATHER_ADJECTIVES)
NEG_ADJ = [a for a in PRED_ADJ if a.ko not in _NO_SHORT]
NEG_PRON_ADJ = [a for a in PRON_ADJ if a.ko not in _NO_SHORT]
# places a learner asks about: buildings that take "a"
NEAR_PLACES = [n for n in PLACES_AT if n.article and "p_bld" in n.tags and n.en != "house"]
# what they are near: landmarks (not rooms or homes)
LANDMARKS = [n for n in NEAR_PLACES if n.en not in (
    "bathroom", "office", "apartment", "dormitory", "hair salon")] + [
    n for n in PLACES_AT if n.en == "park"]


def article(noun: Noun) -> str:
    """a / an by sound: an apple, a university."""
    return "an" if noun.an and not noun.en.startswith(("uni", "use", "eu")) else "a"


def split_compound(lemma: str) -> tuple[str, str] | None:
    """(noun, light verb) of a noun + 하다 verb (공부하다 -> 공부, 하다), else None.

    좋아하다 / 슬퍼하다 / 그리워하다 are -아/어하다 verbs, not noun + 하다 (안 좋아해요), and a
    one-syllable root is no noun either (안 구해요), except 일 and 말 (일 안 해요).
    """
    if lemma == "춤추다":
        return "춤", "추다"
    root = lemma[:-2]
    if not lemma.endswith("하다") or not root or root[-1] in "아어워뻐퍼러라" and root != "샤워":
        return None
    if len(root) == 1 and root not in ("일", "말"):
        return None
    return root, "하다"


def _feeling_split(lemma: str) -> tuple[str, str] | None:
    """Feelings made of a noun + 되다 / 나다 take 안 inside too: 걱정 안 돼요, 화 안 나요."""
    if lemma.endswith("되다") and len(lemma) > 3:
        return lemma[:-2], "되다"
    if lemma in ("화나다", "짜증나다"):
        return lemma[:-2], "나다"
    return None


def adverb_pred(lemma: str, adverb: str, tense: str, keys: Keys, verb: bool = True
                ) -> tuple[list, int | tuple, tuple]:
    """Korean predicate with 안 / 못 in front: [(word, key)], main keys, negation keys.

    A noun + 하다 verb takes the adverb before 하다 (공부 안 해요; an adjective never does:
    안 따뜻해요); the English verb then aligns to the noun and 해요, the negation to the adverb
    and the tense-carrying last word.
    """
    k_main, k_neg = keys(), keys()
    split = split_compound(lemma) if verb else _feeling_split(lemma)
    if split is not None:
        noun, light = split
        k_last = keys()
        words = [(noun, k_main), (adverb, k_neg)] + [
            (w, k_last) for w in pred_words(light, tense, False, "final")]  # 할 거예요
        return words, (k_main, k_last), (k_neg, k_last)
    head, lemma = ("", lemma) if verb else SPLIT_ADJ.get(lemma, ("", lemma))
    words = [(adverb, k_neg)] + [(w, k_main) for w in pred_words(lemma, tense, False, "final")]
    if head:  # 배가 안 고파요: hungry <-> 배가 and 고파요, isn't <-> 안 and 고파요
        k_head = keys()
        return [(head, k_head)] + words, (k_head, k_main), (k_neg, k_main)
    return words, k_main, (k_neg, k_main)


def generic_object(r: random.Random, v: Verb, keys: Keys) -> tuple[list, list]:
    """An object that is a kind, not a thing: apples <-> 사과를, coffee <-> 커피를."""
    nouns = OWN_OBJECTS.get(id(v), v.obj_nouns)
    if not nouns:
        raise Reject
    noun: Noun = pick(r, nouns)
    if noun.tags & {"person"} or "proper" in noun.tags and "lang" not in noun.tags:
        raise Reject  # "I don't meet teachers": odd as a kind
    k = keys()
    if "musical" in noun.tags:  # play the guitar
        if v.en != "play":
            raise Reject  # "teach pianos"
        toks: tuple | None = ("the", *noun.toks)
        return [(w, None if w == "the" else k) for w in toks], [
            (particle(noun.ko, "object"), k)]
    toks = noun.pl_toks if noun.article else noun.toks
    if toks is None:
        raise Reject
    return [(w, k) for w in toks], [(particle(noun.ko, "object"), k)]


def destination(r: random.Random, keys: Keys) -> tuple[list, list]:
    """to the park <-> 공원에, to school <-> 학교에, home <-> 집에."""
    place = pick(r, PLACES_AT)
    k = keys()
    if place.en == "house":
        return [("home", k)], [("집에", k)]
    art = [("the", None)] if place.article and not place.bare else []
    return [("to", k)] + art + [(w, k) for w in place.toks], [(place.ko + "에", k)]


def _complement(r: random.Random, v: Verb, keys: Keys) -> tuple[list, list]:
    if v.motion:
        return destination(r, keys) if r.random() < 0.7 else ([], [])
    split = split_compound(v.ko)
    if v.obj and (not v.intr or id(v) in OWN_OBJECTS or r.random() < 0.6):
        if split is not None and v.ko != "하다":
            raise Reject  # 한국어를 공부 안 해요 is heard, but not a textbook's model sentence
        return generic_object(r, v, keys)
    if not v.intr or id(v) in OWN_OBJECTS:
        raise Reject
    return [], []


def _subject(r: random.Random, keys: Keys):
    """A pronoun or a name; "you" is left to the polite area, family elders (who take
    -(으)시-) to the honorifics."""
    s = pronoun_np(r, keys) if r.random() < 0.7 else name_np(r, keys)
    if s.person == "2":
        raise Reject
    return s


def _pro_drop(r: random.Random, subj, k_pred: int) -> tuple[list, str]:
    """Drop 저는 a third of the time: the Korean then reads as I (one-way, to="en"), and "I"
    aligns to the predicate's last word, as the polite area's pro-drop does."""
    if subj.person == "1s" and r.random() < 0.33:
        subj.en[:] = [(w, k_pred) for w, _ in subj.en]
        return [], "en"
    return subj.ko_with("topic"), ""


def _time(r: random.Random, tense: str, keys: Keys) -> tuple[list, list]:
    if r.random() < 0.3:
        return time_pair(pick(r, TIMES_BY_TENSE[tense]), keys)
    return [], []


# ------------------------------------------------------------------------------- makers


def _verb_neg(r: random.Random, adverb: str) -> Pair:
    """안 / 못 + verb, present or past (안 also future: won't <-> 안 먹을 거예요), with its
    subject, object or destination and time."""
    keys = Keys()
    v = pick(r, NEG_VERBS if adverb == "안" else CAN_VERBS)
    x = r.random()
    tense = "past" if x < 0.33 else "present"
    if adverb == "안" and x > 0.85 and not v.no_future:
        tense = "future"
    subj = _subject(r, keys)
    en_c, ko_c = _complement(r, v, keys)
    en_t, ko_t = _time(r, tense, keys)
    long = adverb == "못" and r.random() < 0.25  # -지 못해요, read as can't (one-way)
    if long:
        k_main, k_neg = keys(), keys()
        pred = [(lemma_stem(v.ko) + "지", k_main),
                ("못했어요" if tense == "past" else "못해요", k_neg)]
    else:
        pred, k_main, k_neg = adverb_pred(v.ko, adverb, tense, keys)
    if tense == "future":
        aux = "won't"
    elif adverb == "안":
        aux = agree_do(subj.person, tense) + "n't"
    else:
        aux = "couldn't" if tense == "past" else "can't"
    ko_s, to = _pro_drop(r, subj, k_neg[-1] if isinstance(k_neg, tuple) else k_neg)
    en = subj.en + [(aux, k_neg), (v.base, k_main)] + [(w, k_main) for w in v.part]
    pair = finish(en + en_c + en_t, ko_s + ko_t + ko_c + pred, ".")
    if long:
        to = "en"
    return Pair(pair.en, pair.ko, pair.align, to)


def short_neg_verb(r: random.Random) -> Pair:
    """I don't eat meat. <-> 저는 고기를 안 먹어요. / He didn't study. <-> 그는 공부 안 했어요."""
    return _verb_neg(r, "안")


def cannot_verb(r: random.Random) -> Pair:
    """I can't swim. <-> 저는 수영 못 해요. / 저는 수영하지 못해요. -> I can't swim."""
    return _verb_neg(r, "못")


def short_neg_adj(r: random.Random) -> Pair:
    """The room isn't big. <-> 방은 안 커요. / It isn't cold today. <-> 오늘은 안 추워요. /
    I'm not tired. <-> 안 피곤해요. (feelings of "I" drop 저는 both ways, as the polite area
    does for the old grammar) / I'm not smart. <-> 저는 안 똑똑해요."""
    keys = Keys()
    tense = "past" if r.random() < 0.3 else "present"
    x = r.random()
    if x < 0.2:  # weather
        word, lemma = pick(r, WEATHER_ADJECTIVES)
        en_t: list = []
        ko_t: list = []
        if r.random() < 0.6:
            en_t, ko_t = time_pair(pick(r, WEATHER_TIMES[tense]), keys, topic=True)
        pred, k_main, k_neg = adverb_pred(lemma, "안", tense, keys, verb=False)
        be = "wasn't" if tense == "past" else "isn't"
        return finish([("it", None), (be, k_neg), (word, k_main)] + en_t, ko_t + pred, ".")
    to = ""
    en_t, ko_t = [], []
    if x < 0.55:
        a = pick(r, NEG_PRON_ADJ)
        if a.state and r.random() < 0.4:  # She wasn't busy last week.
            en_t, ko_t = time_pair(pick(r, TIMES_BY_TENSE[tense]), keys)
        p = pick(r, [p for p in PRONOUNS if p.person != "2"])
        k_s = keys()
        pred, k_main, k_neg = adverb_pred(a.ko, "안", tense, keys, verb=False)
        if p.person == "1s" and tense == "present":
            en = [("I'm", (k_s, *k_neg[1:])), ("not", k_neg[0])]
        else:
            en = [(p.en, k_s), (agree_be(p.person, tense) + "n't", k_neg)]
        ko_s = [(particle(p.ko, "topic"), k_s)]
        if p.person == "1s" and a.ko not in WEATHER_KO:
            if a.state:  # a feeling: 저는 is dropped both ways
                ko_s = []
                en = [(w, k_main if w in ("I'm", "I") else k) for w, k in en]
            elif r.random() < 0.33:  # pro-drop: one-way
                ko_s, to = [], "en"
                en = [(w, k_main if w in ("I'm", "I") else k) for w, k in en]
    else:
        a = pick(r, NEG_ADJ)
        if not a.pred_nouns:
            raise Reject
        noun = pick(r, a.pred_nouns)
        if "person" in noun.tags:
            raise Reject  # people are he / she here (the pronoun branch)
        k_s = keys()
        pred, k_main, k_neg = adverb_pred(a.ko, "안", tense, keys, verb=False)
        art = [("the", None)] if noun.article else []
        en = art + [(w, k_s) for w in noun.toks] + [(agree_be("3s", tense) + "n't", k_neg)]
        ko_s = [(particle(noun.ko, "topic"), k_s)]
    pair = finish(en + [(a.en, k_main)] + en_t, ko_s + ko_t + pred, ".")
    return Pair(pair.en, pair.ko, pair.align, to)


def dont_request(r: random.Random) -> Pair:
    """Don't drink coffee here. <-> 여기서 커피를 마시지 마세요. / Don't eat bread at night. <->
    밤에 빵을 먹지 마세요. With neither "here" nor a time the Korean is the old "Please do not
    ..." sentence: one-way (to="ko")."""
    keys = Keys()
    v = pick(r, DONT_VERBS)
    k_dont, k_main = keys(), keys()
    en_o: list = []
    ko_o: list = []
    if v.obj and (not v.intr or r.random() < 0.7):
        en_o, ko_o = generic_object(r, v, keys)  # Don't eat cookies here.
    en_h: list = []
    ko_h: list = []
    if r.random() < 0.6:
        k = keys()
        en_h, ko_h = [("here", k)], [("여기서", k)]
    en_t, ko_t = _time(r, "present", keys)  # the old requests never add a time to "do not"
    en = [("don't", k_dont), (v.base, k_main)] + [(w, k_main) for w in v.part] + en_o + en_h
    ko = ko_t + ko_h + ko_o + [(lemma_stem(v.ko) + "지", k_main), ("마세요", k_dont)]
    pair = finish(en + en_t, ko, ".")
    return Pair(pair.en, pair.ko, pair.align, "" if en_h or en_t else "ko")


def dont_have(r: random.Random) -> Pair:
    """I don't have money. -> 저는 돈이 없어요. (one-way: the Korean is the old grammar's "I do
    not have money."); 돈이 없어요. -> I don't have money. (pro-drop, one-way)."""
    keys = Keys()
    tense = "past" if r.random() < 0.2 else "present"
    subj = _subject(r, keys)
    k_pred = keys()
    noun = pick(r, MASS_THINGS if r.random() < 0.4 else THINGS)
    k = keys()
    art = [(article(noun), None)] if noun.article else []
    ko_s, to = _pro_drop(r, subj, k_pred)
    en = subj.en + [(agree_do(subj.person, tense) + "n't", k_pred), ("have", k_pred)]
    en += art + [(w, k) for w in noun.toks]
    ko = ko_s + [(particle(noun.ko, "subject"), k),
                 ("없었어요" if tense == "past" else "없어요", k_pred)]
    pair = finish(en, ko, ".")
    return Pair(pair.en, pair.ko, pair.align, to or "ko")


def near_here(r: random.Random) -> Pair:
    """Is there a hospital near here? <-> 이 근처에 병원이 있어요? / There is no bank near the
    school. <-> 학교 근처에 은행이 없어요."""
    keys = Keys()
    place = pick(r, NEAR_PLACES)
    k_pred, k_p, k_near = keys(), keys(), keys()
    if r.random() < 0.6:
        k_here = keys()
        en_ref, ko_ref = [("here", k_here)], [("이", k_here)]
    else:
        ref = pick(r, LANDMARKS)
        if ref is place or ref.en == "house":
            raise Reject  # near the house: whose? (우리 집 근처) left out
        k_ref = keys()
        art = [("the", None)] if ref.article else []  # near the school (not "to school")
        en_ref, ko_ref = art + [(w, k_ref) for w in ref.toks], [(ref.ko, k_ref)]
    x = r.random()
    question, neg = x < 0.5, 0.5 <= x < 0.75
    en_np = [(w, k_p) for w in place.toks]
    if neg:
        head = [("there", None), ("is", k_pred), ("no", k_pred)]
    else:
        head = [("there", None), ("is", k_pred), (article(place), None)]
        if question:
            head = [head[1], head[0], head[2]]
    en = head + en_np + [("near", k_near)] + en_ref
    ko = ko_ref + [("근처에", k_near), (particle(place.ko, "subject"), k_p),
                   ("없어요" if neg else "있어요", k_pred)]
    return finish(en, ko, "?" if question else ".")

