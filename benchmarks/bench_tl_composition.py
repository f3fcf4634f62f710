"""The lab's composition scores beside TransformerLens' (issue 37), on the same weights.

Run it where TransformerLens is installed (make bench-tl's venv):

    .venv-tl/bin/python -m benchmarks bench_tl_composition         # both models
    .venv-tl/bin/python -m benchmarks bench_tl_composition:lm      # one

Without TransformerLens (make bench) it prints the last stored run.

Models: "gpt2", bench_capture's random GPT-2-small shape (12 x 12 heads, 768 wide, vocabulary
50,257; built offline, never downloaded), and "lm", the shipped checkpoints/lm (Llama class, 2 x 6
query heads on 3 key/value heads, RMSNorm). TransformerLens reads each folder through
TransformerBridge.boot_transformers; the lab through load_checkpoint.

Two conventions, compared pairwise:
- "raw": the lab's composition_scores(fold_norms=False) against the bridge's
  all_composition_scores as booted (no weight processing);
- "folded": composition_scores(fold_norms=True) against the same after
  enable_compatibility_mode() (fold_ln, center_writing_weights, center_unembed,
  fold_value_biases: HookedTransformer's load-time defaults). Biases enter neither side's
  scores; for RMSNorm only γ is folded on both sides.
TransformerLens indexes (earlier layer, earlier head, later layer, later head) and puts 0 where
the earlier layer is not before the later one; the lab indexes (later, earlier) with NaN there.
The difference is taken over the pairs with a path, and the "no path" entries are checked to be
0 on TransformerLens' side. TransformerLens computes in float32, the lab in float64.

Times: wall and process CPU seconds of one call per side and convention (the lab's includes its
random baseline over 5 seeds: "lab_no_baseline" is the same call with seeds=0), median of
REPEAT rounds, one thread on both sides (torch and numpy's BLAS); CPU seconds say more than
wall on a shared machine.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from benchmarks.common import ROOT, Report

MODELS = {
    "gpt2": "random GPT-2-small shape: 12 layers x 12 heads, 768 wide, vocabulary 50,257",
    "lm": "checkpoints/lm: Llama class, 2 layers x 6 query heads on 3 key/value heads, 192 wide",
}
REPEAT = {"gpt2": 1, "lm": 3}  # the GPT-2 shape takes minutes per call on a loaded machine
SIDES = ("q", "k", "v")


def _timed(fn: Callable[[], object], repeat: int) -> tuple[object, float, float]:
    """(last result, median wall s, median CPU s) of `repeat` calls."""
    walls, cpus, out = [], [], None
    for _ in range(repeat):
        w, c = time.perf_counter(), time.process_time()
        out = fn()
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
    return out, float(np.median(walls)), float(np.median(cpus))


def boot(folder: Path):
    """TransformerLens' bridge over a Hugging Face folder, on the CPU (as bench_tl boots it)."""
    from transformer_lens.model_bridge import TransformerBridge

    return TransformerBridge.boot_transformers(str(folder), device="cpu")


def tl_scores(bridge) -> dict[str, np.ndarray]:
    """TransformerLens' Q/K/V scores, float64, transposed to the lab's (L, H, L, H) order."""
    import torch

    with torch.no_grad():
        return {s: bridge.all_composition_scores(s.upper()).scores.double().numpy()
                .transpose(2, 3, 0, 1) for s in SIDES}


def differences(ours: dict, theirs: dict[str, np.ndarray], kind: str) -> dict:
    """Max abs difference per side over pairs with a path, and TL's largest "no path" entry."""
    out = {}
    for s in SIDES:
        mine = ours[s][kind]
        path = ~np.isnan(mine)
        out[s] = {"max_abs_diff": float(np.abs(mine[path] - theirs[s][path]).max()),
                  "tl_no_path_max": float(np.abs(theirs[s][~path]).max(initial=0.0)),
                  "pairs": int(path.sum())}
    return out


def _folder(name: str, tmp: Path) -> Path:
    if name == "lm":
        return ROOT / "checkpoints" / "lm"
    from benchmarks.capture_shapes import build

    return build("gpt2", tmp / "gpt2")


def measure(name: str) -> dict:
    """Both sides on one model, raw and folded: differences and timings at one thread."""
    import torch
    from threadpoolctl import threadpool_limits

    torch.set_num_threads(1)
    with threadpool_limits(limits=1):  # numpy's BLAS (the lab) held to torch's one thread
        return _measure(name)


