"""The original constructions: clauses with verbs or adjectives, weather, questions, requests,
"be careful of", and/but compounds (sampling and assembly; rendering is in render.py)."""

from __future__ import annotations

import random

from .hangul import en_past, en_third_person, ko_imperative, particle, pred_words
from .lexicon import (
    ADJECTIVES,
    ATTR_FOR,
    BY_EN,
    CAREFUL,
    FREQUENCY_ADVERBS,
    INTENSIFIERS,
    INTRANSITIVE,
    PLACES,
    PRED_ADJ,
    PRON_ADJ,
    PRONOUNS,
    REQUEST,
    REQUEST_TIMES,
    STATE_ADJ,
    TIMES_BY_TENSE,
    TRANSITIVE,
    VEHICLES,
    VERBS,
    WEATHER_ADJECTIVES,
    WEATHER_TIMES,
    WEATHER_VERBS,
    WH_OBJ,
    WH_WHERE,
    WH_WHO,
    Noun,
    Verb,
)
from .render import (
    NP,
    Clause,
    Keys,
    Pair,
    Reject,
    copula,
    finish,
    pred_keys,
    render_adj,
    render_verb,
    time_pair,
)

# ----------------------------------------------------------------------------- sampling


def _pick(r: random.Random, items: list):
    return items[int(r.random() * len(items))]


def _tense(r: random.Random, verb: Verb | None = None) -> str:
    x = r.random()
    tense = "present" if x < 0.42 else "past" if x < 0.72 else "future"
    if tense == "future" and verb is not None and verb.no_future:
        tense = "present"
    return tense


def _noun_np(r: random.Random, nouns: list[Noun], p_plural: float, p_adj: float,
             avoid: Noun | None = None) -> NP:
    noun = _pick(r, nouns)
    if noun is avoid:
        noun = _pick(r, nouns)
        if noun is avoid:
            raise Reject
    plural = noun.pl_toks is not None and r.random() < p_plural
    adj = None
    if noun.adj_ok and r.random() < p_adj:
        cands = ATTR_FOR[id(noun)]
        if cands:
            adj = _pick(r, cands)
    return NP(noun=noun, plural=plural, adj=adj)


def _subject(r: random.Random, v: Verb, p_pron: float = 0.3, questions: bool = False) -> NP:
    if v.pron_subj and r.random() < p_pron:
        pron = _pick(r, PRONOUNS)
        if questions and pron.person == "1s":
            pron = PRONOUNS[1]
        return NP(pron=pron)
    return _noun_np(r, v.subj_nouns, 0.25, 0.15)


def _object(r: random.Random, v: Verb, subj: NP | None, request: bool = False) -> NP:
    animal_subj = subj is not None and subj.noun is not None and "animal" in subj.noun.tags
    nouns = v.obj_nouns_animal if animal_subj and v.obj_animal else v.obj_nouns
    if v.pron_obj and r.random() < 0.2:
        pron = _pick(r, PRONOUNS)
        me = subj.person if subj is not None and subj.pron is not None else "2"
        if request and pron.en == "you":
            raise Reject
        if me[0] in "12" and pron.person[0] == me[0]:
            raise Reject  # no "I like me", "we help us"
        return NP(pron=pron)
    return _noun_np(r, nouns, 0.2, 0.2, avoid=subj.noun if subj is not None else None)


def _past_is_ambiguous(c: Clause, person: str) -> bool:
    """"I read the book." reads as present; never produce it as a past."""
    return (c.tense == "past" and not c.neg and c.verb.past == c.verb.base
            and person not in ("3s",))


