"""The textbook's degree area: comparison, superlative, 너무 / 조금, 도 / 만, noun modifiers."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from training.hangul import ko_present_attributive, prospective
from training.lexicon import ADJECTIVES, Adjective, Noun, Pronoun, Verb
from training.render import Reject
from training.textbook import degree, degree_modifiers

TSV = Path(__file__).resolve().parents[1] / "data" / "textbook_degree.tsv"
ROWS = [line.split("\t") for line in TSV.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")]
MAKER = {name: fn for _, name, fn in degree.MAKERS}
HANGUL = re.compile("[가-힣]")


def _draw(n: int, seed: int = 0) -> list[tuple[str, object]]:
    r = random.Random(seed)
    out = []
    while len(out) < n:
        _, name, fn = degree.MAKERS[int(r.random() * len(degree.MAKERS))]
        try:
            out.append((name, fn(r)))
        except Reject:
            pass
    return out


@pytest.fixture(scope="module")
def drawn() -> list[tuple[str, object]]:
    return _draw(20_000)


def test_textbook_file_has_enough_sentences_each_way():
    assert all(len(row) == 4 for row in ROWS), [r for r in ROWS if len(r) != 4]
    directions = [row[0] for row in ROWS]
    assert directions.count("en-ko") >= 25 and directions.count("ko-en") >= 25
    assert {row[3] for row in ROWS} <= set(MAKER)
    sentences = [s for row in ROWS for s in row[1:3]]
    assert len(sentences) == len(set(sentences))  # no sentence twice, either side


def _words(pair_text: str) -> set[str]:
    return {w.strip(".,?!").lower() for w in pair_text.split()}


def _rigged(en: str, ko: str):
    """A _pick that keeps only the lexicon items whose words occur in the target sentence, so a
    few hundred draws explore exactly the sentences made of those words."""
    en_words, ko_text = _words(en), ko

    def keep(x) -> bool:
        if isinstance(x, Noun):
            return x.ko in ko_text and (set(w.lower() for w in x.toks) <= en_words or (
                x.pl_toks is not None and set(w.lower() for w in x.pl_toks) <= en_words))
        if isinstance(x, Verb):
            return bool({x.base, x.s3, x.past} & en_words) and set(x.part) <= en_words
        if isinstance(x, Adjective):
            forms = degree.FORMS.get(x.en, ("", ""))
            return bool({x.en, *forms[0].split(), *forms[1].split()} & en_words)
        if isinstance(x, Pronoun):
            return x.en.lower() in en_words or x.en_obj in en_words
        if isinstance(x, tuple) and x and isinstance(x[0], tuple):  # a time word
            return set(x[0]) - {"the"} <= en_words and all(w in ko_text for w in x[1])
        return True

    def pick(r: random.Random, items: list):
        kept = [x for x in items if keep(x)]
        if not kept:
            raise Reject
        return kept[int(r.random() * len(kept))]

    return pick


@pytest.mark.parametrize("direction,source,reference,construction", ROWS,
                         ids=[row[1] for row in ROWS])
def test_textbook_sentence_comes_out_of_the_grammar(monkeypatch, direction, source,
                                                    reference, construction):
    en, ko = (source, reference) if direction == "en-ko" else (reference, source)
    pick = _rigged(en, ko)
    monkeypatch.setattr(degree, "_pick", pick)
    monkeypatch.setattr(degree_modifiers, "_pick", pick)
    r = random.Random(0)
    made = set()
    for _ in range(3000):
        try:
            p = MAKER[construction](r)
        except Reject:
            continue
        made.add((p.en, p.ko, p.to))
        if (p.en, p.ko) == (en, ko):
            # an English source must be a both-way pair; a Korean one may be one-way
            assert p.to == "" or (direction == "ko-en" and p.to == "en"), p
            return
    pytest.fail(f"{construction} never made {en} <-> {ko}; e.g. {sorted(made)[:5]}")


@pytest.mark.parametrize("lemma,past,future,present", [
    ("먹다", "먹은", "먹을", "먹는"), ("보다", "본", "볼", "보는"),
    ("만들다", "만든", "만들", "만드는"), ("듣다", "들은", "들을", "듣는"),
    ("돕다", "도운", "도울", "돕는"), ("짓다", "지은", "지을", "짓는"),
    ("읽다", "읽은", "읽을", "읽는"), ("하다", "한", "할", "하는"),
    ("부르다", "부른", "부를", "부르는"),
])
def test_modifier_forms(lemma, past, future, present):
    assert degree_modifiers.past_attributive(lemma) == past
    assert prospective(lemma) == future
    assert ko_present_attributive(lemma) == present


def test_comparative_forms_cover_the_adjectives_used():
    assert degree.FORMS["big"] == ("bigger", "biggest")
    assert degree.FORMS["expensive"] == ("more expensive", "most expensive")
    assert {a.en for a in degree.COMPARABLE} <= set(degree.FORMS)
    assert {"big", "expensive", "delicious", "fast"} <= {a.en for a in degree.COMPARABLE}
    # a felt "hot" / "cold" never compares people ("hotter than him")
    for a in degree.COMPARABLE:
        if a.en in degree.FELT:
            assert not any("person" in n.tags for n in degree.comparable_nouns(a))


def test_markers_and_alignments(drawn):
    seen = set()
    for name, p in drawn:
        seen.add(name)
        en, ko = p.en.split(), p.ko.split()
        assert p.en[0].isupper() and p.en[-1] in ".?" and p.ko[-1] == p.en[-1], p
        assert len(set(p.align)) == len(p.align), p
        assert all(0 <= i < len(en) and 0 <= j < len(ko) for i, j in p.align), p
        assert {j for _, j in p.align} == set(range(len(ko))), p  # every Korean word aligned
        links = {(en[i].strip(".?").lower(), ko[j].strip(".?")) for i, j in p.align}
        if name == "degree_comparison":
            assert "더" in ko and any(w.endswith("보다") for w in ko), p
            assert any(e == "than" and k.endswith("보다") for e, k in links), p
        elif name.startswith("degree_superlative"):
            word = "가장" if name.endswith("gajang") else "제일"
            assert word in ko and (p.to == "en") == (word == "가장"), p
            assert any(k == word and (e in ("most", "best", "worst") or e.endswith("est"))
                       for e, k in links), p
        elif name == "degree_like_most":
            assert en[-2:] == ["the", "most."] and ("most", "제일") in links, p
        elif name == "degree_too":
            assert ("too", "너무") in links, p
        elif name == "degree_a_little":
            assert ("little", "조금") in links, p
        elif name == "degree_only":
            assert any(e == "only" and k.endswith("만") for e, k in links), p
        elif name.startswith("degree_also"):
            word = "too" if name == "degree_also_object" else "also"
            assert any(e == word and k.endswith("도") for e, k in links), p
        elif name == "degree_rel_present":
            assert any(e in ("who", "that") and k.endswith("는") for e, k in links), p
        elif name == "degree_adj_noun":
            # "This is a big bag." / "I have a big bag.": the adjective <-> 큰, before the noun
            very = en[3] == "very"
            assert en[2] in ("a", "an") and (3 + very, 1 + very) in p.align, p
            assert ko[1 + very] in {a.attr_ko for a in ADJECTIVES if a.en == en[3 + very]}, p
            assert not very or ("very", "아주") in links, p
        elif name in ("degree_rel_past", "degree_rel_future"):
            assert "I" in en and p.ko.split()[0] != "저는", p  # "The movie I watched ..."
    assert seen == set(MAKER)


def test_pro_drop_is_one_way_and_means_i(drawn):
    dropped = [p for _, p in drawn if p.to == "en" and "가장" not in p.ko]
    assert dropped, "no pro-dropped pairs"
    for p in dropped:
        assert p.en.startswith("I ") and "저는" not in p.ko, p
        assert (0, 0) not in p.align or not p.ko.split()[0].startswith("저"), p


def test_each_direction_is_a_function(drawn):
    en_to_ko: dict[str, str] = {}
    ko_to_en: dict[str, str] = {}
    for _, p in drawn:
        if p.to != "en":
            assert en_to_ko.setdefault(p.en, p.ko) == p.ko, (p.en, en_to_ko[p.en], p.ko)
        if p.to != "ko":
            assert ko_to_en.setdefault(p.ko, p.en) == p.en, (p.ko, ko_to_en[p.ko], p.en)


def test_verbs_with_two_senses_of_one_object_are_never_drawn():
    for v in degree.OBJ_VERBS:
        for n in v.obj_nouns:
            twins = [w for w in degree.OBJ_VERBS if w is not v and n in w.obj_nouns
                     and (w.ko == v.ko or w.en == v.en)]
            if twins:
                assert degree_modifiers.clash(v, n), (v, n, twins)


def test_descriptions_in_both_languages():
    assert set(degree.DESCRIPTIONS) == set(MAKER)
    for name, (en, ko) in degree.DESCRIPTIONS.items():
        assert en and HANGUL.search(ko), name
