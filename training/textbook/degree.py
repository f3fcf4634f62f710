"""Textbook area: comparison and degree, 도 (also / too) and 만 (only); noun modifiers live in
degree_modifiers.py.

Conventions (each English sentence has one Korean rendering and back):

* comparison always carries 더: "The dog is bigger than the cat." <-> "개가 고양이보다 더
  커요."; "much bigger" <-> 훨씬 더, "a little bigger" <-> 조금 더; the subject takes 이/가;
* superlative: "The dog is the biggest." <-> "개가 제일 커요."; 가장 is read one way only
  ("개가 가장 커요." -> the same English); with a verb, "I like apples the most." <-> "저는
  사과를 제일 좋아해요.";
* a count-noun subject may be "this" / "that" / "that ... over there" <-> 이 / 그 / 저 as in
  everyday.py ("This bag is too expensive." <-> "이 가방은 너무 비싸요.");
* degree adverbs on an adjective predicate keep the old grammar's topic subject: "too" <->
  너무, "a little" <-> 조금 ("very" <-> 아주 is already the old grammar's intensifier);
* 도 on the subject is "also" before the verb ("I also drink coffee." <-> "저도 커피를
  마셔요."), 도 on the object is "too" at the end ("I drink coffee too." <-> "저는 커피도
  마셔요."); 만 on the object is "only" before the verb ("I only drink water." <-> "저는 물만
  마셔요.");
* objects in the 도 / 만 sentences are generic: a count noun is a bare English plural ("I only eat
  apples." <-> "저는 사과만 먹어요.");
* pro-drop: a Korean statement without 저는 reads as "I" (one-way pairs, to="en").

Alignment: a comparative or superlative word aligns with 더 / 제일 and the predicate ("bigger"
<-> 더, 커요; "more" <-> 더, "expensive" <-> 비싸요); "than" and the second noun <-> 고양이보다;
"also" / "too" / "only" <-> the word carrying 도 / 만; the copula <-> the predicate; in a
pro-dropped pair "I" <-> the verb.
"""

from __future__ import annotations

import random

from ..everyday import demonstrative_np
from ..hangul import particle, pred_words
from ..lexicon import ADJECTIVES, PRONOUNS, TIMES_BY_TENSE, TRANSITIVE, Adjective, Noun, Pronoun
from ..render import Keys, Pair, Reject, adj_pred, copula, finish, time_pair
from . import degree_modifiers
from .degree_modifiers import clash

# English comparative and superlative of the adjectives that compare sensibly: (comparative,
# superlative); "more" / "most" forms are written as two words. Only these are used here.
FORMS: dict[str, tuple[str, str]] = {
    "big": ("bigger", "biggest"), "small": ("smaller", "smallest"),
    "good": ("better", "best"), "bad": ("worse", "worst"),
    "cold": ("colder", "coldest"), "hot": ("hotter", "hottest"),
    "warm": ("warmer", "warmest"), "cool": ("cooler", "coolest"),
    "kind": ("kinder", "kindest"), "smart": ("smarter", "smartest"),
    "young": ("younger", "youngest"), "pretty": ("prettier", "prettiest"),
    "cute": ("cuter", "cutest"), "cheap": ("cheaper", "cheapest"),
    "heavy": ("heavier", "heaviest"), "light": ("lighter", "lightest"),
    "fast": ("faster", "fastest"), "slow": ("slower", "slowest"),
    "long": ("longer", "longest"), "short": ("shorter", "shortest"),
    "quiet": ("quieter", "quietest"), "noisy": ("noisier", "noisiest"),
    "clean": ("cleaner", "cleanest"), "dirty": ("dirtier", "dirtiest"),
    "easy": ("easier", "easiest"), "sweet": ("sweeter", "sweetest"),
    "spicy": ("spicier", "spiciest"), "salty": ("saltier", "saltiest"),
    "fresh": ("fresher", "freshest"), "soft": ("softer", "softest"),
    "strong": ("stronger", "strongest"), "weak": ("weaker", "weakest"),
    "brave": ("braver", "bravest"), "lazy": ("lazier", "laziest"),
    "safe": ("safer", "safest"), "bright": ("brighter", "brightest"),
    "dark": ("darker", "darkest"), "healthy": ("healthier", "healthiest"),
    "narrow": ("narrower", "narrowest"), "high": ("higher", "highest"),
    "low": ("lower", "lowest"), "scary": ("scarier", "scariest"),
    "slim": ("slimmer", "slimmest"), "poor": ("poorer", "poorest"),
    "sour": ("sourer", "sourest"), "busy": ("busier", "busiest"),
    "expensive": ("more expensive", "most expensive"),
    "delicious": ("more delicious", "most delicious"),
    "interesting": ("more interesting", "most interesting"),
    "boring": ("more boring", "most boring"), "difficult": ("more difficult", "most difficult"),
    "diligent": ("more diligent", "most diligent"), "famous": ("more famous", "most famous"),
    "dangerous": ("more dangerous", "most dangerous"), "honest": ("more honest", "most honest"),
    "spacious": ("more spacious", "most spacious"),
    "comfortable": ("more comfortable", "most comfortable"),
    "beautiful": ("more beautiful", "most beautiful"),
    "important": ("more important", "most important"), "tired": ("more tired", "most tired"),
}

