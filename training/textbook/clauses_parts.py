"""Building blocks of the linked-clause constructions (clauses.py): subjects, the two clauses'
verb phrases, first-clause states and weather, English -ing forms and the tables that keep the
two clauses meaningful together (tired -> sleep, sick -> go to the hospital ...)."""

from __future__ import annotations

import random

from ..hangul import eu_form, infinitive, lemma_stem, particle, past_stem, pred_words, prospective
from ..lexicon import (
    ADJECTIVES,
    BY_EN,
    PLACES,
    PRONOUNS,
    VERBS,
    WEATHER_ADJECTIVES,
    WEATHER_VERBS,
    Adjective,
    Noun,
    Pronoun,
    Verb,
)
from ..render import NP, Keys, Reject, copula, np_pair, place_pair, pred_keys
from ..words import en_ing

# verbs whose meaning does not suit a linked clause ("I am tired, so I know ...")
_STATIVE = {"know", "love", "hate", "like", "want", "remember", "understand", "live", "lose",
            "find", "receive", "arrive", "leave", "fly", "build", "sell", "plant", "invite"}
# one-word Korean lemmas only: a token here is one Korean word (alignment counts words)
ACTION = [v for v in VERBS if v.pron_subj and v.en not in _STATIVE and v.ko != "헤엄치다"
          and " " not in v.ko]
GO = next(v for v in VERBS if v.en == "go")
COME = next(v for v in VERBS if v.en == "come")
MEET = next(v for v in VERBS if v.en == "meet")
# actions done at a place one goes to (purpose -(으)러, sequence -아/어서, "if I go to ...")
AT_PLACE = [v for v in ACTION if v.places and not v.motion]
STATE = {a.en: a for a in ADJECTIVES if a.state and a.pred and a.pron and " " not in a.ko}
BY_VERB_EN: dict[str, list[Verb]] = {}
for _v in ACTION:
    BY_VERB_EN.setdefault(_v.en, []).append(_v)

# first clause -> second-clause actions that follow from it; "go@hospital" = go to a place
REASON_ACTIONS: dict[str, tuple[str, ...]] = {
    "tired": ("sleep", "rest", "take", "drink", "go@house"),
    "hungry": ("eat", "cook", "order:food", "buy:food", "go@restaurant"),
    "thirsty": ("drink", "buy:drink", "order:drink"),
    "sick": ("rest", "sleep", "go@hospital"),
    "busy": ("work", "study", "take"),
    "bored": ("watch", "read", "play", "take a walk", "listen to", "go@park"),
    "sleepy": ("sleep", "drink", "go@house"),
    "happy": ("sing", "dance", "laugh"),
    "sad": ("cry", "listen to", "call:person"),
    "lonely": ("call:person", "meet", "go@cafe"),
    "cold": ("wear:warmcloth", "close", "drink", "take", "go@house"),
    "hot": ("open", "swim", "drink", "go@beach"),
    "full": ("take a walk", "rest", "exercise"),
    "glad": ("sing", "dance", "laugh"),
    "rain": ("take", "read", "watch", "clean", "bring"),
    "snow": ("take", "wear:warmcloth", "clean", "go@house"),
    "windy": ("wear:warmcloth", "close", "go@house"),
    "warm": ("take a walk", "exercise", "go@park", "hike"),
    "cool": ("take a walk", "exercise", "go@mountain", "hike"),
    "sunny": ("take a walk", "go@park", "go@beach", "hike"),
    "cloudy": ("watch", "read", "go@museum"),
}
STATES = [a for a in STATE.values() if a.en in REASON_ACTIONS]
# an action as the reason: verb, its manner adverb, what follows (a state or an action)
VERB_REASONS = (
    ("get up", "late", ("take",)), ("exercise", "hard", ("tired", "hungry", "thirsty", "rest")),
    ("study", "hard", ("tired", "sleepy", "rest")), ("work", "late", ("tired", "sleep", "take")),
)
WEATHER = [(en, lemma, None) for en, lemma in WEATHER_ADJECTIVES if en in REASON_ACTIONS] + [
    (en, lemma, noun) for en, is_adj, noun, lemma in WEATHER_VERBS if en in REASON_ACTIONS]

