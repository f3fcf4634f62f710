"""Textbook area: proposals, intentions and honorifics, with the textbook's pro-drop.

Proposals and intentions (the subject a textbook leaves out is read from the ending):
    Shall we eat together?        <-> 같이 먹을까요?           -(으)ㄹ까요 ("we" dropped)
    Shall I open the window?      <-> 제가 창문을 열까요?      -(으)ㄹ까요 with 제가
    Let's go to the park.         <-> 공원에 갑시다.            -(으)ㅂ시다
    I'll open the window.         <-> 창문을 열게요.            -(으)ㄹ게요 ("I will" stays
                                                                 -(으)ㄹ 거예요 elsewhere)
    I plan to study Korean.       <-> 한국어를 공부하려고 해요.  -(으)려고 해요
Honorifics (family elders; "my" in statements, "your" in questions, neither said in Korean):
    My grandmother reads the newspaper. <-> 할머니께서 신문을 읽으세요.
    Did your grandfather drink coffee?  <-> 할아버지께서 커피를 드셨어요?
    special verbs: 먹다/마시다 -> 드세요, 자다 -> 주무세요, 있다 -> 계세요
Family without a possessive in Korean: 동생 (younger sibling) takes "my" in English:
    동생이 방에서 자고 있어요. <-> My younger sibling is sleeping in the room.
The general pro-drop (questions to "you" and feelings of "I" drop the subject in Korean) lives in
render.drops_subject and everyday.topic_ko: "Do you eat fish?" <-> "생선을 먹어요?", "I am
hungry." <-> "배가 고파요.".

Alignment: a dropped subject ("we", "I", "you") and "Shall"/"Let's"/"I'll" align to the final
Korean predicate word, which carries the ending that implies them; "plan"/"plans" to 해요, "to"
and the verb to the -(으)려고 word; "my"/"your" to the kin noun.
"""

from __future__ import annotations

import random

from .. import everyday
from ..everyday import FORM_VERBS, PLACES_AT, en_ing, pick, vp
from ..grammar import verb_clause
from ..hangul import eu_form, ko_propose, lemma_stem, particle, pred_words, prospective
from ..lexicon import ADJECTIVES, BY_EN, NOUNS, PRONOUNS, TIMES_BY_TENSE, VERBS, Verb
from ..render import NP, Clause, Keys, Pair, Reject, finish, place_pair, render_adj, render_verb
from .speech_neg import WEATHER_KO, adverb_pred

# volitional verbs a person proposes or promises (the imperative-able ones)
ACT_VERBS = [v for v in FORM_VERBS if v.imp]
# the near times a proposal or promise names (not "next year")
_FUTURE_TIMES = [t for t in TIMES_BY_TENSE["future"] if t[0][0] in (
    "today", "tomorrow", "tonight", "this") and t[0] != ("this", "week") or t[0][0] == "on"]
_PAST_TIMES = [t for t in TIMES_BY_TENSE["past"] if len(t[0]) <= 2 and t[0][0] != "on"]
# where an elder "is" (계세요): home and the everyday buildings, not the sea or a lake
_STAY = [n for n in PLACES_AT if n.en in (
    "house", "room", "kitchen", "living room", "bedroom", "hospital", "office", "company",
    "library", "bank", "church", "market", "store", "restaurant", "cafe", "park", "school",
    "garden", "post office", "hotel")]

# family elders addressed with -(으)시-
ELDERS = [n for n in NOUNS if n.en in ("grandmother", "grandfather", "mother", "father")]
# honorific stems of the special verbs (먹다 and 마시다 share 드시다, so they need an object)
SPECIAL = {"먹다": "드시다", "마시다": "드시다", "자다": "주무시다"}
HONOR_VERBS = [v for v in FORM_VERBS if v.imp or v.ko in SPECIAL]
_LIVE = next(v for v in VERBS if v.en == "live" and v.ko == "살다")