# feelings ("hot" 덥다, "cold" 춥다 of a person) compare badly in English ("hotter than him");
# those adjectives compare only their non-person nouns (seasons); busy and tired compare people
FELT = frozenset(a.en for a in ADJECTIVES if a.state) - {"busy", "tired"}


def comparable_nouns(a: Adjective) -> list[Noun]:
    if a.en in FELT:
        return [n for n in a.pred_nouns if not n.tags & {"person", "adult", "kid"}]
    return a.pred_nouns


COMPARABLE = [a for a in ADJECTIVES if a.pred and a.en in FORMS and comparable_nouns(a)]
# person adjectives also compare pronouns: "I am busier than you."
PERSON_COMPARABLE = [a for a in COMPARABLE if a.pron and a.en not in FELT]
DEGREE_ADJ = [a for a in ADJECTIVES if a.pred and a.pred_nouns]
LITTLE_ADJ = [a for a in DEGREE_ADJ if not a.state]
# verbs for 도 / 만: a plain transitive verb (no particle such as "wait for")
OBJ_VERBS = [v for v in TRANSITIVE if not v.part and v.obj_nouns]
PRON_VERBS = [v for v in OBJ_VERBS if v.pron_subj]


def _pick(r: random.Random, items: list):
    if not items:
        raise Reject
    return items[int(r.random() * len(items))]


def _tense(r: random.Random, future: bool = True) -> str:
    x = r.random()
    if x < 0.55:
        return "present"
    return "past" if x < 0.85 or not future else "future"


def _subject_ko(pron: Pronoun) -> str:
    """A pronoun with 이/가: 저 -> 제가 (the humble form's own shape)."""
    return "제가" if pron.ko == "저" else particle(pron.ko, "subject")


def _noun_en(noun: Noun, k: int, generic: bool = False) -> list:
    """English words of a noun; generic count nouns (objects of 도 / 만) are bare plurals."""
    if generic and noun.article and noun.pl_toks is not None:
        return [(w, k) for w in noun.pl_toks]
    return ([("the", None)] if noun.article else []) + [(w, k) for w in noun.toks]


def _noun_np(r: random.Random, noun: Noun, keys: Keys, kind: str) -> tuple[list, list]:
    """A noun with "the" or, for a count noun, a demonstrative as the everyday grammar says
    them (this <-> 이, that <-> 그, that ... over there <-> 저); kind: a particle kind or "도"."""
    if noun.article and r.random() < 0.4:
        np = demonstrative_np(r, noun, keys)
        head = np.head + "도" if kind == "도" else particle(np.head, kind)
        return np.en, np.ko + [(head, np.key)]
    k = keys()
    return _noun_en(noun, k), [(noun.ko + "도" if kind == "도" else particle(noun.ko, kind), k)]


def _person(pron: Pronoun | None) -> str:
    return pron.person if pron is not None else "3s"


def _two_nouns(r: random.Random, a: Adjective) -> tuple[Noun, Noun]:
    """Two different nouns the adjective describes that share one of its tags (dog / cat)."""
    nouns = comparable_nouns(a)
    first = _pick(r, nouns)
    shared = sorted(first.tags & a.tags)
    tag = _pick(r, shared)
    second = _pick(r, [n for n in nouns if tag in n.tags and n.ko != first.ko
                       and n.en != first.en])
    return first, second