def _measure(name: str) -> dict:
    from model import load_checkpoint
    from model.analysis import composition_scores

    repeat = REPEAT[name]
    with tempfile.TemporaryDirectory() as tmp:
        folder = _folder(name, Path(tmp))
        bundle = load_checkpoint(folder)
        kind = bundle.kinds[0]
        bridge = boot(folder)
        figures: dict = {"model": MODELS[name], "repeat": repeat, "kind": kind}
        for conv, fold in (("raw", False), ("folded", True)):
            if fold:
                bridge.enable_compatibility_mode(disable_warnings=True)
            ours, lab_wall, lab_cpu = _timed(
                lambda f=fold: composition_scores(bundle, fold_norms=f), repeat)
            _, bare_wall, bare_cpu = _timed(
                lambda f=fold: composition_scores(bundle, fold_norms=f, seeds=0), repeat)
            theirs, tl_wall, tl_cpu = _timed(lambda: tl_scores(bridge), repeat)
            figures[conv] = {
                "diff": differences(ours, theirs, kind),
                "s": {"lab": [round(lab_wall, 3), round(lab_cpu, 3)],
                      "lab_no_baseline": [round(bare_wall, 3), round(bare_cpu, 3)],
                      "tl": [round(tl_wall, 3), round(tl_cpu, 3)]}}
    return figures


def table(section: dict) -> list[str]:
    """One line per model and convention: the largest difference, then the times."""
    lines = []
    for name in MODELS:
        s = section.get(name)
        if not s:
            continue
        lines.append(f"{s['model']}; TransformerLens {s['transformer_lens']}, median of "
                     f"{s['repeat']} (measured {s['measured']}, load average "
                     f"{s['load_average'][0]:.1f})")
        for conv in ("raw", "folded"):
            c = s[conv]
            diff = max(c["diff"][x]["max_abs_diff"] for x in SIDES)
            t = c["s"]
            lines.append(f"    {conv}: max |lab - TL| {diff:.1e} over Q/K/V; wall / CPU s: lab "
                         f"{t['lab'][0]:.2f} / {t['lab'][1]:.2f} (without its baseline "
                         f"{t['lab_no_baseline'][0]:.2f} / {t['lab_no_baseline'][1]:.2f}), "
                         f"TransformerLens {t['tl'][0]:.2f} / {t['tl'][1]:.2f}")
    return lines


def main(parts: list[str] | None = None) -> Report:
    """Measure both sides where TransformerLens is importable; else print the stored table."""
    from benchmarks.bench_tl import machine_report, stored_report

    if stored := stored_report("bench_tl_composition", table, ".venv-tl"):
        return stored
    from importlib.metadata import version

    report = machine_report()
    for name in parts or MODELS:
        report.figures[name] = {**measure(name), "transformer_lens": version("transformer-lens")}
    stamp = {"measured": "now", "load_average": list(os.getloadavg())}
    report.lines += table({k: {**v, **stamp} for k, v in report.figures.items()})
    return report


def block(results: dict) -> str:
    """README block 'tl_composition': the differences and times, each run named."""
    from benchmarks.readme_results import part, provenance

    measured = [n for n in MODELS if n in results.get("bench_tl_composition", {})]
    if not measured:
        return ("No run recorded yet: `.venv-tl/bin/python -m benchmarks bench_tl_composition` "
                "measures both sides.\n")
    rows = ["| model, weights | max abs difference Q / K / V | lab s, wall / CPU (without "
            "baseline) | TransformerLens s, wall / CPU |", "|---|---|---|---|"]
    notes = []
    for name in measured:
        s = part(results, f"bench_tl_composition.{name}")
        for conv in ("raw", "folded"):
            c = s[conv]
            d = " / ".join(f"{c['diff'][x]['max_abs_diff']:.1e}" for x in SIDES)
            t = c["s"]
            rows.append(f"| {name}, {conv} | {d} | {t['lab'][0]:.2f} / {t['lab'][1]:.2f} "
                        f"({t['lab_no_baseline'][0]:.2f} / {t['lab_no_baseline'][1]:.2f}) | "
                        f"{t['tl'][0]:.2f} / {t['tl'][1]:.2f} |")
        run = provenance(results, f"bench_tl_composition.{name}")
        notes.append(f"{name}: {s['model']}, TransformerLens {s['transformer_lens']}, median of "
                     f"{s['repeat']} ({run})")
    return "\n".join(rows) + "\n\n" + "; ".join(notes) + ".\n"
