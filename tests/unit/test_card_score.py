"""The one scorer the textbook and newcomer cards store (training.evaluate.score),
recomputed from tests/chrf.py's definitions rather than from the code that wrote the cards,
and the one card writer (training.card.store) the evaluation tools write them with."""

from __future__ import annotations

import json

from tests import chrf as ref
from training.card import store
from training.evaluate import score


def test_score_matches_the_definitions():
    hyps = ["저는 고기를 안 먹어요. ", "I am hungry", "Shall we eat together?"]
    refs = ["저는 고기를 안 먹어요.", "I am hungry.", "Shall we eat together?"]
    got = score(hyps, refs)
    assert got["n"] == 3
    assert got["exact"] == ref.exact(hyps, refs) == 2  # the outer space is ignored
    assert got["exact_match"] == round(100 * 2 / 3, 2)
    assert got["chrf"] == round(ref.chrf(hyps, refs), 2)


def test_score_of_nothing_is_zero():
    assert score([], []) == {"n": 0, "exact": 0, "exact_match": 0.0, "chrf": 0.0}


def test_store_sets_one_entry_and_keeps_the_rest(tmp_path):
    card = {"name": "paper", "confidence": {"threshold": 0.86, "n": 48}, "metrics": {"x": 1}}
    (tmp_path / "card.json").write_text(json.dumps(card), encoding="utf-8")
    store(tmp_path, "textbook", {"n": 3, "note": "저는"})
    store(tmp_path, ("confidence", "combined"), {"auroc": 0.9})
    text = (tmp_path / "card.json").read_text(encoding="utf-8")
    assert text.endswith("}\n") and "저는" in text and '\n  "name"' in text  # 2-space, unescaped
    card["textbook"] = {"n": 3, "note": "저는"}
    card["confidence"]["combined"] = {"auroc": 0.9}
    assert json.loads(text) == card


def test_store_starts_a_missing_card(tmp_path):
    store(tmp_path, ("confidence", "combined"), 1)
    assert json.loads((tmp_path / "card.json").read_text(encoding="utf-8")) == {
        "confidence": {"combined": 1}}
