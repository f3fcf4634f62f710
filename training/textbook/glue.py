"""Textbook area: the glue words and patterns of a first-year student's first weeks.

Conventions (one English pattern per Korean form, so each direction stays a function):

* 좀 with a mass food or drink <-> "some" (물 좀 주세요. <-> Please give me some water.);
  좀 as a softener in a request (창문을 좀 열어 주세요.) or with an adjective (좀 비싸요.) has
  no English word of its own: such pairs are one-way, Korean -> English;
* a nationality before a noun <-> the country's name (Korean food <-> 한국 음식);
* tall / short of people <-> 키가 크다 / 키가 작다, the person as topic (형은 키가 커요.);
  "taller than B" <-> B보다 키가 더 커요 (the degree chapter's 더); without 더 it is read
  Korean -> English only;
* favourite <-> 제일 좋아하는 (Summer is my favorite season. <-> 여름은 제가 제일 좋아하는
  계절이에요.); "my" <-> 제가, "your" <-> 당신이 (dropped in questions), "his" <-> 그가;
* going by a means of transport: "go to work" <-> 회사에 가요, "go home" <-> 집에 가요, with
  "by bus" <-> 버스로 and "on foot" <-> 걸어서;
* -(으)ㄹ 때 with an activity: "When I study, I listen to music." <-> 저는 공부할 때 음악을
  들어요.; the order "I listen to music when I study." is read English -> Korean only;
* -는데 / -(으)ㄴ데 (background or contrast) -> "A, but B" / "A, so B": Korean -> English only
  ("but" is -지만's and "so" -아/어서's);
* -기로 했어요 <-> "decided to VERB" (-지 않기로 했어요 <-> "decided not to VERB");
* -(으)면서 <-> "B while A-ing" (저는 음악을 들으면서 공부해요. <-> I study while listening to
  music.).

The subject is said in both languages except where the textbook drops it (questions: "you").
The word lists and the descriptions live in glue_words.py.
"""

from __future__ import annotations

import random

from ..everyday import NAMES, NATIONALITIES, for_me_sentence
from ..hangul import (
    conjugate_ko,
    en_third_person,
    eu_form,
    has_batchim,
    ko_attributive,
    particle,
    prospective,
)
from ..render import Keys, Pair, Reject, finish
from .glue_words import (
    ACTIVITIES,
    BAGS,
    BG_ACTS,
    CONTRAST_ADJ,
    DESCRIPTIONS,
    DESTINATIONS,
    FAV_OWNERS,
    FAVOURITES,
    JOB_NOUNS,
    KIN,
    MEANS,
    NAT_NOUNS,
    NAT_VERBS,
    OWNERS,
    PLANS,
    PRONOUNS,
    SOFT_PERSON_ADJ,
    SOFT_THINGS,
    SOME,
    WHILE_A,
    WHILE_B,
)


def pick(r: random.Random, seq):
    """One element, drawn with r (sequences only: no set ordering is ever consulted)."""
    return seq[r.randrange(len(seq))]


def _one_way(p: Pair, to: str) -> Pair:
    return Pair(p.en, p.ko, p.align, to=to)


def _be(person: str, past: bool = False) -> str:
    if past:
        return "were" if person in ("2", "1p", "3p") else "was"
    return {"1s": "am", "3s": "is"}.get(person, "are")


def _present(base: str, person: str) -> list[str]:
    """A (possibly multi-word) English verb in the simple present for a person."""
    words = base.split()
    if person == "3s":
        words[0] = en_third_person(words[0])
    return words


def _person(r: random.Random, keys: Keys, pronouns: bool = True) -> tuple[list, list, str, str]:
    """A person as subject: English tokens, Korean tokens before the particle is added (the
    last one takes it), person, pronoun for a second mention."""
    x = r.random()
    if pronouns and x < 0.4:
        en, en_obj, ko, person = pick(r, PRONOUNS)
        k = keys()
        return [(en, k)], [(ko, k)], person, en
    if x < 0.6:
        en, ko = pick(r, NAMES)
        k = keys()
        return [(en, k)], [(ko, k)], "3s", ""
    if x < 0.9 and KIN:
        owner, noun = pick(r, OWNERS), pick(r, KIN)
        ko_, kn = keys(), keys()
        return ([(owner[0], ko_)] + [(w, kn) for w in noun.toks],
                [(owner[1], ko_), (noun.ko, kn)], "3s", "")
    noun = pick(r, JOB_NOUNS)
    k = keys()
    return [("the", None)] + [(w, k) for w in noun.toks], [(noun.ko, k)], "3s", ""


