"""The other rankings tried for the unsure notice (issue 58's glue guard,
training/confidence_variants.py): each fitted on dev records only, measured elsewhere."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from model import confidence as conf
from model import confidence_signals as cs
from training import confidence_fit as cf
from training import confidence_variants as cv


def record(rng: random.Random, right: bool) -> dict:
    """A synthetic decoded record: right outputs tend to sure pieces and good round trips."""
    mean_logp = rng.uniform(-0.4, 0.0) if right else rng.uniform(-1.2, -0.1)
    sig = cs.Signals(mean_logp=mean_logp, min_logp=mean_logp - rng.uniform(0, 1),
                     unknown=int(not right and rng.random() < 0.3),
                     length_gap=rng.uniform(0, 0.3),
                     round_trip=(0.75 if right else 0.45) + rng.uniform(-0.25, 0.25),
                     agreement=rng.uniform(0.3, 1.0),
                     partner_logp=mean_logp + rng.uniform(-0.3, 0.1))
    return {**sig.to_dict(), "exact": right, "old": cs.Combination.old(sig)}


@pytest.fixture(scope="module")
def data() -> dict:
    rng = random.Random(58)
    sets = {s: [record(rng, rng.random() < share) for _ in range(n)]
            for s, n, share in (("dev", 120, 0.3), ("test", 80, 0.3), ("glue", 90, 0.9),
                                ("oog", 40, 0.2))}
    return {"toy": {"sets": sets, "partner": None, "centers": {"ko": 0.0, "en": 0.0},
                    "old_threshold": 0.7}}


@pytest.fixture(scope="module")
def fits(data) -> dict:
    return cf.summary(data)


def test_bounded_lr_is_sklearns_regression_when_free_and_keeps_a_sign():
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, 3))  # (N, 3)
    y = (x @ np.array([1.5, -1.0, 0.2]) + rng.normal(size=200) > 0).astype(float)
    w, b = cv.bounded_lr(x, y, [0, 0, 0])
    ref = LogisticRegression(C=1.0, tol=1e-10, max_iter=10_000).fit(x, y)
    assert w == pytest.approx(ref.coef_[0], abs=1e-3) and b == pytest.approx(ref.intercept_[0],
                                                                              abs=1e-3)
    # the second column separates the other way: held at zero when asked to stay >= 0
    w2, _ = cv.bounded_lr(x, y, [0, 1, 0])
    assert w2[1] == 0.0 and w2[0] > 0


def test_platt_is_increasing_and_matches_the_base_rate():
    rng = random.Random(1)
    values = [rng.uniform(-2, 2) for _ in range(300)]
    right = [rng.random() < 1 / (1 + math.exp(-2 * v)) for v in values]
    p = cv.platt(values, right)
    grid = p(np.linspace(-2, 2, 9))
    assert np.all(np.diff(grid) > 0)
    # a maximum-likelihood logistic fit with an intercept reproduces the share of right ones
    assert float(np.mean(p(values))) == pytest.approx(sum(right) / len(right), abs=1e-3)


def test_the_table_agrees_with_the_fit_figures(data, fits):
    t = cv.table(data, fits)
    for s in ("dev", "test", "glue", "oog"):
        recs = data["toy"]["sets"][s]
        exact = [r["exact"] for r in recs]
        # computed another way: confidence_fit.aurocs reads the same sets for its card figures
        assert t["old measure alone"]["toy"][s] == fits["toy"]["auroc"][s]["old"]
        assert t["combined score alone"]["toy"][s] == fits["toy"]["auroc"][s]["combined"]
        assert t["either likelihood alarm; flagged by margin, the rest by the old measure "
                 "(shipped)"]["toy"][s] == fits["toy"]["auroc"][s]["either"]
        assert t["either likelihood alarm, old or pair, smaller log margin (session 24)"][
            "toy"][s] == fits["toy"]["auroc"][s]["either_margin"]
        assert t["pair measure alone (both checkpoints' likelihood)"]["toy"][s] == (
            fits["toy"]["auroc"][s]["pair"])
        assert t["old measure alone"]["toy"][s] == round(conf.auroc(
            [r["old"] for r in recs], exact), 3)


def test_the_tiered_rule_ranks_what_the_old_alarm_flags_lowest(data, fits):
    recs = data["toy"]["sets"]["glue"] + data["toy"]["sets"]["oog"]
    scorer = cv.rules(data["toy"]["sets"]["dev"], fits["toy"])[
        "old alarm first, then the session 23 margin"]
    ranked = [recs[i] for i in sorted(range(len(recs)), key=lambda i: scorer(recs)[i])]
    t = data["toy"]["old_threshold"]
    flagged = [r for r in ranked if r["old"] < t]
    assert flagged and ranked[:len(flagged)] == flagged  # the old alarm's outputs first
    assert [r["old"] for r in flagged] == sorted(r["old"] for r in flagged)
    comb = cf.combination(fits["toy"])  # the session 23 margin: old alarm or the regression's
    rest = [min(math.log(r["old"] / t), math.log(comb.score(cf.as_signals(r)) / comb.threshold))
            for r in ranked[len(flagged):]]
    assert rest == sorted(rest)


def test_rules_refit_the_same_and_follow_the_dev_labels(data, fits):
    probe = data["toy"]["sets"]["test"][:10]
    dev = data["toy"]["sets"]["dev"]
    before = {k: f(probe) for k, f in cv.rules(dev, fits["toy"]).items()}
    assert before == {k: f(probe) for k, f in cv.rules(dev, fits["toy"]).items()}
    # right and wrong swapped on dev: the fitted rules score the probe otherwise
    flipped = [{**r, "exact": not r["exact"]} for r in dev]
    changed = cv.rules(flipped, cf.fit(flipped, None, {}, 0.7))
    for key in ("regression on old + six signals, signs fixed",
                "stack of both calibrated logits, weights >= 0"):
        assert changed[key](probe) != before[key], key


def test_meets_lists_the_lines_a_rule_misses():
    old = {"p": {"glue": 0.98, "oog": 0.9, "test": 0.93}}
    assert cv.meets(old, old) == []
    low = {"p": {"glue": 0.97, "oog": 0.91, "test": 0.84}}
    assert cv.meets(low, old) == ["p glue 0.970 < old 0.980", "p test 0.840 < 0.85"]
