"""The textbook's negation chapter (training/textbook/speech.py, speech_neg.py): 안 / 못
forms, -지 못해요, Don't ... here, don't have, 근처에 있어요, pro-drop and the corpus staying a
function."""

from __future__ import annotations

import random
import re
from collections import defaultdict
from pathlib import Path

import pytest

from training import everyday, grammar
from training.lexicon import TIME_WORDS
from training.render import Keys, Pair, Reject
from training.textbook import speech, speech_neg
from training.textbook.speech_neg import adverb_pred, split_compound

TSV = Path(__file__).resolve().parents[1] / "data" / "textbook_negation.tsv"
NAMES = {name for _, name, _ in speech.MAKERS}
TIME_KO = {t[1][0] for t in TIME_WORDS}


def draw(fn, n: int, seed: int = 0) -> list[Pair]:
    r = random.Random(seed)
    out: list[Pair] = []
    while len(out) < n:
        try:
            out.append(fn(r))
        except Reject:
            pass
    return out


@pytest.fixture(scope="module")
def samples() -> dict[str, list[Pair]]:
    return {name: draw(fn, 600, seed=i) for i, (_, name, fn) in enumerate(speech.MAKERS)}


def words(lemma: str, adverb: str, tense: str, verb: bool = True) -> list[str]:
    return [w for w, _ in adverb_pred(lemma, adverb, tense, Keys(), verb)[0]]


def test_noun_hada_verbs_put_the_adverb_before_hada():
    assert split_compound("공부하다") == ("공부", "하다")
    assert split_compound("설거지하다") == ("설거지", "하다")
    assert split_compound("춤추다") == ("춤", "추다")
    assert split_compound("좋아하다") is None  # -아하다: 안 좋아해요
    assert split_compound("싫어하다") is None
    assert split_compound("하다") is None
    assert split_compound("슬퍼하다") is None
    assert split_compound("그리워하다") is None
    assert split_compound("구하다") is None  # one syllable: 안 구해요
    assert split_compound("일하다") == ("일", "하다")
    assert split_compound("샤워하다") == ("샤워", "하다")
    assert split_compound("먹다") is None


@pytest.mark.parametrize(("lemma", "adverb", "tense", "verb", "expected"), [
    ("먹다", "안", "present", True, ["안", "먹어요"]),
    ("먹다", "안", "past", True, ["안", "먹었어요"]),
    ("공부하다", "안", "present", True, ["공부", "안", "해요"]),
    ("운동하다", "안", "past", True, ["운동", "안", "했어요"]),
    ("좋아하다", "안", "present", True, ["안", "좋아해요"]),
    ("수영하다", "못", "present", True, ["수영", "못", "해요"]),
    ("듣다", "못", "present", True, ["못", "들어요"]),  # ㄷ irregular
    ("돕다", "안", "past", True, ["안", "도왔어요"]),  # ㅂ irregular
    ("만들다", "못", "past", True, ["못", "만들었어요"]),
    ("자다", "못", "past", True, ["못", "잤어요"]),
    ("따뜻하다", "안", "present", False, ["안", "따뜻해요"]),  # adjectives never split
    ("춥다", "안", "past", False, ["안", "추웠어요"]),
    ("바쁘다", "안", "present", False, ["안", "바빠요"]),  # 으 drops
    ("배고프다", "안", "present", False, ["배가", "안", "고파요"]),
    ("걱정되다", "안", "present", False, ["걱정", "안", "돼요"]),
    ("화나다", "안", "past", False, ["화", "안", "났어요"]),
])
def test_adverb_predicates(lemma, adverb, tense, verb, expected):
    assert words(lemma, adverb, tense, verb) == expected


def test_cannot_takes_only_what_one_does():
    bases = {v.base for v in speech_neg.CAN_VERBS}
    assert "swim" in bases and "fall" not in bases and "cough" not in bases
    assert len(speech_neg.CAN_VERBS) == len({id(v) for v in speech_neg.CAN_VERBS})


def test_anchors_come_out_of_the_makers(monkeypatch):
    eat = next(v for v in speech_neg.NEG_VERBS if v.ko == "먹다")
    monkeypatch.setattr(speech_neg, "NEG_VERBS", [eat])
    hospital = next(n for n in speech_neg.NEAR_PLACES if n.ko == "병원")
    monkeypatch.setattr(speech_neg, "NEAR_PLACES", [hospital])
    made = {(p.en, p.ko, p.to): p for p in draw(speech_neg.short_neg_verb, 20_000)}
    made.update({(p.en, p.ko, p.to): p for p in draw(speech_neg.near_here, 300)})
    for anchor in speech.TEXTBOOK_ANCHORS:
        assert made.get((anchor.en, anchor.ko, anchor.to)) == anchor
    texts = {(p.en, p.ko) for p in speech.TEXTBOOK_ANCHORS}
    assert ("I don't eat meat.", "저는 고기를 안 먹어요.") in texts
    assert ("Is there a hospital near here?", "이 근처에 병원이 있어요?") in texts