def _with(tokens: list, kind: str) -> list:
    """The Korean tokens with a particle on the last word."""
    w, k = tokens[-1]
    return tokens[:-1] + [(particle(w, kind), k)]


def _obj_of(person_en: list) -> list:
    """A subject's English tokens as an object (I -> me)."""
    if len(person_en) == 1:
        for en, en_obj, _, _ in PRONOUNS:
            if person_en[0][0] == en:
                return [(en_obj, person_en[0][1])]
    return person_en


# ------------------------------------------------------------------------- the makers


def some_please(r: random.Random) -> Pair:
    """물 좀 주세요. <-> Please give me some water."""
    keys = Keys()
    en_n, ko_n = pick(r, SOME)
    kp, kn, ks = keys(), keys(), keys()
    en = [("please", kp), ("give", kp), ("me", kp), ("some", ks), (en_n, kn)]
    return finish(en, [(ko_n, kn), ("좀", ks), ("주세요", kp)], ".")


def soft_request(r: random.Random) -> Pair:
    """창문을 좀 열어 주세요. -> Please open the window for me. (좀 softens: one-way)"""
    p = for_me_sentence(r)
    ko = p.ko.rstrip(".").split()
    # only the verb requests: 물 좀 주세요 is "some water" (some_please)
    if not p.en.endswith(" for me.") or len(ko) < 2 or p.to:
        raise Reject
    at = len(ko) - 2  # before the verb: 창문을 좀 열어 주세요
    words = ko[:at] + ["좀"] + ko[at:]
    align = tuple(sorted([(e, k + (k >= at)) for e, k in p.align] + [(0, at)]))
    return Pair(p.en, " ".join(words) + ".", align, to="en")


def soft_adjective(r: random.Random) -> Pair:
    """그는 좀 바빠요. -> He is a little busy. (좀 here is 조금's "a little": one-way)"""
    keys = Keys()
    ks, ka, kt = keys(), keys(), keys()
    if r.random() < 0.35:
        en_a, ko_a = pick(r, SOFT_PERSON_ADJ)
        en_s, ko_s, person, _ = _person(r, keys)
        ko_s = _with(ko_s, "topic")
    else:
        words, ko_word, adjs = pick(r, SOFT_THINGS)
        en_a, ko_a = pick(r, adjs)
        k = keys()
        en_s = [(w, None if w == "the" else k) for w in words]
        ko_s = [(w, k) for w in ko_word.split()]
        person = "3p" if words[-1] == "shoes" else "3s"
    en = en_s + [(_be(person), kt), ("a", ks), ("little", ks), (en_a, ka)]
    ko = ko_s + [("좀", ks), (conjugate_ko(ko_a), ka)]
    return _one_way(finish(en, ko, "."), "en")


def nationality(r: random.Random) -> Pair:
    """저는 한국 음식을 좋아해요. <-> I like Korean food."""
    keys = Keys()
    nat_en, nat_ko = pick(r, NATIONALITIES)
    noun_en, noun_ko, verbs = pick(r, NAT_NOUNS)
    # "love" would share 좋아하다 with "like", "sing" and "have" other particles: left out
    verb = pick(r, [v for v in verbs if v in NAT_VERBS] or ["like"])
    lemma, past_en = NAT_VERBS[verb]
    kn, knat, kv = keys(), keys(), keys()
    en_o = [(nat_en, knat), (noun_en, kn)]
    ko_o = [(nat_ko, knat), (particle(noun_ko, "object"), kn)]
    if noun_en == "friends":  # 친구들을 만나요: the plural said, as the grammar says it
        ko_o[-1] = (particle(noun_ko + "들", "object"), kn)
    x = r.random()
    if x < 0.2:  # a question to "you": Do you like Korean food? <-> 한국 음식을 좋아해요?
        kd = keys()
        en = [("do", kd), ("you", None)] + [(w, kv) for w in verb.split()] + en_o
        return finish(en, ko_o + [(conjugate_ko(lemma), kv)], "?")
    en_s, ko_s, person, _ = _person(r, keys)
    past = x > 0.7
    if past:
        en_v = [(w, kv) for w in past_en.split()]
    else:
        en_v = [(w, kv) for w in _present(verb, person)]
    ko = _with(ko_s, "topic") + ko_o + [(conjugate_ko(lemma, "past" if past else "present"),
                                         kv)]
    return finish(en_s + en_v + en_o, ko, ".")


