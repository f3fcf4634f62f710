"""Textbook area: linked clauses (purpose, reason, condition, time, sequence).

Conventions that keep the corpus a function each way (one English pattern per Korean ending):

* purpose  -(으)러 가요/와요  <-> "go / come to PLACE to VERB" (도서관에 공부하러 가요; the order
  공부하러 도서관에 가요 is read too, Korean -> English only);
* reason   -아/어서          <-> "A, so B." with B a statement (present or past; the tense lives on
  the last Korean verb: 피곤해서 잤어요 <-> "I was tired, so I slept.");
* reason   -(으)니까 <-> "A, so please B." / "A, so let's B." (a request or proposal;
  -아/어서 never takes one), and one-way "Please B because A." -> Korean;
* cause    N 때문에           <-> "because of N";
* condition -(으)면           <-> "If A, B." (B: generic present, future, request or proposal);
* time     -(으)ㄹ 때 <-> "When A, B." (a past state or arrival: -았/었을 때, "When I was ...");
  -(으)ㄴ 후에 <-> "After VERB-ing, ..."; -기 전에 <-> "Before VERB-ing, ...";
* sequence -아/어서 after 가다 / 오다 / 만나다 <-> "... and ..." (시장에 가서 빵을 샀어요 <->
  "I went to the market and bought bread."); the old -고 "and" no longer takes these verbs
  with a shared subject (grammar.compound rejects them), so "and" after go / come / meet with
  one subject is always -아/어서.

The subject is said once in Korean (저는 ... 가서 ... 샀어요) and in both English clauses where
English needs it ("I am tired, so I sleep."). Statements keep 저는 from English; a Korean
statement without it (피곤해서 자요.) is a one-way pair to "I ...". A first clause about the
weather has no Korean subject, so "I" is dropped there (추워서 코트를 입어요). Negation is left to
the negation chapter.
"""

from __future__ import annotations

import random

from ..hangul import eu_form, ko_imperative, ko_propose, particle
from ..lexicon import MANNER_ADVERBS, TIMES_BY_TENSE
from ..render import Keys, Pair, Reject, adj_pred, copula, finish, place_pair, pred_keys, time_pair
from .clauses_descriptions import DESCRIPTIONS
from .clauses_parts import (
    ACTION,
    AT_PLACE,
    CAUSES,
    COME,
    GO,
    MEET,
    REASON_ACTIONS,
    STATE,
    VERB_REASONS,
    VP,
    First,
    action_vp,
    draw_first,
    draw_vp,
    en_verb,
    finite_head,
    past_modifier,
    person_subject,
    pick,
    seo_form,
    stem_of,
    subj_tokens,
    subject,
    when_form,
)

P_DROP = 0.2  # share of "I" statements also given as pro-dropped Korean (one-way, to English)
_SEQ_AFTER_MEET = ("eat", "drink", "talk", "watch", "take a walk", "study", "exercise")


def _tense(r: random.Random, future: bool = True) -> str:
    x = r.random()
    if not future:
        return "present" if x < 0.5 else "past"
    return "present" if x < 0.4 else "past" if x < 0.72 else "future"


def _comma(en: list) -> list:
    """Attach a comma to the last English word of a first clause."""
    w, k = en[-1]
    return en[:-1] + [(w + ",", k)]


def _ok(vp: VP, tense: str) -> None:
    """A past whose English equals the present ("I read the book") is never produced."""
    if tense == "past" and vp.verb.past == vp.verb.base:
        raise Reject


def _done(r: random.Random, en: list, ko: list, k_subj: int | None, is_i: bool,
          punct: str = ".") -> Pair:
    """The pair; with "I" now and then the pro-dropped Korean as a one-way pair to English."""
    if is_i and k_subj is not None and r.random() < P_DROP:
        p = finish(en, [t for t in ko if t[1] != k_subj], punct)
        return Pair(p.en, p.ko, p.align, to="en")
    return finish(en, ko, punct)


def _time(r: random.Random, keys: Keys, tense: str, p: float = 0.2) -> tuple[list, list]:
    """Now and then a time word agreeing with the tense: English at the end, Korean first."""
    if r.random() < p:
        return time_pair(pick(r, TIMES_BY_TENSE[tense]), keys)
    return [], []


def _topic(keys: Keys, pron) -> tuple[list, int]:
    k = keys()
    return [(particle(pron.ko, "topic"), k)], k