def _adjuncts(r: random.Random, c: Clause, budget: float, animal: bool) -> None:
    v = c.verb
    opts = []
    if v.comps and not animal:
        opts.append("with")
    if v.tools and not animal:
        opts.append("tool")
    if v.means and not animal:
        opts.append("by")
    if opts and r.random() < 0.3 * budget:
        kind = _pick(r, opts)
        if kind == "with":
            noun = _pick(r, v.comps)
            if c.subj is not None and noun is c.subj.noun:
                raise Reject  # no "the teacher plays with a teacher"
            c.adjunct = ("with", noun, noun.pl_toks is not None and r.random() < 0.25)
        elif kind == "tool":
            c.adjunct = ("tool", _pick(r, v.tools), False)
        else:
            c.adjunct = ("by", _pick(r, VEHICLES), False)
    if v.motion:
        if r.random() < 0.65 * budget:
            c.place = ("dir", _pick(r, PLACES))
    elif v.places and (v.need_loc or r.random() < 0.35 * budget):
        c.place = ("arrive" if v.arrive else "loc", _pick(r, v.places))
    if c.place is not None and c.place[1].article and not c.place[1].bare and r.random() < 0.1:
        cands = ATTR_FOR[id(c.place[1])]
        if cands:
            c.place_adj = _pick(r, cands)
    if v.manner and r.random() < 0.18 * budget:
        manner = _pick(r, v.manner)
        plural_subj = c.subj is None or c.subj.person in ("1p", "3p")
        if manner != "together" or (plural_subj and c.subj is not None
                                     and (c.adjunct is None or c.adjunct[0] != "with")):
            c.manner = manner


def verb_clause(r: random.Random, verbs: list[Verb], *, transitive: bool | None,
                 budget: float = 1.0, questions: bool = False, p_neg: float = 0.2,
                 p_time: float = 0.3, p_pron: float = 0.3, subj: NP | None = None) -> Clause:
    c = Clause()
    v = c.verb = _pick(r, verbs)
    c.subj = subj if subj is not None else _subject(r, v, p_pron, questions)
    if transitive or (transitive is None and v.obj and (not v.intr or r.random() < 0.7)):
        if not v.obj:
            raise Reject
        c.obj = _object(r, v, c.subj)
    animal = c.subj.noun is not None and "animal" in c.subj.noun.tags
    _adjuncts(r, c, budget, animal)
    c.tense = _tense(r, v)
    c.neg = not questions and r.random() < p_neg
    if _past_is_ambiguous(c, c.subj.person):
        c.tense = "present"
    if r.random() < p_time:
        c.time = _pick(r, TIMES_BY_TENSE[c.tense])
    elif not c.neg and not questions and c.tense != "future" and r.random() < 0.12:
        c.freq = _pick(r, FREQUENCY_ADVERBS)
    return c


def _adj_clause(r: random.Random, *, questions: bool = False, p_neg: float = 0.2,
                p_time: float = 0.3, state_only: bool = False) -> Clause:
    c = Clause()
    if r.random() < 0.3:
        c.adj = _pick(r, STATE_ADJ if state_only else PRON_ADJ)
        pron = _pick(r, PRONOUNS)
        if questions and pron.person == "1s":
            pron = PRONOUNS[1]
        c.subj = NP(pron=pron)
    else:
        c.adj = _pick(r, STATE_ADJ if state_only else PRED_ADJ)
        noun = _pick(r, c.adj.pred_nouns)
        c.subj = NP(noun=noun, plural=noun.pl_toks is not None and r.random() < 0.25)
    c.tense = _tense(r) if c.adj.state else ("present" if r.random() < 0.6 else "past")
    c.neg = not questions and r.random() < p_neg
    if c.adj.state and r.random() < p_time:
        c.time = _pick(r, TIMES_BY_TENSE[c.tense])
    if not c.neg and r.random() < 0.15:
        c.intens = _pick(r, INTENSIFIERS)
    return c


# ---------------------------------------------------------------------------- constructions


def transitive_pair(r: random.Random) -> Pair:
    keys = Keys()
    en, ko, _ = render_verb(verb_clause(r, TRANSITIVE, transitive=True), "decl", keys)
    return finish(en, ko, ".")


def intransitive(r: random.Random) -> Pair:
    keys = Keys()
    c = verb_clause(r, INTRANSITIVE, transitive=False, budget=1.6)
    en, ko, _ = render_verb(c, "decl", keys)
    return finish(en, ko, ".")


