"""Fit and measure the combined translation confidence (issue 58; model/confidence_signals.py).

python -m training.confidence_fit checkpoints/paper checkpoints/seed001 [--cache F] [--write]

Each checkpoint translates every sentence of the hand-written sets, greedily, in batches of
eight as the app does; the way back is decoded by the same model and the partner is the other
checkpoint named. Right means exactly the reference (outer spaces ignored), the judgement of
the calibration and newcomer sets. The regression and every threshold are chosen on
tests/data/heldout_dev.tsv alone; heldout_test.tsv and the older sets (confidence_eval,
confidence_calibration, newcomer glue and out-of-grammar) are only measured. --write stores
the combination and its figures in each card under confidence.combined; --cache keeps the
decoded outputs in a JSON file so that a second run decodes nothing.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import numpy as np

from model import confidence as conf
from model import confidence_signals as cs
from model.checkpoint import Bundle
from model.dispatch import load_checkpoint, piece_logps, translate

from .card import store
from .testsets import CALIBRATION, DATA, DIRECTIONS, EVALUATION, read_set, read_sets

CHUNK = 8  # sentences per decode, as a few typed lines in the app
C = 1.0  # inverse L2 strength of the regression, set before fitting (sklearn's default)
SETS = ("dev", "test", "eval", "calibration", "glue", "oog")


def load_rows(data: Path = DATA) -> dict[str, list[tuple[str, str, str]]]:
    """Every set as (target language, source, reference) rows."""
    out = {name: [(DIRECTIONS[r.direction], r.source, r.reference)
                  for r in read_sets(data, "heldout_") if r.area == name]
           for name in ("dev", "test")}
    for name, path in (("eval", EVALUATION), ("calibration", CALIBRATION)):
        out[name] = [("en" if any("가" <= ch <= "힣" for ch in s) else "ko", s, r)
                     for s, r in read_set(path)]
    for name in ("glue", "oog"):
        out[name] = [(DIRECTIONS[r.direction], r.source, r.reference)
                     for r in read_sets(data, "newcomer_") if r.area == name]
    return out


def decode(bundle: Bundle, sources: list[str], langs: list[str]) -> list:
    """Greedy Translations of sources (each to its language), CHUNK at a time."""
    out: list = [None] * len(sources)
    for lang in sorted(set(langs)):
        idx = [i for i, g in enumerate(langs) if g == lang]
        for start in range(0, len(idx), CHUNK):
            part = idx[start:start + CHUNK]
            for i, t in zip(part, translate(bundle, [sources[i] for i in part], lang),
                            strict=True):
                out[i] = t
    return out


def centers(folder: Path) -> dict[str, float]:
    """The usual log length ratio per target language, from the checkpoint's val_pairs.tsv."""
    ratios: dict[str, list[float]] = {"ko": [], "en": []}
    for line in (folder / "val_pairs.tsv").read_text(encoding="utf-8").splitlines():
        cells = line.split("\t")
        if len(cells) >= 2:
            ratios["ko"].append(cs.length_ratio(cells[0], cells[1]))
            ratios["en"].append(cs.length_ratio(cells[1], cells[0]))
    return {k: sum(v) / len(v) for k, v in ratios.items() if v}


def collect(folders: list[Path], rows: dict) -> dict:
    """{checkpoint name: {set: [record]}}: the signals, old confidence and exactness of every
    row; record = signals dict + exact, old, lang."""
    bundles = {f.name: load_checkpoint(f) for f in folders}
    outs: dict = {}
    for name, bundle in bundles.items():
        outs[name] = {}
        for s, rs in rows.items():
            fwd = decode(bundle, [r[1] for r in rs], [r[0] for r in rs])
            back = decode(bundle, [t.text for t in fwd], [cs.back_lang(r[0]) for r in rs])
            outs[name][s] = (fwd, back)
    result: dict = {}
    for name, bundle in bundles.items():
        partner = next((p for p in bundles if p != name), None)
        center = centers(Path(folders[list(bundles).index(name)]))
        result[name] = {"partner": partner, "centers": center, "sets": {},
                        "old_threshold": conf.threshold(bundle.card)}
        for s, rs in rows.items():
            fwd, back = outs[name][s]
            other = outs[partner][s][0] if partner else [None] * len(rs)
            recs = []
            for r, t, b, o in zip(rs, fwd, back, other, strict=True):
                # the partner's opinion of this very output: one teacher-forced forward
                opinion = piece_logps(bundles[partner], r[1], t.text, r[0]) if partner else None
                sig = cs.read(t, bundle.known_words, b, o, center.get(r[0], 0.0), opinion)
                recs.append({**sig.to_dict(), "lang": r[0], "source": r[1], "reference": r[2],
                             "exact": t.text.strip() == r[2].strip(), "old": t.confidence})
            result[name]["sets"][s] = recs
    return result