def _second(keys: Keys, vp: VP, tense: str, person: str) -> tuple[list, list]:
    """A second clause's verb phrase as a statement in a tense (will ... / ate / eats)."""
    _ok(vp, tense)
    head = [("will", None)] if tense == "future" else []
    en, ko, _, _ = vp.render(keys, finite_head(vp.verb, tense), head, "finite", person, tense)
    return en, ko


# ------------------------------------------------------------------------------ purpose


def purpose(r: random.Random) -> Pair:
    """저는 도서관에 공부하러 가요. <-> I go to the library to study."""
    keys = Keys()
    s = person_subject(r)
    en_s, ko_s, k_s = subj_tokens(s, keys)
    motion = GO if r.random() < 0.7 else COME
    vp = draw_vp(r, AT_PLACE, p_place=0.0)
    tense = _tense(r)
    pred, k_main, _, k_last = pred_keys(finite_head(motion, tense), False, keys)
    if tense == "future":
        en_motion = [("will", k_last), (motion.base, k_main)]
    else:
        en_motion = [(en_verb(motion, "finite", s.person, tense), k_main)]
    en_rest: list = []
    ko_p: list = []
    if motion is GO or r.random() < 0.7:  # a friend may come "to play", with no place
        en_rest, ko_p = place_pair(("dir", pick(r, vp.verb.places)), None, keys)
    en_v, ko_v, _, _ = vp.render(keys, (eu_form(vp.verb.ko, "러"),), [("to", None)], "base",
                                 s.person, "present")
    en_t, ko_t = _time(r, keys, tense)
    en = en_s + en_motion + en_rest + en_v + en_t
    if ko_p and r.random() < 0.15:  # 친구를 만나러 카페에 가요: the other order, Korean -> English
        p = finish(en, ko_t + ko_s + ko_v + ko_p + pred, ".")
        return Pair(p.en, p.ko, p.align, to="en")
    ko = ko_t + ko_s + ko_p + ko_v + pred
    return _done(r, en, ko, k_s, s.pron is not None and s.pron.person == "1s")


# ------------------------------------------------------------------------------- reason


def _first_and_subject(r: random.Random, first: First, keys: Keys, ko_word: str, tense: str,
                       keep_you: bool = True) -> tuple[list, list, list, int, object, int]:
    """First clause tokens, the Korean subject tokens, the connective key, the shared subject
    pronoun and its key (the weather takes a pronoun of its own for the second clause)."""
    pron = first.subj if first.subj is not None else subject(r)
    k_s = keys()
    en1, ko1, k_conn = first.render(keys, ko_word, tense, k_s)
    ko_s = [(particle(pron.ko, "topic"), k_s)]
    if pron.person == "2" and not keep_you:
        ko_s = []
    if first.subj is None and pron.person == "1s":
        ko_s = []  # 추워서 코트를 입어요: the weather clause leaves "I" unsaid
    return en1, ko1, ko_s, k_conn, pron, k_s


def _reason_action(r: random.Random) -> Pair:
    """저는 열심히 운동해서 피곤했어요. <-> I exercised hard, so I was tired."""
    keys = Keys()
    name, manner, effects = pick(r, VERB_REASONS)
    verbs = [v for v in ACTION if v.en == name]
    if not verbs or manner not in MANNER_ADVERBS:
        raise Reject
    v, effect = verbs[0], pick(r, effects)
    pron = subject(r)
    tense = _tense(r, future=False)
    ko_s, k_s = _topic(keys, pron)
    k_conn, k_adv = keys(), keys()
    en1 = [(pron.en, k_s), (en_verb(v, "finite", pron.person, tense), k_conn)]
    en1 += [(w, k_conn) for w in v.part] + [(manner, k_adv)]
    ko1 = [(MANNER_ADVERBS[manner], k_adv), (seo_form(v.ko), k_conn)]
    if effect in STATE:
        adj = STATE[effect]
        pred, k_main, _, k_last = adj_pred(adj.ko, tense, False, "final", keys)
        en2, ko2 = [(copula(tense, pron.person), k_last), (adj.en, k_main)], pred
    else:
        en2, ko2 = _second(keys, action_vp(r, effect), tense, pron.person)
    en_t, ko_t = _time(r, keys, tense)
    en = _comma(en1) + [("so", k_conn), (pron.en, k_s)] + en2 + en_t
    return _done(r, en, ko_t + ko_s + ko1 + ko2, k_s, pron.person == "1s")


