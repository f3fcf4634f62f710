"""Other ways to rank translations for the unsure notice, each fitted on the dev half only
(issue 58's glue guard).

The notice shipped in session 23 rang when either the old measure or the combined score
(the regression) was below its threshold, ranked by the smaller log margin. On the newcomer
glue set that ranked some right outputs lower than the old measure did (the way back misreads
one-way constructions: 비싼데 -> but -> 비싸지만). Now it rings on two likelihoods, this
model's and both checkpoints' (model/confidence_signals.Combination.margin), and outputs
are ranked as the view presents them (Combination.rank).
The issue asks for a score no lower than the old one on the glue and out-of-grammar sets
and >= 0.85 on the held-out test half. Each rule here is fitted on heldout_dev.tsv alone (the
same records the combination is fitted on) and only measured on the other sets; `table` gives
every rule's AUROC per checkpoint and set and `meets` says which rules clear every line.
benchmarks/bench_confidence.py reports both.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from model import confidence as conf
from model import confidence_signals as cs

from .confidence_fit import as_signals, combination

# a scorer ranks records: a higher value is a likelier right output (tuples compare in order)
Scorer = Callable[[Sequence[dict]], list]
GUARDED = ("glue", "oog")  # sets where a rule may not fall below the old measure
TARGET = 0.85  # the floor on the held-out test half


def log_old(rec: dict) -> float:
    return math.log(max(float(rec["old"]), 1e-300))


def logit(p: np.ndarray) -> np.ndarray:
    p = np.clip(np.asarray(p, dtype=float), 1e-12, 1 - 1e-12)
    return np.log(p / (1 - p))


def bounded_lr(x: np.ndarray, y: np.ndarray, signs: Sequence[int],
               c: float = 1.0) -> tuple[np.ndarray, float]:
    """L2 logistic regression with scikit-learn's objective (0.5·|w|² + c·log loss, intercept
    not penalised) whose weight j keeps the sign signs[j] (+1: >= 0, -1: <= 0, 0: free).
    x (N, D), y (N,) of 0/1."""
    from scipy.optimize import minimize

    d = x.shape[1]

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        z = x @ w[:d] + w[d]  # (N,)
        nll = np.sum(y * np.logaddexp(0, -z) + (1 - y) * np.logaddexp(0, z))
        g = 1 / (1 + np.exp(-z)) - y  # (N,)
        grad = np.concatenate([w[:d] + c * (x.T @ g), [c * g.sum()]])
        return 0.5 * float(w[:d] @ w[:d]) + c * float(nll), grad

    bounds = [(0, None) if s > 0 else (None, 0) if s < 0 else (None, None) for s in signs]
    w = minimize(loss, np.zeros(d + 1), jac=True, method="L-BFGS-B",
                 bounds=[*bounds, (None, None)]).x
    return w[:d], float(w[d])


def platt(values: Sequence[float], right: Sequence[bool]
          ) -> Callable[[Sequence[float]], np.ndarray]:
    """P(right | value) = sigmoid(a·z + b) on the standardised value, a >= 0, fitted on the
    given (dev) outputs without a penalty worth the name (c = 1e6)."""
    v = np.asarray(values, dtype=float)
    mu, sd = float(v.mean()), float(v.std()) or 1.0
    w, b = bounded_lr(((v - mu) / sd)[:, None], np.asarray(right, dtype=float), [1], c=1e6)
    return lambda u: 1 / (1 + np.exp(-(w[0] * (np.asarray(u, dtype=float) - mu) / sd + b)))


def rules(dev: Sequence[dict], entry: dict) -> dict[str, Scorer]:
    """Every rule tried, fitted on the dev records with the checkpoint's fitted combination
    entry (training/confidence_fit.fit on the same records)."""
    comb = combination(entry)
    old_t = float(entry["old_threshold"])
    y = np.array([r["exact"] for r in dev], dtype=float)

    def score(recs: Sequence[dict]) -> np.ndarray:
        return np.array([comb.score(as_signals(r)) for r in recs])

    def margin(recs: Sequence[dict]) -> list[float]:  # the regression's alarm or the old one
        return [min(math.log(max(r["old"], 1e-300) / old_t),
                    math.log(comb.score(as_signals(r)) / comb.threshold)) for r in recs]

    def z(recs: Sequence[dict], names: Sequence[str]) -> np.ndarray:  # (N, len(names))
        m, s = entry["mean"], entry["scale"]
        return np.array([[((r[n] if r[n] is not None else m[n]) - m[n]) / s[n] for n in names]
                         for r in recs]).reshape(len(recs), len(names))

    p_old = platt([log_old(r) for r in dev], y > 0)
    stack_x = lambda recs: np.column_stack(  # noqa: E731 (N, 2): both calibrated logits
        [logit(p_old([log_old(r) for r in recs])), logit(score(recs))])
    w_stack, b_stack = bounded_lr(stack_x(dev), y, [1, 1])
    lo = np.array([log_old(r) for r in dev])
    seven = lambda recs: np.column_stack(  # noqa: E731 (N, 7): old measure + six signals
        [(np.array([log_old(r) for r in recs]) - lo.mean()) / (lo.std() or 1.0),
         z(recs, cs.SIGNALS)])
    w7, b7 = bounded_lr(seven(dev), y, [1] + [cs.SIDE[n] for n in cs.SIGNALS])
    five = [n for n in cs.SIGNALS if n != "round_trip"]
    w5, b5 = bounded_lr(z(dev, five), y, [0] * len(five))
    t5 = conf.calibrate(list(z(dev, five) @ w5 + b5), list(y > 0))

    def tiered(recs: Sequence[dict]) -> list[tuple[int, float]]:
        # what the old alarm flags ranks below the rest, in the old measure's order there
        return [(0, math.log(max(r["old"], 1e-300) / old_t)) if r["old"] < old_t else (1, m)
                for r, m in zip(recs, margin(recs), strict=True)]

    return {
        "old measure alone": lambda recs: [r["old"] for r in recs],
        "combined score alone": lambda recs: list(score(recs)),
        "either alarm, old or combined, smaller log margin (session 23)": margin,
        "pair measure alone (both checkpoints' likelihood)": lambda recs: [
            comb.pair(as_signals(r)) for r in recs],
        "either likelihood alarm, old or pair, smaller log margin (session 24)": lambda recs: [
            comb.margin(as_signals(r)) for r in recs],
        "either likelihood alarm; flagged by margin, the rest by the old measure (shipped)":
            lambda recs: [comb.rank(as_signals(r)) for r in recs],
        "smaller calibrated P(right): Platt(old), combined": lambda recs: list(np.minimum(
            p_old([log_old(r) for r in recs]), score(recs))),
        "stack of both calibrated logits, weights >= 0": lambda recs: list(
            stack_x(recs) @ w_stack + b_stack),
        "regression on old + six signals, signs fixed": lambda recs: list(
            seven(recs) @ w7 + b7),
        "old alarm first, then the session 23 margin": tiered,
        "either alarm, combination without round trip": lambda recs: [
            min(math.log(max(r["old"], 1e-300) / old_t), v - t5)
            for r, v in zip(recs, z(recs, five) @ w5 + b5, strict=True)],
    }


def table(data: dict, fits: dict, sets: Sequence[str] = ("dev", "test", *GUARDED)
          ) -> dict[str, dict[str, dict[str, float]]]:
    """{rule: {checkpoint: {set: AUROC}}} for every rule, each fitted on its checkpoint's dev
    records (data and fits as confidence_fit.collect and summary give them)."""
    out: dict = {}
    for name, d in data.items():
        for rule, scorer in rules(d["sets"]["dev"], fits[name]).items():
            row = out.setdefault(rule, {}).setdefault(name, {})
            for s in sets:
                recs = d["sets"][s]
                row[s] = round(conf.auroc(scorer(recs), [r["exact"] for r in recs]), 3)
    return out


def meets(figures: dict[str, dict[str, float]], old: dict[str, dict[str, float]],
          target: float = TARGET) -> list[str]:
    """The lines a rule's figures miss (empty: it meets every one): on each checkpoint no
    lower than the old measure on the guarded sets, and >= target on the test half."""
    missed = []
    for name, f in figures.items():
        missed += [f"{name} {s} {f[s]:.3f} < old {old[name][s]:.3f}" for s in GUARDED
                   if f[s] < old[name][s]]
        if f["test"] < target:
            missed.append(f"{name} test {f['test']:.3f} < {target}")
    return missed