def nationality_adj(r: random.Random) -> Pair:
    """한국 음식은 맛있어요. <-> Korean food is delicious."""
    keys = Keys()
    nat_en, nat_ko = pick(r, NATIONALITIES)
    noun_en, noun_ko, adj_en, adj_ko = pick(r, (
        ("food", "음식", "delicious", "맛있다"), ("food", "음식", "spicy", "맵다"),
        ("music", "음악", "interesting", "재미있다"), ("history", "역사", "difficult", "어렵다"),
        ("history", "역사", "interesting", "재미있다"), ("culture", "문화", "interesting",
                                                      "재미있다")))
    kn, knat, ka, kt = keys(), keys(), keys(), keys()
    en = [(nat_en, knat), (noun_en, kn), ("is", kt), (adj_en, ka)]
    ko = [(nat_ko, knat), (particle(noun_ko, "topic"), kn), (conjugate_ko(adj_ko), ka)]
    return finish(en, ko, ".")


def tall(r: random.Random) -> Pair:
    """형은 키가 커요. <-> My older brother is tall.; 저보다 키가 더 커요 <-> taller than me."""
    keys = Keys()
    en_s, ko_s, person, _ = _person(r, keys)
    is_tall = r.random() < 0.6
    adj_en, adj_ko = ("tall", "크다") if is_tall else ("short", "작다")
    ka, kt = keys(), keys()
    x = r.random()
    if x < 0.45:  # comparison
        en_b, ko_b, _, _ = _person(r, keys)
        if [w for w, _ in en_b] == [w for w, _ in en_s]:
            raise Reject
        en_b = _obj_of(en_b)
        # "than" joins the second person's last Korean word, which carries 보다
        ko_b = ko_b[:-1] + [(ko_b[-1][0] + "보다", ko_b[-1][1])]
        k_more = keys()
        en = en_s + [(_be(person), kt), (adj_en + "er", (ka, k_more)),
                     ("than", ko_b[-1][1])] + en_b
        ko = _with(ko_s, "topic") + ko_b + [("키가", ka), ("더", k_more),
                                            (conjugate_ko(adj_ko), ka)]
        if r.random() < 0.25:  # 저보다 키가 커요 without 더: Korean -> English only
            return _kin_variants(r, _one_way(finish(en, [t for t in ko if t[0] != "더"], "."),
                                             "en"))
        return _kin_variants(r, finish(en, ko, "."))
    if x < 0.6:  # question: Is he tall? <-> 그는 키가 커요?
        en = [(_be(person), kt)] + en_s + [(adj_en, ka)]
        if person == "2":
            return finish(en, [("키가", ka), (conjugate_ko(adj_ko), ka)], "?")
        return finish(en, _with(ko_s, "topic") + [("키가", ka), (conjugate_ko(adj_ko), ka)],
                      "?")
    past = x > 0.85
    en = en_s + [(_be(person, past), kt), (adj_en, ka)]
    ko = _with(ko_s, "topic") + [("키가", ka),
                                 (conjugate_ko(adj_ko, "past" if past else "present"), ka)]
    return _kin_variants(r, finish(en, ko, "."))


def drop_word(p: Pair, lang: str, index: int, to: str) -> Pair:
    """The pair without one word of one side (alignment shifted), one-way to `to`."""
    en, ko = p.en.split(), p.ko.split()
    words = en if lang == "en" else ko
    del words[index]
    side = 0 if lang == "en" else 1
    align = tuple((e, k) for e, k in (
        (a[0], a[1]) if a[side] < index else
        ((a[0] - 1, a[1]) if side == 0 else (a[0], a[1] - 1))
        for a in p.align if a[side] != index))
    text_en = " ".join(en)
    return Pair(text_en[0].upper() + text_en[1:], " ".join(ko), align, to)


