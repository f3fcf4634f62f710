"""TransformerLens beside the lab's capture (issue 40): `make bench-tl` runs it in its own venv
(.venv-tl, requirements-bench.txt); in `make bench` (no TransformerLens) it prints the table
from the last bench-tl run's results.

Same work on both sides, on bench_capture's random-weight shapes at 512 tokens: the same ids
(our tokenizer's, handed to TransformerLens as a tensor, so no BOS is prepended), every
position's logits computed on both sides. Rows, medians of interleaved rounds at 1 and at 2
torch threads (OMP/BLAS held to the same): transformers' sdpa forward (the baseline), the lab's
full capture against TransformerLens's full `run_with_cache`, and the lab's attention (plus
logits) against TransformerLens's patterns (plus logits). Peak memory: a fresh process per side
and capture, VmHWM above the RSS before the call (tests/unit/peaks.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import torch

from benchmarks.bench_hf import text
from benchmarks.capture_shapes import N_TOKENS, SHAPES, build
from benchmarks.common import ROOT, Report, load_results, median_times

THREADS = (1, 2)
REPEAT = 5
ROWS = ("sdpa", "lab_full", "lab_full_norms", "tl_full", "lab_attn", "tl_patterns")


def _is_pattern(name: str) -> bool:
    return name.endswith("hook_pattern")


def _bridge(folder: Path):
    from transformer_lens.model_bridge import TransformerBridge

    return TransformerBridge.boot_transformers(str(folder), device="cpu")


def _timings(folder: Path, threads: int) -> dict:
    """Milliseconds of every row at `threads` threads, and how far the patterns agree."""
    from threadpoolctl import threadpool_limits

    from benchmarks.bench_capture import sdpa_forward
    from model import capture, load_checkpoint

    torch.set_num_threads(threads)
    with threadpool_limits(limits=threads):
        bundle = load_checkpoint(folder)
        line = text()
        ids = bundle.tokenizer(line)["input_ids"]  # the lab's ids: no special tokens added
        tokens = torch.tensor([ids])
        bridge = _bridge(folder)

        def tl(names=None):
            with torch.inference_mode():
                return bridge.run_with_cache(tokens, names_filter=names)

        fns = {"sdpa": sdpa_forward(folder, bundle.tokenizer, line),
               "lab_full": lambda: capture(bundle, [line]),
               # the weighted norms are made on first read (LazyNorms): also timed read
               "lab_full_norms": lambda: capture(bundle, [line]).norms.values(),
               "tl_full": tl,
               "lab_attn": lambda: capture(bundle, [line], names=["attn", "logits"]),
               "tl_patterns": lambda: tl(_is_pattern)}
        times = median_times([fns[r] for r in ROWS], repeat=REPEAT, warmup=1)
        ours = capture(bundle, [line], names=["attn"])
        _, cache = tl(_is_pattern)
    if not torch.equal(torch.from_numpy(ours.tgt_ids), tokens):
        raise RuntimeError("the two sides did not read the same ids")
    kind = ours.kinds[0]
    layers = range(len(ours.attn[kind]))
    theirs = torch.stack([cache[f"blocks.{i}.attn.hook_pattern"] for i in layers])
    diff = float((theirs - torch.from_numpy(ours.attn[kind])).abs().max())
    ms = {r: round(t * 1e3, 1) for r, t in zip(ROWS, times)}
    return {"tokens": len(ids), "ms": ms, "pattern_max_abs_diff": diff,
            "over_sdpa": {r: round(ms[r] / ms["sdpa"], 3) for r in ROWS if r != "sdpa"}}


_PEAK = r"""
import json, sys
from pathlib import Path
import torch
torch.set_num_threads(1)
from benchmarks.bench_hf import text
from tests.unit.peaks import peak_of
side, folder, what = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
if side == "lab":
    from model import capture, load_checkpoint
    bundle = load_checkpoint(folder)
    names = None if what.startswith("full") else ["attn", "logits"]
    capture(bundle, ["the cat"])
    def run():
        trace = capture(bundle, [text()], names=names)
        if what == "full_norms":
            trace.norms.values()  # weighed on first read (LazyNorms)
        return trace
else:
    from benchmarks.bench_tl import _bridge, _is_pattern
    from transformers import AutoTokenizer
    bridge = _bridge(folder)
    tokens = torch.tensor([AutoTokenizer.from_pretrained(folder)(text())["input_ids"]])
    names = None if what.startswith("full") else _is_pattern
    def run():
        with torch.inference_mode():
            return bridge.run_with_cache(tokens, names_filter=names)
    with torch.inference_mode():
        bridge.run_with_cache(tokens[:, :2], names_filter=names)