# kin a textbook names without 제: English adds "my" (everyday.possessed_np leaves "my/your
# younger sibling" to this area)
BARE_KIN = (("younger sibling", "동생"),)



def honor(lemma: str, tense: str) -> str:
    """-(으)세요 / -(으)셨어요 of a verb, with the special honorific verbs."""
    if lemma in SPECIAL:
        stem = lemma_stem(SPECIAL[lemma])  # 드시, 주무시
        return stem[:-1] + ("세요" if tense == "present" else "셨어요")
    return eu_form(lemma, "세요" if tense == "present" else "셨어요")


def _time(r: random.Random, keys: Keys, times: list, p: float) -> tuple[list, list]:
    if r.random() >= p:
        return [], []
    en_w, ko_w = pick(r, times)[:2]
    k = keys()
    return [(w, k) for w in en_w], [(w, k) for w in ko_w]


def _together(r: random.Random, keys: Keys, v: Verb, p: float) -> tuple[list, list]:
    if "together" not in v.manner or r.random() >= p:
        return [], []
    k = keys()
    return [("together", k)], [("같이", k)]


# ----------------------------------------------------------------------- proposals


def proposal(v: Verb, obj: tuple[list, list], together: tuple[list, list],
             time: tuple[list, list], keys: Keys, kind: str) -> Pair:
    """kind: we (Shall we ...? <-> ...ㄹ까요?), i (Shall I ...? <-> 제가 ...ㄹ까요?),
    lets (Let's ... <-> ...ㅂ시다), will (I'll ... <-> ...ㄹ게요)."""
    k = keys()
    part = [(w, k) for w in v.part]
    en_o, ko_o = obj
    en_w, ko_w = together
    en_t, ko_t = time
    ko_s: list = []
    if kind == "we":
        head, pred, punct = [("shall", k), ("we", k)], prospective(v.ko) + "까요", "?"
    elif kind == "i":
        ks = keys()
        head, pred, punct = [("shall", k), ("I", ks)], prospective(v.ko) + "까요", "?"
        ko_s = [("제가", ks)]
    elif kind == "lets":
        head, pred, punct = [("let's", k)], ko_propose(v.ko), "."
    else:
        head, pred, punct = [("I'll", k)], prospective(v.ko) + "게요", "."
    en = head + [(v.base, k)] + part + en_o + en_w + en_t
    return finish(en, ko_t + ko_s + ko_w + ko_o + [(pred, k)], punct)


def _proposal_maker(kind: str):
    def make(r: random.Random) -> Pair:
        keys = Keys()
        v = pick(r, ACT_VERBS)
        obj = vp(r, v, keys, "the")
        if not obj[0] and not v.motion and v.places and r.random() < 0.4:
            obj = place_pair(("loc", pick(r, v.places)), None, keys)  # 도서관에서 공부할까요?
        together = _together(r, keys, v, 0.5 if kind in ("we", "lets") else 0.0)
        if kind == "will" and together[0]:
            raise Reject
        time = _time(r, keys, _FUTURE_TIMES, 0.2)
        return proposal(v, obj, together, time, keys, kind)
    return make


# ------------------------------------------------------------------------- intentions