def _kin_variants(r: random.Random, p: Pair) -> Pair:
    """Now and then the forms a learner meets for "my older brother": English "my brother"
    read as 제 형 (English -> Korean only; the lexicon's older brother / sister are 형 / 누나),
    or Korean 형은 without 제 read as "my older brother" (Korean -> English only)."""
    en = p.en.split()
    if p.to == "ko" or len(en) < 3 or en[0] != "My" or not p.ko.startswith("제 "):
        return p
    x = r.random()
    if x < 0.15 and not p.to and en[1] == "older" and en[2] in ("brother", "sister"):
        return drop_word(p, "en", 1, "ko")
    if x < 0.35 and p.ko.startswith("제 "):
        return drop_word(p, "ko", 0, "en")
    return p


def tall_person(r: random.Random) -> Pair:
    """제 친구는 키가 큰 사람이에요. <-> My friend is a tall person."""
    keys = Keys()
    en_s, ko_s, person, _ = _person(r, keys, pronouns=False)
    adj_en, adj_ko = pick(r, (("tall", "크다"), ("short", "작다")))
    ka, kn, kt = keys(), keys(), keys()
    en = en_s + [("is", kt), ("a", None), (adj_en, ka), ("person", kn)]
    ko = _with(ko_s, "topic") + [("키가", ka), (ko_attributive(adj_ko), ka), ("사람이에요", kn)]
    return finish(en, ko, ".")


def favourite(r: random.Random) -> Pair:
    """여름은 제가 제일 좋아하는 계절이에요. <-> Summer is my favorite season."""
    keys = Keys()
    (cat_en, cat_ko), members = pick(r, list(FAVOURITES.items()))
    m_en, m_ko = pick(r, members)
    own_en, own_ko = pick(r, FAV_OWNERS)
    ko_, kf, kc, km = keys(), keys(), keys(), keys()
    fav = [("제일", kf), ("좋아하는", kf)]
    x = r.random()
    if x < 0.2 and own_en == "your":  # 제일 좋아하는 계절이 뭐예요? <-> What is your favorite ...?
        en = [("what", km), ("is", km), ("your", ko_), ("favorite", kf), (cat_en, kc)]
        return finish(en, fav + [(particle(cat_ko, "subject"), kc), ("뭐예요", km)], "?")
    if own_en == "your":
        raise Reject  # statements about "your" favourite read oddly; questions only
    if x < 0.6:
        if m_en.endswith("s") and m_en != "tennis":
            raise Reject  # plural members keep the other order (My favorite fruit is ...)
        # "is" aligns to the copula-bearing word (계절이에요)
        en = [(m_en, km), ("is", kc), (own_en, ko_), ("favorite", kf), (cat_en, kc)]
        ko = [(particle(m_ko, "topic"), km), (own_ko, ko_)] + fav
        ko += [(cat_ko + ("이에요" if has_batchim(cat_ko) else "예요"), kc)]
        p = finish(en, ko, ".")
    else:
        en = [(own_en, ko_), ("favorite", kf), (cat_en, kc), ("is", km), (m_en, km)]
        ko = [(own_ko, ko_)] + fav + [(particle(cat_ko, "topic"), kc),
                                      (m_ko + ("이에요" if has_batchim(m_ko) else "예요"), km)]
        p = finish(en, ko, ".")
    if r.random() < 0.1:  # the British spelling, English -> Korean only
        return _one_way(Pair(p.en.replace("favorite", "favourite"), p.ko, p.align), "ko")
    return p


