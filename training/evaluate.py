"""Test-split evaluation: exact match, chrF and cross-attention alignment agreement per head.

python -m training.evaluate checkpoints/<name> [--n-test N]
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from model.analysis.alignment import alignment_agreement, alignment_metrics
from model.checkpoint import Bundle
from model.dispatch import capture, load_checkpoint, translate

from . import corpus
from .card import store


def _ngrams(text: str, n: int) -> Counter:
    s = text.replace(" ", "")
    return Counter(s[i:i + n] for i in range(len(s) - n + 1))


def chrf(hyps: Sequence[str], refs: Sequence[str], max_n: int = 6, beta: float = 2.0) -> float:
    """Corpus-level chrF (character n-grams 1..6, recall weighted by beta), 0–100."""
    hit = np.zeros(max_n)
    hyp_total = np.zeros(max_n)
    ref_total = np.zeros(max_n)
    for hyp, ref in zip(hyps, refs, strict=True):
        for n in range(1, max_n + 1):
            h, r = _ngrams(hyp, n), _ngrams(ref, n)
            hit[n - 1] += sum((h & r).values())
            hyp_total[n - 1] += sum(h.values())
            ref_total[n - 1] += sum(r.values())
    prec = np.divide(hit, hyp_total, out=np.zeros(max_n), where=hyp_total > 0).mean()
    rec = np.divide(hit, ref_total, out=np.zeros(max_n), where=ref_total > 0).mean()
    if prec + rec == 0:
        return 0.0
    return float(100 * (1 + beta**2) * prec * rec / (beta**2 * prec + rec))


def score(hyps: Sequence[str], refs: Sequence[str]) -> dict:
    """Count, exact matches (outer spaces ignored), exact match % and chrF of outputs against
    references: the entry the textbook and newcomer cards store per direction and group."""
    exact = sum(h.strip() == r.strip() for h, r in zip(hyps, refs, strict=True))
    return {"n": len(refs), "exact": exact,
            "exact_match": round(100 * exact / max(len(refs), 1), 2),
            "chrf": round(chrf(hyps, refs), 2) if refs else 0.0}


def _scored(hyps: Sequence[str], refs: Sequence[str]) -> dict:
    """Exact match (%, outer spaces ignored) and chrF of outputs against references."""
    if not hyps:
        return {"exact_match": 0.0, "chrf": 0.0}
    exact = float(np.mean([h.strip() == r.strip() for h, r in zip(hyps, refs, strict=True)]))
    return {"exact_match": round(100 * exact, 2), "chrf": round(chrf(hyps, refs), 2)}


def evaluate_bundle(bundle: Bundle, pairs: Sequence[corpus.Pair], batch: int = 64,
                    areas: dict[str, Sequence[bool]] | None = None) -> dict:
    """Metrics in both directions on the given pairs; areas: name -> which pairs belong to it,
    each scored apart as well (result["areas"][name][direction])."""
    result: dict = {"test_pairs": len(pairs)}
    agree_sum, agree_n = None, 0
    for lang, src_of, tgt_of in (("ko", "en", "ko"), ("en", "ko", "en")):
        hyps, refs = [], []
        for start in range(0, len(pairs), batch):
            chunk = pairs[start:start + batch]
            srcs = [getattr(p, src_of) for p in chunk]
            refs += [getattr(p, tgt_of) for p in chunk]
            hyps += [t.text for t in translate(bundle, srcs, lang)]
            tr = capture(bundle, srcs, [getattr(p, tgt_of) for p in chunk], target_lang=lang,
                         names=["attn", "norms"])
            gold, is_en = [p.align for p in chunk], [src_of == "en"] * len(chunk)
            agree = np.stack([alignment_agreement(tr, gold, is_en),  # weights α, then ‖αf(x)‖
                              alignment_agreement(tr, gold, is_en, tr.norms["cross"])])
            agree_sum = agree * len(chunk) if agree_sum is None else agree_sum + agree * len(chunk)
            agree_n += len(chunk)
        key = f"{src_of}->{tgt_of}"
        result[key] = {**_scored(hyps, refs), "examples": [[s, h] for s, h in zip(
            [getattr(p, src_of) for p in pairs[:3]], hyps[:3], strict=True)]}
        for area, member in (areas or {}).items():
            kept = [(h, r) for h, r, m in zip(hyps, refs, member, strict=True) if m]
            result.setdefault("areas", {}).setdefault(area, {})[key] = {
                "n": len(kept), **_scored([h for h, _ in kept], [r for _, r in kept])}
    tables = agree_sum / max(agree_n, 1)  # (2, L, H): α, ‖αf(x)‖
    result.update(alignment_metrics(tables[0], tables[1]))
    return result


def evaluate_folder(folder: str | Path, *, seed: int = 0, n_test: int = 2000,
                    n_train: int = 200_000, n_val: int = 1000, n_everyday: int = 1000) -> dict:
    """Load a checkpoint and evaluate it on the corpus test split it was trained beside, and on
    the everyday split (sentences of the everyday constructions only, none seen in training)."""
    bundle = load_checkpoint(folder)
    names: dict[tuple[str, str], str] = {}
    parts = corpus.splits(seed=seed, n_train=n_train, n_val=n_val, n_test=n_test,
                          n_everyday=n_everyday, names=names)
    # issue 42's areas (glue, copy-through) joined the grammar after the shipped weights were
    # trained: the test split's older constructions are scored apart, so "keep >= 97 %" compares
    # like with like
    new = [names.get((p.en, p.ko), "").startswith(corpus.ISSUE_42) for p in parts["test"]]
    result = evaluate_bundle(bundle, parts["test"], areas={
        "before_42": [not x for x in new], "issue_42": new})
    everyday = evaluate_bundle(bundle, parts["everyday"])
    result["everyday"] = {k: everyday[k] for k in ("test_pairs", "en->ko", "ko->en")}
    result["seed_pairs"] = seed_pair_results(bundle)
    result["everyday_examples"] = seed_pair_results(bundle, corpus.EVERYDAY_EXAMPLES)
    return result


def seed_pair_results(bundle: Bundle, pairs: Sequence[corpus.Pair] | None = None
                      ) -> list[dict]:
    """The seed documents' example sentences (or other pairs seen in training) translated both
    ways: what a lecture shows first, so the card says whether each comes out right."""
    pairs = corpus.SEED_PAIRS if pairs is None else pairs
    out = []
    for lang, src_of, tgt_of in (("ko", "en", "ko"), ("en", "ko", "en")):
        srcs = [getattr(p, src_of) for p in pairs]
        for p, src, hyp in zip(pairs, srcs, translate(bundle, srcs, lang), strict=True):
            ref = getattr(p, tgt_of)
            out.append({"source": src, "output": hyp.text, "reference": ref,
                        "exact": hyp.text.strip() == ref.strip()})
    return out


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(prog="python -m training.evaluate",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("checkpoint")
    ap.add_argument("--n-test", type=int, default=None, help="default: the card's figure")
    ap.add_argument("--write", action="store_true", help="store the figures as the card's metrics")
    args = ap.parse_args(argv)
    card_path = Path(args.checkpoint) / "card.json"
    card = json.loads(card_path.read_text(encoding="utf-8")) if card_path.is_file() else {}
    metrics = evaluate_folder(args.checkpoint, seed=card.get("corpus_seed", 0),
                              n_test=args.n_test or card.get("test_pairs_per_direction", 2000),
                              n_train=card.get("train_pairs_requested", 200_000),
                              n_val=card.get("val_pairs_requested", 1000),
                              n_everyday=card.get("everyday_pairs_per_direction", 1000))
    print(json.dumps(metrics, indent=1, ensure_ascii=False))
    if args.write:
        store(args.checkpoint, "metrics", metrics)
    return metrics


if __name__ == "__main__":
    main()
