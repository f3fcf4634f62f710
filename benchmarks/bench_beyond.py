"""Beyond weights (issue 14): the global query–key map of one head over 300 validation
sentences, first build (target <= 10 s) and cached (target <= 1 s); the norms' share of a
capture; head contributions and the flow graph for one sentence.

The validation split itself (corpus.splits, generated once per server process and shared with
the heads view) is timed on its own line and is not part of the map's first build.
"""

from __future__ import annotations

import time

from benchmarks.common import median_times, paper_bundle
from model import capture
from model.analysis.contributions import head_contributions
from model.analysis.flow import flow_routes
from model.analysis.qkmap import QKMapCache, corpus_sentences

N = 300
SENTENCE = "The big dog eats the fish."


def main() -> list[str]:
    bundle, label = paper_bundle()
    from model.training import corpus

    card = bundle.card or {}
    t0 = time.perf_counter()
    pairs = corpus.splits(seed=int(card.get("corpus_seed", 0)),
                          n_train=int(card.get("train_pairs_requested", 200_000)),
                          n_val=int(card.get("val_pairs_requested", 1_000)),
                          n_test=int(card.get("test_pairs_per_direction", 2_000)))["val"]
    split_s = time.perf_counter() - t0
    import sklearn.decomposition  # noqa: F401 - the import is a one-off per process

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
        lambda: capture(bundle, [SENTENCE], names=["attn", "v", "hidden", "norms"])], repeat=5)
    tr = capture(bundle, [SENTENCE], names=["norms", "hidden"])
    (flow_s,) = median_times([lambda: flow_routes(tr, 0, threshold=0.05)], repeat=5)
    t0 = time.perf_counter()
    head_contributions(bundle, SENTENCE, target_lang="ko")
    contrib_s = time.perf_counter() - t0
    return [
        f"model: {label}",
        f"validation split generated once: {split_s:.1f} s (shared with the heads view)",
        f"query–key map, one head, {N} sentences ({len(first.token)} points), first build: "
        f"{first_s:.2f} s wall, {first_cpu:.2f} s CPU (target <= 10 s)",
        f"  same head again (cached): {cached_s * 1000:.2f} ms (target <= 1 s); another head "
        f"from the same capture: {other_head_s:.2f} s",
        f"capture with norms / without (attn, v, hidden recorded in both): "
        f"{with_norms / plain:.2f}× ({with_norms * 1000:.1f} vs {plain * 1000:.1f} ms)",
        f"flow routes for one token: {flow_s * 1000:.1f} ms; head contributions (knock-out of "
        f"every head + DLA): {contrib_s:.2f} s",
    ]