def transport(r: random.Random) -> Pair:
    """저는 버스로 회사에 가요. <-> I go to work by bus."""
    keys = Keys()
    en_s, ko_s, person, _ = _person(r, keys)
    dest_en, dest_ko = pick(r, DESTINATIONS)
    kd, km, kv = keys(), keys(), keys()
    en_dest = [(w, None if w == "the" else kd) for w in dest_en]
    ko_dest = [(dest_ko + "에", kd)]
    walk = r.random() < 0.15
    if walk:
        en_m, ko_m = [("on", km), ("foot", km)], [("걸어서", km)]
    else:
        m_en, m_ko = pick(r, MEANS)
        en_m, ko_m = [("by", km), (m_en, km)], [(particle(m_ko, "instrument"), km)]
    x = r.random()
    if x < 0.15:  # How do you go to school? <-> 학교에 어떻게 가요?
        kh, kdo = keys(), keys()
        en = [("how", kh), ("do", kdo), ("you", None), ("go", kv)] + en_dest
        return finish(en, ko_dest + [("어떻게", kh), ("가요", kv)], "?")
    tense = "past" if x > 0.75 else "present"
    go = "went" if tense == "past" else _present("go", person)[0]
    en = en_s + [(go, kv)] + en_dest + en_m
    ko = _with(ko_s, "topic") + ko_m + ko_dest + [(conjugate_ko("가다", tense), kv)]
    if dest_ko == "회사":  # 회사에 가요 is "go to the company" elsewhere: "to work" -> Korean only
        return _one_way(finish(en, ko, "."), "ko")
    return finish(en, ko, ".")


def _activity_ko(act: tuple, form: str) -> list[str]:
    return ([act[3]] if act[3] else []) + [form]


def when_activity(r: random.Random) -> Pair:
    """저는 공부할 때 음악을 들어요. <-> When I study, I listen to music."""
    keys = Keys()
    pron_en, _, pron_ko, person = pick(r, PRONOUNS)
    a1, a2 = pick(r, ACTIVITIES), pick(r, ACTIVITIES)
    if a1[0] == a2[0] or not a2[2] and a2[0] not in ("rest", "sing", "exercise"):
        raise Reject
    ks, kw, k1, k2 = keys(), keys(), keys(), keys()
    en1 = [(pron_en, None)] + [(w, k1) for w in _present(a1[0], person)] + [(w, k1) for w in
                                                                           a1[2]]
    en2 = [(pron_en, ks)] + [(w, k2) for w in _present(a2[0], person)] + [(w, k2) for w in
                                                                         a2[2]]
    ko1 = [(w, k1) for w in _activity_ko(a1, prospective(a1[4]))] + [("때", kw)]
    ko2 = [(w, k2) for w in _activity_ko(a2, conjugate_ko(a2[4]))]
    ko_s = [] if person == "2" and r.random() < 0.5 else [(particle(pron_ko, "topic"), ks)]
    if person == "2" and not ko_s:
        # a question to "you": Do you listen to music when you study?
        en2q = [("do", None), ("you", ks)] + [(w, k2) for w in a2[0].split()] + [
            (w, k2) for w in a2[2]]
        en = en2q + [("when", kw), ("you", None)] + [(w, k1) for w in a1[0].split()] + [
            (w, k1) for w in a1[2]]
        return finish(en, ko1 + ko2, "?")
    en = [("when", kw)] + en1[:-1] + [(en1[-1][0] + ",", en1[-1][1])] + en2
    if r.random() < 0.35:  # I listen to music when I study. -> Korean only
        en = en2 + [("when", kw)] + en1
        return _one_way(finish(en, ko_s + ko1 + ko2, "."), "ko")
    return finish(en, ko_s + ko1 + ko2, ".")


def background(r: random.Random) -> Pair:
    """이 가방은 예쁜데 비싸요. -> This bag is pretty, but it is expensive. (Korean -> English)"""
    keys = Keys()
    x = r.random()
    if x < 0.55:
        noun_en, noun_ko = pick(r, BAGS)
        a1_en, a1_ko, a2_en, a2_ko = pick(r, CONTRAST_ADJ)
        kd, kn, k1, k2, kb = keys(), keys(), keys(), keys(), keys()
        plural = noun_en == "shoes"
        be, it = ("are", "they") if plural else ("is", "it")
        en = [("these" if plural else "this", kd), (noun_en, kn), (be, None),
              (a1_en + ",", k1), ("but", kb), (it, None), (be, None), (a2_en, k2)]
        ko = [("이", kd), (particle(noun_ko, "topic"), kn),
              (ko_attributive(a1_ko) + "데", k1), (conjugate_ko(a2_ko), k2)]
        p = finish(en, ko, ".")
        return _one_way(Pair(p.en, p.ko, tuple(sorted(set(p.align) | {(4, 2)}))), "en")
    # 저는 한국어를 공부하는데 어려워요. -> I study Korean, but it is difficult.
    pron_en, _, pron_ko, person = pick(r, PRONOUNS)
    act_en, act_ko, adjs = pick(r, BG_ACTS)
    adj_en, adj_ko = pick(r, adjs)
    ks, k1, k2, kb = keys(), keys(), keys(), keys()
    verb = _present(act_en[0], person)
    en1 = [(pron_en, ks)] + [(w, k1) for w in verb + [w for w in act_en[1:]]]
    en1[-1] = (en1[-1][0] + ",", en1[-1][1])
    en = en1 + [("but", kb), ("it", None), ("is", None), (adj_en, k2)]
    ko = [(particle(pron_ko, "topic"), ks)] + [(w, k1) for w in act_ko.split()]
    ko += [(conjugate_ko(adj_ko), k2)]
    p = finish(en, ko, ".")
    at = next(i for i, (w, _) in enumerate(en) if w == "but")
    return _one_way(Pair(p.en, p.ko, tuple(sorted(set(p.align) | {(at, len(ko) - 2)}))), "en")


