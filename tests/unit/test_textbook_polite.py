"""Textbook area "polite": proposals, intentions, honorifics and the textbook's pro-drop."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from training import everyday, everyday_wh, grammar
from training.corpus import CONSTRUCTIONS
from training.lexicon import ADJECTIVES, BY_EN, PRONOUNS, VERBS
from training.render import NP, Clause, Keys, Pair, Reject, finish, render_adj, render_verb
from training.textbook import polite

TSV = Path(__file__).resolve().parents[2] / "tests" / "data" / "textbook_polite.tsv"
HANGUL = re.compile(r"[가-힣]")


def _verb(en: str, ko: str):
    return next(v for v in VERBS if (v.en, v.ko) == (en, ko))


def _adj(en: str):
    return next(a for a in ADJECTIVES if a.en == en)


def _draw(maker, n: int, seed: int = 0) -> list[Pair]:
    r = random.Random(seed)
    out = []
    for _ in range(n):
        try:
            out.append(maker(r))
        except Reject:
            continue
    return out


@pytest.fixture(scope="module")
def drawn() -> dict[str, list[Pair]]:
    return {name: _draw(fn, 3_000, seed=i) for i, (_, name, fn) in enumerate(polite.MAKERS)}


# ---------------------------------------------------------------------------- forms


@pytest.mark.parametrize("lemma, tense, form", [
    ("읽다", "present", "읽으세요"), ("가다", "present", "가세요"), ("살다", "present", "사세요"),
    ("만들다", "present", "만드세요"), ("듣다", "present", "들으세요"),
    ("돕다", "present", "도우세요"),
    ("먹다", "present", "드세요"), ("마시다", "past", "드셨어요"), ("자다", "present", "주무세요"),
    ("자다", "past", "주무셨어요"), ("읽다", "past", "읽으셨어요"), ("굽다", "present", "구우세요"),
])
def test_honorific_forms(lemma, tense, form):
    assert polite.honor(lemma, tense) == form


@pytest.mark.parametrize("en, ko, kind, en_out, ko_out", [
    ("eat", "먹다", "we", "Shall we eat?", "먹을까요?"),
    ("help", "돕다", "we", "Shall we help?", "도울까요?"),
    ("open", "열다", "i", "Shall I open?", "제가 열까요?"),
    ("go", "가다", "lets", "Let's go.", "갑시다."),
    ("listen to", "듣다", "lets", "Let's listen to.", "들읍시다."),
    ("make", "만들다", "lets", "Let's make.", "만듭시다."),
    ("make", "만들다", "will", "I'll make.", "만들게요."),
    ("read", "읽다", "will", "I'll read.", "읽을게요."),
])
def test_proposal_endings(en, ko, kind, en_out, ko_out):
    p = polite.proposal(_verb(en, ko), ([], []), ([], []), ([], []), Keys(), kind)
    assert (p.en, p.ko) == (en_out, ko_out)


# -------------------------------------------------------------------------- anchors


def test_the_issues_sentences_come_out_both_ways():
    made = {(p.en, p.ko) for p in polite.TEXTBOOK_ANCHORS}
    assert made == {("Shall we eat together?", "같이 먹을까요?"),
                    ("I am hungry.", "배가 고파요."),
                    ("My younger sibling is sleeping in the room.", "동생이 방에서 자고 있어요.")}
    assert all(p.to == "" for p in polite.TEXTBOOK_ANCHORS)
    hungry = next(p for p in polite.TEXTBOOK_ANCHORS if p.en == "I am hungry.")
    assert set(hungry.align) == {(i, j) for i in range(3) for j in range(2)}  # 배가 too
    sleep = next(p for p in polite.TEXTBOOK_ANCHORS if p.ko.startswith("동생"))
    en, ko = sleep.en.split(), sleep.ko.split()
    assert {(en[i], ko[j]) for i, j in sleep.align} == {
        ("My", "동생이"), ("younger", "동생이"), ("sibling", "동생이"), ("is", "있어요."),
        ("sleeping", "자고"), ("in", "방에서"), ("room.", "방에서")}


def test_the_anchors_are_made_by_the_grammar():
    shall = {(p.en, p.ko) for p in _draw(polite.MAKERS[0][2], 20_000)}
    assert ("Shall we eat together?", "같이 먹을까요?") in shall
    kin = {(p.en, p.ko) for p in _draw(polite.sibling_sentence, 30_000)}
    assert ("My younger sibling is sleeping in the room.", "동생이 방에서 자고 있어요.") in kin
    adj = set(_draw(grammar.adjective, 40_000))
    assert next(p for p in polite.TEXTBOOK_ANCHORS if p.en == "I am hungry.") in adj


# ------------------------------------------------------------------------- pro-drop


def _clause(subj, verb=None, obj=None, adj=None) -> Clause:
    c = Clause()
    c.subj, c.verb, c.obj, c.adj = subj, verb, obj, adj
    return c


def test_questions_to_you_drop_the_subject():
    you, he = NP(pron=PRONOUNS[1]), NP(pron=PRONOUNS[3])
    fish = NP(noun=BY_EN[("fish", True)])
    eat = _verb("eat", "먹다")
    en, ko, _ = render_verb(_clause(you, eat, fish), "ynq", Keys())
    p = finish(en, ko, "?")
    assert (p.en, p.ko) == ("Do you eat fish?", "생선을 먹어요?")
    assert (1, 1) in p.align  # "you" aligns to the predicate
    en, ko, _ = render_verb(_clause(he, eat, fish), "ynq", Keys())
    assert finish(en, ko, "?").ko == "그는 생선을 먹어요?"
    en, ko, _ = render_adj(_clause(you, adj=_adj("tired")), "ynq", Keys())
    assert finish(en, ko, "?").ko == "피곤해요?"
    # "Is it cold?" <-> "추워요?" is the weather's: "Are you cold?" keeps 당신은
    en, ko, _ = render_adj(_clause(you, adj=_adj("cold")), "ynq", Keys())
    assert finish(en, ko, "?").ko == "당신은 추워요?"


def test_feelings_of_i_drop_the_subject_in_statements_only():
    me = NP(pron=PRONOUNS[0])
    for word, ko in (("tired", "피곤해요."), ("hungry", "배가 고파요."), ("busy", "바빠요.")):
        en, ko_t, _ = render_adj(_clause(me, adj=_adj(word)), "decl", Keys())
        assert finish(en, ko_t, ".").ko == ko
    en, ko, _ = render_adj(_clause(NP(pron=PRONOUNS[3]), adj=_adj("hungry")), "decl", Keys())
    assert finish(en, ko, ".").ko == "그는 배가 고파요."
    en, ko, _ = render_adj(_clause(me, adj=_adj("cold")), "decl", Keys())
    assert finish(en, ko, ".").ko == "저는 추워요."  # "It is cold." owns 추워요.


def test_everyday_questions_to_you_drop_the_subject():
    have = {(p.en, p.ko) for p in _draw(everyday.have_sentence, 20_000)}
    assert ("Do you have money?", "돈이 있어요?") in have
    you_q = [p for p in _draw(everyday_wh.why_question, 3_000) if " you " in p.en]
    assert you_q and all(p.ko.startswith("왜 ") for p in you_q)
    assert not any("당신은" in p.ko for p in _draw(everyday.copula_sentence, 3_000)
                   if p.en.endswith("?"))


def test_my_younger_sibling_is_this_areas():
    """everyday's possessives leave "my/your younger sibling" to 동생이 (no second Korean)."""
    r = random.Random(1)
    keys = Keys()
    for _ in range(3_000):
        try:
            np = everyday.possessed_np(r, keys, everyday.KIN)
        except Reject:
            continue
        assert not (np.head == "동생" and np.en[0][0] in ("my", "your")), np.en


