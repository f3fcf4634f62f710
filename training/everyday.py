"""Everyday constructions of a first-year course, built as synchronous pairs like grammar.py.

Copula (저는 학생이에요), 있어요/없어요 for possession and place (책상 위에 책이 있어요),
-고 싶어요, -고 있어요, -(으)ㄹ 수 있어요/없어요, -아/어 주세요, demonstratives (이/그/저 + N,
이것, 이거), possessives (제/당신의/그의/그녀의) and family nouns, numbers with counters. The
wh-questions, time, prices, weather and set phrases are in everyday_wh.py.

One reference per sentence, as in the rest of the corpus: count nouns take "a" after "I am",
"I have", "I want to ..." and "can", and "the" elsewhere; "that" <-> 그, "that ... over there"
<-> 저; these frames take the topic particle (저는 ... 있어요) except place sentences (책이 ...
있어요), whose English starts "The N is ..." or "There is a N ...".
"""

from __future__ import annotations

import random

from .hangul import infinitive, lemma_stem, particle, pred_words, prospective
from .lexicon import ADJECTIVES, NOUNS, PRONOUNS, VERBS, Noun, Verb, read_pairs
from .render import Keys, Pair, Reject, adj_pred, finish
from .words import (
    COUNTER_EN,
    agree_be,
    agree_do,
    agree_have,
    copula,
    counter,
    en_ing,
    en_number,
    native,
)

# ------------------------------------------------------------------------------- tables

POSSESSIVES = read_pairs("possessives")
NAMES = read_pairs("names")
NATIONALITIES = read_pairs("nationalities")
LOCATIONS = read_pairs("locations")

JOBS = [n for n in NOUNS if "job" in n.tags]
KIN = [n for n in NOUNS if "family" in n.tags and n.en not in ("king", "queen", "baby")]
PETS = [n for n in NOUNS if "pet" in n.tags]
# things one has, finds on a desk or counts: count nouns that are objects, food or animals
THINGS = [n for n in NOUNS if n.article and n.tags & {"obj", "read", "food", "pet"}
          and "place" not in n.tags]
MASS_THINGS = [n for n in NOUNS if not n.article and n.tags & {"obj", "food", "drink"}
               and "proper" not in n.tags and "lang" not in n.tags]
REFS = [n for n in NOUNS if n.article and n.tags & {"furniture", "ref"}
        or n.en in ("car", "tree", "door", "window", "box", "bag")]
PLACES_AT = [n for n in NOUNS if "place" in n.tags and "proper" not in n.tags]
_ADJ_BY_EN = {}
for _a in ADJECTIVES:
    _ADJ_BY_EN.setdefault(_a.en, _a)
# verbs for the new verb forms: one sense per English and Korean verb (so both directions are
# functions), used by people, and (for the object) with at least one noun to take
_EN_COUNT: dict[str, int] = {}
_KO_COUNT: dict[str, int] = {}
for _v in VERBS:
    _EN_COUNT[_v.en] = _EN_COUNT.get(_v.en, 0) + 1
    _KO_COUNT[_v.ko] = _KO_COUNT.get(_v.ko, 0) + 1
FORM_VERBS = [v for v in VERBS if v.pron_subj and _EN_COUNT[v.en] == 1 and _KO_COUNT[v.ko] == 1
              and not v.need_loc and not v.arrive and v.neg_ko is None]
_PRON_KO = {p.ko for p in PRONOUNS}
_ELDERS_KO = {"할머니", "할아버지", "어머니", "아버지"}
# verbs of feeling and perceiving read oddly with "want to", "can" and "-ing": left out
_STATIVE = {"like", "love", "hate", "want", "see", "receive", "lose", "remember", "understand",
            "find", "know"}
FORM_VERBS = [v for v in FORM_VERBS if v.base not in _STATIVE]
FOR_ME_VERBS = [v for v in FORM_VERBS if v.obj_nouns and v.base in (
    "open", "close", "read", "write", "make", "buy", "bring", "fix", "draw", "wash", "turn",
    "cook", "bake", "clean", "cut", "choose", "send", "order", "teach")]
