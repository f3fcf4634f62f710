"""The textbook's modal chapter (experience, obligation, permission, third-person wants,
ability) and its means / company / range chapter: forms, alignments, one translation each way,
and the hand-written textbook sentences."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from training.hangul import infinitive, particle
from training.lexicon import VERBS
from training.render import Pair, Reject
from training.textbook import modal, modal_means

TSV = Path(__file__).resolve().parents[1] / "data" / "textbook_modal.tsv"
MAKERS = {name: fn for _, name, fn in modal.MAKERS}
ARTICLES = {"the", "a", "an"}


def sample(name: str, n: int = 1500, seed: int = 0) -> list[Pair]:
    """n pairs of one construction (rejected draws redrawn)."""
    r = random.Random(f"{name}:{seed}")
    out: list[Pair] = []
    while len(out) < n:
        try:
            out.append(MAKERS[name](r))
        except Reject:
            continue
    return out


@pytest.fixture(scope="module")
def pairs() -> dict[str, list[Pair]]:
    return {name: sample(name) for name in MAKERS}


def test_every_construction_is_described_in_both_languages():
    assert set(modal.DESCRIPTIONS) == set(MAKERS)
    for en, ko in modal.DESCRIPTIONS.values():
        assert en and re.search("[가-힣]", ko)


@pytest.mark.parametrize("lemma, form", [
    ("먹다", "먹어"), ("가다", "가"), ("공부하다", "공부해"), ("쓰다", "써"), ("듣다", "들어"),
    ("돕다", "도와"), ("마시다", "마셔"), ("앉다", "앉아"), ("기다리다", "기다려"), ("켜다", "켜"),
    ("배우다", "배워"), ("모르다", "몰라"), ("짓다", "지어"),
])
def test_the_aeo_form_the_chapter_builds_on(lemma, form):
    # -아/어 본 적이, -아/어야 해요 and -아/어도 돼요 all hang on this form (irregulars too)
    assert infinitive(lemma) == form


@pytest.mark.parametrize("base, expected", [
    ("eat", "eaten"), ("write", "written"), ("cook", "cooked"), ("study", "studied"),
    ("swim", "swum"), ("drink", "drunk"), ("learn", "learned"),
])
def test_participles(base, expected):
    verb = next(v for v in VERBS if v.base == base)
    assert modal.participle(verb) == expected


def test_an_irregular_past_without_a_known_participle_is_refused():
    verb = next(v for v in VERBS if v.base == "sleep")  # slept: not in the table, not -ed
    with pytest.raises(Reject):
        modal.participle(verb)


# (English words, the Korean the same pair must then contain)
FORMS = {
    "modal_experience": [("eaten", "먹어 본 적이"), ("been to", "가 본 적이"),
                         ("written", "써 본 적이"), ("learned", "배워 본 적이"),
                         ("drunk", "마셔 본 적이")],
    "modal_obligation": [("(?<!not )have to study", "공부해야"), ("had to wait for", "기다려야"),
                         ("(?<!not )have to help", "도와야"), ("(?<!not )has to write", "써야"),
                         ("not have to go", "가지 않아도"), ("not have to write", "쓰지 않아도")],
    "modal_permission": [("sit", "앉아도 돼요"), ("drink", "마셔도 돼요"),
                         ("close", "닫아도 돼요"), ("turn off", "꺼도 돼요")],
    "modal_want_third": [("to eat", "먹고 싶어"), ("to go", "가고 싶어"),
                         ("to listen to", "듣고 싶어"), ("to make", "만들고 싶어")],
    "modal_ability": [("at swimming", "수영을"), ("at cooking", "요리를"),
                      ("at Korean", "한국어를"), ("at soccer", "축구를")],
}


@pytest.mark.parametrize("name", sorted(FORMS))
def test_hand_checked_forms(pairs, name):
    found = 0
    for p in pairs[name]:
        for en, ko in FORMS[name]:
            # (not the particle verbs that share the word: eat out, come back, turn on)
            if re.search(rf"\b{en}\b(?! out| back| up| on\b| off\b)", p.en):
                assert ko in p.ko, (en, p)
                found += 1
    assert found >= 10, name


def test_experience_polarity_and_question(pairs):
    for p in pairs["modal_experience"]:
        assert " 본 적이 " in p.ko, p
        assert (" never " in p.en) == p.ko.endswith("없어요."), p
        assert p.en.startswith(("Have ", "Has ")) == p.ko.endswith("?"), p
        if p.ko.endswith("?"):
            assert " ever " in p.en


def test_obligation_tense(pairs):
    for p in pairs["modal_obligation"]:
        past = p.en.split()[0] == "Did" or " had to " in p.en
        assert p.ko.endswith("야 했어요" + p.ko[-1]) == past, p
        no_need = " not have to " in p.en
        assert p.ko.endswith("지 않아도 돼요.") == no_need, p
        assert no_need or p.ko.endswith(("야 해요.", "야 해요?", "야 했어요.", "야 했어요?")), p


def test_permission_asks_for_me_and_allows_you(pairs):
    for p in pairs["modal_permission"]:
        assert p.ko.split()[-1] in ("돼요?", "돼요."), p
        if p.en.endswith("?"):
            assert p.en.startswith("May I "), p
        assert ("여기" in p.ko) == (" here" in p.en), p
        assert ("지금" in p.ko) == (" now" in p.en), p


def test_third_person_wants_never_say_I_or_you(pairs):
    for p in pairs["modal_want_third"]:
        assert " 싶어 " in p.ko and "싶어요" not in p.ko, p
        words = p.en.split()
        subject = words[1] if words[0] in ("Do", "Does", "Did") else words[0]
        assert subject not in ("I", "you", "You", "we", "We"), p
        assert (" not " in p.en) == (" 하지 않" in p.ko), p


def test_ability_not_good_is_jal_mot(pairs):
    for p in pairs["modal_ability"]:
        assert (" not good " in p.en) == (" 잘 못" in p.ko), p
        assert " good at " in p.en, p


def test_ranges(pairs):
    days = [en for en, _ in modal_means.DAYS]
    for p in pairs["range_time"]:
        assert "부터" in p.ko and " from " in p.en, p
        assert (" to " in p.en) == ("까지" in p.ko), p
        named = [w.strip(".") for w in p.en.split() if w.strip(".") in days]
        if len(named) == 2:  # Monday to Friday, never Friday to Monday
            assert days.index(named[0]) < days.index(named[1]), p
    for p in pairs["range_place"]:
        assert re.search(r"\S+에서 \S+까지", p.ko) and " from " in p.en, p


def test_company_and_coordination_variants_are_one_way(pairs):
    for p in pairs["company_hago_rang"]:
        assert p.to == "en" and ("하고 " in p.ko or "랑 " in p.ko) and " with " in p.en, p
    for p in pairs["noun_and"]:
        one_way = bool(re.search(r"(하고|랑) ", p.ko))
        assert (p.to == "en") == one_way or (p.to == "en" and not p.ko.startswith("저는")), p
        assert " and " in p.en


def test_direction_ro_reads_as_to_one_way(pairs):
    for p in pairs["means_direction"]:
        assert p.to == "en" and re.search(r"(으로|[^으]로) (가요|갔어요)\.$", p.ko), p
        assert re.search(r" (to|home)\b", p.en), p
    eu = 0
    # 으로 after a consonant other than ㄹ: 학교로, 서울로, 집으로
    for p in pairs["means_direction"]:
        word = p.ko.split()[-2]
        stem = word[:-2] if word.endswith("으로") else word[:-1]
        assert particle(stem, "direction") == word, p
        eu += word.endswith("으로")
    assert eu > 10


def test_pro_drop_pairs_read_I_and_are_one_way(pairs):
    dropped = 0
    for name, ps in pairs.items():
        if name in ("company_hago_rang", "means_direction"):
            continue
        for p in ps:
            if p.to == "en" and not re.search(r"(하고|랑) ", p.ko):
                dropped += 1
                assert p.en.startswith("I ") and not p.ko.startswith("저는"), p
            if p.en.startswith("I ") and p.to == "":
                assert p.ko.startswith(("저는", "오늘 저는", "내일 저는", "어제 저는")), p
    assert dropped > 100


def test_alignments_in_range_and_content_words_aligned(pairs):
    for ps in pairs.values():
        for p in ps:
            en, ko = p.en.split(), p.ko.split()
            assert all(0 <= i < len(en) and 0 <= j < len(ko) for i, j in p.align), p
            aligned = {i for i, _ in p.align}
            for i, w in enumerate(en):
                if w.lower().strip(".?") not in ARTICLES:
                    assert i in aligned, (w, p)
            assert {j for _, j in p.align} == set(range(len(ko))), p


def test_one_translation_each_way(pairs):
    en_to_ko: dict[str, str] = {}
    ko_to_en: dict[str, str] = {}
    for ps in pairs.values():
        for p in ps:
            if p.to == "":
                assert en_to_ko.setdefault(p.en, p.ko) == p.ko, (en_to_ko[p.en], p)
            assert ko_to_en.setdefault(p.ko, p.en) == p.en, (ko_to_en[p.ko], p)


# ----------------------------------------------------------------------- textbook sentences


def rows() -> list[list[str]]:
    lines = TSV.read_text(encoding="utf-8").splitlines()
    return [line.split("\t") for line in lines if line.strip() and not line.startswith("#")]


def test_textbook_file_shape():
    table = rows()
    assert all(len(r) == 4 for r in table)
    assert sum(r[0] == "en-ko" for r in table) >= 25
    assert sum(r[0] == "ko-en" for r in table) >= 25
    for direction, source, reference, name in table:
        assert direction in ("en-ko", "ko-en") and name in MAKERS
        en, ko = (source, reference) if direction == "en-ko" else (reference, source)
        assert not re.search("[가-힣]", en) and re.search("[가-힣]", ko)
        assert en[-1] == ko[-1] and en[-1] in ".?"
    assert len({r[1] for r in table}) == len(table)  # no sentence twice