def comparison(r: random.Random) -> Pair:
    """A이/가 B보다 (훨씬 / 조금) 더 + adjective; statements and yes/no questions."""
    keys = Keys()
    tense = _tense(r, future=False)
    pron = None
    if r.random() < 0.15:
        a = _pick(r, PERSON_COMPARABLE)
        pron, other = r.sample(PRONOUNS, 2)
        k_s, k_b = keys(), keys()
        en_s, ko_s = [(pron.en, k_s)], [(_subject_ko(pron), k_s)]
        en_b, ko_b = [("than", k_b), (other.en_obj, k_b)], [(other.ko + "보다", k_b)]
    else:
        a = _pick(r, COMPARABLE)
        first, second = _two_nouns(r, a)
        en_s, ko_s = _noun_np(r, first, keys, "subject")
        en_b, ko_b = _noun_np(r, second, keys, "topic")
        # "than" joins the second noun's key; 보다 replaces the particle
        k_b = ko_b[-1][1]
        en_b = [("than", k_b)] + en_b
        ko_b[-1] = (second.ko + "보다", k_b)
    pred, k_main, _, k_tense = _pred(a.ko, tense, keys)
    k_more = keys()
    comp = FORMS[a.en][0].split()
    en_adj = ([("more", k_more), (comp[1], k_main)] if len(comp) == 2
              else [(comp[0], (k_more, k_main))])
    x = r.random()
    en_deg: list = []
    ko_deg: list = []
    if x < 0.15:
        k = keys()
        en_deg, ko_deg = [("much", k)], [("훨씬", k)]
    elif x < 0.3:
        k = keys()
        en_deg, ko_deg = [("a", k), ("little", k)], [("조금", k)]
    be = (copula(tense, _person(pron)), k_tense)
    question = r.random() < 0.2
    if question:
        en = [be] + en_s + en_deg + en_adj + en_b
    else:
        en = en_s + [be] + en_deg + en_adj + en_b
    ko = ko_s + ko_b + ko_deg + [("더", k_more)] + pred
    return finish(en, ko, "?" if question else ".")


def _pred(lemma: str, tense: str, keys: Keys) -> tuple[list, int, int, int]:
    """A positive final predicate, verb or adjective (배가 고파요 as render.adj_pred writes it)."""
    return adj_pred(lemma, tense, False, "final", keys)


def _superlative(r: random.Random, word: str) -> Pair:
    keys = Keys()
    tense = _tense(r, future=False)
    pron = None
    k_s = keys()
    if r.random() < 0.15:
        a = _pick(r, PERSON_COMPARABLE)
        pron = _pick(r, PRONOUNS)
        en_s, ko_s = [(pron.en, k_s)], [(_subject_ko(pron), k_s)]
    else:
        a = _pick(r, COMPARABLE)
        noun = _pick(r, comparable_nouns(a))
        en_s, ko_s = _noun_np(r, noun, keys, "subject")
    pred, k_main, _, k_tense = _pred(a.ko, tense, keys)
    k_most = keys()
    sup = FORMS[a.en][1].split()
    en_adj = [("the", None)] + ([("most", k_most), (sup[1], k_main)] if len(sup) == 2
                                else [(sup[0], (k_most, k_main))])
    en = en_s + [(copula(tense, _person(pron)), k_tense)] + en_adj
    pair = finish(en, ko_s + [(word, k_most)] + pred, ".")
    return pair if word == "제일" else Pair(pair.en, pair.ko, pair.align, to="en")


def superlative(r: random.Random) -> Pair:
    """A이/가 제일 + adjective <-> "A is the biggest / the most expensive"."""
    return _superlative(r, "제일")


def superlative_gajang(r: random.Random) -> Pair:
    """가장 read one way: "개가 가장 커요." -> "The dog is the biggest."."""
    return _superlative(r, "가장")


_LIKE = [v for v in OBJ_VERBS if v.en == "like"]


def like_most(r: random.Random) -> Pair:
    """제일 with a verb: "I like apples the most." <-> "저는 사과를 제일 좋아해요."."""
    keys = Keys()
    v = _pick(r, _LIKE)
    tense = "past" if r.random() < 0.2 else "present"
    k_s = keys()
    if r.random() < 0.6:
        pron = _pick(r, PRONOUNS)
        person = pron.person
        en_s, ko_s = [(pron.en, k_s)], [(particle(pron.ko, "topic"), k_s)]
    else:
        noun = _pick(r, v.subj_nouns)
        person = "3s"
        en_s, ko_s = _noun_en(noun, k_s), [(particle(noun.ko, "subject"), k_s)]
    obj = _pick(r, v.obj_nouns)
    if obj.tags & {"person", "proper", "place"}:  # "likes teachers the most" reads oddly
        raise Reject
    k_o, k_most = keys(), keys()
    pred, k_main, _, k_tense = _pred(v.ko, tense, keys)
    form = v.past if tense == "past" else v.s3 if person == "3s" else v.base
    en = en_s + [(form, k_main)] + _noun_en(obj, k_o, generic=True) + [("the", None),
                                                                       ("most", k_most)]
    ko = ko_s + [(particle(obj.ko, "object"), k_o), ("제일", k_most)] + pred
    return finish(en, ko, ".")