def reason_so(r: random.Random) -> Pair:
    """저는 피곤해서 자요. <-> I am tired, so I sleep. (-아/어서, statements)"""
    if r.random() < 0.2:  # an action as the reason (never 가다/오다/만나다: those are sequence)
        return _reason_action(r)
    keys = Keys()
    first = draw_first(r)
    tense = _tense(r, future=False)
    vp = action_vp(r, pick(r, REASON_ACTIONS[first.name]))
    en1, ko1, ko_s, k_conn, pron, k_s = _first_and_subject(r, first, keys,
                                                          seo_form(first.lemma), tense)
    en2, ko2 = _second(keys, vp, tense, pron.person)
    en_t, ko_t = _time(r, keys, tense)
    en2 = en2 + en_t
    ko = ko_t + (ko_s + ko1 if first.subj is not None else ko1 + ko_s) + ko2
    if r.random() < 0.15:  # "I sleep because I am tired." / "Because I am tired, I sleep."
        if r.random() < 0.5:  # -> Korean only: "so" is this ending's one English
            en = [(pron.en, k_s)] + en2 + [("because", k_conn)] + en1
        else:
            en = [("because", k_conn)] + _comma(en1) + [(pron.en, k_s)] + en2
        p = finish(en, ko, ".")
        return Pair(p.en, p.ko, p.align, to="ko")
    en = _comma(en1) + [("so", k_conn), (pron.en, k_s)] + en2
    drop = first.subj is not None and first.name not in ("cold", "hot")
    return _done(r, en, ko, k_s, drop and pron.person == "1s")


def _request(r: random.Random, keys: Keys, first: First,
             me: bool = True) -> tuple[list, list]:
    """The second clause as "please VERB ..." (-(으)세요) or "let's VERB ..." (-(으)ㅂ시다);
    me=False: no "I" first clause ("If I am hot, let's ..." is not said)."""
    if first.subj is not None and first.subj.person == "2" and first.name in ("cold", "hot"):
        raise Reject  # 더우니까 without 당신은 is the weather's "It is hot"
    vp = action_vp(r, pick(r, REASON_ACTIONS[first.name]))
    who = first.subj.person if first.subj is not None else ""
    if who == "1s" and not me:
        raise Reject
    if who in ("1s", "1p") or (who == "" and r.random() < 0.35):  # I / we: a proposal
        words, head = (ko_propose(vp.verb.ko),), "let's"
    else:  # you or the weather: a request ("I am hungry, so please eat" is never said)
        if not vp.verb.imp or who not in ("", "2"):
            raise Reject
        words, head = tuple(ko_imperative(vp.verb.ko).split()), "please"
    en, ko, _, _ = vp.render(keys, words, [(head, None)], "base", "2", "present")
    return en, ko


def reason_nikka(r: random.Random) -> Pair:
    """추우니까 창문을 닫으세요. <-> It is cold, so please close the window."""
    keys = Keys()
    first = draw_first(r, you=True)
    en1, ko1, ko_s, k_conn, pron, _ = _first_and_subject(
        r, first, keys, eu_form(first.lemma, "니까"), "present", keep_you=False)
    if first.subj is None:
        ko_s = []
    en2, ko2 = _request(r, keys, first)
    ko = ko_s + ko1 + ko2
    if r.random() < 0.15:  # "Please close the window because it is cold." -> Korean only
        if r.random() < 0.5:
            p = finish(en2 + [("because", k_conn)] + en1, ko, ".")
        else:  # "Because it is cold, please close the window."
            p = finish([("because", k_conn)] + _comma(en1) + en2, ko, ".")
        return Pair(p.en, p.ko, p.align, to="ko")
    return finish(_comma(en1) + [("so", k_conn)] + en2, ko, ".")