def pick(r: random.Random, items: list):
    return items[int(r.random() * len(items))]


# ---------------------------------------------------------------------------- phrases


class Phrase:
    """A noun phrase with both sides: English tokens and Korean words, the last one the head
    that takes the particle; person is the English agreement class (1s 2 1p 3s 3p)."""

    __slots__ = ("en", "ko", "head", "key", "person")

    def __init__(self, en: list, ko: list, head: str, key: int, person: str) -> None:
        self.en, self.ko, self.head, self.key, self.person = en, ko, head, key, person

    def ko_with(self, kind: str | None) -> list:
        """Korean tokens with the particle of kind (None: bare) on the head word."""
        return self.ko + [(particle(self.head, kind) if kind else self.head, self.key)]


def pronoun_np(r: random.Random, keys: Keys, question: bool = False, obj: bool = False
               ) -> Phrase:
    """I / you / we / he / she / they (questions ask 'you' rather than 'I')."""
    p = pick(r, PRONOUNS)
    if question and p.person == "1s":
        p = PRONOUNS[1]
    k = keys()
    return Phrase([(p.en_obj if obj else p.en, k)], [], p.ko, k, p.person)


def name_np(r: random.Random, keys: Keys) -> Phrase:
    en, ko = pick(r, NAMES)
    k = keys()
    return Phrase([(en, k)], [], ko, k, "3s")


def possessed_np(r: random.Random, keys: Keys, nouns: list[Noun]) -> Phrase:
    """my mother <-> 제 어머니, your bag <-> 당신의 가방."""
    noun = pick(r, nouns)
    det_en, det_ko = pick(r, POSSESSIVES)
    if noun.ko == "동생" and det_en in ("my", "your"):
        raise Reject  # a textbook says 동생이, "my younger sibling" (textbook.polite)
    kd, k = keys(), keys()
    return Phrase([(det_en, kd)] + [(w, k) for w in noun.toks], [(det_ko, kd)], noun.ko, k, "3s")


def the_np(noun: Noun, keys: Keys, article: str = "the", plural: bool = False) -> Phrase:
    """the dog <-> 개 ("a"/"an" with article="a"; mass nouns take none)."""
    k = keys()
    en: list = []
    if noun.article and not plural:
        en.append(("an" if noun.an else "a", None) if article == "a" else ("the", None))
    elif noun.article and article == "the":
        en.append(("the", None))
    toks = noun.pl_toks if plural else noun.toks
    ko = noun.ko + "들" if plural else noun.ko
    return Phrase(en + [(w, k) for w in toks], [], ko, k, "3p" if plural else "3s")


def demonstrative_np(r: random.Random, noun: Noun, keys: Keys) -> Phrase:
    """this book <-> 이 책, that book <-> 그 책, that book over there <-> 저 책."""
    kd, k = keys(), keys()
    x = r.random()
    if x < 0.45:
        en, ko, tail = "this", "이", []
    elif x < 0.8:
        en, ko, tail = "that", "그", []
    else:
        en, ko, tail = "that", "저", [("over", kd), ("there", kd)]
    return Phrase([(en, kd)] + [(w, k) for w in noun.toks] + tail, [(ko, kd)], noun.ko, k, "3s")


def topic_ko(subj: Phrase, question: bool, k_pred: int) -> list:
    """The subject's Korean with 은/는; a questioned "you" is left out as a textbook does
    ("Do you have money?" <-> "돈이 있어요?") and its English aligns to the predicate."""
    if question and subj.person == "2":
        subj.en[:] = [(w, k_pred) for w, _ in subj.en]
        return []
    return subj.ko_with("topic")


def subject(r: random.Random, keys: Keys, *, question: bool = False, people: bool = True
            ) -> Phrase:
    """A person: pronoun (half the time), name, or my/your... + family noun."""
    x = r.random()
    if x < 0.5 or not people:
        return pronoun_np(r, keys, question)
    if x < 0.7:
        return name_np(r, keys)
    return possessed_np(r, keys, KIN)