# "because of" + noun: (English words, Korean noun, effects: state adjectives or actions)
CAUSES = (
    (("the", "exam"), "시험", ("busy", "tired", "study", "read")),
    (("homework",), "숙제", ("busy", "tired", "study")),
    (("work",), "일", ("busy", "tired", "take", "drink")),
    (("a", "cold"), "감기", ("sick", "rest", "sleep", "go@hospital")),
    (("the", "rain"), "비", ("bored", "take", "watch", "read")),
    (("the", "snow"), "눈", ("take", "wear:warmcloth", "go@house")),
    (("the", "wind"), "바람", ("cold", "wear:warmcloth", "close")),
)

def past_modifier(lemma: str) -> str:
    """-(으)ㄴ of a verb (the past modifier before 후에): 먹은, 간, 만든, 들은, 도운, 지은."""
    base = eu_form(lemma, "면")[:-1]  # 먹으, 가, 만들, 들으, 도우, 지으
    last = base[-1]
    code = ord(last) - 0xAC00
    if last == "으":
        return base[:-1] + "은"
    if code % 28 == 8:  # ㄹ drops before ㄴ: 만들 -> 만든
        return base[:-1] + chr(ord(last) - 8 + 4)
    return base[:-1] + chr(ord(last) + 4)  # open syllable takes ㄴ: 가 -> 간


def when_form(lemma: str, past: bool) -> str:
    """-(으)ㄹ 때's first word: 피곤할, 갈; in the past -았/었을: 피곤했을, 갔을."""
    return past_stem(lemma) + "을" if past else prospective(lemma)


def seo_form(lemma: str) -> str:
    """-아/어서: 피곤해서, 가서, 추워서, 와서, 배고파서."""
    return infinitive(lemma) + "서"


def pick(r: random.Random, items: list | tuple):
    """One item, uniformly."""
    return items[int(r.random() * len(items))]


def subject(r: random.Random, you: bool = False) -> Pronoun:
    """A pronoun subject; "I" half the time (the textbook's voice); "you" only when asked."""
    if r.random() < 0.5:
        return PRONOUNS[0]
    cands = [p for p in PRONOUNS if you or p.person != "2"]
    return pick(r, cands[1:] if not you else cands)


def person_subject(r: random.Random) -> NP:
    """A pronoun, or now and then a person noun (the student, the friend)."""
    if r.random() < 0.2:
        nouns = [n for n in GO.subj_nouns if "person" in n.tags and n.article]
        return NP(noun=pick(r, nouns))
    return NP(pron=subject(r))


def subj_tokens(np: NP, keys: Keys) -> tuple[list, list, int]:
    """English and Korean subject tokens (pronoun + 은/는, noun + 이/가) and their key."""
    en, ko = np_pair(np, keys, "topic" if np.pron is not None else "subject")
    return en, ko, ko[-1][1]


def pron_en(p: Pronoun, key: int) -> list:
    """The English pronoun repeated in the second clause, aligned to the Korean topic."""
    return [(p.en, key)]


def en_verb(v: Verb, form: str, person: str, tense: str) -> str:
    """English finite or non-finite verb: form = finite | base | ing."""
    if form == "ing":
        return en_ing(v.base)
    if form == "base" or tense == "future":
        return v.base
    if tense == "past":
        return v.past
    return v.s3 if person == "3s" else v.base


class VP:
    """A verb with its object and place, rendered with a caller-given Korean verb form."""

    __slots__ = ("verb", "obj", "place")

    def __init__(self, verb: Verb, obj: Noun | None = None, place: tuple | None = None) -> None:
        self.verb, self.obj, self.place = verb, obj, place

    def render(self, keys: Keys, ko_words: tuple[str, ...], en_head: list,
               form: str, person: str, tense: str) -> tuple[list, list, int, int]:
        """(en, ko, main key, last key): en_head (will / to / please) then verb, object and
        place; ko: place, object, then ko_words (the predicate)."""
        pred, k_main, _, k_last = pred_keys(ko_words, False, keys)
        v = self.verb
        one = k_main if k_main == k_last or tense == "future" or form != "finite" else (
            k_main, k_last)
        en = [(w, k_last if k is None else k) for w, k in en_head]
        en += [(en_verb(v, form, person, tense), one)] + [(w, k_main) for w in v.part]
        ko: list = []
        if self.obj is not None:
            en_o, ko_o = np_pair(NP(noun=self.obj), keys, "object", obj=True)
        else:
            en_o, ko_o = [], []
        if self.place is not None:
            en_p, ko_p = place_pair(self.place, None, keys)
            ko = ko_p
        else:
            en_p = []
        return en + en_o + en_p, ko + ko_o + pred, k_main, k_last


