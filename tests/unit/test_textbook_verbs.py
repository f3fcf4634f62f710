"""The first-year textbook verbs, adjectives and adverbs (data/verbs_textbook.tsv,
adjectives_textbook.tsv, the tail of adverbs.tsv): hand-checked conjugations, English forms,
one Korean per English sense, tags that find nouns, and that the words come out of a draw."""

from __future__ import annotations

import re

import pytest

from training import hangul as H
from training.corpus import generate
from training.lexicon import ADJECTIVES, MANNER_ADVERBS, VERBS, read_table

MY_VERBS = {r[1] for r in read_table("verbs_textbook")}
MY_ADJS = {r[1] for r in read_table("adjectives_textbook")}
VERBS_MINE = [v for v in VERBS if v.ko in MY_VERBS]
ADJS_MINE = [a for a in ADJECTIVES if a.ko in MY_ADJS]
NEW_ADVERBS = ("occasionally", "frequently", "loudly", "carefully", "kindly", "alone", "again",
               "warmly", "comfortably", "deeply", "regularly", "politely", "quite", "extremely")
OTHER_ADVERBS = {r[1] for r in read_table("adverbs") if r[0] != "manner"}  # frequency, degree


# (lemma, present, past, future, request, -(으)면): irregular and ㄹ / 르 / 으 stems checked by hand
CONJUGATIONS = [
    ("나르다", "날라요", "날랐어요", "나를 거예요", "나르세요", "나르면"),   # 르: carry
    ("오르다", "올라요", "올랐어요", "오를 거예요", "오르세요", "오르면"),   # 르: climb
    ("붓다", "부어요", "부었어요", "부을 거예요", "부으세요", "부으면"),     # ㅅ: pour
    ("낫다", "나아요", "나았어요", "나을 거예요", "나으세요", "나으면"),     # ㅅ: recover
    ("싣다", "실어요", "실었어요", "실을 거예요", "실으세요", "실으면"),     # ㄷ: load
    ("잠그다", "잠가요", "잠갔어요", "잠글 거예요", "잠그세요", "잠그면"),   # 으: lock
    ("썰다", "썰어요", "썰었어요", "썰 거예요", "써세요", "썰면"),          # ㄹ: slice
    ("수다떨다", "수다떨어요", "수다떨었어요", "수다떨 거예요", "수다떠세요", "수다떨면"),
    ("굶다", "굶어요", "굶었어요", "굶을 거예요", "굶으세요", "굶으면"),
    ("접다", "접어요", "접었어요", "접을 거예요", "접으세요", "접으면"),     # regular ㅂ: fold
    ("씻다", "씻어요", "씻었어요", "씻을 거예요", "씻으세요", "씻으면"),     # regular ㅅ (old)
    ("기어가다", "기어가요", "기어갔어요", "기어갈 거예요", "기어가세요", "기어가면"),
    ("서두르다", "서둘러요", "서둘렀어요", "서두를 거예요", "서두르세요", "서두르면"),
]


@pytest.mark.parametrize("lemma,present,past,future,please,if_", CONJUGATIONS)
def test_verb_conjugations_are_the_hand_checked_forms(lemma, present, past, future, please,
                                                      if_):
    assert H.conjugate_ko(lemma) == present
    assert H.conjugate_ko(lemma, "past") == past
    assert H.conjugate_ko(lemma, "future") == future
    assert H.conjugate_ko(lemma, ending="request") == please
    assert H.eu_form(lemma, "면") == if_


# (lemma, present, attributive): adjectives with irregular or ㄹ / 르 / ㄼ stems
ADJ_FORMS = [
    ("즐겁다", "즐거워요", "즐거운"), ("가파르다", "가팔라요", "가파른"),
    ("얇다", "얇아요", "얇은"), ("둥글다", "둥글어요", "둥근"), ("낯설다", "낯설어요", "낯선"),
    ("서투르다", "서툴러요", "서투른"), ("맛없다", "맛없어요", "맛없는"),
    ("쓰다", "써요", "쓴"), ("힘들다", "힘들어요", "힘든"), ("수줍다", "수줍어요", "수줍은"),
]


@pytest.mark.parametrize("lemma,present,attr", ADJ_FORMS)
def test_adjective_forms_are_the_hand_checked_forms(lemma, present, attr):
    assert lemma in MY_ADJS
    assert H.conjugate_ko(lemma) == present
    assert H.ko_attributive(lemma) == attr