def count_np(r: random.Random, noun: Noun, keys: Keys, n: int | None = None
             ) -> tuple[list, list, int]:
    """two cats <-> 고양이 두 마리; two cups of coffee <-> 커피 두 잔. Returns (en, ko number
    words after the noun, the noun key); the caller puts the noun (with its particle) first."""
    n = n or 1 + int(r.random() * (5 if r.random() < 0.8 else 12))
    cnt = counter(noun)
    k, kn = keys(), keys()
    measure = COUNTER_EN.get(cnt, "")
    if measure and n == 1:
        measure = measure.replace("cups", "cup").replace("bottles", "bottle")
    if measure or not noun.article:
        if not measure:
            raise Reject  # a mass noun without a measure word cannot be counted
        words = noun.toks
    else:
        words = noun.toks if n == 1 else noun.pl_toks
        if words is None:
            raise Reject
    en = [(en_number(n), kn)] + [(w, kn) for w in measure.split()] + [(w, k) for w in words]
    return en, [(native(n), kn), (cnt, kn)], k


def _cap_question(en: list, question: bool, aux_index: int) -> list:
    """Move the auxiliary at aux_index to the front for a question."""
    if not question:
        return en
    return [en[aux_index]] + en[:aux_index] + en[aux_index + 1:]


def _mood(r: random.Random, p_neg: float, p_past: float) -> tuple[bool, bool, str]:
    """(question, negated, tense): a question one time in five, else negated with p_neg; past
    with p_past. The draws keep their order (p_past 0 still draws) so the corpus is unchanged."""
    question = r.random() < 0.2
    neg = not question and r.random() < p_neg
    tense = "past" if r.random() < p_past else "present"
    return question, neg, tense


# ------------------------------------------------------------------------- constructions


def copula_sentence(r: random.Random) -> Pair:
    """I am a student. <-> 저는 학생이에요. / He is not a doctor. <-> 그는 의사가 아니에요."""
    keys = Keys()
    question, neg, tense = _mood(r, p_neg=0.2, p_past=0.15)
    subj = subject(r, keys, question=question)
    k_pred = keys()
    ko_s = topic_ko(subj, question, k_pred)
    if r.random() < 0.2 and subj.person == "1s" or r.random() < 0.08:
        nat_en, nat_ko = pick(r, NATIONALITIES)  # I am Korean. <-> 저는 한국 사람이에요.
        k_n = keys()
        en_n = [(nat_en, (k_n, k_pred))]
        head = "사람"
        ko_n = [(nat_ko, k_n)]
    else:
        noun = pick(r, JOBS)
        k_n = keys()
        plural = subj.person in ("1p", "3p")
        if plural and noun.pl_toks is None:
            raise Reject
        toks = noun.pl_toks if plural else noun.toks
        art = [] if plural else [("an" if noun.an else "a", None)]
        en_n = art + [(w, (k_n, k_pred)) for w in toks]
        head, ko_n = noun.ko, []
    be = agree_be(subj.person, tense)
    if neg:
        k_neg = keys()
        pred_ko = ko_n + [(particle(head, "subject"), k_n),
                          ("아니었어요" if tense == "past" else "아니에요", k_neg)]
        en = subj.en + [(be, k_neg), ("not", k_neg)] + [(w, k_n if k is not None else None)
                                                         for w, k in en_n]
    else:
        pred_ko = ko_n + [(copula(head, tense), k_pred)]
        en = subj.en + [(be, k_pred)] + en_n
    en = _cap_question(en, question, len(subj.en))
    return finish(en, ko_s + pred_ko, "?" if question else ".")