def as_signals(rec: dict) -> cs.Signals:
    keep = {k: rec[k] for k in cs.Signals.__dataclass_fields__ if k in rec}
    keep["unknown_words"] = tuple(keep["unknown_words"])
    return cs.Signals(**keep)


def combination(entry: dict) -> cs.Combination:
    """The Combination of a fitted entry, with the old measure's threshold beside it."""
    return cs.Combination.from_card({"confidence": {"threshold": entry.get("old_threshold", 0),
                                                    "combined": entry}})


def fit(recs: list[dict], partner: str | None, centers_: dict,
        old_threshold: float = 0.0, calibration: list[dict] | None = None) -> dict:
    """The card entry: a logistic regression on standardised signals, the combined threshold
    (conf.calibrate's 5 % rule) and per-signal limits, all from the dev records; the pair
    measure's threshold by the same rule on `calibration` (the records of the set the old
    threshold was calibrated on, so both alarms are set alike), else on the dev records."""
    from sklearn.linear_model import LogisticRegression

    sigs = [as_signals(r) for r in recs]
    mean, scale = cs.standardise(sigs)
    x = np.array([[((getattr(s, n) if getattr(s, n) is not None else mean[n]) - mean[n])
                   / scale[n] for n in cs.SIGNALS] for s in sigs])  # (N, 6)
    y = np.array([r["exact"] for r in recs], dtype=int)
    model = LogisticRegression(C=C, max_iter=1000).fit(x, y)
    entry = {"mean": mean, "scale": scale,
             "coef": dict(zip(cs.SIGNALS, map(float, model.coef_[0]), strict=True)),
             "intercept": float(model.intercept_[0]), "threshold": 0.5, "limits": {},
             "centers": centers_, "partner": partner, "old_threshold": old_threshold}
    comb = combination(entry)
    exact = [r["exact"] for r in recs]
    entry["threshold"] = conf.calibrate([comb.score(s) for s in sigs], exact)
    for n in cs.SIGNALS:  # a limit flags at most 5 % of the dev set's exact outputs
        vals = [cs.SIDE[n] * float(getattr(s, n)) for s in sigs if getattr(s, n) is not None]
        entry["limits"][n] = cs.SIDE[n] * conf.calibrate(
            vals, [e for e, s in zip(exact, sigs, strict=True) if getattr(s, n) is not None])
    entry["limits"]["unknown"] = 0.5  # any uncovered word is named: it is a fact, not a guess
    cal = [(as_signals(r), r["exact"]) for r in calibration] if calibration else list(
        zip(sigs, exact, strict=True))
    pairs = [(p, e) for p, e in ((comb.pair(s), e) for s, e in cal) if p is not None]
    # the two-model alarm: the old alarm's 5 % rule and set (0: no partner, no alarm)
    entry["pair_threshold"] = (conf.calibrate([p for p, _ in pairs], [e for _, e in pairs])
                               if any(e for _, e in pairs) else 0.0)
    return entry


def aurocs(recs: list[dict], entry: dict) -> dict:
    """Per-signal, old, combined and either-alarm AUROC (exact against wrong) of a set, and
    what the notice (either alarm) flags; only the counts when one side is empty."""
    exact = [r["exact"] for r in recs]
    if all(exact) or not any(exact):
        return {"n": len(recs), "exact": sum(exact)}
    comb = combination(entry)
    out: dict = {"n": len(recs), "exact": sum(exact)}
    for n in cs.SIGNALS:
        vals = [r[n] if r[n] is not None else entry["mean"][n] for r in recs]
        out[n] = round(conf.auroc([cs.SIDE[n] * v for v in vals], exact), 3)
    out["old"] = round(conf.auroc([r["old"] for r in recs], exact), 3)
    scores = [comb.score(as_signals(r)) for r in recs]
    out["combined"] = round(conf.auroc(scores, exact), 3)
    pair = [comb.pair(as_signals(r)) for r in recs]
    if all(p is not None for p in pair):
        out["pair"] = round(conf.auroc(pair, exact), 3)
    margins = [comb.margin(as_signals(r)) for r in recs]
    out["either"] = round(conf.auroc([comb.rank(as_signals(r)) for r in recs], exact), 3)
    out["either_margin"] = round(conf.auroc(margins, exact), 3)
    out["wrong_flagged"] = sum(m < 0 for m, e in zip(margins, exact, strict=True) if not e)
    out["exact_flagged"] = sum(m < 0 for m, e in zip(margins, exact, strict=True) if e)
    return out