def test_english_forms_of_irregular_and_particle_verbs():
    by_en = {v.en: v for v in VERBS_MINE}
    assert by_en["hold"].past == "held" and by_en["bite"].past == "bit"
    assert by_en["wake up"].past == "woke" and by_en["wake up"].part == ("up",)
    assert by_en["throw away"].past == "threw" and by_en["grow up"].past == "grew"
    assert by_en["marry"].s3 == "marries" and by_en["marry"].past == "married"
    assert by_en["stop"].past == "stopped" and by_en["pay"].past == "paid"
    # "I read the book." problem: none of these verbs has a past equal to its present
    assert all(v.past != v.base for v in VERBS_MINE)


def test_one_korean_per_english_sense_and_back():
    old = read_table("verbs")
    assert not MY_VERBS & {r[1] for r in old}  # no Korean verb reused
    assert not {r[0] for r in read_table("verbs_textbook")} & {r[0] for r in old}
    assert len(MY_VERBS) == len(read_table("verbs_textbook"))
    adj_en = [a.en for a in ADJS_MINE]  # (cold/hot in adjectives.tsv are split on purpose)
    assert len(adj_en) == len(set(adj_en))
    assert not set(adj_en) & {r[0] for r in read_table("adjectives")}
    assert len(MY_ADJS) == len(read_table("adjectives_textbook"))
    for row in read_table("verbs_textbook") + read_table("adjectives_textbook"):
        assert row[1].endswith("다") and " " not in row[1], row  # one Korean word


def test_tags_find_nouns_places_and_adverbs():
    for v in VERBS_MINE:
        assert v.subj_nouns, v
        assert not v.obj or v.obj_nouns, v
        assert not v.loc or v.places, v
        assert all(m in MANNER_ADVERBS for m in v.manner), v
    for a in ADJS_MINE:
        assert a.pred_nouns or a.attr_nouns, a
    for word in NEW_ADVERBS:
        assert word in MANNER_ADVERBS or word in OTHER_ADVERBS, word


def test_the_additions_bring_at_least_300_new_english_lemmas():
    old: set[str] = {r[0].split()[0].lower() for r in read_table("verbs")}
    old |= {r[0].lower() for r in read_table("adjectives")}
    old |= {r[0].lower() for name in ("nouns", "nouns_everyday") for r in read_table(name)}
    old |= {r[1] for r in read_table("adverbs") if r[1] not in NEW_ADVERBS}
    mine = {v.base.lower() for v in VERBS_MINE} | {a.en.lower() for a in ADJS_MINE}
    mine |= set(NEW_ADVERBS)
    assert len(mine - old) >= 300


@pytest.fixture(scope="module")
def draw():
    pairs = generate(30_000, seed=1)
    return " ".join(p.en.lower() for p in pairs), " ".join(p.ko for p in pairs)


def _ko_forms(lemma: str) -> set[str]:
    return {H.lemma_stem(lemma), H.infinitive(lemma), H.prospective(lemma), H.past_stem(lemma),
            H.eu_form(lemma, ""), H.ko_attributive(lemma), H.ko_present_attributive(lemma),
            H.ko_propose(lemma)[:-2]}


def test_most_additions_appear_in_a_draw(draw):
    en, ko = draw
    seen = 0
    for v in VERBS_MINE:
        words = "|".join(re.escape(w) for w in {v.base, v.s3, v.past})
        seen += bool(re.search(rf"\b({words})\b", en)) and any(f in ko for f in _ko_forms(v.ko))
    for a in ADJS_MINE:
        seen += bool(re.search(rf"\b{re.escape(a.en)}\b", en)) and (
            a.attr_ko in ko or H.lemma_stem(a.ko) in ko)
    assert seen >= 0.9 * (len(VERBS_MINE) + len(ADJS_MINE))


def test_a_few_verbs_come_out_in_their_hand_checked_sentence_forms(draw):
    _, ko = draw
    # each Korean form below can only come from one of the new verbs (or adjectives)
    forms = ("올라요", "부어요", "날라요", "잠가요", "말려요", "데워요", "즐거워요", "가팔라요")
    for form in forms:
        assert form in ko, form


def test_english_and_korean_of_a_verb_travel_together():
    pairs = generate(20_000, seed=2)
    by_en = {v.en: v for v in VERBS_MINE}
    expected = {"climb": "오르다", "pour": "붓다", "carry": "나르다", "lock": "잠그다",
                "fold": "접다", "heat": "데우다", "peel": "깎다", "hurry": "서두르다"}
    for en, lemma in expected.items():
        v = by_en[en]
        assert v.ko == lemma, (en, v.ko)
        token = re.compile(rf"\b({v.base}|{v.s3}|{v.past})\b", re.IGNORECASE)
        hits = [p for p in pairs if token.search(p.en)]
        assert hits, en
        for p in hits:
            assert any(f in p.ko for f in _ko_forms(lemma)), (en, p)
