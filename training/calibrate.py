"""Calibrate Translation.confidence's notice threshold and measure how well it separates.

python -m training.calibrate checkpoints/<name> [...] [--write]

Translates two sets of sentences written for this purpose, kept outside the training corpus:
tests/data/confidence_calibration.tsv picks the threshold (model.confidence.calibrate) and
tests/data/confidence_eval.tsv, never used for choosing, gives the AUROC of confidence for
exact against wrong outputs. With --write the result goes into the checkpoint's card.json
under "confidence", where the app reads the threshold.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from model import confidence as conf
from model.checkpoint import Bundle
from model.dispatch import load_checkpoint, translate

from .card import store
from .evaluate import chrf
from .testsets import CALIBRATION, EVALUATION, read_set


def score_set(bundle: Bundle, rows: list[tuple[str, str]]) -> dict:
    """Confidence, exactness and outputs of the model's greedy translations of a set."""
    out = translate(bundle, [s for s, _ in rows])
    exact = [t.text == ref for t, (_, ref) in zip(out, rows, strict=True)]
    return {"scores": [t.confidence for t in out], "exact": exact,
            "outputs": [t.text for t in out], "chrf": chrf([t.text for t in out],
                                                           [r for _, r in rows])}


def calibration(bundle: Bundle) -> dict:
    """The card entry: threshold from the calibration set, AUROC and flags on the eval set."""
    cal, ev = score_set(bundle, read_set(CALIBRATION)), score_set(bundle, read_set(EVALUATION))
    t = conf.calibrate(cal["scores"], cal["exact"])

    def summary(part: dict, path: Path) -> dict:
        wrong = [s for s, e in zip(part["scores"], part["exact"], strict=True) if not e]
        right = [s for s, e in zip(part["scores"], part["exact"], strict=True) if e]
        return {"file": f"tests/data/{path.name}", "sentences": len(part["exact"]),
                "exact": sum(part["exact"]), "chrf": round(part["chrf"], 1),
                "auroc": round(conf.auroc(part["scores"], part["exact"]), 3),
                "wrong_flagged": sum(s < t for s in wrong),
                "exact_flagged": sum(s < t for s in right)}

    return {"measure": "geometric mean of the chosen pieces' probabilities, halved for each "
                       "source word outside the training corpus that the output does not copy "
                       "through (model/confidence.py)",
            "threshold": round(t, 4),
            "rule": f"highest threshold flagging at most {conf.MAX_FALSE_ALARM:.0%} of the "
                    "calibration set's exact outputs",
            "calibration": summary(cal, CALIBRATION), "evaluation": summary(ev, EVALUATION)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+")
    parser.add_argument("--write", action="store_true", help="store the result in card.json")
    args = parser.parse_args(argv)
    for folder in args.folders:
        entry = calibration(load_checkpoint(folder))
        print(folder, json.dumps(entry, ensure_ascii=False, indent=1))
        if args.write:
            store(folder, "confidence", entry)


if __name__ == "__main__":
    main()