def _degree(r: random.Random, en_words: tuple[str, ...], ko_word: str) -> Pair:
    """Topic + degree adverb + adjective: "The bag is too expensive." <-> "가방은 너무 비싸요."."""
    keys = Keys()
    tense = _tense(r, future=False)
    # "a little" reads badly with feelings ("a little glad"): only qualities take it
    a = _pick(r, DEGREE_ADJ if ko_word == "너무" else LITTLE_ADJ)
    k_s = keys()
    pron = None
    if a.pron and r.random() < 0.3:
        pron = _pick(r, PRONOUNS)
        en_s, ko_s = [(pron.en, k_s)], [(particle(pron.ko, "topic"), k_s)]
    else:
        noun = _pick(r, a.pred_nouns)
        en_s, ko_s = _noun_np(r, noun, keys, "topic")
    pred, k_main, _, k_tense = _pred(a.ko, tense, keys)
    k_deg = keys()
    en = en_s + [(copula(tense, _person(pron)), k_tense)] + [(w, k_deg) for w in en_words]
    en.append((a.en, k_main))
    en_t: list = []
    ko_t: list = []
    if pron is not None and r.random() < 0.4:  # how someone felt: "I was too tired yesterday."
        en_t, ko_t = time_pair(_pick(r, TIMES_BY_TENSE[tense]), keys)
    return finish(en + en_t, ko_t + ko_s + [(ko_word, k_deg)] + pred, ".")


def too(r: random.Random) -> Pair:
    """너무 + adjective <-> "too"."""
    return _degree(r, ("too",), "너무")


def a_little(r: random.Random) -> Pair:
    """조금 + adjective <-> "a little"."""
    return _degree(r, ("a", "little"), "조금")


def _en_verb(v, tense: str, person: str, keys_main: int, k_tense: int) -> list:
    if tense == "future":
        return [("will", k_tense), (v.base, keys_main)]
    form = v.past if tense == "past" else v.s3 if person == "3s" else v.base
    return [(form, (keys_main, k_tense) if keys_main != k_tense else keys_main)]


def _verb_frame(r: random.Random, mark: str) -> Pair:
    """도 / 만 with a transitive verb. mark: also_subject | also_object | only."""
    keys = Keys()
    tense = _tense(r)
    use_pron = r.random() < 0.5
    v = _pick(r, PRON_VERBS if use_pron else OBJ_VERBS)
    if tense == "past" and v.past == v.base:
        tense = "present"  # "I read books." would be either tense
    if tense == "future" and v.no_future:
        tense = "present"
    k_s = keys()
    pron = _pick(r, PRONOUNS) if use_pron else None
    if pron is not None:
        en_s = [(pron.en, k_s)]
        ko_s = [(pron.ko + "도", k_s)] if mark == "also_subject" else [
            (particle(pron.ko, "topic"), k_s)]
    else:
        noun = _pick(r, v.subj_nouns)
        en_s = _noun_en(noun, k_s)
        ko_s = [(noun.ko + "도", k_s)] if mark == "also_subject" else [
            (particle(noun.ko, "subject"), k_s)]
    obj = _pick(r, v.obj_nouns)
    if (pron is None and obj.ko == noun.ko) or clash(v, obj):
        raise Reject
    k_o = keys()
    words = pred_words(v.ko, tense, False, "final")
    ks = [keys() for _ in words]
    pred = list(zip(words, ks))
    en_v = _en_verb(v, tense, _person(pron), ks[0], ks[-1])
    time = None
    if tense != "present" and r.random() < 0.4:
        time = _pick(r, TIMES_BY_TENSE[tense])
    en_t, ko_t = time_pair(time, keys) if time is not None else ([], [])
    if mark == "also_subject":
        en_o = _noun_en(obj, k_o, generic=True)
        ko_o = [(particle(obj.ko, "object"), k_o)]
        # "also" goes after the auxiliary: "I will also drink coffee."
        en_v = en_v[:1] + [("also", k_s)] + en_v[1:] if tense == "future" else [
            ("also", k_s)] + en_v
        en = en_s + en_v + en_o + en_t
    elif mark == "also_object":
        en_o = _noun_en(obj, k_o, generic=True) + [("too", k_o)]
        ko_o = [(obj.ko + "도", k_o)]
        en = en_s + en_v + en_o + en_t
    else:
        en_o = _noun_en(obj, k_o, generic=True)
        ko_o = [(obj.ko + "만", k_o)]
        en_v = en_v[:1] + [("only", k_o)] + en_v[1:] if tense == "future" else [
            ("only", k_o)] + en_v
        en = en_s + en_v + en_o + en_t
    pair = finish(en, ko_t + ko_s + ko_o + pred, ".")
    if mark != "also_subject" and pron is not None and pron.ko == "저" and r.random() < 0.3:
        # pro-drop: the Korean without 저는 still means "I" (one way)
        # "I" then aligns with the verb, which carries the understood subject
        pair = finish([(en[0][0], ks[0])] + en[1:], ko_t + ko_o + pred, ".")
        return Pair(pair.en, pair.ko, pair.align, to="en")
    return pair