def test_i_dropped_is_one_way_and_means_i(drawn):
    pairs = drawn["i_dropped"]
    assert pairs and all(p.to == "en" and p.en.startswith("I ") for p in pairs)
    assert not any("저는" in p.ko or "저" in p.ko.split() for p in pairs)
    assert all((0, len(p.ko.split()) - 1) in p.align for p in pairs)  # I <-> the predicate


# ------------------------------------------------------------------- the constructions


def test_constructions_mark_what_they_should(drawn):
    def some(name: str, test) -> bool:
        return any(test(p) for p in drawn[name])

    assert some("shall_we", lambda p: p.en.startswith("Shall we ") and p.ko.endswith("까요?"))
    assert some("shall_we", lambda p: " together" in p.en and p.ko.startswith("같이 "))
    assert some("shall_i", lambda p: p.en.startswith("Shall I ") and "제가" in p.ko.split())
    assert some("lets", lambda p: p.en.startswith("Let's ") and p.ko.endswith("시다."))
    assert some("ill", lambda p: p.en.startswith("I'll ") and p.ko.endswith("게요."))
    assert some("plan_to", lambda p: " plan to " in p.en and p.ko.endswith("려고 해요."))
    assert some("plan_to", lambda p: p.en.startswith("Do you plan") and p.ko.endswith("해요?")
                and "당신은" not in p.ko)
    assert some("plan_to", lambda p: " planned to " in p.en and p.ko.endswith("했어요."))
    assert some("honorific", lambda p: p.en.startswith("My ") and "께서" in p.ko
                and p.ko.endswith("세요."))
    assert some("honorific", lambda p: " drinks " in p.en and p.ko.endswith("드세요."))
    assert some("honorific", lambda p: p.ko.endswith("주무세요."))
    assert some("honorific", lambda p: p.en.startswith("Did your ") and p.ko.endswith("셨어요?"))
    assert some("honorific_stay", lambda p: p.ko.endswith("계세요."))
    assert some("bare_kin", lambda p: p.en.startswith("My younger sibling is ")
                and p.ko.startswith("동생이 ") and p.ko.endswith("고 있어요."))
    assert some("doing_what", lambda p: (p.en, p.ko) == ("What are you doing?", "뭐 하고 있어요?"))
    assert some("doing_what", lambda p: p.en.startswith("What is your grand")
                and p.ko.endswith("께서 뭐 하고 계세요?"))
    assert some("feeling", lambda p: (p.en, p.ko) == ("I am hungry.", "배가 고파요."))
    assert some("feeling", lambda p: (p.en, p.ko) == ("I'm not hungry.", "배가 안 고파요."))
    assert some("feeling", lambda p: p.en.startswith("Are you ") and p.ko.endswith("요?")
                and len(p.ko.split()) == 1)
    assert some("body_ache", lambda p: (p.en, p.ko) == ("My stomach hurts.", "배가 아파요."))
    assert some("body_ache", lambda p: p.en.startswith("Does your ") and p.ko.endswith("아파요?"))
    assert some("body_ache", lambda p: " doesn't hurt." in p.en and " 안 아파요." in p.ko)
    # never 당신 in this area, never 제 before an elder
    for pairs in drawn.values():
        assert not any("당신" in p.ko or p.ko.startswith("제 ") for p in pairs)


