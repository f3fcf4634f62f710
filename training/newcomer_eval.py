"""A checkpoint on what newcomers type (issue 42): the glue set, the out-of-grammar set, the
issue's six sentences, and how well Translation.confidence tells right from wrong there.

The sentences are hand-written in tests/data/newcomer_<set>.tsv (direction, source, reference,
construction) and held out of every split (testsets.held_out). Reported per set and direction:
exact match and chrF; per construction; the confidence AUROC (exact against wrong) on the
out-of-grammar set, on the glue set and on both together; every miss.

python -m training.newcomer_eval checkpoints/<name> [...] [--write]
(--write stores the figures in each checkpoint's card.json under "newcomer").
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict

from model import confidence as conf
from model.checkpoint import Bundle
from model.dispatch import load_checkpoint, translate

from .card import store
from .evaluate import score
from .testsets import DATA, DIRECTIONS, Row, read_sets

# the six sentences the issue quotes (target language, source, reference): not held out, so
# the grammar may draw them; they are reported on their own
ISSUE_SENTENCES = (
    ("en", "저는 한국 음식을 좋아해요.", "I like Korean food."),
    ("en", "물 좀 주세요.", "Please give me some water."),
    ("en", "형은 저보다 키가 커요.", "My older brother is taller than me."),
    ("ko", "My brother is taller than me.", "제 형은 저보다 키가 더 커요."),
    ("ko", "I listen to music when I study.", "저는 공부할 때 음악을 들어요."),
    ("ko", "Summer is my favorite season.", "여름은 제가 제일 좋아하는 계절이에요."),
)


def _auroc(scores: list[float], exact: list[bool]) -> float | None:
    """AUROC, or None when one side is empty (it is undefined then)."""
    if all(exact) or not any(exact):
        return None
    return round(conf.auroc(scores, exact), 3)


def run(bundle: Bundle, rows: list[Row]) -> dict:
    """Outputs, confidence and exactness of every row, in row order."""
    out: list[dict] = [{} for _ in rows]
    for direction, lang in DIRECTIONS.items():
        idx = [i for i, r in enumerate(rows) if r.direction == direction]
        if not idx:
            continue
        for i, t in zip(idx, translate(bundle, [rows[i].source for i in idx], lang),
                        strict=True):
            out[i] = {"output": t.text, "confidence": round(t.confidence, 4),
                      "exact": t.text.strip() == rows[i].reference.strip()}
    return {"rows": out}


def evaluate(bundle: Bundle, rows: list[Row]) -> dict:
    """Scores per set and direction, per construction, the AUROCs and the misses."""
    res = run(bundle, rows)["rows"]
    result: dict = {"sets": {}, "constructions": {}, "auroc": {}, "misses": []}
    by_set: dict = defaultdict(lambda: defaultdict(list))
    by_cons: dict = defaultdict(lambda: defaultdict(list))
    for r, o in zip(rows, res, strict=True):
        by_set[r.area][r.direction].append((o["output"], r.reference))
        by_cons[f"{r.area}/{r.construction}"][r.direction].append((o["output"], r.reference))
        if not o["exact"]:
            result["misses"].append({"set": r.area, "direction": r.direction,
                                     "source": r.source, "output": o["output"],
                                     "reference": r.reference,
                                     "confidence": o["confidence"]})
    for target, groups in ((result["sets"], by_set), (result["constructions"], by_cons)):
        for key, dirs in sorted(groups.items()):
            target[key] = {d: score([h for h, _ in hr], [ref for _, ref in hr])
                           for d, hr in sorted(dirs.items())}
    for name, keep in (("oog", {"oog"}), ("glue", {"glue"}), ("both", {"oog", "glue"})):
        pick = [(o["confidence"], o["exact"]) for r, o in zip(rows, res, strict=True)
                if r.area in keep]
        result["auroc"][name] = _auroc([s for s, _ in pick], [e for _, e in pick])
        result["auroc"][f"{name}_n"] = [len(pick), sum(e for _, e in pick)]
    return result


def issue_sentences(bundle: Bundle) -> list[dict]:
    """The issue's six sentences: output, confidence and whether it is the reference."""
    out = []
    for lang, src, ref in ISSUE_SENTENCES:
        t = translate(bundle, [src], lang)[0]
        out.append({"source": src, "output": t.text, "reference": ref,
                    "confidence": round(t.confidence, 4), "exact": t.text == ref})
    return out


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(prog="python -m training.newcomer_eval",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("checkpoints", nargs="+")
    ap.add_argument("--data", default=str(DATA))
    ap.add_argument("--write", action="store_true", help="store the figures in card.json")
    args = ap.parse_args(argv)
    rows = read_sets(args.data, "newcomer_")
    results = {}
    for folder in args.checkpoints:
        bundle = load_checkpoint(folder)
        result = evaluate(bundle, rows)
        result["issue_sentences"] = issue_sentences(bundle)
        results[folder] = result
        print(folder, json.dumps({"sets": result["sets"], "auroc": result["auroc"],
                                  "issue_sentences": result["issue_sentences"]},
                                 ensure_ascii=False, indent=1))
        if args.write:
            store(folder, "newcomer", result)
    return results


if __name__ == "__main__":
    main()
