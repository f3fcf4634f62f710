"""Where a server's memory goes outside the Trace cache (issue 26): a fresh process adds, one
stage at a time, what a server process holds, and the resident set size (RSS) after each stage
is read from /proc/self/status. RSS is what the OOM killer counts; the stages are cumulative,
so each one's cost is its RSS minus the stage before.

Stages: the interpreter; numpy; torch; streamlit; plotly; the app's own modules (ui, viz,
model; what app.py imports); transformers' model code (imported when a Hugging Face model is
listed); the shipped `paper` checkpoint; a GPT-2-small-shaped Hugging Face model (random
weights, 124 M parameters); one capture of two short sentences on `paper`, and one short one on
the GPT-2 shape (its mmapped weights are read in only then); then the sessions:
Streamlit AppTest runs of the default page, one new session each (1, then 5 in all).

RSS is split into anonymous memory (the process's own: heaps, tensors, Python objects) and
file-backed pages (shared libraries' code and the safetensors weights, which are mmapped: clean
pages the kernel can drop and read again, shared with other processes mapping the same file).
glibc's allocator is reported beside it (mallinfo2): bytes in use, bytes free but still held
in its heaps (what malloc_trim gives back), and bytes in mmapped blocks.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from benchmarks.common import ROOT, Report, run_parts

_CHILD = r"""
import ctypes, gc, json, sys, tempfile, time
from pathlib import Path

def status_mib(key):
    for line in open("/proc/self/status"):
        if line.startswith(key):
            return round(int(line.split()[1]) / 1024, 1)

class Mallinfo2(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in ("arena", "ordblks", "smblks", "hblks", "hblkhd",
                                                "usmblks", "fsmblks", "uordblks", "fordblks",
                                                "keepcost")]

libc = ctypes.CDLL("libc.so.6")
libc.mallinfo2.restype = Mallinfo2

def heap():
    m = libc.mallinfo2()
    return {"heap_in_use_mib": round(m.uordblks / 2**20, 1),
            "heap_free_held_mib": round(m.fordblks / 2**20, 1),
            "mmapped_mib": round(m.hblkhd / 2**20, 1)}

def stage(name, **extra):
    gc.collect()
    print(json.dumps({"stage": name, "rss_mib": status_mib("VmRSS:"),
                      "anon_mib": status_mib("RssAnon:"), "file_mib": status_mib("RssFile:"),
                      **heap(), **extra}), flush=True)

libc.mallopt(-3, 1 << 20)  # M_MMAP_THRESHOLD as the server sets it (model.heap, not imported
# here: model/__init__ imports torch, which is a stage of its own)
stage("interpreter")
import numpy
stage("numpy")
import torch
torch.set_num_threads(1)
stage("torch")
import streamlit
stage("streamlit")
import plotly.graph_objects
stage("plotly")
import ui.runtime, ui.sidebar, ui.views, ui.download, ui.admission  # what app.py imports
stage("app modules (ui, viz, model)")
import transformers.modeling_utils
stage("transformers model code")
from benchmarks.common import paper_bundle
from model import capture, load_checkpoint
paper, label = paper_bundle()
stage("paper checkpoint", model=label)
from benchmarks.bench_capture import build
folder = build("gpt2", Path(tempfile.mkdtemp()) / "gpt2")
gc.collect(); libc.malloc_trim(0)
gpt2 = load_checkpoint(folder)
params = sum(p.numel() for p in gpt2.model.parameters())
stage("GPT-2 small shape loaded", parameters=params, weights_mib=round(params * 4 / 2**20, 1))
trace = capture(paper, ["The cat eats the fish.", "Winter is cold."], target_lang="ko")
del trace
stage("one paper capture (Trace dropped)")
capture(gpt2, ["the cat eats fish"], names=["attn"])
stage("one GPT-2 capture: its weights paged in")
libc.malloc_trim(0)
stage("after malloc_trim")
import os
os.environ["ATTN_MODELS"] = ""
from benchmarks.bench_app import app_test
for n in (1, 5):
    while len(globals().setdefault("sessions", [])) < n:
        at = app_test({}, view="tokens")
        at.run()
        sessions.append(at)
    stage(f"{n} AppTest session(s) of the default page")
"""


def memory() -> tuple[list[str], dict]:
    """Run the stages in a fresh process; lines and figures."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, "-c", _CHILD], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=900)
    if out.returncode:
        raise RuntimeError(out.stderr[-3000:])
    rows = [json.loads(r) for r in out.stdout.splitlines() if r.startswith("{")]
    lines, before = [], 0.0
    for r in rows:
        r["delta_mib"] = round(r["rss_mib"] - before, 1)
        before = r["rss_mib"]
        lines.append(f"{r['stage']:<42} RSS {r['rss_mib']:5.0f} MiB ({r['delta_mib']:+5.0f}): "
                     f"anonymous {r['anon_mib']:.0f}, file-backed {r['file_mib']:.0f}; malloc "
                     f"in use {r['heap_in_use_mib']:.0f}, free but held "
                     f"{r['heap_free_held_mib']:.0f}, mmapped {r['mmapped_mib']:.0f}")
    return lines, {"stages": rows}


PARTS = {"memory": memory}


def main(parts: list[str] | None = None) -> Report:
    return run_parts("bench_memory", PARTS, parts)


def readme_rows(section: dict) -> list[str]:
    """The README's row for the memory outside the Trace cache (part memory)."""
    if "memory" not in section:
        return []
    cells = "; ".join(f"{s['stage']} {s['delta_mib']:+.0f}" for s in section["memory"]["stages"])
    return [f"| a server's memory outside the Trace cache, stage by stage in a fresh process "
            f"(RSS MiB added by each) | {cells} | accounted |"]
