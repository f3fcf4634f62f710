"""Admission control (issue 19): N sessions send N different largest inputs (16 lines cut to
the model's 519 pieces) at the same moment, with and without the gate.

The model is a random one of the lab's type at the shipped models' length (max_len 520) with
1+1 layers of width 64 (`tiny_lab_bundle`): the same (16, 4, 519, 519) attention tensors per
layer as `paper`, a third of its layers, so a run takes about a fifth of paper's CPU and the
whole benchmark stays within minutes on two shared cores. ATTN_BENCH_MODEL=paper runs the
shipped checkpoint instead (16 × 30 runs of ~10 CPU-seconds each: plan for half an hour).

Each measurement is a fresh child process, a stand-in for the server: it loads the model, runs
one largest input (the server has served one: its Trace is in the cache), then starts N threads
that call ui.runtime.cached_capture, the function every page calls, and reports its peak RSS
(VmHWM, reset just before) and each session's completion time or refusal. Streamlit runs each
session's script in its own thread in the same way; the browser and the websocket are left
out, so what is measured is the model runs and their memory. "no gate" replaces the gate by
one that admits everything at once with torch's default threads (what the app did before).

    python -m benchmarks bench_admission              # gate and no gate for 1, 4, 16, 30
    python -m benchmarks bench_admission:gate         # one part
    python -m benchmarks.bench_admission child N MODE [MODEL]   # one child, JSON on stdout
"""

from __future__ import annotations

import ctypes
import gc
import json
import os
import random
import subprocess
import sys
import threading
import time
from pathlib import Path

from benchmarks.common import ROOT, Report

COUNTS = (1, 4, 16, 30)
# part -> (child mode, counts): the default policy, no gate, and two runs at once of 1 thread
PARTS = {"gate": ("gate", COUNTS), "no_gate": ("none", COUNTS), "runs2": ("runs2", (4, 16))}
ALPHABET = "abcdefghijklmnopqrstuvwxyz "
MB = 2**20


