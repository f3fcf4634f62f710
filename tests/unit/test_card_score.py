"""The one scorer the textbook and newcomer cards store (model.training.evaluate.score),
recomputed from tests/chrf.py's definitions rather than from the code that wrote the cards."""

from __future__ import annotations

from model.training.evaluate import score
from tests import chrf as ref


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