def demonstrative_sentence(r: random.Random) -> Pair:
    """This is a book. <-> 이것은 책이에요. / That bag over there is expensive. <-> 저 가방은
    비싸요. / Is this your umbrella? <-> 이것은 당신의 우산이에요?"""
    keys = Keys()
    question = r.random() < 0.2
    if r.random() < 0.55:
        k_d, k_n = keys(), keys()
        d_en, d_ko = ("this", "이것") if r.random() < 0.55 else ("that", "그것")
        noun = pick(r, THINGS + PLACES_AT)
        if r.random() < 0.3:
            det_en, det_ko = pick(r, POSSESSIVES)
            kp = keys()
            en_n, ko_n = [(det_en, kp)], [(det_ko, kp)]
        else:
            en_n = [("an" if noun.an else "a", None)] if noun.article else []
            ko_n = []
        en = [(d_en, k_d), ("is", k_n)] + en_n + [(w, k_n) for w in noun.toks]
        en = _cap_question(en, question, 1)
        ko = [(particle(d_ko, "topic"), k_d)] + ko_n + [(copula(noun.ko), k_n)]
        return finish(en, ko, "?" if question else ".")
    noun = pick(r, [n for n in THINGS if n.adj_ok])
    adjs = [a for a in ADJECTIVES if a.pred and noun in a.pred_nouns]
    if not adjs:
        raise Reject
    adj = pick(r, adjs)
    np = demonstrative_np(r, noun, keys)
    tense = "past" if r.random() < 0.2 else "present"
    pred, k_main, _, k_tense = adj_pred(adj.ko, tense, False, "final", keys)
    be = agree_be("3s", tense)
    en = np.en + [(be, k_tense), (adj.en, k_main)]
    en = _cap_question(en, question, len(np.en))
    return finish(en, np.ko_with("topic") + pred, "?" if question else ".")


def have_sentence(r: random.Random) -> Pair:
    """I have a car. <-> 저는 자동차가 있어요. / She has two cats. <-> 그녀는 고양이가 두 마리
    있어요. / Do you have money? <-> 돈이 있어요?"""
    keys = Keys()
    question, neg, tense = _mood(r, p_neg=0.25, p_past=0.15)
    subj = subject(r, keys, question=question)
    k_pred = keys()
    ko_s = topic_ko(subj, question, k_pred)
    ko_pred = ("없었어요" if tense == "past" else "없어요") if neg else (
        "있었어요" if tense == "past" else "있어요")
    if r.random() < 0.25:
        noun = pick(r, MASS_THINGS)
        obj = the_np(noun, keys, "a")
        nums_en, nums_ko = [], []
    else:
        noun = pick(r, THINGS + KIN)
        if r.random() < 0.35 and not neg:
            nums_en, nums_ko, k = count_np(r, noun, keys)
            obj = Phrase([], [], noun.ko, k, "3s")
        else:
            obj = the_np(noun, keys, "a")
            nums_en, nums_ko = [], []
        if noun in KIN and nums_en:
            raise Reject
    if question or neg:
        aux = agree_do(subj.person, tense)
        head = [(aux, k_pred)] + ([("not", k_pred)] if neg else []) + [("have", k_pred)]
    else:
        head = [(agree_have(subj.person, tense), k_pred)]
    en = subj.en + head + (nums_en or obj.en)
    en = _cap_question(en, question, len(subj.en))
    ko = ko_s + obj.ko_with("subject") + nums_ko + [(ko_pred, k_pred)]
    return finish(en, ko, "?" if question else ".")