def test_bae_alone_is_the_stomach_and_hunger(drawn):
    """배가 with no subject before it is never the ship: the counterweight to the lexicon's
    배 "ship" ("배가 고파요." read as "The ship is hungry." before these two constructions)."""
    bae = [p for name in ("feeling", "body_ache") for p in drawn[name] if p.ko.startswith("배가")]
    assert len(bae) > 300
    assert all("ship" not in p.en and ("hungry" in p.en or "stomach" in p.en) for p in bae)
    assert all(p.to == "" for p in bae)  # both ways


def test_alignments(drawn):
    for name, pairs in drawn.items():
        assert len(pairs) > 1_000, name
        for p in pairs:
            en, ko = p.en.split(), p.ko.split()
            assert all(0 <= i < len(en) and 0 <= j < len(ko) for i, j in p.align), p
            assert {j for _, j in p.align} == set(range(len(ko))), p
            aligned = {i for i, _ in p.align}
            for i, w in enumerate(en):  # every English word but an article is aligned
                if w.lower().strip(".?") not in ("the", "a", "an"):
                    assert i in aligned, (p, w)


def test_the_area_is_a_function_each_way(drawn):
    en_ko: dict[str, str] = {}
    ko_en: dict[str, str] = {}
    for pairs in drawn.values():
        for p in pairs:
            if p.to != "en":
                assert en_ko.setdefault(p.en, p.ko) == p.ko, p
            if p.to != "ko":
                assert ko_en.setdefault(p.ko, p.en) == p.en, p


def test_descriptions_cover_every_construction():
    names = [name for _, name, _ in polite.MAKERS]
    assert len(set(names)) == len(names)
    assert set(polite.DESCRIPTIONS) == set(names)
    for en, ko in polite.DESCRIPTIONS.values():
        assert en and HANGUL.search(ko), (en, ko)


# ------------------------------------------------------------------ textbook sentences


def _rows() -> list[list[str]]:
    lines = TSV.read_text(encoding="utf-8").splitlines()
    return [line.split("\t") for line in lines if line.strip() and not line.startswith("#")]


def test_textbook_sentences_file():
    rows = _rows()
    assert all(len(r) == 4 and r[0] in ("en-ko", "ko-en") for r in rows), rows
    assert sum(r[0] == "en-ko" for r in rows) >= 25
    assert sum(r[0] == "ko-en" for r in rows) >= 25
    for d, src, ref, _ in rows:
        ko = src if d == "ko-en" else ref
        en = ref if d == "ko-en" else src
        assert HANGUL.search(ko) and not HANGUL.search(en), (src, ref)
        assert "당신" not in ko  # textbook Korean never says 당신
    assert len({r[1] for r in rows}) == len(rows)
    assert {r[3] for r in rows} <= set(CONSTRUCTIONS)  # named as the corpus names them
