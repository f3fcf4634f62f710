"""Sentence rendering: token lists with alignment keys, turned into a Pair at the end.

A sentence is built as two token lists: English [(word, keys)] and Korean [(word, key)], where
keys are small ints shared by aligned words (English keys may be a tuple).
"""

from __future__ import annotations

from dataclasses import dataclass

from .hangul import particle, pred_words
from .lexicon import COPULA, MANNER_ADVERBS, WEATHER_ADJECTIVES, Adjective, Noun, Pronoun, Verb

# textbook pro-drop: feelings drop 저는 ("I am tired." <-> "피곤해요.") and questions drop 당신은,
# but not with the adjectives that also say the weather ("It is cold." <-> "추워요." and "Is it
# cold?" <-> "추워요?" already own that Korean)
_WEATHER_KO = frozenset(ko for _, ko in WEATHER_ADJECTIVES)
# adjectives a textbook writes as noun + adjective: 배고프다 -> 배가 고파요
SPLIT_ADJ = {"배고프다": ("배가", "고프다")}


def drops_subject(subj: NP | None, mode: str, adj: Adjective | None = None) -> bool:
    """Textbook pro-drop: "you" in questions, "I" with a feeling in statements."""
    if subj is None or subj.pron is None or adj is not None and adj.ko in _WEATHER_KO:
        return False
    if mode in ("ynq", "what", "where"):
        return subj.pron.person == "2"
    return mode == "decl" and adj is not None and adj.state and subj.pron.person == "1s"


def adj_pred(lemma: str, tense: str, neg: bool, ending: str, keys: Keys
             ) -> tuple[list, int, int, int]:
    """pred_keys of an adjective predicate, 배가 고파요 written as a textbook does (배가 joins
    the main key, so "hungry" aligns to both words)."""
    head, lemma = SPLIT_ADJ.get(lemma, ("", lemma))
    pred, k_main, k_neg, k_tense = pred_keys(pred_words(lemma, tense, neg, ending), neg, keys)
    if head:
        pred = [(head, k_main)] + pred
    return pred, k_main, k_neg, k_tense


@dataclass(frozen=True)
class Pair:
    """One sentence pair with its gold word alignment."""

    en: str  # "The big dog eats fish."
    ko: str  # "큰 개가 생선을 먹어요."
    align: tuple[tuple[int, int], ...]  # (en word index, ko word index) over s.split()
    # "" = both directions; "en" = trained only Korean -> English (a pro-dropped Korean whose
    # English is said another way in the other direction); "ko" = only English -> Korean
    to: str = ""


class Reject(Exception):
    """This derivation is not wanted (too long, ambiguous English); draw another."""


class Keys:
    __slots__ = ("n",)

    def __init__(self) -> None:
        self.n = 0

    def __call__(self) -> int:
        self.n += 1
        return self.n


class NP:
    """A noun phrase: a noun (maybe plural, maybe with an adjective) or a pronoun."""

    __slots__ = ("noun", "pron", "plural", "adj")

    def __init__(self, noun: Noun | None = None, pron: Pronoun | None = None,
                 plural: bool = False, adj: Adjective | None = None) -> None:
        self.noun, self.pron, self.plural, self.adj = noun, pron, plural, adj

    @property
    def person(self) -> str:
        if self.pron is not None:
            return self.pron.person
        return "3p" if self.plural else "3s"

    def same(self, other: NP | None) -> bool:
        return other is not None and (self.noun, self.pron, self.plural, self.adj) == (
            other.noun, other.pron, other.plural, other.adj)

    def en_pron(self, key: int, obj: bool = False) -> list:
        return [(self.pron.en_obj if obj else self.pron.en, key)]

    def ko(self, key: int, kind: str, adj_key: int | None) -> list:
        if self.pron is not None:
            return [(particle(self.pron.ko, kind), key)]
        word = self.noun.ko + "들" if self.plural else self.noun.ko
        out = [(self.adj.attr_ko, adj_key)] if self.adj is not None else []
        out.append((particle(word, kind), key))
        return out


def np_pair(np: NP, keys: Keys, kind: str, obj: bool = False) -> tuple[list, list]:
    """English and Korean tokens of a noun phrase with shared keys."""
    key = keys()
    if np.pron is not None:
        return np.en_pron(key, obj), np.ko(key, kind, None)
    adj_key = keys() if np.adj is not None else None
    noun = np.noun
    en: list = [("the", None)] if noun.article else []
    if np.adj is not None:
        en.append((np.adj.en, adj_key))
    en += [(w, key) for w in (noun.pl_toks if np.plural else noun.toks)]
    return en, np.ko(key, kind, adj_key)