_, peak = peak_of(run)
print(json.dumps(round(peak / 2**20, 1)))
"""


def _peak_mib(side: str, folder: Path, what: str) -> float:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1",
           "OPENBLAS_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, "-c", _PEAK, side, str(folder), what], cwd=ROOT,
                         env=env, capture_output=True, text=True, check=True, timeout=600)
    return json.loads(out.stdout.splitlines()[-1])


def _shape(shape: str) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        folder = build(shape, Path(tmp) / shape)
        figures = {"shape": SHAPES[shape], "repeat": REPEAT,
                   "threads": {str(n): _timings(folder, n) for n in THREADS}}
        figures["peak_mib"] = {f"{side}_{what}": _peak_mib(side, folder, what)
                               for what in ("full", "attn") for side in ("lab", "tl")}
        figures["peak_mib"]["lab_full_norms"] = _peak_mib("lab", folder, "full_norms")
    return figures


def table(section: dict) -> list[str]:
    """The side-by-side table, one line per shape and thread count, from bench_tl's figures."""
    lines = []
    for shape in SHAPES:
        s = section.get(shape)
        if not s:
            continue
        p = s["peak_mib"]
        lines.append(f"{s['shape']}; TransformerLens {s['transformer_lens']}, {N_TOKENS} tokens, "
                     f"median of {s['repeat']} interleaved rounds (measured {s['measured']}, "
                     f"load average {s['load_average'][0]:.1f})")
        for n, t in s["threads"].items():
            ms, r = t["ms"], t["over_sdpa"]
            lines.append(f"    {n} thread(s): sdpa forward {ms['sdpa']:.0f} ms | full: lab "
                         f"{ms['lab_full']:.0f} ms ({r['lab_full']:.2f}x{_read(t)}), "
                         "TransformerLens "
                         f"{ms['tl_full']:.0f} ms ({r['tl_full']:.2f}x) | attention + logits: "
                         f"lab {ms['lab_attn']:.0f} ms ({r['lab_attn']:.2f}x), TransformerLens "
                         f"{ms['tl_patterns']:.0f} ms ({r['tl_patterns']:.2f}x); patterns agree "
                         f"to {t['pattern_max_abs_diff']:.1e}")
        norms = (f" ({p['lab_full_norms']:.0f} with the norms read)" if "lab_full_norms" in p
                 else "")
        lines.append(f"    peak MiB above the start, full: lab {p['lab_full']:.0f}{norms}, "
                     f"TransformerLens {p['tl_full']:.0f}; attention + logits: lab "
                     f"{p['lab_attn']:.0f}, TransformerLens {p['tl_attn']:.0f}")
    return lines


def _read(t: dict) -> str:
    """The lab's full capture with its weighted norms read, where measured."""
    if "lab_full_norms" not in t["ms"]:
        return ""
    return (f"; {t['ms']['lab_full_norms']:.0f} ms, {t['over_sdpa']['lab_full_norms']:.2f}x, "
            "with the norms read")


def _peak_read(p: dict) -> str:
    return f" [{p['lab_full_norms']:.0f} norms read]" if "lab_full_norms" in p else ""


def stored_report(key: str, table, how: str) -> Report | None:
    """Without TransformerLens, a report of the last run stored under results.json[key];
    None where it is importable (then measure, starting from `machine_report()`)."""
    import importlib.util

    if importlib.util.find_spec("transformer_lens") is not None:
        return None
    return Report([f"TransformerLens is not installed here ({how} measures it); its last run:",
                   *(table(load_results().get(key, {})) or ["    none yet"])])


def machine_report() -> Report:
    """An empty report that names the cores and the load at the start."""
    return Report([f"machine: {os.cpu_count()} cores, load average "
                   f"{os.getloadavg()[0]:.1f} at the start"])


def main(parts: list[str] | None = None) -> Report:
    """Measure both sides where TransformerLens is importable; else print the stored table."""
    if stored := stored_report("bench_tl", table, "make bench-tl"):
        return stored
    import transformer_lens

    version = getattr(transformer_lens, "__version__", None) or _version()
    report = machine_report()
    for shape in parts or SHAPES:
        report.figures[shape] = {**_shape(shape), "transformer_lens": version}
    stamp = {"measured": "now", "load_average": list(os.getloadavg())}
    report.lines += table({k: {**v, **stamp} for k, v in report.figures.items()})
    return report


def _version() -> str:
    from importlib.metadata import version

    return version("transformer-lens")


def block(results: dict) -> str:
    """README block 'tl': the side-by-side table, each shape's run named (benchmarks.readme)."""
    from benchmarks.readme_results import part, provenance

    rows = ["| shape, threads | sdpa forward | full: lab / TransformerLens | attention + logits: "
            "lab / TransformerLens | peak MiB, full: lab / TL; attention: lab / TL |",
            "|---|---|---|---|---|"]
    notes = []
    measured = [shape for shape in SHAPES if shape in results.get("bench_tl", {})]
    if not measured:  # honest until a run lands: no figure without its run
        return "No run recorded yet: `make bench-tl` measures both sides.\n"
    for shape in measured:
        s = part(results, f"bench_tl.{shape}")
        p = s["peak_mib"]
        for n, t in s["threads"].items():
            ms, r = t["ms"], t["over_sdpa"]
            read = (f" [norms read: {ms['lab_full_norms']:.0f} ms, {r['lab_full_norms']:.2f}×]"
                    if "lab_full_norms" in ms else "")
            rows.append(f"| {shape}, {n} | {ms['sdpa']:.0f} ms | {ms['lab_full']:.0f} ms "
                        f"({r['lab_full']:.2f}×){read} / {ms['tl_full']:.0f} ms "
                        f"({r['tl_full']:.2f}×) "
                        f"| {ms['lab_attn']:.0f} ms ({r['lab_attn']:.2f}×) / "
                        f"{ms['tl_patterns']:.0f} ms ({r['tl_patterns']:.2f}×) | "
                        f"{p['lab_full']:.0f}{_peak_read(p)} / {p['tl_full']:.0f}; "
                        f"{p['lab_attn']:.0f} / "
                        f"{p['tl_attn']:.0f} |")
        run = provenance(results, f"bench_tl.{shape}")
        notes.append(f"{shape}: {s['shape']}, TransformerLens {s['transformer_lens']}, median of "
                     f"{s['repeat']} interleaved rounds ({run})")
    return "\n".join(rows) + "\n\n" + "; ".join(notes) + ".\n"