def test_alignments_in_range_and_content_words_aligned(samples):
    skip = {"the", "a", "an", "there", "it"}
    for pairs in samples.values():
        for p in pairs:
            en, ko = p.en.split(), p.ko.split()
            assert all(0 <= i < len(en) and 0 <= j < len(ko) for i, j in p.align), p
            aligned_en = {i for i, _ in p.align}
            for i, w in enumerate(en):
                if re.sub(r"[.?!]", "", w).lower() not in skip:
                    assert i in aligned_en, (p, w)
            assert {j for _, j in p.align} == set(range(len(ko))), p
            assert p.to in ("", "en", "ko")


def test_conventions(samples):
    for p in samples["neg_short_verb"]:
        assert re.search(r"\b(don't|doesn't|didn't|won't)\b", p.en) and " 안 " in f" {p.ko} ", p
        assert "not" not in p.en.split()
    for p in samples["neg_cannot"]:
        assert re.search(r"\b(can't|couldn't)\b", p.en), p
        if p.to == "":
            assert " 못 " in f" {p.ko} ", p
        else:  # -지 못해요 (or a pro-dropped 못) is read only, never produced
            assert p.to == "en"
            assert "못해요" in p.ko or "못했어요" in p.ko or not p.ko.startswith("저는"), p
    long_forms = [p for p in samples["neg_cannot"] if "못해요" in p.ko or "못했어요" in p.ko]
    assert long_forms and all(p.to == "en" for p in long_forms)
    for p in samples["neg_dont_request"]:
        assert p.en.startswith("Don't ") and p.ko.endswith("마세요.")
        free = "여기서" in p.ko.split() or p.ko.split()[0] in TIME_KO  # here or a time
        assert p.to == ("" if free else "ko"), p
        assert "Please" not in p.en
    for p in samples["neg_dont_have"]:
        assert p.ko.endswith(("없어요.", "없었어요.")) and p.to in ("ko", "en"), p
        assert (p.to == "en") == (not p.ko.split()[0].endswith(("는", "은"))), p
    for p in samples["exist_near"]:
        assert "근처에" in p.ko and " near " in p.en, p


def test_pro_drop_reads_as_i(samples):
    dropped = [p for name in ("neg_short_verb", "neg_cannot", "neg_dont_have")
               for p in samples[name] if p.to == "en" and p.en.startswith("I ")
               and not re.search("못(해|했)어?요", p.ko)]  # -지 못해요 is one-way anyway
    assert len(dropped) > 30
    for p in dropped:
        assert "저는" not in p.ko.split()
    kept = [p for p in samples["neg_short_verb"] if p.to == "" and p.en.startswith("I ")]
    assert kept and all(p.ko.startswith("저는 ") for p in kept)
    for p in samples["neg_short_adjective"]:  # a feeling of I drops 저는 both ways
        if p.en.startswith("I") and p.ko.startswith("저는"):
            assert p.to == ""


def test_the_corpus_stays_a_function():
    """Our pairs and the old constructions they sit beside: one translation each way."""
    pairs = [p for _, _, fn in speech.MAKERS for p in draw(fn, 3000, seed=7)]
    for fn in (grammar.transitive_pair, grammar.intransitive, grammar.adjective,
               grammar.weather, grammar.request_pair, everyday.have_sentence,
               everyday.exist_sentence):
        pairs += draw(fn, 3000, seed=8)
    pairs += draw(lambda r: everyday.verb_form_sentence(r, "can"), 3000, seed=9)
    pairs += speech.TEXTBOOK_ANCHORS
    to_ko: dict[str, set[str]] = defaultdict(set)
    to_en: dict[str, set[str]] = defaultdict(set)
    for p in pairs:
        if p.to != "en":
            to_ko[p.en].add(p.ko)
        if p.to != "ko":
            to_en[p.ko].add(p.en)
    assert not {en: ko for en, ko in to_ko.items() if len(ko) > 1}
    assert not {ko: en for ko, en in to_en.items() if len(en) > 1}


def test_descriptions_cover_every_construction():
    assert set(speech.DESCRIPTIONS) == NAMES
    for en, ko in speech.DESCRIPTIONS.values():
        assert en and re.search("[가-힣]", ko)


def test_textbook_sentences_file():
    rows = [line.split("\t") for line in TSV.read_text(encoding="utf-8").splitlines()
            if line.strip() and not line.startswith("#")]
    assert all(len(r) == 4 for r in rows)
    assert sum(r[0] == "en-ko" for r in rows) >= 25
    assert sum(r[0] == "ko-en" for r in rows) >= 25
    assert {r[0] for r in rows} == {"en-ko", "ko-en"}
    assert {r[3] for r in rows} <= NAMES | {"neg_long"}
    assert len({r[1] for r in rows}) == len(rows)  # no sentence twice