def summary(data: dict) -> dict:
    """Fit on dev per checkpoint; AUROCs of every set; both checkpoints' test halves pooled."""
    out = {}
    for name, d in data.items():
        entry = fit(d["sets"]["dev"], d["partner"], d["centers"], d["old_threshold"],
                    d["sets"].get("calibration"))
        entry["auroc"] = {s: aurocs(recs, entry) for s, recs in d["sets"].items()}
        out[name] = entry
    pooled = [(r, out[n]) for n, d in data.items() for r in d["sets"]["test"]]
    exact = [r["exact"] for r, _ in pooled]
    scores = [combination(e).score(as_signals(r)) for r, e in pooled]
    ranks = [combination(e).rank(as_signals(r)) for r, e in pooled]
    pair = [combination(e).pair(as_signals(r)) for r, e in pooled]
    out["pooled_test"] = {"n": len(pooled), "exact": sum(exact),
                          "combined": round(conf.auroc(scores, exact), 3),
                          **({"pair": round(conf.auroc(pair, exact), 3)}
                             if all(v is not None for v in pair) else {}),
                          "either": round(conf.auroc(ranks, exact), 3),
                          "old": round(conf.auroc([r["old"] for r, _ in pooled], exact), 3)}
    return out


def card_entry(entry: dict) -> dict:
    """What a card stores: the combination, rounded, and its figures."""
    def rnd(d: dict) -> dict:
        return {k: round(v, 4) if isinstance(v, float) and math.isfinite(v) else v
                for k, v in d.items()}
    return {"measure": "logistic regression over six signals (model/confidence_signals.py), "
                       "fitted on tests/data/heldout_dev.tsv (training/confidence_fit.py); "
                       "its limits name the notice's reasons",
            "right": "output equals the reference exactly (outer spaces ignored)",
            "mean": rnd(entry["mean"]), "scale": rnd(entry["scale"]), "coef": rnd(entry["coef"]),
            "intercept": round(entry["intercept"], 4),
            "threshold": round(entry["threshold"], 4), "limits": rnd(entry["limits"]),
            "pair_threshold": round(entry["pair_threshold"], 4),
            "pair": "geometric mean of this model's and the partner's probabilities of the "
                    "output's pieces (teacher-forced), halved per uncovered word",
            "centers": rnd(entry["centers"]), "partner": entry["partner"],
            "rule": f"threshold and limits: flag at most {conf.MAX_FALSE_ALARM:.0%} of the dev "
                    "half's exact outputs; pair_threshold: the same share of the calibration "
                    "set's, as confidence.threshold",
            "notice": "shown when the old measure is below confidence.threshold or the pair "
                      "measure below pair_threshold; auroc.*.either ranks as the view presents "
                      "outputs: flagged ones below the rest, by the smaller log margin of the "
                      "two, the rest by the old measure (either_margin: by the margin alone)",
            "auroc": entry["auroc"]}


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folders", nargs="+")
    ap.add_argument("--cache", help="JSON file of decoded records (read if there, else written)")
    ap.add_argument("--write", action="store_true", help="store the result in card.json")
    args = ap.parse_args(argv)
    folders = [Path(f) for f in args.folders]
    cache = Path(args.cache) if args.cache else None
    if cache and cache.is_file():
        data = json.loads(cache.read_text(encoding="utf-8"))
    else:
        data = collect(folders, load_rows())
        if cache:
            cache.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    result = summary(data)
    print(json.dumps({k: v.get("auroc", v) for k, v in result.items()}, indent=1))
    if args.write:
        for folder in folders:
            store(folder, ("confidence", "combined"), card_entry(result[folder.name]))
    return result


if __name__ == "__main__":
    main()