def plan(r: random.Random) -> Pair:
    """I plan to study Korean. <-> 한국어를 공부하려고 해요. / Does she plan to go home? <->
    그녀는 집에 가려고 해요? / We planned to cook. <-> 우리는 요리하려고 했어요."""
    keys = Keys()
    v = pick(r, ACT_VERBS)
    question = r.random() < 0.25
    tense = "past" if r.random() < 0.2 else "present"
    p = pick(r, PRONOUNS)  # "you" only in questions
    if question and p.person == "1s" or not question and p.person == "2":
        p = PRONOUNS[1] if question else PRONOUNS[0]
    k_s, k_v, k_h = keys(), keys(), keys()
    drop = p.person in ("1s", "2")  # I in statements, you in questions
    en_s = [(p.en, k_h if drop else k_s)]
    ko_s = [] if drop else [(particle(p.ko, "topic"), k_s)]
    en_o, ko_o = vp(r, v, keys, "the")
    en_t, ko_t = _time(r, keys, _PAST_TIMES if tense == "past" else _FUTURE_TIMES, 0.15)
    verb = [("to", k_v), (v.base, k_v)] + [(w, k_v) for w in v.part]
    if question:
        aux = "did" if tense == "past" else "does" if p.person == "3s" else "do"
        en = [(aux, k_h)] + en_s + [("plan", k_h)]
    else:
        form = "planned" if tense == "past" else "plans" if p.person == "3s" else "plan"
        en = en_s + [(form, k_h)]
    en += verb + en_o + en_t
    ko = ko_t + ko_s + ko_o + [(eu_form(v.ko, "려고"), k_v),
                               ("했어요" if tense == "past" else "해요", k_h)]
    return finish(en, ko, "?" if question else ".")


# -------------------------------------------------------------------------- honorifics


def honorific(noun_en: str, v: Verb, tense: str, question: bool, obj: tuple[list, list],
              time: tuple[list, list], keys: Keys) -> Pair:
    """My grandmother reads the newspaper. <-> 할머니께서 신문을 읽으세요."""
    elder = BY_EN[(noun_en, False)]
    kn, k = keys(), keys()
    det = "your" if question else "my"
    en_s = [(det, kn)] + [(w, kn) for w in elder.toks]
    en_o, ko_o = obj
    en_t, ko_t = time
    rest = [(w, k) for w in v.part] + en_o + en_t
    if question:
        en = [("did" if tense == "past" else "does", k)] + en_s + [(v.base, k)] + rest
    else:
        en = en_s + [(v.past if tense == "past" else v.s3, k)] + rest
    ko = ko_t + [(elder.ko + "께서", kn)] + ko_o + [(honor(v.ko, tense), k)]
    return finish(en, ko, "?" if question else ".")


def honorific_sentence(r: random.Random) -> Pair:
    keys = Keys()
    elder = pick(r, ELDERS)
    question = r.random() < 0.3
    tense = "past" if r.random() < 0.3 else "present"
    if r.random() < 0.12:
        v, tense = _LIVE, "present"
        place = pick(r, [n for n in v.places if "proper" in n.tags])
        en_o, ko_o = place_pair(("loc", place), None, keys)
        obj = (en_o, ko_o)
    else:
        v = pick(r, HONOR_VERBS)
        obj = vp(r, v, keys, "the")
        if v.ko in ("먹다", "마시다") and not obj[0]:
            raise Reject  # 드세요 alone: eat or drink?
        if not obj[0] and v.places and r.random() < 0.5:  # 방에서 주무세요
            obj = place_pair(("loc", pick(r, v.places)), None, keys)
    time = _time(r, keys, _PAST_TIMES if tense == "past" else [], 0.2 if tense == "past" else 0)
    return honorific(elder.en, v, tense, question, obj, time, keys)


def staying(r: random.Random) -> Pair:
    """My grandfather is in the room. <-> 할아버지께서 방에 계세요. (있다 -> 계시다)"""
    keys = Keys()
    elder = pick(r, ELDERS)
    question = r.random() < 0.3
    tense = "past" if r.random() < 0.2 else "present"
    place = pick(r, _STAY)
    kn, k, kp = keys(), keys(), keys()
    det = "your" if question else "my"
    en_s = [(det, kn)] + [(w, kn) for w in elder.toks]
    be = [("was" if tense == "past" else "is", k)]
    if place.en == "house":
        en_p = [("at", kp), ("home", kp)]
    else:
        art = [("the", None)] if place.article and not place.bare else []
        en_p = [(place.loc, kp)] + art + [(w, kp) for w in place.toks]
    en = (be + en_s if question else en_s + be) + en_p
    ko = [(elder.ko + "께서", kn), (place.ko + "에", kp),
          ("계세요" if tense == "present" else "계셨어요", k)]
    return finish(en, ko, "?" if question else ".")


