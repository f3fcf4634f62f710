"""The textbook's numbers chapter: number words, counters, dates, clock minutes, prices, and the
hand-written chapter in tests/data/textbook_numbers.tsv."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from training import corpus
from training.everyday_wh import sino
from training.render import Pair, Reject
from training.textbook import numbers
from training.textbook.numbers_time import en_won
from training.textbook.numbers_words import drop_subject, en_num, en_ordinal, native

CHAPTER = Path(__file__).parents[1] / "data" / "textbook_numbers.tsv"
NAMES = {name for _, name, _ in numbers.MAKERS}
UNALIGNED = {"the", "a", "an", "it", "there"}


def _pairs(name: str, n: int = 400, seed: int = 0) -> list[Pair]:
    fn = next(f for _, nm, f in numbers.MAKERS if nm == name)
    r, out = random.Random(seed), []
    while len(out) < n:
        try:
            out.append(fn(r))
        except Reject:
            continue
    return out


@pytest.mark.parametrize("n, word", [
    (1, "한"), (2, "두"), (3, "세"), (4, "네"), (5, "다섯"), (10, "열"), (11, "열한"),
    (15, "열다섯"), (20, "스무"), (21, "스물한"), (23, "스물세"), (30, "서른"), (40, "마흔"),
    (48, "마흔여덟"), (50, "쉰"), (60, "예순"), (75, "일흔다섯"), (82, "여든두"), (99, "아흔아홉"),
])
def test_native_numbers_before_counters(n, word):
    assert native(n) == word


@pytest.mark.parametrize("n, word", [
    (1, "one"), (12, "twelve"), (13, "thirteen"), (19, "nineteen"), (20, "twenty"),
    (23, "twenty-three"), (40, "forty"), (48, "forty-eight"), (75, "seventy-five"),
    (99, "ninety-nine"),
])
def test_english_cardinals(n, word):
    assert en_num(n) == word


@pytest.mark.parametrize("n, word", [
    (1, "first"), (2, "second"), (3, "third"), (5, "fifth"), (8, "eighth"), (9, "ninth"),
    (12, "twelfth"), (13, "thirteenth"), (20, "twentieth"), (21, "twenty-first"),
    (22, "twenty-second"), (23, "twenty-third"), (25, "twenty-fifth"), (30, "thirtieth"),
    (31, "thirty-first"),
])
def test_english_ordinals_for_dates(n, word):
    assert en_ordinal(n) == word


@pytest.mark.parametrize("n, ko, en", [
    (500, "오백", "five hundred"), (1000, "천", "one thousand"),
    (1500, "천오백", "one thousand five hundred"), (4500, "사천오백", "four thousand five hundred"),
    (15000, "만오천", "fifteen thousand"), (32000, "삼만이천", "thirty-two thousand"),
    (40000, "사만", "forty thousand"),
])
def test_prices_in_sino_korean_and_english(n, ko, en):
    assert sino(n) == ko
    assert " ".join(en_won(n)) == en


def test_out_of_range_numbers_are_refused():
    for bad in (0, 100):
        with pytest.raises(ValueError):
            native(bad)
        with pytest.raises(ValueError):
            en_num(bad)


@pytest.mark.parametrize("name", sorted(NAMES))
def test_alignments_index_real_words_and_cover_content_words(name):
    for p in _pairs(name):
        en, ko = p.en.split(), p.ko.split()
        assert all(0 <= i < len(en) and 0 <= j < len(ko) for i, j in p.align), p
        aligned = {i for i, _ in p.align}
        for i, w in enumerate(en):
            if w.lower().strip(".?") not in UNALIGNED:
                assert i in aligned, (w, p)
        if not p.to:
            assert {j for _, j in p.align} == set(range(len(ko))), p


def test_each_area_construction_is_a_function_both_ways():
    en_ko: dict[str, str] = {}
    ko_en: dict[str, str] = {}
    for name in sorted(NAMES):
        for p in _pairs(name, 1500, seed=1):
            if p.to != "en":
                assert en_ko.setdefault(p.en, p.ko) == p.ko, (p.en, en_ko[p.en], p.ko)
            if p.to != "ko":
                assert ko_en.setdefault(p.ko, p.en) == p.en, (p.ko, ko_en[p.ko], p.en)


def test_forms_of_each_construction():
    counters = {"개", "명", "마리", "권", "잔", "병", "장", "대", "편"}
    for p in _pairs("num_have"):
        ko = p.ko.split()
        assert ko[-1].startswith("있어요") and ko[-2].rstrip("?") in counters, p
        assert ("몇" in ko) == p.en.startswith("How many"), p
    for p in _pairs("num_there_are"):
        assert re.search(r"\S+에 \S+[이가] \S+ (명|마리) 있어요[.?]$", p.ko), p
    for p in _pairs("num_object"):
        assert re.search(r"[을를] \S+ \S+ \S+[.?]$", p.ko), p
    for p in _pairs("num_give"):
        assert p.en.startswith("Please give me ") and p.ko.endswith(" 주세요."), p
    for p in _pairs("num_minutes"):
        # half past stays 반 (everyday clock): never 삼십 분
        assert "삼십 분" not in p.ko and "thirty." not in p.en, p
        assert re.search(r"(\S+ 시 \S+ 분(이에요|에)|몇 시에)", p.ko), p
    for p in _pairs("num_duration"):
        assert re.search(r"(시간|분) 동안", p.ko) and " for " in p.en, p
    for p in _pairs("num_date"):
        assert re.search(r"(\S+월 \S+일(이에요|이었어요)\.|며칠이에요\?)$", p.ko), p
    for p in _pairs("num_weekday"):
        assert "무슨" in p.ko and p.en.startswith("What day"), p
    for p in _pairs("num_age"):
        assert p.ko.endswith("살이에요.") and p.en.endswith("years old."), p
    for p in _pairs("num_floor"):
        assert re.search(r"[이가] (\S+|몇) 층에 있어요[.?]$", p.ko), p
        assert " floor." in p.en or p.en.startswith("What floor"), p
    for p in _pairs("num_price"):
        assert p.ko.endswith(("원이에요.", "얼마예요?")), p


def test_examples_come_out_exactly():
    seen = {(p.en, p.ko) for name in NAMES for p in _pairs(name, 3000, seed=2)}
    # a few sentences each construction must be able to make (hand-checked)
    for en, ko in [
        ("What is the date today?", "오늘은 며칠이에요?"),
        ("What day is it today?", "오늘은 무슨 요일이에요?"),
        ("What day was it yesterday?", "어제는 무슨 요일이었어요?"),
        ("What day is the party?", "파티는 무슨 요일이에요?"),
    ]:
        assert (en, ko) in seen, en


def test_pro_drop_is_one_way_and_drops_the_topic():
    p = Pair("I have three books.", "저는 책이 세 권 있어요.", ((0, 0), (1, 4), (2, 2), (2, 3),
                                                          (3, 1)))
    d = drop_subject(p)
    assert (d.en, d.ko, d.to) == ("I have three books.", "책이 세 권 있어요.", "en")
    assert d.align == ((0, 3), (1, 3), (2, 1), (2, 2), (3, 0))
    dropped = [p for name in NAMES for p in _pairs(name, 600, seed=3) if p.to]
    assert dropped, "no pro-dropped pairs"
    for p in dropped:
        assert p.to == "en" and not p.ko.startswith(("저는", "당신은")), p
        assert p.en.startswith("I ") or " you " in p.en, p


def test_descriptions_cover_every_construction_in_both_languages():
    assert set(numbers.DESCRIPTIONS) == NAMES
    hangul = re.compile(r"[\uac00-\ud7a3]")
    for en, ko in numbers.DESCRIPTIONS.values():
        assert en and hangul.search(ko)
    assert NAMES <= set(corpus.CONSTRUCTIONS)


def test_numbers_agree_with_the_rest_of_the_corpus():
    """No sentence of this area gets a second translation anywhere else in the corpus."""
    en_ko: dict[str, tuple[str, str]] = {}
    ko_en: dict[str, tuple[str, str]] = {}
    for name, p in corpus.generate_tagged(20_000, seed=5):
        if p.to != "en":
            other = en_ko.setdefault(p.en, (p.ko, name))
            if other[0] != p.ko and (name in NAMES or other[1] in NAMES):
                pytest.fail(f"{p.en}: {other} / {p.ko} ({name})")
        if p.to != "ko":
            other = ko_en.setdefault(p.ko, (p.en, name))
            if other[0] != p.en and (name in NAMES or other[1] in NAMES):
                pytest.fail(f"{p.ko}: {other} / {p.en} ({name})")


def _chapter() -> list[list[str]]:
    lines = CHAPTER.read_text(encoding="utf-8").splitlines()
    return [line.split("\t") for line in lines if line.strip() and not line.startswith("#")]


def test_chapter_file_is_well_formed():
    rows = _chapter()
    assert all(len(r) == 4 for r in rows), [r for r in rows if len(r) != 4]
    hangul = re.compile(r"[\uac00-\ud7a3]")
    for direction, src, ref, name in rows:
        assert direction in ("en-ko", "ko-en") and name in NAMES, (direction, name)
        ko = ref if direction == "en-ko" else src
        en = src if direction == "en-ko" else ref
        assert hangul.search(ko) and not hangul.search(en), (src, ref)
        assert en[0].isupper() and en[-1] in ".?" and ko[-1] in ".?", (src, ref)
    for direction in ("en-ko", "ko-en"):
        assert sum(r[0] == direction for r in rows) >= 25
    assert len({r[1] for r in rows}) == len(rows)  # no source twice


def test_chapter_is_a_function_with_the_grammar():
    """Where a chapter sentence is also made by the grammar, it has the chapter's translation."""
    want_ko = {src: ref for d, src, ref, _ in _chapter() if d == "en-ko"}
    want_en = {src: ref for d, src, ref, _ in _chapter() if d == "ko-en"}
    for name in NAMES:
        for p in _pairs(name, 3000, seed=4):
            if p.to != "en" and p.en in want_ko:
                assert want_ko[p.en] == p.ko, p
            if p.to != "ko" and p.ko in want_en:
                assert want_en[p.ko] == p.en, p