def exist_sentence(r: random.Random) -> Pair:
    """The book is on the desk. <-> 책이 책상 위에 있어요. / There are two cats under the
    table. <-> 탁자 아래에 고양이가 두 마리 있어요. / His mother is at home. <-> 그의 어머니가 집에
    있어요. / Where is the bank? <-> 은행이 어디에 있어요?"""
    keys = Keys()
    x = r.random()
    tense = "past" if r.random() < 0.15 else "present"
    neg = r.random() < 0.15
    k_pred = keys()
    pred = ("없었어요" if tense == "past" else "없어요") if neg else (
        "있었어요" if tense == "past" else "있어요")
    if x < 0.15:  # Where is the bank?
        np = the_np(pick(r, PLACES_AT + THINGS), keys)
        k_wh = keys()
        en = [("where", k_wh), ("is", k_pred)] + np.en
        return finish(en, np.ko_with("subject") + [("어디에", k_wh), ("있어요", k_pred)], "?")
    # where it is: a place (at school, at home) for people, a location noun for things
    if x < 0.4:
        who = subject(r, keys) if r.random() < 0.6 else the_np(pick(r, JOBS), keys)
        if who.head in _ELDERS_KO and who.en[0][0] in ("my", "your"):
            raise Reject  # my/your elders are honoured: 어머니께서 집에 계세요 (textbook.polite)
        place = pick(r, PLACES_AT)
        k_p = keys()
        if place.en == "house":
            en_p = [("at", k_p), ("home", k_p)]
        else:
            prep = place.loc or "at"
            en_p = [(prep, k_p), ("the", None)] + [(w, k_p) for w in place.toks]
        be = agree_be(who.person, tense)
        head = [(be, k_pred)] + ([("not", k_pred)] if neg else [])
        en = who.en + head + en_p
        kind = "topic" if who.head in _PRON_KO else "subject"  # 저는, never 저가
        ko = who.ko_with(kind) + [(place.ko + "에", k_p), (pred, k_pred)]
        return finish(en, ko, ".")
    if r.random() < 0.15:  # The bank is next to the school.
        thing = pick(r, PLACES_AT)
        ref = pick(r, [n for n in REFS if "place" in n.tags and n is not thing])
    else:
        thing = pick(r, THINGS + PETS)
        ref = pick(r, [n for n in REFS if "place" not in n.tags and n is not thing])
    prep, loc = pick(r, LOCATIONS)
    k_ref, k_loc = keys(), keys()
    en_loc = [(w, k_loc) for w in prep.split()] + [("the", None)] + [(w, k_ref)
                                                                     for w in ref.toks]
    ko_loc = [(ref.ko, k_ref), (loc + "에", k_loc)]
    question = not neg and r.random() < 0.15
    if x < 0.7:  # The book is on the desk.
        np = the_np(thing, keys)
        be = agree_be("3s", tense)
        head = [(be, k_pred)] + ([("not", k_pred)] if neg else [])
        en = _cap_question(np.en + head + en_loc, question, len(np.en))
        return finish(en, np.ko_with("subject") + ko_loc + [(pred, k_pred)],
                       "?" if question else ".")
    # There is a book on the desk. / There are two books ...
    if r.random() < 0.4 and not neg:
        nums_en, nums_ko, k = count_np(r, thing, keys)
        np = Phrase(nums_en, [], thing.ko, k, "3p" if nums_ko[0][0] != "한" else "3s")
    else:
        np, nums_ko = the_np(thing, keys, "a"), []
        np.person = "3s"
    be = agree_be(np.person, tense)
    head = [("there", None), (be, k_pred)] + ([("not", k_pred)] if neg else [])
    if neg:  # There is no book on the desk.
        head = [("there", None), (be, k_pred), ("no", k_pred)]
        np.en = [t for t in np.en if t[0] not in ("a", "an")]
    en = _cap_question(head + np.en + en_loc, question, 1)
    return finish(en, ko_loc + np.ko_with("subject") + nums_ko + [(pred, k_pred)],
                   "?" if question else ".")


def vp(r: random.Random, v: Verb, keys: Keys, article: str) -> tuple[list, list]:
    """The object of verb v, if it takes one (English tokens, Korean tokens with 을/를), or a
    motion verb's destination (to the park <-> 공원에, home <-> 집에)."""
    if v.motion:
        if r.random() < 0.3:
            return [], []
        place = pick(r, PLACES_AT + [n for n in NOUNS if "proper" in n.tags])
        k = keys()
        if place.en == "house":
            return [("home", k)], [(place.ko + "에", k)]
        art = [("the", None)] if place.article and not place.bare else []
        return [("to", k)] + art + [(w, k) for w in place.toks], [(place.ko + "에", k)]
    if not v.obj_nouns or (v.intr and r.random() < 0.3):
        return [], []
    noun = pick(r, v.obj_nouns)
    np = the_np(noun, keys, article)
    return np.en, np.ko_with("object")


