"""Issue 42: the glue grammar, copy-through of unknown nouns, the newcomer test sets and the
confidence's coverage term."""

from __future__ import annotations

import random

import pytest

from model import confidence as conf
from model.decode import Translation
from training.knowledge import corpus_word_set
from training.render import Reject
from training.testsets import DATA, held_out, read_sets
from training.textbook import copy_through, glue


def _draw(makers, n: int, seed: int = 0):
    r = random.Random(seed)
    out = []
    for _ in range(n):
        for _, name, fn in makers:
            try:
                out.append((name, fn(r)))
            except Reject:
                pass
    return out


@pytest.fixture(scope="module")
def drawn():
    return _draw(glue.MAKERS + copy_through.MAKERS, 1500)


def test_glue_pairs_are_well_formed_and_functions(drawn):
    en_ko: dict[str, str] = {}
    ko_en: dict[str, str] = {}
    for _, p in drawn:
        n_en, n_ko = len(p.en.split()), len(p.ko.split())
        assert all(0 <= i < n_en and 0 <= j < n_ko for i, j in p.align), p
        assert {j for _, j in p.align} == set(range(n_ko)), p
        assert p.en[-1] == p.ko[-1] and p.en[0].isupper(), p
        if p.to != "en":
            assert en_ko.setdefault(p.en, p.ko) == p.ko, p
        if p.to != "ko":
            assert ko_en.setdefault(p.ko, p.en) == p.en, p


def test_glue_covers_the_issue_patterns(drawn):
    pairs = {(p.en, p.ko) for _, p in drawn}
    assert ("Please give me some water.", "물 좀 주세요.") in pairs
    kos = " ".join(p.ko for _, p in drawn)
    for form in ("한국 음식을", "키가 커요", "보다 키가 더", "제일 좋아하는", "버스로", "할 때",
                 "는데", "기로 했어요", "면서", "좀 열어 주세요"):
        assert form in kos, form
    names = {name for name, _ in drawn}
    assert names == {name for _, name, _ in glue.MAKERS + copy_through.MAKERS}


def test_copy_through_particles_and_word_list():
    assert copy_through.latin_particle("yoga", "object") == "yoga를"
    assert copy_through.latin_particle("kimbap", "object") == "kimbap을"
    assert copy_through.latin_particle("zumba", "copula") == "zumba예요"
    r = random.Random(1)
    pairs = [copy_through.copy_noun(r) for _ in range(50)]
    for p in pairs:  # the made-up noun stands unchanged on both sides
        assert any(w.strip(".") in p.ko for w in p.en.split() if w.strip(".") in
                   copy_through.MADE_UP), p
    assert not corpus_word_set(pairs) & copy_through.MADE_UP


def test_newcomer_sets_are_large_and_held_out():
    rows = read_sets(DATA, "newcomer_")
    glue_rows = [r for r in rows if r.area == "glue"]
    assert sum(r.direction == "en-ko" for r in glue_rows) >= 100
    assert sum(r.direction == "ko-en" for r in glue_rows) >= 100
    assert {r.area for r in rows} == {"glue", "oog"}
    held = held_out()
    assert all(r.source in held and r.reference in held for r in rows)


def test_uncovered_words_spare_copies():
    known = frozenset({"i", "like", "저는", "좋아해요", "저"})
    assert conf.uncovered_words("I like yoga.", "저는 생선을 좋아해요.", known) == ["yoga"]
    assert conf.uncovered_words("I like yoga.", "저는 yoga를 좋아해요.", known) == []
    assert conf.uncovered_words("저는 요가를 좋아해요.", "I like 요가.", known) == []
    assert conf.uncovered_words("저는 요가를 좋아해요.", "I like fish.", known) == ["요가를"]
    assert conf.uncovered_words("I like yoga.", "x", None) == []


def test_confidence_halves_per_uncovered_word():
    t = Translation(source="s", target_lang="ko", text="t", ids=[1], pieces=["t"], steps=[],
                    probs=[0.81, 0.81], finished=True)
    assert t.confidence == pytest.approx(0.81)
    t2 = Translation(**{**t.__dict__, "uncovered": 2})
    assert t2.confidence == pytest.approx(0.81 * conf.COVERAGE ** 2)


def test_boost_draws_one_construction_apart_and_skips_excluded():
    """--boost-area's pairs: the named construction only, many distinct ones, nothing from the
    excluded sentences; the glue boost's draw unchanged; bad names refused."""
    from training import corpus
    from training.train import boost_area

    drawn = corpus.boost_pairs(60, 0, set(), construction="clause_purpose")
    # purpose is -(으)러 before 가다/오다 in every one of them
    assert len(drawn) == 60 and all(" to " in p.en and "러 " in p.ko for p in drawn)
    assert len({p.en for p in drawn}) > 30  # a stream of its own, not one sentence repeated
    skip = {drawn[0].en, drawn[1].ko}
    again = corpus.boost_pairs(60, 0, skip, construction="clause_purpose")
    assert not ({p.en for p in again} & skip or {p.ko for p in again} & skip)
    # the glue boost's stream is the one the earlier legs' commands drew
    assert corpus.boost_pairs(1, 0, set())[0].en == "I go to Seoul by subway."
    with pytest.raises(ValueError):
        corpus.boost_pairs(1, 0, set(), construction="no_such")
    assert boost_area("but=12") == ("but", 12)
    for bad in ("but", "but=x", "nope=3", "=3"):
        with pytest.raises(SystemExit):
            boost_area(bad)


def test_short_kin_says_my_brother_for_je_hyeong_english_to_korean_only():
    """--short-kin's pairs: "my older brother" <-> 제 형 with "older" dropped, English -> Korean
    only, alignments shifted past the dropped word; other pairs and Korean -> English ones give
    none; n pairs in turn."""
    from training.corpus import Pair, short_kin_pairs

    src = [Pair("My older brother is tall.", "제 형은 키가 커요.",
                ((0, 0), (1, 0), (2, 0), (3, 2), (4, 1), (4, 2))),
           Pair("Does my older sister eat fish?", "제 누나는 생선을 먹어요?",
                ((0, 3), (1, 0), (2, 0), (3, 0), (4, 2), (5, 1))),
           Pair("My older brother eats fish.", "형이 생선을 먹어요.", (), "en"),  # bare 형
           Pair("My younger brother is tall.", "제 남동생은 키가 커요.", ()),
           Pair("The dog eats fish.", "개가 생선을 먹어요.", ())]
    out = short_kin_pairs(src, 5)
    assert [p.en for p in out] == ["My brother is tall.", "Does my sister eat fish?"] * 2 + [
        "My brother is tall."]
    assert {p.to for p in out} == {"ko"}
    assert out[0].ko == "제 형은 키가 커요." and out[0].align == ((0, 0), (1, 0), (2, 2),
                                                              (3, 1), (3, 2))
    assert short_kin_pairs(src[2:], 3) == []