class Clause:
    """Everything one clause needs; rendered by _render_verb / _render_adj."""

    __slots__ = ("subj", "verb", "adj", "obj", "adjunct", "place", "place_adj", "manner",
                 "freq", "time", "tense", "neg", "intens", "elide")

    def __init__(self) -> None:
        self.subj: NP | None = None
        self.verb: Verb | None = None
        self.adj: Adjective | None = None
        self.obj: NP | None = None
        self.adjunct: tuple | None = None  # ("with" | "tool" | "by", noun, plural)
        self.place: tuple | None = None  # ("loc" | "dir" | "arrive", place noun)
        self.place_adj: Adjective | None = None
        self.manner: str | None = None
        self.freq: tuple | None = None
        self.time: tuple | None = None
        self.tense = "present"
        self.neg = False
        self.intens: tuple | None = None
        self.elide = False


def pred_keys(words: tuple[str, ...], neg: bool, keys: Keys) -> tuple[list, int, int, int]:
    """Korean predicate tokens and the keys of its main, negation and tense-carrying words."""
    ks = [keys() for _ in words]
    main, last = ks[0], ks[-1]
    negk = ks[1] if neg and len(ks) > 1 else main
    return list(zip(words, ks)), main, negk, last


def _adjunct_pair(adjunct: tuple, keys: Keys) -> tuple[list, list]:
    kind, noun, plural = adjunct
    key = keys()
    if kind == "by":
        return [("by", key)] + [(w, key) for w in noun.toks], [(particle(noun.ko, "instrument"),
                                                                key)]
    en: list = [("with", key)]
    if not plural and noun.article:
        en.append(("an" if noun.an else "a", None))
    en += [(w, key) for w in (noun.pl_toks if plural else noun.toks)]
    ko_word = noun.ko + "들" if plural else noun.ko
    return en, [(particle(ko_word, "with" if kind == "with" else "instrument"), key)]


def place_pair(place: tuple, adj: Adjective | None, keys: Keys) -> tuple[list, list]:
    kind, noun = place
    key = keys()
    prep = "to" if kind == "dir" else noun.loc
    en: list = [(prep, key)]
    if noun.article and not noun.bare:
        en.append(("the", None))
    ko: list = []
    if adj is not None:
        adj_key = keys()
        en.append((adj.en, adj_key))
        ko.append((adj.attr_ko, adj_key))
    en += [(w, key) for w in noun.toks]
    ko.append((noun.ko + ("에서" if kind == "loc" else "에"), key))
    return en, ko


def _word_pair(words: tuple[str, str] | None, keys: Keys) -> tuple[list, list]:
    """An optional (English word, Korean word) under one new key; ([], []) and no key when None."""
    if words is None:
        return [], []
    k = keys()
    return [(words[0], k)], [(words[1], k)]


def time_pair(time: tuple, keys: Keys, topic: bool = False) -> tuple[list, list]:
    key = keys()
    en = [(w, None if w == "the" else key) for w in time[0]]
    ko = [(w, key) for w in time[1]]
    if topic:
        ko[-1] = (particle(ko[-1][0], "topic"), key)
    return en, ko


