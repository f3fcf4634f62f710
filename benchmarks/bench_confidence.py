"""How well the translators' confidence tells right from wrong outputs (issue 58).

Both shipped translators decode every hand-written set (training/confidence_fit.py: the
held-out halves tests/data/heldout_dev.tsv and heldout_test.tsv, confidence_eval,
confidence_calibration, newcomer glue and out-of-grammar), each with its way back and the
partner's output. The combination is fitted again on the dev half, exactly as the cards were
written, and compared with what the cards hold. Reported per checkpoint and set: right
outputs (exactly the reference), the AUROC (right against wrong) of each of the six signals,
of the old measure (geometric mean with the coverage term), of the combination (the
regression, whose limits name the notice's reasons), of the pair measure (both checkpoints'
geometric mean probability of the output, with the coverage term) and of the notice's rule
(either likelihood alarm: the old measure or the pair measure below its threshold; flagged
outputs ranked below the rest by the smaller log margin, the rest by the old measure the view
prints, model.confidence_signals.Combination.rank; "margin" ranks by the margin alone); and all
on the two checkpoints' test halves pooled. The target is
0.85 on the test half.

The glue guard (training/confidence_variants.py): every other ranking tried, each fitted
on the dev half only, with its AUROC on the dev and test halves and the glue and out-of-grammar
sets, and the lines it misses (no lower than the old measure on glue and out-of-grammar, for
both checkpoints, and >= 0.85 on the test half).

Decoding is about 2,500 greedy translations in batches of eight: a few minutes on 2 cores.
"""

from __future__ import annotations

import json
import time

from benchmarks.common import ROOT, Report

TARGET = 0.85
SHIPPED = ("paper", "seed001")


def main() -> Report:
    from training import confidence_fit as cf
    from training import confidence_variants as cv

    folders = [ROOT / "checkpoints" / n for n in SHIPPED]
    if not all((f / "config.json").is_file() for f in folders):
        return Report(["the shipped translators are not here: nothing measured"])
    t0 = time.perf_counter()
    data = cf.collect(folders, cf.load_rows())
    decode_s = time.perf_counter() - t0
    result = cf.summary(data)
    lines, figures = [], {}
    for name in SHIPPED:
        card = json.loads((ROOT / "checkpoints" / name / "card.json").read_text("utf-8"))
        stored = card.get("confidence", {}).get("combined", {})
        fresh = cf.card_entry(result[name])
        same = bool(stored) and all(
            abs(stored["coef"][k] - fresh["coef"][k]) < 2e-3 for k in fresh["coef"]) and abs(
            stored["threshold"] - fresh["threshold"]) < 2e-3
        figures[name] = {"sets": result[name]["auroc"], "card_matches_fit": same,
                         "threshold": fresh["threshold"], "coef": fresh["coef"]}
        for s, a in result[name]["auroc"].items():
            if "combined" not in a:
                lines.append(f"{name} {s}: {a['exact']}/{a['n']} right, AUROC undefined")
                continue
            per = " ".join(f"{k}={a[k]:.3f}" for k in
                           ("mean_logp", "min_logp", "unknown", "length_gap", "round_trip",
                            "agreement"))
            lines.append(f"{name} {s}: {a['exact']}/{a['n']} right; notice's rule "
                         f"{a['either']:.3f} (margin {a['either_margin']:.3f}, old {a['old']:.3f}, "
                         f"pair {a['pair']:.3f}, "
                         f"combined {a['combined']:.3f}); flags {a['wrong_flagged']} wrong, "
                         f"{a['exact_flagged']} right; {per}")
        lines.append(f"{name}: card holds this fit: {same}")
    pooled = result["pooled_test"]
    figures["pooled_test"] = {**pooled, "target": TARGET, "decode_s": round(decode_s, 1)}
    lines.append(f"test halves pooled: {pooled['exact']}/{pooled['n']} right, notice's rule "
                 f"{pooled['either']:.3f} (old {pooled['old']:.3f}, pair {pooled['pair']:.3f}, "
                 f"combined {pooled['combined']:.3f}; target {TARGET}); "
                 f"decoding took {decode_s:.0f} s")
    table = cv.table(data, result)
    old = table["old measure alone"]
    figures["variants"] = {rule: {**f, "missed": cv.meets(f, old)} for rule, f in table.items()}
    for rule, f in table.items():
        missed = figures["variants"][rule]["missed"]
        per = "; ".join(f"{s} " + " / ".join(f"{f[n][s]:.3f}" for n in SHIPPED)
                        for s in ("glue", "oog", "test", "dev"))
        lines.append(f"rule '{rule}' ({' / '.join(SHIPPED)}): {per}: "
                     + (f"misses {', '.join(missed)}" if missed else "meets every line"))
    return Report(lines, figures)
