"""Textbook area degree, part 2: verbs modifying nouns (-는 / -(으)ㄴ / -(으)ㄹ + noun) and
adjectives before nouns in first-year frames (이것은 큰 가방이에요, 저는 귀여운 개가 있어요).

Each relative clause heads the subject of an adjective sentence, so the noun phrase is used as
a first-year textbook uses it:

* present, the head is the doer: "The student who reads books is kind." <-> "책을 읽는 학생이
  친절해요." ("who" for people, "that" otherwise; a count object is a generic bare plural);
* past, the head is what I did something to: "The movie I watched yesterday was interesting."
  <-> "어제 본 영화가 재미있었어요." (the Korean drops 제가, as a textbook does);
* future: "The book I will read tomorrow is long." <-> "내일 읽을 책이 길어요.";
* a verb whose Korean or English has two senses for one object (타다: ride / take a boat) is
  never drawn with that object (clash), so each sentence keeps one translation.

Alignment: who / that, the verb (and its particle), "I" and "will" <-> the modifying verb form
(읽는, 본, 읽을); the object and the head noun <-> their Korean words with particles; the
copula and the adjective <-> the predicate.
"""

from __future__ import annotations

import random

from ..hangul import has_batchim, ko_present_attributive, particle, prospective
from ..lexicon import (
    ADJECTIVES,
    ATTR_FOR,
    INTRANSITIVE,
    NOUNS,
    PRONOUNS,
    TIMES_BY_TENSE,
    TRANSITIVE,
    Noun,
)
from ..render import Keys, Pair, Reject, adj_pred, copula, finish, time_pair


def _pick(r: random.Random, items: list):
    if not items:
        raise Reject
    return items[int(r.random() * len(items))]


def past_attributive(lemma: str) -> str:
    """Past modifier of a verb, -(으)ㄴ: 먹은, 본, 만든, 들은, 도운, 지은.

    Built from the -(으)ㄹ form by turning its final ㄹ into ㄴ, which covers the irregular
    stems as prospective() does (hangul.ko_attributive gives 듣은 for 듣다).
    """
    form = prospective(lemma)
    code = ord(form[-1]) - 0xAC00
    return form[:-1] + chr(0xAC00 + code - 8 + 4)  # final ㄹ (8) -> ㄴ (4)


def _senses() -> frozenset[tuple[str, str]]:
    """(verb, object) pairs, Korean or English, that two verb senses share (타다: ride / take a
    boat): such a pair would give one sentence two translations, so it is never drawn."""
    seen: dict[tuple[str, str], set[str]] = {}
    for v in TRANSITIVE:
        for n in v.obj_nouns:
            seen.setdefault(("ko", v.ko, n.ko), set()).add(v.en)
            seen.setdefault(("en", v.en, n.en), set()).add(v.ko)
    return frozenset((k[1], k[2]) for k, s in seen.items() if len(s) > 1)


AMBIGUOUS = _senses()


def clash(verb, noun: Noun) -> bool:
    """True when the verb with this object reads two ways (see _senses)."""
    return (verb.ko, noun.ko) in AMBIGUOUS or (verb.en, noun.en) in AMBIGUOUS


def _plain(v) -> bool:
    """Verbs whose stems take the modifier endings by the general rule (not 있다 / 없다)."""
    return not v.ko.endswith(("있다", "없다"))


REL_TRANSITIVE = [v for v in TRANSITIVE if _plain(v) and v.obj_nouns and v.subj_nouns]
REL_INTRANSITIVE = [v for v in INTRANSITIVE if _plain(v) and not v.need_loc and not v.obj
                    and v.subj_nouns]
REL_OBJECT = [v for v in TRANSITIVE if _plain(v) and v.obj_nouns and v.pron_subj]
PRED_ADJ = [a for a in ADJECTIVES if a.pred and a.pred_nouns]


def _adjective_for(r: random.Random, noun: Noun):
    return _pick(r, [a for a in PRED_ADJ if noun.tags & a.tags])


def _generic(noun: Noun, k: int) -> list:
    """A generic object: bare plural for a count noun ("books"), bare mass noun ("bread")."""
    if noun.article and noun.pl_toks is not None:
        return [(w, k) for w in noun.pl_toks]
    return ([("the", None)] if noun.article else []) + [(w, k) for w in noun.toks]


def _main(r: random.Random, head: Noun, tense: str, keys: Keys) -> tuple[list, list, list]:
    """Head noun with 이/가 and the adjective predicate: (en head, en predicate, ko)."""
    a = _adjective_for(r, head)
    k_h = keys()
    pred, k_main, _, k_tense = adj_pred(a.ko, tense, False, "final", keys)  # 배가 고파요
    en_head = [("the", None)] + [(w, k_h) for w in head.toks]
    en_pred = [(copula(tense, "3s"), k_tense), (a.en, k_main)]
    return en_head, en_pred, [(particle(head.ko, "subject"), k_h)] + pred


