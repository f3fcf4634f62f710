"""Long mode's cost (issue 38): capture_long ÷ the model's own sdpa forward, and peak RSS.

Shapes, random weights built here (nothing downloaded), a word-level vocabulary of 37:
    gpt2-small  12 layers × 12 heads, 768 wide, positions raised to 8,192
    llama-1k    16 layers, 16 query heads sharing 4 kv heads, 1,024 wide, rotary
Each measurement runs in a fresh process (so its peak RSS is its own): the sdpa forward is
transformers' own (attn_implementation="sdpa", one logit row, no cache), the long capture is
model.capture_long at 512 pixels (queries and keys where "auto" puts them: on disk above
64 MiB, model/long/spill.py; the peak RSS counts memory only). Where the long capture's time
goes is split by timing the reducer (model/long/reduce.py: statistics and pooled maps) inside
it.

    python -m benchmarks bench_long                  # both shapes at their default lengths
    python -m benchmarks.bench_long gpt2-small 8192 --rounds 1 --save  # one shape and length
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.common import save_results

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ROOT / "run" / "bench_long"
# name -> (family, layers, heads, kv heads, width, FFN width, positions), default length
SHAPES = {
    "gpt2-small": (("gpt2", 12, 12, 12, 768, 3072, 8192), 2048),
    "llama-1k": (("llama", 16, 16, 4, 1024, 4096, 32768), 2048),
}
# The lengths (8,192 and 32,768) are not measured by default: on the 2 shared cores
# here a GPT-2-small sdpa forward took 27 s at 2,048 tokens (load average ~10), and the long
# capture 7× that; `python -m benchmarks.bench_long gpt2-small 8192 --save` measures them.
TARGET_RATIO, TARGET_EXTRA_GB = 1.5, 2.0
ROUNDS = 3  # interleaved rounds at the default length (medians)


def build(name: str) -> Path:
    """FOLDERS/name: a random model of that shape with the word-level tokenizer."""
    from benchmarks.big_models import build as build_model

    (family, layers, heads, kv, width, ffn, positions), _ = SHAPES[name]
    return build_model(FOLDERS / name, family, layers, heads, kv, width, positions, ffn)


def words(n: int) -> str:
    """n pieces of text (one word each) with a repeated stretch, so heads have something."""
    from benchmarks.big_models import WORDS

    return " ".join(WORDS[(i * 7 + (i // 97) % 5) % len(WORDS)] for i in range(n))


def child(name: str, n: int, which: str) -> dict:
    """One measurement in this process: seconds, peak RSS, weight bytes."""
    import torch

    folder = build(name)
    if which == "sdpa":
        import transformers as tf

        from benchmarks.big_models import make_tokenizer  # noqa: F401  (same pieces as below)

        model = tf.AutoModelForCausalLM.from_pretrained(folder, attn_implementation="sdpa").eval()
        tok = tf.AutoTokenizer.from_pretrained(folder)
        ids = torch.tensor([tok(words(n))["input_ids"][:n]])
        weights = sum(p.numel() * p.element_size() for p in model.parameters())
        start = time.perf_counter()
        with torch.inference_mode():
            model(input_ids=ids, use_cache=False, logits_to_keep=1)
        seconds = time.perf_counter() - start
        return {"seconds": seconds, "n": ids.shape[1], "weights": weights,
                "peak_rss": peak_rss()}
    import model.long.reduce as reduce_module
    from model import capture_long, load_checkpoint

    bundle = load_checkpoint(folder)
    weights = sum(p.numel() * p.element_size() for p in bundle.model.parameters())
    spent = [0.0]
    add = reduce_module.LayerReducer.add

    def timed(self, *args, **kwargs):  # measurement only: how much of the run the reductions take
        t = time.perf_counter()
        add(self, *args, **kwargs)
        spent[0] += time.perf_counter() - t

    reduce_module.LayerReducer.add = timed
    start = time.perf_counter()
    long = capture_long(bundle, words(n - 1) if name.startswith("llama") else words(n))
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "n": long.n, "weights": weights, "peak_rss": peak_rss(),
            "reduce_seconds": spent[0], "trace_mb": long.nbytes() / 2**20,
            "qk_dtype": long.qk_dtype, "qk_store": long.qk_store,
            "disk_mb": long.disk_bytes() / 2**20}


def peak_rss() -> int:
    """This process's peak resident set, bytes (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def measure(name: str, n: int, which: str) -> dict:
    """child() in a fresh interpreter, so its peak RSS is its own."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-m", "benchmarks.bench_long", "--child", name,
                          str(n), which], capture_output=True, text=True, env=env, cwd=ROOT,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def part(name: str, n: int, rounds: int = 1) -> dict:
    """Both runs of one shape at n tokens, interleaved (sdpa, long, sdpa, long, ...) so that
    the shared machine's load falls on both alike; medians of the rounds, peak RSS the most."""
    build(name)
    runs: dict[str, list[dict]] = {"sdpa": [], "long": []}
    load = os.getloadavg()[0]
    for _ in range(rounds):
        for which in runs:
            runs[which].append(measure(name, n, which))
    sdpa, long = (sorted(runs[w], key=lambda r: r["seconds"])[rounds // 2] for w in runs)
    ratios = sorted(b["seconds"] / a["seconds"] for a, b in zip(runs["sdpa"], runs["long"],
                                                                strict=True))
    peak = {w: max(r["peak_rss"] for r in runs[w]) for w in runs}
    gb = 2**30
    return {
        "tokens": long["n"], "threads": int(os.environ.get("OMP_NUM_THREADS", "0") or 0),
        "rounds": rounds, "load_at_start": round(load, 2),
        "sdpa_s": round(sdpa["seconds"], 2), "long_s": round(long["seconds"], 2),
        "ratio": round(long["seconds"] / sdpa["seconds"], 2),
        "ratio_per_round": [round(r, 2) for r in ratios],
        "reduce_s": round(long["reduce_seconds"], 2),
        "weights_gb": round(long["weights"] / gb, 3),
        "sdpa_peak_rss_gb": round(peak["sdpa"] / gb, 3),
        "long_peak_rss_gb": round(peak["long"] / gb, 3),
        "long_extra_gb": round((peak["long"] - long["weights"]) / gb, 3),
        "trace_mb": round(long["trace_mb"], 1), "qk_dtype": long["qk_dtype"],
        "qk_store": long["qk_store"], "qk_disk_mb": round(long["disk_mb"], 1),
        "target_ratio": TARGET_RATIO, "target_extra_gb": TARGET_EXTRA_GB,
    }


def report(name: str, fig: dict) -> str:
    return (f"{name} at {fig['tokens']:,} tokens: long {fig['long_s']} s, sdpa forward "
            f"{fig['sdpa_s']} s, ratio {fig['ratio']}× (target ≤ {TARGET_RATIO}×); reductions "
            f"{fig['reduce_s']} s of it; peak RSS {fig['long_peak_rss_gb']} GB with "
            f"{fig['weights_gb']} GB of weights (+{fig['long_extra_gb']} GB, target ≤ "
            f"{TARGET_EXTRA_GB})")


def main(parts: list[str] | None = None) -> list[str]:
    """Every shape at its default length (or the named ones); figures saved as they come."""
    lines = []
    for name in parts or list(SHAPES):
        fig = part(name, SHAPES[name][1], ROUNDS)
        save_results("bench_long", {name: fig})
        lines.append(report(name, fig))
    return lines


if __name__ == "__main__":
    if sys.argv[1] == "--child":
        print(json.dumps(child(sys.argv[2], int(sys.argv[3]), sys.argv[4])))
    else:
        name, n = sys.argv[1], int(sys.argv[2])
        rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 1
        fig = part(name, n, rounds)
        if "--save" in sys.argv:  # kept per length: "gpt2-small" at its default, else "@n"
            key = name if n == SHAPES[name][1] else f"{name}@{n}"
            save_results("bench_long", {key: fig})
        print(report(name, fig))


def block(results: dict) -> str:
    """README block 'long': each measured shape and length, long capture beside the sdpa
    forward, with its run named (benchmarks.readme)."""
    from benchmarks.readme_results import flag, provenance

    def _kept(p: dict) -> str:
        # where a run spilled, how much went to disk (it is not in the RSS)
        if p.get("qk_store") == "disk":
            return f"disk ({p['qk_disk_mb']:,.0f} MB)"
        return p.get("qk_store", "memory")

    parts = results.get("bench_long", {})
    if not parts:
        return "No run recorded yet: `python -m benchmarks bench_long` measures it.\n"
    rows = ["| shape | tokens, threads | sdpa forward | long capture (ratio; per round) | of it, "
            "reductions | peak RSS: weights + extra (target ≤ +2 GB); over sdpa's peak "
            "| Q/K kept |",
            "|---|---|---|---|---|---|---|"]
    runs, over_time, over_memory = [], 0, 0
    for key in sorted(parts, key=lambda k: (k.split("@")[0], parts[k].get("tokens", 0))):
        p = parts[key]
        rounds = p.get("ratio_per_round", [p["ratio"]])
        # each run against the targets it was measured for (saved with it; else today's)
        time_flag = flag(p["ratio"], p.get("target_ratio", TARGET_RATIO))
        memory_flag = flag(p["long_extra_gb"], p.get("target_extra_gb", TARGET_EXTRA_GB))
        over_time += time_flag.startswith("OVER")
        over_memory += memory_flag.startswith("OVER")
        rows.append(f"| {key.split('@')[0]} | {p['tokens']:,}, {p['threads'] or 'all'} | "
                    f"{p['sdpa_s']:.1f} s | {p['long_s']:.1f} s ({p['ratio']:.2f}×, {time_flag}; "
                    f"{', '.join(f'{r:.2f}' for r in rounds)}) | {p['reduce_s']:.1f} s | "
                    f"{p['weights_gb']:.2f} + {p['long_extra_gb']:.2f} GB ({memory_flag}); "
                    f"{p['long_peak_rss_gb'] - p['sdpa_peak_rss_gb']:+.2f} GB | {p['qk_dtype']}, "
                    f"{_kept(p)} |")
        runs.append(f"{key}: median of {p.get('rounds', 1)} interleaved round(s) "
                    f"({provenance(results, f'bench_long.{key}')})")
    return ("\n".join(rows) + f"\n\nTarget: long capture ≤ {TARGET_RATIO}× the sdpa forward "
            f"({over_time} of {len(runs)} runs OVER it) and at most +{TARGET_EXTRA_GB:g} GB of "
            f"peak RSS beyond the weights ({over_memory} of {len(runs)} OVER it). "
            + "; ".join(runs) + ".\n")