# ---------------------------------------------------------------- kin without 제


def sibling(noun: tuple[str, str], v: Verb, obj: tuple[list, list], place: tuple | None,
            question: bool, keys: Keys) -> Pair:
    """동생이 방에서 자고 있어요. <-> My younger sibling is sleeping in the room."""
    en_n, ko_n = noun
    kn, k_main, k_aux = keys(), keys(), keys()
    det = "your" if question else "my"
    en_s = [(det, kn)] + [(w, kn) for w in en_n.split()]
    en_o, ko_o = obj
    en_p, ko_p = place_pair(("loc", place), None, keys) if place is not None else ([], [])
    be = [("is", k_aux)]
    en = (be + en_s if question else en_s + be) + [(en_ing(v.base), k_main)]
    en += [(w, k_main) for w in v.part] + en_o + en_p
    ko = [(particle(ko_n, "subject"), kn)] + ko_p + ko_o + [
        (lemma_stem(v.ko) + "고", k_main), ("있어요", k_aux)]
    return finish(en, ko, "?" if question else ".")


def sibling_sentence(r: random.Random) -> Pair:
    keys = Keys()
    v = pick(r, FORM_VERBS)
    obj = vp(r, v, keys, "the")
    place = None
    if not v.motion and v.places and r.random() < 0.5:
        place = pick(r, v.places)
    return sibling(pick(r, BARE_KIN), v, obj, place, r.random() < 0.2, keys)


def doing_what(r: random.Random) -> Pair:
    """What are you doing? <-> 뭐 하고 있어요? / What is your grandmother doing now? <-> 지금
    할머니께서 뭐 하고 계세요? / What is Minsu doing? <-> 민수는 뭐 하고 있어요?"""
    keys = Keys()
    k_wh, k_do, k_be = keys(), keys(), keys()
    x = r.random()
    aux, be = "있어요", "is"
    if x < 0.4:  # you, dropped
        en_s, ko_s, be = [("you", k_be)], [], "are"
    elif x < 0.65:
        p = pick(r, [p for p in PRONOUNS if p.person[0] == "3"])
        ks = keys()
        en_s, ko_s = [(p.en, ks)], [(particle(p.ko, "topic"), ks)]
        be = "is" if p.person == "3s" else "are"
    elif x < 0.8:
        en_n, ko_n = pick(r, everyday.NAMES)
        ks = keys()
        en_s, ko_s = [(en_n, ks)], [(particle(ko_n, "topic"), ks)]
    elif x < 0.9:
        en_n, ko_n = pick(r, BARE_KIN)
        ks = keys()
        en_s = [("your", ks)] + [(w, ks) for w in en_n.split()]
        ko_s = [(particle(ko_n, "subject"), ks)]
    else:
        elder = pick(r, ELDERS)
        ks = keys()
        en_s = [("your", ks)] + [(w, ks) for w in elder.toks]
        ko_s, aux = [(elder.ko + "께서", ks)], "계세요"
    en_t: list = []
    ko_t: list = []
    if r.random() < 0.3:
        kt = keys()
        en_t, ko_t = [("now", kt)], [("지금", kt)]
    en = [("what", k_wh), (be, k_be)] + en_s + [("doing", k_do)] + en_t
    return finish(en, ko_t + ko_s + [("뭐", k_wh), ("하고", k_do), (aux, k_be)], "?")


# ------------------------------------------------------------------- pro-drop "I"


def i_dropped(r: random.Random) -> Pair:
    """One-way (Korean -> English): 고기를 먹어요. -> I eat meat. A statement with no subject
    reads as "I"; English -> Korean keeps 저는 (the old grammar's pair), so only this direction
    is trained."""
    keys = Keys()
    c = verb_clause(r, FORM_VERBS, transitive=None, p_neg=0.0, p_pron=1.0,
                     subj=NP(pron=PRONOUNS[0]))
    if c.obj is not None and c.obj.pron is not None:
        raise Reject  # no 당신을 in a textbook's pro-dropped sentence
    en, ko, k_last = render_verb(c, "decl", keys)
    k_i = next(k for w, k in en if w == "I")
    ko = [(w, k) for w, k in ko if k != k_i]  # 저는 goes
    en = [(w, k_last if k == k_i else k) for w, k in en]
    if not ko:
        raise Reject
    p = finish(en, ko, ".")
    return Pair(p.en, p.ko, p.align, to="en")


