"""bench_capture's memory part: a fresh process per shape measures the capture's peak RSS
above its start (VmHWM, as tests/unit/peaks.py) against model.dispatch.estimate_capture,
attention-only and full.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

from benchmarks.capture_shapes import N_TOKENS, SHAPES
from benchmarks.common import ROOT

# The child's script: a fresh process, so that its peak is the capture's and nothing earlier's.
MEMORY_SCRIPT = r"""
import json, sys
from pathlib import Path
import torch
torch.set_num_threads(1)
from benchmarks.bench_capture import build, text
from model import capture, load_checkpoint
from model.dispatch import estimate_capture
from model.heap import return_freed_memory
from tests.unit.peaks import peak_of

return_freed_memory()  # as the server does
bundle = load_checkpoint(build(sys.argv[1], Path(sys.argv[2]) / sys.argv[1]))
capture(bundle, ["the cat"])
for label, names in (("attn", ["attn"]), ("full", None)):
    est = estimate_capture(bundle, [text()], names=names)
    # norms are weighed on first read (LazyNorms); the estimate counts them, so read them
    _, peak = peak_of(lambda: capture(bundle, [text()], names=names).norms.values())
    print(json.dumps({"capture": label, "estimate_mib": round(est.bytes / 2**20, 1),
                      "peak_mib": round(peak / 2**20, 1),
                      "ratio": round(est.bytes / peak, 3)}), flush=True)
"""


def memory() -> tuple[list[str], dict]:
    """Estimate against the measured peak, per shape and capture, in fresh processes."""
    lines, figures = [], {}
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1",
           "OPENBLAS_NUM_THREADS": "1"}
    for shape in SHAPES:
        with tempfile.TemporaryDirectory() as tmp:
            out = subprocess.run([sys.executable, "-c", MEMORY_SCRIPT, shape, tmp], cwd=ROOT,
                                 env=env, capture_output=True, text=True, check=True,
                                 timeout=600)
        rows = [json.loads(r) for r in out.stdout.splitlines() if r.startswith("{")]
        figures[shape] = {r["capture"]: r for r in rows}
        lines += [f"{shape} 1x{N_TOKENS} {r['capture']}: estimate {r['estimate_mib']:.0f} MiB, "
                  f"peak {r['peak_mib']:.0f} MiB ({r['ratio']:.2f}; target 0.70-1.30)"
                  for r in rows]
    return lines, figures