def draw_vp(r: random.Random, verbs: list[Verb], p_obj: float = 0.75,
            p_place: float = 0.25) -> VP:
    """A verb phrase: verb, an object by its tags, maybe a place where it happens."""
    v = pick(r, verbs)
    obj = None
    # 마시다 always says what is drunk (the corpus test reads the word before it as a drink)
    if v.obj and (not v.intr or r.random() < p_obj or v.ko == "마시다"):
        nouns = [n for n in v.obj_nouns if "person" not in n.tags or n.article]
        if not nouns:
            raise Reject
        obj = pick(r, nouns)
    place = None
    if v.motion:
        place = ("dir", pick(r, PLACES))
    elif v.places and r.random() < p_place:
        place = ("loc", pick(r, v.places))
    return VP(v, obj, place)


def action_vp(r: random.Random, spec: str) -> VP:
    """A verb phrase from a REASON_ACTIONS entry ("sleep", "go@hospital")."""
    if "@" in spec:
        name, place = spec.split("@")
        return VP(GO if name == "go" else COME, None, ("dir", BY_EN[(place, True)]))
    spec, _, tag = spec.partition(":")  # "call:person": only people are called when lonely
    verbs = BY_VERB_EN.get(spec)
    if not verbs:
        raise Reject
    vp = draw_vp(r, verbs)
    if tag and (vp.obj is None or tag not in vp.obj.tags):
        raise Reject
    return vp


def finite_head(v: Verb, tense: str, neg: bool = False) -> tuple[str, ...]:
    """Korean final predicate words (해요체) in a tense."""
    return pred_words(v.ko, tense, neg, "final")


class First:
    """A first clause that is a state (I am tired) or the weather (it is cold / it rains)."""

    __slots__ = ("adj", "weather", "subj")

    def __init__(self, adj: Adjective | None, weather: tuple | None,
                 subj: Pronoun | None) -> None:
        self.adj, self.weather, self.subj = adj, weather, subj

    @property
    def name(self) -> str:
        return self.adj.en if self.adj is not None else self.weather[0]

    @property
    def lemma(self) -> str:
        return self.adj.ko if self.adj is not None else self.weather[1]

    def render(self, keys: Keys, ko_word: str, tense: str, k_subj: int | None,
               extra: str = "") -> tuple[list, list, int]:
        """English "I am tired" / "it is cold" / "it rains" (+ extra word such as a time) and
        the Korean clause ending in ko_word (피곤해서, 추우면, 비가 와서); returns the key of
        the Korean connective word."""
        k = keys()
        if self.adj is not None:
            cop = copula(tense, self.subj.person)
            return [(self.subj.en, k_subj), (cop, k), (self.adj.en, k)], [(ko_word, k)], k
        en_w, lemma, noun = self.weather
        if noun is None:
            return [("it", None), (copula(tense, "3s"), k), (en_w, k)], [(ko_word, k)], k
        kn = keys()
        if lemma == "불다":  # "it is windy" <-> 바람이 불다
            en = [("it", None), (copula(tense, "3s"), k), (en_w, (kn, k))]
        else:
            form = en_w + "s" if tense == "present" else en_w + "ed"
            en = [("it", None), (form, (kn, k))]
        return en, [(particle(noun, "subject"), kn), (ko_word, k)], k


def draw_first(r: random.Random, p_weather: float = 0.3, you: bool = False) -> First:
    """A state of a pronoun subject, or the weather."""
    if r.random() < p_weather:
        return First(None, pick(r, WEATHER), None)
    return First(pick(r, STATES), None, subject(r, you))


def stem_of(lemma: str) -> str:
    """Stem without 다."""
    return lemma_stem(lemma)
