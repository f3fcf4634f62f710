"""bench_app's part (e), issue 26: the query–key map's first build and the heads view's
validation statistics, each timed in a new process after the checkpoint is loaded, as a fresh
server meets them.
"""

from __future__ import annotations

# The child's script: run in a new process so that nothing is imported or cached already.
FIRST_BUILDS = r"""
import json, sys, time
t0 = time.perf_counter()
from pathlib import Path
from model import load_checkpoint  # before torch, as the server imports them (OMP_WAIT_POLICY)
import torch
from model.analysis.heads import validation_stats
from model.analysis.qkmap import QKMapCache, corpus_sentences
from model.norms import limit_blas_threads
from training import corpus
from ui.views.heads.stats import VAL_SIZES
from ui.views.qkmap import N_SENTENCES
limit_blas_threads(torch.get_num_threads())  # the server's thread policy (server_gate)
folder = Path(sys.argv[1])
bundle = load_checkpoint(folder)
pairs = corpus.read_pairs_file(folder / corpus.VAL_FILE)
t1 = time.perf_counter()
cache = QKMapCache(bundle, corpus_sentences(pairs, N_SENTENCES))
cache.data()
t2 = time.perf_counter()
cache.get("enc_self", 0, 0, "pca")
t3 = time.perf_counter()
validation_stats(bundle, pairs[:VAL_SIZES[1]])
t4 = time.perf_counter()
print(json.dumps({"imports_and_load_s": round(t1 - t0, 2), "qkmap_sentences": N_SENTENCES,
                  "qkmap_capture_s": round(t2 - t1, 2), "qkmap_first_head_s": round(t3 - t2, 2),
                  "validation_pairs": VAL_SIZES[1], "validation_stats_s": round(t4 - t3, 2),
                  "torch_threads": torch.get_num_threads()}))
"""


def first_builds(env, bundle) -> tuple[list[str], dict]:
    """(e) issue 26: in a new process, the query–key map's first build (q/k of its sentences,
    then one head's PCA) and the heads view's validation statistics (default pair count), each
    after the checkpoint is loaded; target <= 5 s each."""
    import json
    import os
    import subprocess
    import sys

    from benchmarks.common import ROOT
    from model.settings import Settings

    # the folder the app would read under this environment (a relative one is from the root)
    folder = ROOT / Settings.from_env(env).checkpoints_dir / "paper"
    out = subprocess.run([sys.executable, "-c", FIRST_BUILDS, str(folder)], cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}, check=True,
                         capture_output=True, text=True, timeout=600)
    f = json.loads(out.stdout.splitlines()[-1])
    qk = f["qkmap_capture_s"] + f["qkmap_first_head_s"]
    return ([f"(e) first builds in a new process ({f['torch_threads']} torch thread(s)), after "
             f"imports and load ({f['imports_and_load_s']:.2f} s): query-key map of "
             f"{f['qkmap_sentences']} sentences {qk:.2f} s (capture {f['qkmap_capture_s']:.2f}, "
             f"first head {f['qkmap_first_head_s']:.2f}); validation statistics of "
             f"{f['validation_pairs']} pairs {f['validation_stats_s']:.2f} s; target <= 5 s each"],
            f)