def adjective(r: random.Random) -> Pair:
    keys = Keys()
    c = _adj_clause(r)
    en, ko, _ = render_adj(c, "decl", keys)
    punct = "!" if c.intens is not None and c.tense == "present" and r.random() < 0.5 else "."
    return finish(en, ko, punct)


def weather(r: random.Random) -> Pair:
    keys = Keys()
    tense = _tense(r)
    question = r.random() < 0.2
    neg = not question and r.random() < 0.2
    time = _pick(r, WEATHER_TIMES[tense]) if r.random() < 0.6 else None
    en_t: list = []
    ko_t: list = []
    person = "3s"
    if r.random() < 0.6:
        word, lemma = _pick(r, WEATHER_ADJECTIVES)
        is_adj, noun_ko = True, None
        if time is not None:
            en_t, ko_t = time_pair(time, keys, topic=True)
    else:
        word, is_adj, noun_ko, lemma = _pick(r, WEATHER_VERBS)
        if time is not None:
            en_t, ko_t = time_pair(time, keys)
    pred, k_main, k_neg, k_tense = pred_keys(pred_words(lemma, tense, neg, "final"), neg, keys)
    ko_n: list = []
    k_word: int | tuple = k_main
    if noun_ko is not None:
        k_noun = keys()
        ko_n = [(particle(noun_ko, "subject"), k_noun)]
        k_word = (k_noun, k_main)
    it = [("it", None)]
    if is_adj:
        if tense == "future":
            head = [("will", k_tense)]
            body = ([("not", k_neg)] if neg else []) + [("be", k_main), (word, k_word)]
        else:
            head = [(copula(tense, person), k_tense)]
            body = ([("not", k_neg)] if neg else []) + [(word, k_word)]
        en = head + it + body if question else it + head + body
    else:
        aux = {"present": "does", "past": "did", "future": "will"}[tense]
        if question:
            en = [(aux, k_tense)] + it + [(word, k_word)]
        elif neg:
            en = it + [(aux, k_tense), ("not", k_neg), (word, k_word)]
        elif tense == "future":
            en = it + [("will", k_tense), (word, k_word)]
        else:
            form = en_third_person(word) if tense == "present" else en_past(word)
            en = it + [(form, k_word if k_main == k_tense else (*k_word, k_tense))]
    return finish(en + en_t, ko_t + ko_n + pred, "?" if question else ".")


def yes_no(r: random.Random) -> Pair:
    keys = Keys()
    if r.random() < 0.3:
        en, ko, _ = render_adj(_adj_clause(r, questions=True), "ynq", keys)
    else:
        c = verb_clause(r, VERBS, transitive=None, questions=True, p_pron=0.4)
        en, ko, _ = render_verb(c, "ynq", keys)
    return finish(en, ko, "?")


def wh(r: random.Random) -> Pair:
    keys = Keys()
    x = r.random()
    if x < 0.4:
        c = verb_clause(r, WH_OBJ, transitive=True, questions=True, p_pron=0.4)
        c.place = None if c.place is not None and r.random() < 0.5 else c.place
        mode = "what"
    elif x < 0.7:
        c = verb_clause(r, WH_WHO, transitive=None, questions=True)
        mode = "who"  # the drawn subject is replaced by who (agreement: 3rd singular)
        if c.manner == "together":
            c.manner = None
    else:
        c = verb_clause(r, WH_WHERE, transitive=None, questions=True, p_pron=0.4)
        c.place, c.place_adj, mode = None, None, "where"
    en, ko, _ = render_verb(c, mode, keys)
    return finish(en, ko, "?")


