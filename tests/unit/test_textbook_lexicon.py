"""The first-year textbook nouns (data/nouns_textbook.tsv): enough of them, well-formed, and
reachable by the grammar."""

from __future__ import annotations

import re

import pytest

from training import corpus
from training.lexicon import ADJECTIVES, NOUNS, VERBS, read_table

ROWS = read_table("nouns_textbook")
OLD_ROWS = read_table("nouns") + read_table("nouns_everyday")
# tags some verb, adjective or everyday construction selects nouns by
SELECTING = {"person", "animal", "food", "drink", "obj", "read", "write", "send", "clothes",
             "place", "vehicle", "take", "plant", "sport", "lang", "watch", "interesting",
             "longshort", "studytext", "furniture", "ref", "clean", "drawable", "p_view",
             "p_danger", "toolC", "musical", "electric", "pricey", "p_long"}


@pytest.fixture(scope="module")
def mine() -> list:
    keys = {(r[0], r[1]) for r in ROWS}
    return [n for n in NOUNS if (n.en, n.ko) in keys]


def test_textbook_nouns_are_many_and_new(mine):
    assert len(ROWS) >= 600
    assert len(mine) == len(ROWS)
    old_ko = {r[1] for r in OLD_ROWS}
    old_en = {r[0].lower() for r in OLD_ROWS}
    assert not [r for r in ROWS if r[1] in old_ko or r[0].lower() in old_en]
    assert len({r[0].lower() for r in ROWS}) == len(ROWS)
    assert all(len(r) >= 3 and r[2] and " " not in r[1] for r in ROWS)  # tagged, one word


def test_textbook_nouns_do_not_read_as_verbs_or_adjectives(mine):
    forms = {f for v in VERBS for f in (v.base, v.s3, v.past)} | {a.en for a in ADJECTIVES}
    stems = {w.ko[:-1] for w in VERBS + ADJECTIVES}
    for n in mine:
        words = {n.en.lower()} | ({" ".join(n.pl_toks).lower()} if n.pl_toks else set())
        assert not words & forms, n
        assert n.ko not in stems, n


def test_irregular_plurals_and_mass_nouns(mine):
    by_en = {n.en: n for n in mine}
    assert by_en["fisherman"].pl_toks == ("fishermen",)
    assert by_en["sheep"].pl_toks is None  # "the sheep" would need two Koreans (양, 양들)
    assert by_en["foot"].pl_toks == ("feet",)
    assert by_en["cactus"].pl_toks == ("cacti",)
    assert by_en["honey"].pl_toks is None and not by_en["honey"].article
    assert by_en["Canada"].pl_toks is None and not by_en["Canada"].article


def test_every_textbook_noun_has_a_selecting_tag(mine):
    assert not [n for n in mine if not n.tags & SELECTING]


def test_textbook_nouns_appear_in_generated_pairs(mine):
    pairs = corpus.generate(6000, seed=11)
    english = " ".join(" " + re.sub(r"[.,?!]", "", p.en.lower()) + " " for p in pairs)
    korean = {w for p in pairs for w in p.ko.split()}
    seen = 0
    for n in mine:
        forms = [n.en.lower()] + ([" ".join(n.pl_toks).lower()] if n.pl_toks else [])
        if any(f" {f} " in english for f in forms) and any(w.startswith(n.ko) for w in korean):
            seen += 1
    # 94 % show up in 6k draws (98 % in 30k); a tag typo or a lost tag leaves nouns out
    assert seen >= 0.85 * len(mine), seen


def test_lexicon_size_reached_the_textbook_goal():
    assert corpus.lexicon_size() >= 1500