def render_verb(c: Clause, mode: str, keys: Keys) -> tuple[list, list, int]:
    """mode: decl | and | but | ynq | what | who | where | imp. Returns (en, ko, last key)."""
    v = c.verb
    neg_ko = c.neg and v.neg_ko is not None
    lemma = v.neg_ko if neg_ko else v.ko
    ending = {"and": "and", "but": "but", "imp": "request"}.get(mode, "final")
    pred, k_main, k_neg, k_tense = pred_keys(
        pred_words(lemma, c.tense, c.neg and not neg_ko, ending), c.neg and not neg_ko, keys)
    verb_tail = [(w, k_main) for w in v.part]

    # subject
    en_front: list = []
    en_s: list = []
    ko_s: list = []
    person = "3s"
    if mode == "who":
        k = keys()
        en_s, ko_s = [("who", k)], [("누가", k)]
    elif mode != "imp" and c.subj is not None:
        person = c.subj.person
        en_s, ko_s = np_pair(c.subj, keys, "topic" if c.subj.pron else "subject")
        if c.elide:
            en_s, ko_s = [], []
        elif drops_subject(c.subj, mode):  # "Do you eat fish?" <-> "생선을 먹어요?"
            en_s, ko_s = [(w, k_tense) for w, _ in en_s], []

    # English verb group
    question = mode in ("ynq", "what", "where")
    do = "does" if person == "3s" else "do"
    aux = {"present": do, "past": "did", "future": "will"}[c.tense]
    en_v: list
    if mode == "imp":
        en_v = [("please", k_tense)]
        if c.neg:
            en_v += [("do", k_tense), ("not", k_neg)]
        en_v += [(v.base, k_main), *verb_tail]
    elif question:
        en_v = [(v.base, k_main), *verb_tail]
    elif c.neg:
        en_v = [(aux, k_tense), ("not", k_neg), (v.base, k_main), *verb_tail]
    elif c.tense == "future":
        en_v = [("will", k_tense), (v.base, k_main), *verb_tail]
    else:
        if c.tense == "present":
            form = v.s3 if person == "3s" else v.base
        else:
            form = v.past
        en_v = [(form, (k_main, k_tense) if k_main != k_tense else k_main), *verb_tail]
    en_freq, ko_freq = _word_pair(c.freq, keys)

    en_o: list = []
    ko_o: list = []
    if mode == "what":
        k = keys()
        wh_en, wh_ko = ("who", "누구를") if c.obj.pron or "person" in c.obj.noun.tags else (
            "what", "무엇을")
        en_front = [(wh_en, k)]
        ko_o = [(wh_ko, k)]
    elif c.obj is not None:
        en_o, ko_o = np_pair(c.obj, keys, "object", obj=True)
    en_a: list = []
    ko_a: list = []
    if c.adjunct is not None:
        en_a, ko_a = _adjunct_pair(c.adjunct, keys)
    en_p: list = []
    ko_p: list = []
    if mode == "where":
        k = keys()
        en_front = [("where", k)]
        ko_p = [("어디에" if v.motion or v.arrive else "어디에서", k)]
    elif c.place is not None:
        en_p, ko_p = place_pair(c.place, c.place_adj, keys)
    en_m: list = []
    ko_m: list = []
    if c.manner is not None:
        k = keys()
        en_m, ko_m = [(c.manner, k)], [(MANNER_ADVERBS[c.manner], k)]
    en_t: list = []
    ko_t: list = []
    if c.time is not None:
        en_t, ko_t = time_pair(c.time, keys)

    if c.manner in ("early", "late"):  # "goes to school early"
        rest = en_o + en_a + en_p + en_m + en_t
    else:  # "plays golf well at school"
        rest = en_o + en_m + en_a + en_p + en_t
    if question:
        front = en_front if mode in ("what", "where") else []
        en = front + [(aux, k_tense)] + en_s + en_v + rest
    else:
        en = en_s + en_freq + en_v + rest
    ko = ko_t + ko_s + ko_freq + ko_a + ko_p + ko_o + ko_m + pred
    return en, ko, k_tense


def copula(tense: str, person: str) -> str:
    return COPULA.get((tense, person), "are" if tense == "present" else "were")


def render_adj(c: Clause, mode: str, keys: Keys) -> tuple[list, list, int]:
    """Adjective predicate: mode decl | and | but | ynq."""
    a = c.adj
    ending = mode if mode in ("and", "but") else "final"
    pred, k_main, k_neg, k_tense = adj_pred(a.ko, c.tense, c.neg, ending, keys)
    en_s, ko_s = np_pair(c.subj, keys, "topic")
    if drops_subject(c.subj, mode, a):  # "I am tired." <-> "피곤해요."
        en_s, ko_s = [(w, k_tense) for w, _ in en_s], []
    en_i, ko_i = _word_pair(c.intens, keys)
    en_t: list = []
    ko_t: list = []
    if c.time is not None:
        en_t, ko_t = time_pair(c.time, keys)
    adj = [(a.en, k_main)]
    if c.tense == "future":
        head = [("will", k_tense)]
        tail = ([("not", k_neg)] if c.neg else []) + [("be", k_main)] + en_i + adj
    else:
        head = [(copula(c.tense, c.subj.person), k_tense)]
        tail = ([("not", k_neg)] if c.neg else []) + en_i + adj
    if mode == "ynq":
        en = head + en_s + tail + en_t
    else:
        en = en_s + head + tail + en_t
    return en, ko_t + ko_s + ko_i + pred, k_tense


def finish(en: list, ko: list, punct: str) -> Pair:
    if len(en) > 16:
        raise Reject
    where: dict[int | None, tuple[int, ...]] = {}
    for j, (_, k) in enumerate(ko):
        where[k] = where[k] + (j,) if k in where else (j,)
    get = where.get
    align = sorted([(i, j) for i, (_, ks) in enumerate(en) if ks is not None
                    for k in (ks if ks.__class__ is tuple else (ks,)) for j in get(k, ())])
    en_text = " ".join([w for w, _ in en])
    return Pair(en_text[0].upper() + en_text[1:] + punct, " ".join([w for w, _ in ko]) + punct,
                tuple(align))