# feelings a person has (not the weather's 춥다 / 덥다, whose bare Korean means "it")
_FEELINGS = [a for a in ADJECTIVES if a.state and "person" in a.tags
             and a.ko not in WEATHER_KO]
_HUNGRY = next(a for a in _FEELINGS if a.ko == "배고프다")
# body parts that hurt: 배 is the stomach here, the counterweight to 배 "ship" (배가 고파요
# read as "The ship is hungry." before this construction); 눈 (snow), 이 (this) and 다리
# (legs only: no bridge in the lexicon) are left at that
BODY = (("head", "머리"), ("stomach", "배"), ("leg", "다리"), ("arm", "팔"), ("foot", "발"),
        ("hand", "손"), ("ear", "귀"), ("shoulder", "어깨"), ("knee", "무릎"), ("neck", "목"))


def feeling(r: random.Random) -> Pair:
    """The textbook's feelings, with the subject left out both ways: I am hungry. <-> 배가
    고파요. / Are you tired? <-> 피곤해요? / I'm not hungry. <-> 배가 안 고파요. / I was hungry.
    <-> 배가 고팠어요. 배고프다 is drawn most: 배가 alone must read as a stomach, not a ship."""
    keys = Keys()
    a = _HUNGRY if r.random() < 0.4 else pick(r, _FEELINGS)
    tense = "past" if r.random() < 0.3 else "present"
    if r.random() < 0.25:  # short negation, as speech_neg writes it: I'm not hungry.
        pred, k_main, k_neg = adverb_pred(a.ko, "안", tense, keys, verb=False)
        be = "I'm" if tense == "present" else "I"
        en = [(be, k_main)] + ([("not", k_neg[0])] if tense == "present"
                               else [("wasn't", k_neg)]) + [(a.en, k_main)]
        return finish(en, pred, ".")
    c = Clause()
    question = r.random() < 0.35
    c.subj = NP(pron=PRONOUNS[1] if question else PRONOUNS[0])
    c.adj, c.tense = a, tense
    en, ko, _ = render_adj(c, "ynq" if question else "decl", keys)
    return finish(en, ko, "?" if question else ".")


def body_ache(r: random.Random) -> Pair:
    """My head hurts. <-> 머리가 아파요. / Does your stomach hurt? <-> 배가 아파요? / My leg
    doesn't hurt. <-> 다리가 안 아파요. ("my" / "your" align to the body part)"""
    keys = Keys()
    en_n, ko_n = ("stomach", "배") if r.random() < 0.3 else pick(r, BODY)
    tense = "past" if r.random() < 0.3 else "present"
    question = r.random() < 0.3
    neg = not question and r.random() < 0.25
    kn, k = keys(), keys()
    ko = [(particle(ko_n, "subject"), kn)]
    if neg:
        k_neg = keys()
        ko += [("안", k_neg)]
    ko += [(w, k) for w in pred_words("아프다", tense, False, "final")]
    noun = [("your" if question else "my", kn), (en_n, kn)]
    if question:
        en = [("did" if tense == "past" else "does", k)] + noun + [("hurt", k)]
    elif neg:
        en = noun + [("didn't" if tense == "past" else "doesn't", (k_neg, k)), ("hurt", k)]
    else:
        en = noun + [("hurt" if tense == "past" else "hurts", k)]
    return finish(en, ko, "?" if question else ".")


# ------------------------------------------------------------------------------ tables