def request_pair(r: random.Random) -> Pair:
    keys = Keys()
    c = Clause()
    v = c.verb = _pick(r, REQUEST)
    if v.obj and (not v.intr or r.random() < 0.75):
        c.obj = _object(r, v, None, request=True)
    _adjuncts(r, c, 0.8, False)
    c.neg = r.random() < 0.25
    if c.manner == "together":
        c.manner = None
    if not c.neg and r.random() < 0.15:
        c.time = _pick(r, REQUEST_TIMES)
    en, ko, _ = render_verb(c, "imp", keys)
    return finish(en, ko, ".")


def careful(r: random.Random) -> Pair:
    keys = Keys()
    k = keys()
    x = r.random()
    if x < 0.25:  # "Please be happy." <-> "행복하세요."
        a = _pick(r, [a for a in ADJECTIVES if a.imp])
        return finish([("please", k), ("be", k), (a.en, k)], [(ko_imperative(a.ko), k)], ".")
    en = [("please", k), ("be", k), ("careful", k)]
    ko = [(ko_imperative("조심하다"), k)]
    if x < 0.4:
        return finish(en, ko, ".")
    return careful_of(_pick(r, CAREFUL), en, ko, keys)


def careful_of(item: tuple[str, str], en: list, ko: list, keys: Keys) -> Pair:
    name, phrase = item
    kn = keys()
    en = en + [("of", None)] + [(w, None if w == "the" else kn) for w in phrase.split()]
    return finish(en, [(BY_EN[(name, False)].ko, kn)] + ko, ".")


_VERBS_FOR: dict[int, list[Verb]] = {}


def _verbs_for(subj: NP) -> list[Verb]:
    """Verbs that can take this subject (cached by noun / pronoun)."""
    key = id(subj.pron if subj.pron is not None else subj.noun)
    verbs = _VERBS_FOR.get(key)
    if verbs is None:
        verbs = _VERBS_FOR[key] = [v for v in VERBS if (
            v.pron_subj if subj.pron is not None else subj.noun in v.subj_nouns)]
    return verbs


def compound(r: random.Random, conj: str) -> Pair:
    keys = Keys()
    if r.random() < 0.3:
        c1 = _adj_clause(r, p_neg=0.15, p_time=0.0)
        c2 = _adj_clause(r, p_neg=0.3 if conj == "but" else 0.1, p_time=0.0)
        if c1.subj.same(c2.subj) or (c1.subj.noun is not None and c1.subj.noun is c2.subj.noun):
            raise Reject
        if c1.adj.state != c2.adj.state:
            c2.tense = c1.tense if c1.tense != "future" else "present"
            c1.tense = c2.tense
        else:
            c2.tense = c1.tense
        render = render_adj
    else:
        kw = dict(transitive=None, budget=0.5, p_time=0.0)
        c1 = verb_clause(r, VERBS, p_neg=0.15, **kw)
        p_neg2 = 0.3 if conj == "but" else 0.1
        if r.random() < 0.35:  # same subject, left out in both languages
            s1 = c1.subj
            c2 = verb_clause(r, _verbs_for(s1), p_neg=p_neg2, subj=s1, **kw)
        else:
            c2 = verb_clause(r, VERBS, p_neg=p_neg2, **kw)
        c2.elide = c1.subj.same(c2.subj)
        if c2.elide and not c1.neg and c1.verb.ko in ("가다", "오다", "만나다"):
            raise Reject  # "went to X and bought" is 가서 (textbook/clauses.py), never 가고
        tense = c1.tense
        if (c1.verb.no_future or c2.verb.no_future) and tense == "future":
            tense = "present"
        c1.tense = c2.tense = tense
        c1.freq = c2.freq = None
        if c2.obj is not None and c2.obj.pron is not None:
            me = c2.subj.person
            if me[0] in "12" and c2.obj.pron.person[0] == me[0]:
                raise Reject
        for c in (c1, c2):
            if _past_is_ambiguous(c, c.subj.person):
                raise Reject
        render = render_verb
    en1, ko1, k_last = render(c1, conj, keys)
    en2, ko2, _ = render(c2, "decl", keys)
    return finish(en1 + [(conj, k_last)] + en2, ko1 + ko2, ".")