def rel_present(r: random.Random) -> Pair:
    """-는 + noun: "The student who reads books is kind." <-> "책을 읽는 학생이 친절해요."."""
    keys = Keys()
    transitive = r.random() < 0.7
    v = _pick(r, REL_TRANSITIVE if transitive else REL_INTRANSITIVE)
    head = _pick(r, v.subj_nouns)
    if "proper" in head.tags:
        raise Reject
    k_v = keys()
    en_rel = [("who" if "person" in head.tags else "that", k_v), (v.s3, k_v)]
    en_rel += [(w, k_v) for w in v.part]
    ko_rel: list = []
    if transitive:
        obj = _pick(r, v.obj_nouns)
        if obj.ko == head.ko or clash(v, obj):
            raise Reject
        k_o = keys()
        en_rel += _generic(obj, k_o)
        ko_rel.append((particle(obj.ko, "object"), k_o))
    ko_rel.append((ko_present_attributive(v.ko), k_v))
    en_head, en_pred, ko_main = _main(r, head, "present", keys)
    return finish(en_head + en_rel + en_pred, ko_rel + ko_main, ".")


def _rel_object(r: random.Random, tense: str) -> Pair:
    """The head is the object of "I": past -(으)ㄴ or future -(으)ㄹ."""
    keys = Keys()
    v = _pick(r, REL_OBJECT)
    head = _pick(r, v.obj_nouns)
    if "proper" in head.tags or clash(v, head):  # "the Japan I visited"
        raise Reject
    if tense == "future" and v.no_future:
        raise Reject
    k_v = keys()
    verb = [("will", k_v), (v.base, k_v)] if tense == "future" else [(v.past, k_v)]
    en_rel = [("I", k_v)] + verb + [(w, k_v) for w in v.part]
    form = prospective(v.ko) if tense == "future" else past_attributive(v.ko)
    en_t: list = []
    ko_t: list = []
    if r.random() < 0.6:
        en_t, ko_t = time_pair(_pick(r, TIMES_BY_TENSE[tense]), keys)
    # the sentence is about the thing: its adjective is in the past after a past event
    en_head, en_pred, ko_main = _main(r, head, "past" if tense == "past" else "present", keys)
    return finish(en_head + en_rel + en_t + en_pred, ko_t + [(form, k_v)] + ko_main, ".")


def rel_past(r: random.Random) -> Pair:
    """-(으)ㄴ + noun: "The movie I watched yesterday was interesting." <-> "어제 본 영화가
    재미있었어요."."""
    return _rel_object(r, "past")


def rel_future(r: random.Random) -> Pair:
    """-(으)ㄹ + noun: "The book I will read tomorrow is long." <-> "내일 읽을 책이 길어요."."""
    return _rel_object(r, "future")


# things one points at or has: count nouns with an attributive adjective ("a big bag")
_THINGS = [n for n in NOUNS if n.article and n.pl_toks is not None and "place" not in n.tags
           and n.tags & {"obj", "read", "food", "pet"} and ATTR_FOR[id(n)]]


def adj_noun(r: random.Random) -> Pair:
    """Adjective before a noun in the first-year frames: "This is a big bag." <-> "이것은 큰
    가방이에요." ("that" <-> 그것, as the everyday grammar says it); "I have a very cute dog."
    <-> "저는 아주 귀여운 개가 있어요."."""
    keys = Keys()
    noun = _pick(r, _THINGS)
    a = _pick(r, ATTR_FOR[id(noun)])
    k_s, k_a, k_n = keys(), keys(), keys()
    # "very" <-> 아주, the old grammar's intensifier, also before a noun: 아주 큰 가방
    very = r.random() < 0.25
    k_very = keys()
    first = "very" if very else a.en
    np_en = [("an" if first[0] in "aeiou" else "a", None)]
    np_en += ([("very", k_very)] if very else []) + [(a.en, k_a)]
    np_en += [(w, k_n) for w in noun.toks]
    ko_a = ([("아주", k_very)] if very else []) + [(a.attr_ko, k_a)]
    if r.random() < 0.5:
        this = r.random() < 0.55
        en = [("this" if this else "that", k_s), ("is", k_n)] + np_en
        ko = [("이것은" if this else "그것은", k_s), *ko_a,
              (noun.ko + ("이에요" if has_batchim(noun.ko) else "예요"), k_n)]
        return finish(en, ko, ".")
    pron = _pick(r, PRONOUNS)
    k_v = keys()
    en = [(pron.en, k_s), ("has" if pron.person == "3s" else "have", k_v)] + np_en
    ko = [(particle(pron.ko, "topic"), k_s), *ko_a, (particle(noun.ko, "subject"), k_n),
          ("있어요", k_v)]
    return finish(en, ko, ".")


MAKERS: tuple = (
    (0.10, "degree_rel_present", rel_present),
    (0.09, "degree_rel_past", rel_past),
    (0.06, "degree_rel_future", rel_future),
    (0.05, "degree_adj_noun", adj_noun),
)

DESCRIPTIONS: dict[str, tuple[str, str]] = {
    "degree_rel_present": (
        "Noun modifier, present: verb-는 + noun (the student who reads books).",
        "관형형 현재: 동사-는 + 명사 (책을 읽는 학생)."),
    "degree_rel_past": (
        "Noun modifier, past: verb-(으)ㄴ + noun (the movie I watched yesterday).",
        "관형형 과거: 동사-(으)ㄴ + 명사 (어제 본 영화)."),
    "degree_rel_future": (
        "Noun modifier, future: verb-(으)ㄹ + noun (the book I will read tomorrow).",
        "관형형 미래: 동사-(으)ㄹ + 명사 (내일 읽을 책)."),
    "degree_adj_noun": (
        "Adjective before a noun: adjective-(으)ㄴ + noun (This is a big bag; I have a cute dog).",
        "명사 앞의 형용사: 형용사-(으)ㄴ + 명사 (이것은 큰 가방이에요, 저는 귀여운 개가 있어요)."),
}