MAKERS = (
    (0.20, "shall_we", _proposal_maker("we")),
    (0.08, "shall_i", _proposal_maker("i")),
    (0.18, "lets", _proposal_maker("lets")),
    (0.14, "ill", _proposal_maker("will")),
    (0.16, "plan_to", plan),
    (0.14, "honorific", honorific_sentence),
    (0.04, "honorific_stay", staying),
    (0.06, "bare_kin", sibling_sentence),
    (0.06, "i_dropped", i_dropped),
    (0.03, "doing_what", doing_what),
    (0.08, "feeling", feeling),
    (0.05, "body_ache", body_ache),
)

DESCRIPTIONS = {
    "shall_we": ("Proposal: Shall we ...? <-> -(으)ㄹ까요? (we is left out in Korean)",
                 "제안: -(으)ㄹ까요? (같이 먹을까요?)"),
    "shall_i": ("Offer: Shall I ...? <-> 제가 -(으)ㄹ까요?",
                "제안: 제가 -(으)ㄹ까요? (제가 창문을 열까요?)"),
    "lets": ("Let's ... <-> -(으)ㅂ시다", "청유: -(으)ㅂ시다 (공원에 갑시다.)"),
    "ill": ("Promise: I'll ... <-> -(으)ㄹ게요 (I is left out)",
            "약속: -(으)ㄹ게요 (창문을 열게요.)"),
    "plan_to": ("Intention: plan to ... <-> -(으)려고 해요",
                "의도: -(으)려고 해요 (한국어를 공부하려고 해요.)"),
    "honorific": ("Honorific -(으)시- for family elders, with 드세요 and 주무세요",
                  "높임: -(으)세요 / -(으)셨어요 (할머니께서 신문을 읽으세요.)"),
    "honorific_stay": ("Honorific 계세요 (있다) for where an elder is",
                       "높임: 계세요 (할아버지께서 방에 계세요.)"),
    "i_dropped": ("Pro-drop: a Korean statement with no subject means I (Korean -> English)",
                  "생략: 주어 없는 문장은 '나' (고기를 먹어요. -> I eat meat.)"),
    "doing_what": ("What are you doing? <-> 뭐 하고 있어요? (you left out; 계세요 for elders)",
                   "질문: 뭐 하고 있어요? (지금 뭐 하고 있어요?)"),
    "feeling": ("Feelings with the subject left out: I am hungry. <-> 배가 고파요. / Are you "
                "tired? <-> 피곤해요?",
                "감정: 주어 생략 (배가 고파요. / 피곤해요? / 배가 안 고파요.)"),
    "body_ache": ("Body parts that hurt: My head hurts. <-> 머리가 아파요. (배 is the stomach)",
                  "아픈 곳: 머리가 아파요. / 배가 아파요? (배 = 신체)"),
    "bare_kin": ("Family named without 제: 동생 <-> my younger sibling, with -고 있어요",
                 "가족: 동생이 ... -고 있어요 (동생이 방에서 자고 있어요.)"),
}


def _anchors() -> list[Pair]:
    """The issue's sentences this area covers, made by the same builders as the corpus."""
    def verb(en: str, ko: str) -> Verb:
        return next(v for v in VERBS if (v.en, v.ko) == (en, ko))

    keys = Keys()
    k = keys()
    shall = proposal(verb("eat", "먹다"), ([], []), ([("together", k)], [("같이", k)]),
                     ([], []), keys, "we")
    keys = Keys()
    room = BY_EN[("room", True)]  # (en, place or mass)
    sleep = sibling(BARE_KIN[0], verb("sleep", "자다"), ([], []), room, False, keys)
    c = Clause()
    c.subj = NP(pron=PRONOUNS[0])
    c.adj = next(a for a in ADJECTIVES if (a.en, a.ko) == ("hungry", "배고프다"))
    en, ko, _ = render_adj(c, "decl", Keys())
    return [shall, finish(en, ko, "."), sleep]


TEXTBOOK_ANCHORS: list[Pair] = _anchors()