def largest_input(seed: int) -> tuple[str, ...]:
    """16 distinct lines that together fill MAX_CHARS; each is far over 519 pieces for a
    SentencePiece model of this project (random letters are about one piece each)."""
    from model.inputs import MAX_CHARS, MAX_LINES

    rnd = random.Random(f"largest-{seed}")
    return tuple("".join(rnd.choice(ALPHABET) for _ in range(MAX_CHARS // MAX_LINES)).strip()
                 for _ in range(MAX_LINES))


def tiny_lab_bundle():
    """A random model of the lab's type at the paper's length (max_len 520) but 1+1 layers of
    width 64: the same (B, H, 519, 519) tensors per layer as the paper model, a third of the
    layers, so a run costs a fraction of the paper's CPU."""
    import torch

    from model import Bundle, ModelConfig, Tokenizer, Transformer

    rnd = random.Random(0)
    lines = ["".join(rnd.choice(ALPHABET) for _ in range(200)) for _ in range(300)]
    tok = Tokenizer.train(lines + ["겨울은 추워요.", "Winter is cold."] * 20, vocab_size=420)
    torch.manual_seed(0)
    cfg = ModelConfig(vocab_size=tok.vocab_size, d_model=64, n_heads=4, d_ff=128,
                      n_enc_layers=1, n_dec_layers=1, max_len=520)
    return Bundle(Transformer(cfg).eval(), tok, cfg, {}, "tiny")


def _status(key: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(key):
            return int(line.split()[1]) * 1024
    raise RuntimeError(key)


def child(n: int, mode: str, model: str) -> dict:
    """In a fresh process: n sessions at once through ui.runtime.cached_capture."""
    from benchmarks.common import paper_bundle

    bundle = tiny_lab_bundle() if model == "tiny" else paper_bundle()[0]
    import ui.admission as admission
    import ui.runtime as runtime
    from model.dispatch import estimate_capture
    from model.gate import Busy, Gate, TooLarge

    names = runtime.capture_names(bundle)
    est = estimate_capture(bundle, list(largest_input(-1)), None, target_lang="ko",
                           names=names)
    if "ATTN_INFLIGHT_X" in os.environ:  # the budget as a multiple of one largest run
        os.environ["ATTN_INFLIGHT_MB"] = str(float(os.environ["ATTN_INFLIGHT_X"]) * est.mb)
    if mode == "none":
        gate = Gate(budget=2**62, queue=10**6, timeout_s=10**6, runs=10**6)
        admission.server_gate = lambda: gate  # admits everything; torch's default threads
    elif mode == "runs2":
        os.environ["ATTN_RUNS"] = "2"
    gate = admission.server_gate()
    import torch

    threads = torch.get_num_threads()
    t0 = time.monotonic()
    runtime.cached_capture(bundle, "k", largest_input(-1), None, "ko", "")
    first_s = time.monotonic() - t0
    gc.collect()
    ctypes.CDLL("libc.so.6").malloc_trim(0)
    Path("/proc/self/clear_refs").write_text("5")  # VmHWM := VmRSS
    base = _status("VmRSS:")
    results: dict[int, dict] = {}
    start = threading.Barrier(n)

    def session(i: int) -> None:
        lines = largest_input(i)
        start.wait()
        t = time.monotonic()
        try:
            trace = runtime.cached_capture(bundle, "k", lines, None, "ko", "")
            mine = trace.sources == list(lines) and trace.src_ids.shape[0] == len(lines)
            results[i] = {"outcome": "result" if mine else "someone else's result",
                          "s": time.monotonic() - t, "src": int(trace.src_ids.shape[1])}
            del trace
        except (Busy, TooLarge) as exc:
            results[i] = {"outcome": type(exc).__name__, "message": str(exc),
                          "s": time.monotonic() - t}
        except Exception as exc:  # any other failure is a server error
            results[i] = {"outcome": "error", "message": f"{type(exc).__name__}: {exc}",
                          "s": time.monotonic() - t}
        if lines != largest_input(i):
            results[i]["outcome"] = "text changed"

    workers = [threading.Thread(target=session, args=(i,)) for i in range(n)]
    cpu0 = os.times()
    t0 = time.monotonic()
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    cpu1 = os.times()
    return {"n": n, "mode": mode, "model": model, "wall_s": time.monotonic() - t0,
            "cpu_s": cpu1.user + cpu1.system - cpu0.user - cpu0.system,
            "first_s": first_s, "estimate_mb": est.mb, "base_mb": base / MB,
            "peak_mb": _status("VmHWM:") / MB, "budget_mb": gate.budget / MB,
            "admitted_peak_mb": gate.peak_in_use / MB, "runs": gate.runs,
            "queue": gate.queue_limit, "timeout_s": gate.timeout_s, "threads": threads,
            "sessions": [results[i] for i in range(n)]}


def run_child(n: int, mode: str, model: str | None = None, env: dict[str, str] | None = None,
              timeout_s: float = 900) -> dict:
    """child() in a fresh process (clean peak RSS, empty caches); its JSON result."""
    full = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1", **(env or {})}
    model = model or os.environ.get("ATTN_BENCH_MODEL", "tiny")
    out = subprocess.run([sys.executable, "-m", "benchmarks.bench_admission", "child", str(n),
                          mode, model], cwd=ROOT, env=full, capture_output=True, text=True,
                         timeout=timeout_s)
    if out.returncode != 0:
        raise RuntimeError(f"child failed ({out.returncode}): {out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def mem_available_mb() -> float:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) / 1024
    return 0.0


def summary(r: dict) -> dict:
    done = sorted(s["s"] for s in r["sessions"] if s["outcome"] == "result")
    outcomes: dict[str, int] = {}
    for s in r["sessions"]:
        outcomes[s["outcome"]] = outcomes.get(s["outcome"], 0) + 1
    return {"n": r["n"], "peak_mb": round(r["peak_mb"]), "base_mb": round(r["base_mb"]),
            "over_base_mb": round(r["peak_mb"] - r["base_mb"]),
            "budget_mb": round(r["budget_mb"]) if r["mode"] != "none" else None,
            "estimate_mb": round(r["estimate_mb"]), "runs": r["runs"], "threads": r["threads"],
            "outcomes": outcomes, "wall_s": round(r["wall_s"], 1),
            "first_done_s": round(done[0], 1) if done else None,
            "median_done_s": round(done[len(done) // 2], 1) if done else None,
            "last_done_s": round(done[-1], 1) if done else None,
            "results_per_min": round(60 * len(done) / r["wall_s"], 2) if done else 0.0,
            # the server's own CPU per result: on a shared machine steadier than wall time
            "cpu_s_per_result": round(r["cpu_s"] / len(done), 2) if done else None}


def main(parts: list[str] | None = None) -> Report:
    lines, figures = [], {}
    load = os.getloadavg()[0]
    model = os.environ.get("ATTN_BENCH_MODEL", "tiny")
    lines.append(f"model: {model} (see the module docstring); {os.cpu_count()} cores, load "
                 f"average {load:.1f} at the start; gate defaults unless stated")
    for part in parts or list(PARTS):
        mode, counts = PARTS[part]
        rows = {}
        for n in counts:
            if mode == "none":
                # without the gate every run is in memory at once: do not run what could make
                # the kernel kill processes on this shared machine
                need = n * 1.1 * rows.get("1", {}).get("over_base_mb", 1000)
                if need > 0.6 * mem_available_mb():
                    rows[str(n)] = {"n": n, "skipped": f"needs about {need:,.0f} MB over the "
                                    f"baseline; {mem_available_mb():,.0f} MB available"}
                    lines.append(f"{part:8} n={n:2}: skipped, {rows[str(n)]['skipped']}")
                    continue
            s = summary(run_child(n, mode))
            rows[str(n)] = s
            lines.append(
                f"{part:8} n={n:2}: peak RSS {s['peak_mb']:,} MB ({s['over_base_mb']:+,} over "
                f"the {s['base_mb']:,} MB baseline; budget {s['budget_mb']} MB, one run "
                f"~{s['estimate_mb']} MB); {s['runs']} run(s) × {s['threads']} thread(s); "
                f"{s['outcomes']}; done first {s['first_done_s']} s, median "
                f"{s['median_done_s']} s, last {s['last_done_s']} s; "
                f"{s['results_per_min']} results/min, {s['cpu_s_per_result']} CPU s/result")
        figures[part] = {"counts": rows, "model": model, "load_average_start": round(load, 1)}
    return Report(lines, figures)


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "child":
        result = child(int(sys.argv[2]), sys.argv[3], sys.argv[4] if len(sys.argv) > 4
                       else "paper")
        print(json.dumps(result), flush=True)
    else:
        for line in main().lines:
            print(line)