def verb_form_sentence(r: random.Random, form: str) -> Pair:
    """want: 저는 김치를 먹고 싶어요; progressive: 그녀는 책을 읽고 있어요; can: 그는 수영할 수
    있어요 / 없어요."""
    keys = Keys()
    v = pick(r, FORM_VERBS)
    question, neg, tense = _mood(r, p_neg=0.2, p_past=0.0 if form == "can" else 0.2)
    subj = subject(r, keys, question=question)
    if form == "want" and subj.person in ("3s", "3p"):
        subj = pronoun_np(r, keys, question) if r.random() < 0.5 else subj
        if subj.person in ("3s", "3p"):
            raise Reject  # 3rd person wants are -고 싶어해요: left out
    en_o, ko_o = vp(r, v, keys, "the" if form == "progressive" else "a")
    stem = lemma_stem(v.ko)
    k_main, k_aux = keys(), keys()
    ko_s = topic_ko(subj, question, k_aux)
    part = [(w, k_main) for w in v.part]
    time_en: list = []
    time_ko: list = []
    if form == "progressive" and not question and r.random() < 0.25 and tense == "present":
        kt = keys()
        time_en, time_ko = [("now", kt)], [("지금", kt)]
    if form == "want":
        aux_ko = pred_words("싶다", tense, neg, "final")
        ko_v = [(stem + "고", k_main)] + [(w, k_aux) for w in aux_ko]
        if neg or question:
            head = [(agree_do(subj.person, tense), k_aux)] + (
                [("not", k_aux)] if neg else []) + [("want", k_aux)]
        else:
            head = [("wanted" if tense == "past" else "want", k_aux)]
        en = subj.en + head + [("to", k_main), (v.base, k_main)] + part + en_o
        n_aux = len(subj.en)
    elif form == "progressive":
        if neg:
            raise Reject
        ko_v = [(stem + "고", k_main), ("있었어요" if tense == "past" else "있어요", k_aux)]
        en = subj.en + [(agree_be(subj.person, tense), k_aux), (en_ing(v.base), k_main)]
        en += part + en_o + time_en
        n_aux = len(subj.en)
    else:
        ko_v = [(prospective(v.ko), k_main), ("수", k_aux), ("없어요" if neg else "있어요", k_aux)]
        en = subj.en + [("cannot" if neg else "can", k_aux), (v.base, k_main)] + part + en_o
        n_aux = len(subj.en)
    en = _cap_question(en, question, n_aux)
    ko = time_ko + ko_s + ko_o + ko_v
    return finish(en, ko, "?" if question else ".")


def for_me_sentence(r: random.Random) -> Pair:
    """Please open the window for me. <-> 창문을 열어 주세요. / Please give me two cups of
    coffee. <-> 커피 두 잔 주세요. / Please give me this. <-> 이거 주세요."""
    keys = Keys()
    k_please = keys()
    if r.random() < 0.5:
        v = pick(r, FOR_ME_VERBS)
        en_o, ko_o = vp(r, v, keys, "the")
        if not en_o:
            raise Reject
        k_main = keys()
        en = [("please", k_please), (v.base, k_main)] + [(w, k_main) for w in v.part] + en_o
        en += [("for", k_please), ("me", k_please)]
        return finish(en, ko_o + [(infinitive(v.ko), k_main), ("주세요", k_please)], ".")
    x = r.random()
    if x < 0.2:
        k = keys()
        en_d, ko_d = ("this", "이거") if r.random() < 0.5 else ("that", "그거")
        return finish([("please", k_please), ("give", k_please), ("me", k_please), (en_d, k)],
                       [(ko_d, k), ("주세요", k_please)], ".")
    noun = pick(r, [n for n in NOUNS if n.tags & {"food", "drink"} or n in THINGS])
    if x < 0.6:
        try:
            nums_en, nums_ko, k = count_np(r, noun, keys)
        except Reject:
            nums_en = []
        if nums_en:
            en = [("please", k_please), ("give", k_please), ("me", k_please)] + nums_en
            return finish(en, [(noun.ko, k)] + nums_ko + [("주세요", k_please)], ".")
    np = the_np(noun, keys, "the")
    en = [("please", k_please), ("give", k_please), ("me", k_please)] + np.en
    return finish(en, np.ko_with(None) + [("주세요", k_please)], ".")