def decided(r: random.Random) -> Pair:
    """저는 한국어를 공부하기로 했어요. <-> I decided to study Korean."""
    keys = Keys()
    en_s, ko_s, person, _ = _person(r, keys)
    plan_en, plan_ko = pick(r, PLANS)
    kd, kp, kn = keys(), keys(), keys()
    neg = r.random() < 0.2 and not {"more", "less"} & set(plan_en)
    en = en_s + [("decided", kd)] + ([("not", kn)] if neg else []) + [("to", None)]
    en += [(w, kp) for w in plan_en]
    ko_plan = [(w, kp) for w in plan_ko[:-1]]
    if neg:
        ko_plan += [(plan_ko[-1] + "지", kp), ("않기로", kn)]
    else:
        ko_plan += [(plan_ko[-1] + "기로", kp)]
    ko = _with(ko_s, "topic") + ko_plan + [("했어요", kd)]
    return finish(en, ko, ".")


def while_doing(r: random.Random) -> Pair:
    """저는 음악을 들으면서 공부해요. <-> I study while listening to music."""
    keys = Keys()
    pron_en, _, pron_ko, person = pick(r, PRONOUNS)
    a_en, a_obj, a_lemma = pick(r, WHILE_A)
    b = pick(r, WHILE_B)
    if a_lemma == "하다" and b[0] == "talk":
        raise Reject
    ks, ka, kb, kw = keys(), keys(), keys(), keys()
    past = r.random() < 0.3
    if past and b[1][1] == b[0] and person != "3s":
        raise Reject  # "I read" is present and past alike
    b_en = b[1][1] if past else (b[1][0] if person == "3s" else b[0])
    en = [(pron_en, ks), (b_en, kb)] + [(w, None if w == "the" else kb) for w in b[2]]
    en += [("while", kw)] + [(w, ka) for w in a_en]
    ko = [(particle(pron_ko, "topic"), ks)] + [(w, ka) for w in a_obj]
    ko += [(eu_form(a_lemma, "면서"), ka)] + [(w, kb) for w in b[3]]
    ko += [(conjugate_ko(b[4], "past" if past else "present"), kb)]
    p = finish(en, ko, ".")
    widx = next(i for i, (w, _) in enumerate(en) if w == "while")
    kidx = next(i for i, (w, _) in enumerate(ko) if w.endswith("면서"))
    return Pair(p.en, p.ko, tuple(sorted(set(p.align) | {(widx, kidx)})))


MAKERS = (
    (0.07, "glue_some_please", some_please),
    (0.05, "glue_soft_request", soft_request),
    (0.03, "glue_soft_adjective", soft_adjective),
    (0.12, "glue_nationality", nationality),
    (0.04, "glue_nationality_adj", nationality_adj),
    (0.12, "glue_tall", tall),
    (0.03, "glue_tall_person", tall_person),
    (0.11, "glue_favourite", favourite),
    (0.10, "glue_transport", transport),
    (0.11, "glue_when_activity", when_activity),
    (0.05, "glue_background", background),
    (0.09, "glue_decided", decided),
    (0.08, "glue_while", while_doing),
)
__all__ = ["DESCRIPTIONS", "MAKERS"]