def because_of(r: random.Random) -> Pair:
    """저는 시험 때문에 바빠요. <-> I am busy because of the exam."""
    keys = Keys()
    words, noun_ko, effects = pick(r, CAUSES)
    effect = pick(r, effects)
    pron = subject(r)
    ko_s, k_s = _topic(keys, pron)
    tense = _tense(r, future=False)
    kb, kc = keys(), keys()
    en_c = [("because", kb), ("of", kb)] + [(w, None if w in ("the", "a") else kc)
                                            for w in words]
    ko_c = [(noun_ko, kc), ("때문에", kb)]
    if effect in STATE:
        adj = STATE[effect]
        pred, k_main, _, k_last = adj_pred(adj.ko, tense, False, "final", keys)
        en2 = [(copula(tense, pron.person), k_last), (adj.en, k_main)]
        ko2 = pred
    else:
        en2, ko2 = _second(keys, action_vp(r, effect), tense, pron.person)
    en_t, ko_t = _time(r, keys, tense)
    en = [(pron.en, k_s)] + en2 + en_c + en_t
    return _done(r, en, ko_t + ko_s + ko_c + ko2, k_s, pron.person == "1s")


# ---------------------------------------------------------------------------- condition


def _go_first(r: random.Random, keys: Keys, pron, ko_word: str, tense: str,
              k_s: int) -> tuple[list, list, int, VP]:
    """First clause "I go to the library" (Korean 도서관에 + ko_word) and a second verb phrase
    of something done there."""
    v2 = pick(r, AT_PLACE)
    place = pick(r, v2.places)
    vp1 = VP(GO, None, ("dir", place))
    en1, ko1, k_main, _ = vp1.render(keys, (ko_word,), [], "finite", pron.person, tense)
    vp2 = draw_vp(r, [v2], p_place=0.0)
    return [(pron.en, k_s)] + en1, ko1, k_main, vp2


def condition(r: random.Random) -> Pair:
    """저는 피곤하면 자요. <-> If I am tired, I sleep. (-(으)면)"""
    keys = Keys()
    x = r.random()
    tense = "present" if r.random() < 0.5 else "future"
    en_t: list = []
    ko_t: list = []
    if x < 0.25:  # If you are tired, please rest. / If it is hot, let's swim.
        first = draw_first(r, you=True)
        en1, ko1, ko_s, k_if, _, _ = _first_and_subject(
            r, first, keys, eu_form(first.lemma, "면"), "present", keep_you=False)
        if first.subj is None:
            ko_s = []
        en2, ko2 = _request(r, keys, first, me=False)
        return finish([("if", k_if)] + _comma(en1) + en2, ko_s + ko1 + ko2, ".")
    if x < 0.65:
        first = draw_first(r)
        en1, ko1, ko_s, k_if, pron, k_s = _first_and_subject(
            r, first, keys, eu_form(first.lemma, "면"), "present")
        vp2 = action_vp(r, pick(r, REASON_ACTIONS[first.name]))
        if first.subj is None and tense == "future" and r.random() < 0.5:
            en_t, ko_t = time_pair(pick(r, [t for t in TIMES_BY_TENSE["future"]
                                            if len(t[0]) == 1]), keys)
        drop = first.subj is not None and first.name not in ("cold", "hot")
        ko_front = ko_s + ko1 if first.subj is not None else ko1 + ko_s
    else:  # If I go to the library, I read the book.
        pron = subject(r)
        ko_s, k_s = _topic(keys, pron)
        en1, ko1, k_if, vp2 = _go_first(r, keys, pron, eu_form("가다", "면"), "present", k_s)
        drop, ko_front = True, ko_s + ko1
    en2, ko2 = _second(keys, vp2, tense, pron.person)
    en = [("if", k_if)] + _comma(en1 + en_t) + [(pron.en, k_s)] + en2
    return _done(r, en, ko_t + ko_front + ko2, k_s, drop and pron.person == "1s")


# --------------------------------------------------------------------------------- time


def when(r: random.Random) -> Pair:
    """저는 피곤할 때 커피를 마셔요. <-> When I am tired, I drink coffee. (-(으)ㄹ 때)"""
    keys = Keys()
    tense = _tense(r, future=False)
    past = tense == "past"
    k_when = keys()
    if r.random() < 0.55:
        first = draw_first(r)
        en1, ko1, ko_s, _, pron, k_s = _first_and_subject(
            r, first, keys, when_form(first.lemma, past), tense)
        vp2 = action_vp(r, pick(r, REASON_ACTIONS[first.name]))
        drop = first.subj is not None and first.name not in ("cold", "hot")
        ko_w = [("때", k_when)]
        ko_front = ko_s + ko1 + ko_w if first.subj is not None else ko1 + ko_w + ko_s
    else:  # When I went to Seoul, I met the friend. (갔을 때)
        pron = subject(r)
        ko_s, k_s = _topic(keys, pron)
        en1, ko1, _, vp2 = _go_first(r, keys, pron, when_form("가다", past), tense, k_s)
        drop, ko_front = True, ko_s + ko1 + [("때", k_when)]
    en2, ko2 = _second(keys, vp2, tense, pron.person)
    en = [("when", k_when)] + _comma(en1) + [(pron.en, k_s)] + en2
    return _done(r, en, ko_front + ko2, k_s, drop and pron.person == "1s")