def also_subject(r: random.Random) -> Pair:
    """Subject + 도: "I also drink coffee." <-> "저도 커피를 마셔요."."""
    return _verb_frame(r, "also_subject")


def also_object(r: random.Random) -> Pair:
    """Object + 도: "I drink coffee too." <-> "저는 커피도 마셔요."."""
    return _verb_frame(r, "also_object")


def only(r: random.Random) -> Pair:
    """Object + 만: "I only drink water." <-> "저는 물만 마셔요."."""
    return _verb_frame(r, "only")


def also_adjective(r: random.Random) -> Pair:
    """Subject + 도 with an adjective: "The apple is also delicious." <-> "사과도 맛있어요."."""
    keys = Keys()
    tense = _tense(r, future=False)
    a = _pick(r, DEGREE_ADJ)
    k_s = keys()
    pron = None
    if a.pron and r.random() < 0.3:
        pron = _pick(r, PRONOUNS)
        en_s, ko_s = [(pron.en, k_s)], [(pron.ko + "도", k_s)]
    else:
        noun = _pick(r, a.pred_nouns)
        en_s, ko_s = _noun_np(r, noun, keys, "도")
    pred, k_main, _, k_tense = _pred(a.ko, tense, keys)
    k_do = ko_s[-1][1]  # "also" aligns with the word carrying 도
    en = en_s + [(copula(tense, _person(pron)), k_tense), ("also", k_do), (a.en, k_main)]
    return finish(en, ko_s + pred, ".")


MAKERS: tuple = (
    (0.20, "degree_comparison", comparison),
    (0.10, "degree_superlative", superlative),
    (0.03, "degree_superlative_gajang", superlative_gajang),
    (0.04, "degree_like_most", like_most),
    (0.07, "degree_too", too),
    (0.05, "degree_a_little", a_little),
    (0.07, "degree_also_subject", also_subject),
    (0.06, "degree_also_object", also_object),
    (0.05, "degree_also_adjective", also_adjective),
    (0.09, "degree_only", only),
) + degree_modifiers.MAKERS

DESCRIPTIONS: dict[str, tuple[str, str]] = {
    "degree_comparison": (
        "Comparison: A이/가 B보다 더 + adjective (much: 훨씬 더, a little: 조금 더).",
        "비교: A이/가 B보다 더 + 형용사 (훨씬 더, 조금 더)."),
    "degree_superlative": (
        "Superlative: 제일 + adjective (the biggest, the most expensive).",
        "최상급: 제일 + 형용사 (제일 커요, 제일 비싸요)."),
    "degree_superlative_gajang": (
        "Superlative with 가장, read as the same English as 제일 (Korean to English only).",
        "가장 + 형용사: 제일과 같은 영어로 옮겨요 (한국어에서 영어로만)."),
    "degree_like_most": (
        "Liking most: object + 제일 좋아해요 (I like apples the most).",
        "제일 좋아해요: 저는 사과를 제일 좋아해요."),
    "degree_too": ("Too: 너무 + adjective.", "정도: 너무 + 형용사."),
    "degree_a_little": ("A little: 조금 + adjective.", "정도: 조금 + 형용사."),
    "degree_also_subject": (
        "Also on the subject: noun + 도 (I also drink coffee).",
        "주어 + 도: 저도 커피를 마셔요."),
    "degree_also_object": (
        "Too on the object: noun + 도 (I drink coffee too).",
        "목적어 + 도: 저는 커피도 마셔요."),
    "degree_also_adjective": (
        "Also with an adjective: noun + 도 + adjective (The apple is also delicious).",
        "주어 + 도 + 형용사: 사과도 맛있어요."),
    "degree_only": ("Only: object + 만 (I only drink water).", "목적어 + 만: 저는 물만 마셔요."),
} | degree_modifiers.DESCRIPTIONS
