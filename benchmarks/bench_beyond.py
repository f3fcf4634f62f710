"""Beyond weights (issue 14): the global query–key map of one head over 300 validation
sentences, first build (target <= 10 s) and cached (target <= 1 s); the norms' share of a
capture; head contributions and the flow graph for one sentence.

The validation split is read as the app reads it (ui/corpus_cache.validation_pairs: the
checkpoint's val_pairs.tsv, or corpus.splits again without it) and timed on its own line; it is
not part of the map's first build. The map places points by PCA (numpy's SVD, as the view's
default does), so scikit-learn is not imported.
"""

from __future__ import annotations

import time
from pathlib import Path

from benchmarks.common import ROOT, Report, median_times, paper_bundle
from model import capture
from model.analysis.contributions import head_contributions
from model.analysis.flow import flow_routes
from model.analysis.qkmap import QKMapCache, corpus_sentences

N = 300
SENTENCE = "The big dog eats the fish."
FIRST_BUILD_S, CACHED_S = 10.0, 1.0  # the targets for the map
# One short sentence captures in tens of ms: on a shared 2-core machine five rounds gave
# 0.59× and 0.91× for the same pair, so the norms' ratio takes more rounds.
NORMS_REPEAT = 21


def validation_split(card: dict) -> tuple[list, str]:
    """The paper checkpoint's validation pairs and where they came from (file or generated)."""
    from training import corpus

    path = ROOT / "checkpoints" / "paper" / corpus.VAL_FILE
    if Path(path).is_file():
        return corpus.read_pairs_file(path), "val_pairs.tsv"
    pairs = corpus.splits(seed=int(card.get("corpus_seed", 0)),
                          n_train=int(card.get("train_pairs_requested", 200_000)),
                          n_val=int(card.get("val_pairs_requested", 1_000)),
                          n_test=int(card.get("test_pairs_per_direction", 2_000)))["val"]
    return pairs, "corpus.splits"


def measure() -> dict:
    """Every figure of this benchmark on the paper checkpoint (or a random one shaped like it)."""
    bundle, label = paper_bundle()
    t0 = time.perf_counter()
    pairs, source = validation_split(bundle.card or {})
    split_s = time.perf_counter() - t0
    cache = QKMapCache(bundle, corpus_sentences(pairs, N))
    t0, c0 = time.perf_counter(), time.process_time()
    first = cache.get("cross", 1, 0)
    first_s, first_cpu = time.perf_counter() - t0, time.process_time() - c0
    t0 = time.perf_counter()
    cache.get("cross", 1, 0)
    cached_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    cache.get("enc_self", 2, 3)
    other_head_s = time.perf_counter() - t0
    plain, with_norms = median_times([
        lambda: capture(bundle, [SENTENCE], names=["attn", "v", "hidden"]),
        lambda: capture(bundle, [SENTENCE], names=["attn", "v", "hidden", "norms"])],
        repeat=NORMS_REPEAT)
    tr = capture(bundle, [SENTENCE], names=["norms", "hidden"])
    (flow_s,) = median_times([lambda: flow_routes(tr, 0, threshold=0.05)], repeat=5)
    t0 = time.perf_counter()
    head_contributions(bundle, SENTENCE, target_lang="ko")
    contrib_s = time.perf_counter() - t0
    return {"model": label, "sentences": N, "points": len(first.token),
            "split_source": source, "split_s": split_s, "qkmap_first_s": first_s,
            "qkmap_first_cpu_s": first_cpu, "qkmap_cached_s": cached_s,
            "qkmap_other_head_s": other_head_s, "capture_plain_s": plain,
            "capture_norms_s": with_norms, "flow_s": flow_s, "contributions_s": contrib_s}


def report_lines(r: dict) -> list[str]:
    """What one run prints."""
    return [
        f"model: {r['model']}",
        f"validation split ({r['split_source']}): {r['split_s']:.1f} s (shared with the heads "
        "view)",
        f"query–key map, one head, {r['sentences']} sentences ({r['points']} points), first "
        f"build: {r['qkmap_first_s']:.2f} s wall, {r['qkmap_first_cpu_s']:.2f} s CPU "
        f"(target <= {FIRST_BUILD_S:.0f} s)",
        f"  same head again (cached): {r['qkmap_cached_s'] * 1e6:.0f} µs (target <= "
        f"{CACHED_S:.0f} s); another head from the same capture: {r['qkmap_other_head_s']:.2f} s",
        f"capture with norms / without (attn, v, hidden recorded in both): "
        f"{r['capture_norms_s'] / r['capture_plain_s']:.2f}× "
        f"({r['capture_norms_s'] * 1000:.1f} vs {r['capture_plain_s'] * 1000:.1f} ms)",
        f"flow routes for one token: {r['flow_s'] * 1000:.1f} ms; head contributions "
        f"(knock-out of every head + DLA): {r['contributions_s']:.2f} s",
    ]


def main(parts: list[str] | None = None) -> Report:
    if parts and set(parts) != {"paper"}:
        raise SystemExit(f"bench_beyond has no part {sorted(set(parts) - {'paper'})}; it has "
                         "paper")
    r = measure()
    return Report([*report_lines(r), "README rows:", *readme_rows({"paper": r})], {"paper": r})


def readme_rows(section: dict) -> list[str]:
    """The benchmark table's row for the query–key map and the per-sentence analyses."""
    if "paper" not in section:
        return []
    from benchmarks.readme_results import flag

    r = section["paper"]
    return [
        f"| query–key map, one head over {r['sentences']} validation sentences "
        f"({r['points']:,} points, {r['model']}): first build, and the same head again; "
        f"then per sentence: capture with norms ÷ without, flow routes, head contributions | "
        f"{r['qkmap_first_s']:.2f} s ({flag(r['qkmap_first_s'], FIRST_BUILD_S)}), "
        f"{r['qkmap_cached_s'] * 1e6:.0f} µs ({flag(r['qkmap_cached_s'], CACHED_S)}); "
        f"norms {r['capture_norms_s'] / r['capture_plain_s']:.2f}×, flow "
        f"{r['flow_s'] * 1000:.1f} ms, contributions {r['contributions_s']:.2f} s | "
        f"≤ {FIRST_BUILD_S:.0f} s, ≤ {CACHED_S:.0f} s |",
    ]


if __name__ == "__main__":
    print("\n".join(main().lines))