def _before_after(r: random.Random, after: bool) -> Pair:
    keys = Keys()
    s = person_subject(r)
    en_s, ko_s, k_s = subj_tokens(s, keys)
    vp1 = draw_vp(r, ACTION, p_place=0.3)
    vp2 = draw_vp(r, ACTION, p_place=0.3)
    if vp1.verb.en == vp2.verb.en or (vp1.place is not None and vp2.place is not None
                                      and vp1.place[1] is vp2.place[1]):
        raise Reject
    tense = _tense(r)
    if after:
        words, head = (past_modifier(vp1.verb.ko), "후에"), "after"
    else:
        words, head = (stem_of(vp1.verb.ko) + "기", "전에"), "before"
    en1, ko1, _, _ = vp1.render(keys, words, [(head, None)], "ing", s.person, "present")
    en2, ko2 = _second(keys, vp2, tense, s.person)
    en_t, ko_t = _time(r, keys, tense)
    en = _comma(en1) + en_s + en2 + en_t
    return _done(r, en, ko_t + ko_s + ko1 + ko2, k_s,
                 s.pron is not None and s.pron.person == "1s")


def after(r: random.Random) -> Pair:
    """저는 점심을 먹은 후에 커피를 마셔요. <-> After eating lunch, I drink coffee."""
    return _before_after(r, True)


def before(r: random.Random) -> Pair:
    """저는 자기 전에 책을 읽어요. <-> Before sleeping, I read the book."""
    return _before_after(r, False)


# ----------------------------------------------------------------------------- sequence


def sequence(r: random.Random) -> Pair:
    """저는 시장에 가서 빵을 샀어요. <-> I went to the market and bought bread."""
    keys = Keys()
    s = person_subject(r)
    en_s, ko_s, k_s = subj_tokens(s, keys)
    tense = _tense(r)
    if r.random() < 0.75:
        v2 = pick(r, AT_PLACE)
        vp1 = VP(GO if r.random() < 0.75 else COME, None, ("dir", pick(r, v2.places)))
        vp2 = draw_vp(r, [v2], p_place=0.0)
    else:
        nouns = [n for n in MEET.obj_nouns if "person" in n.tags and n.article]
        place = ("loc", pick(r, MEET.places)) if r.random() < 0.3 else None
        vp1 = VP(MEET, pick(r, nouns), place)  # met the friend at the cafe and ...
        vp2 = action_vp(r, pick(r, _SEQ_AFTER_MEET))
        if vp2.place is not None:
            raise Reject
    en2, ko2 = _second(keys, vp2, tense, s.person)
    if tense == "future":  # "will" sits before the first verb and carries the last one's tense
        en2 = [t for t in en2 if t[0] != "will"]
        k_will = ko2[-1][1]
    first_tense = "present" if tense == "future" else tense
    en1, ko1, k_and, _ = vp1.render(keys, (seo_form(vp1.verb.ko),), [], "finite", s.person,
                                    first_tense)
    if tense == "future":
        en1 = [("will", k_will)] + [(vp1.verb.base, en1[0][1])] + en1[1:]
    en_t, ko_t = _time(r, keys, tense)
    en = en_s + en1 + [("and", k_and)] + en2 + en_t
    return _done(r, en, ko_t + ko_s + ko1 + ko2, k_s, s.pron is not None and s.pron.person == "1s")


__all__ = ["DESCRIPTIONS", "MAKERS"]

MAKERS = (
    (0.15, "clause_purpose", purpose),
    (0.15, "clause_reason_so", reason_so),
    (0.10, "clause_reason_nikka", reason_nikka),
    (0.07, "clause_because_of", because_of),
    (0.14, "clause_if", condition),
    (0.12, "clause_when", when),
    (0.09, "clause_after", after),
    (0.08, "clause_before", before),
    (0.10, "clause_sequence", sequence),
)
