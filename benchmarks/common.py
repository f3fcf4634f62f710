"""Shared set-up for benchmarks: the shipped paper checkpoint, or a random model shaped like it;
interleaved median timings; and the results file every `make bench` run writes."""

from __future__ import annotations

import json
import os
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results.json"


@dataclass
class Report:
    """What a benchmark's main() may return instead of bare lines: the lines to print and the
    figures to keep in results.json, as {part name: JSON-able dict}."""

    lines: list[str]
    figures: dict[str, dict] = field(default_factory=dict)


def run_parts(bench: str, table: dict, parts: list[str] | None = None,
              report: Report | None = None) -> Report:
    """Run the named parts of a benchmark (all by default), each a function returning (lines,
    figures), into one Report; a part name the table lacks stops with the names it has."""
    unknown = sorted(set(parts or ()) - set(table))
    if unknown:
        raise SystemExit(f"{bench} has no part {unknown}; it has {', '.join(table)}")
    report = report if report is not None else Report([])
    for name in parts or table:
        lines, figures = table[name]()
        report.lines += lines
        report.figures[name] = figures
    return report


def save_results(name: str, figures: dict[str, dict], path: Path = RESULTS) -> None:
    """Merge one benchmark's figures into the results file: results[name][part] is replaced for
    each part measured now; other benchmarks' keys and this one's other parts stay as they were.

    Each part gets when it was measured, on how many cores and the load average (1, 5 and 15
    minutes) when it was saved, right after measuring: on a shared machine a reader needs all
    three to weigh a figure. The README names them beside each figure (benchmarks.readme).
    """
    data = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    section = data.setdefault(name, {})
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    load = [round(x, 2) for x in os.getloadavg()]
    for part, values in figures.items():
        section[part] = {**values, "measured": stamp, "cpu_cores": os.cpu_count(),
                         "load_average": load}
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n",
                   encoding="utf-8")
    os.replace(tmp, path)  # never a half-written file for the README test to read


def load_results(path: Path = RESULTS) -> dict:
    """The committed results file ({} when there is none yet)."""
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def paper_bundle():
    """checkpoints/paper if present, else a random model with the paper variant's shape."""
    from model import Bundle, ModelConfig, Tokenizer, Transformer, load_checkpoint

    folder = ROOT / "checkpoints" / "paper"
    if (folder / "config.json").is_file():
        return load_checkpoint(folder), "checkpoints/paper"
    lines = ["Winter is cold.", "겨울은 추워요.", "The big dog eats the fish.", "감기 조심하세요."]
    tok = Tokenizer.train(lines * 200, vocab_size=400)
    cfg = ModelConfig(vocab_size=tok.vocab_size)
    return Bundle(Transformer(cfg).eval(), tok, cfg, {}, "random"), "random paper-shaped model"


def median_times(fns: list[Callable[[], object]], repeat: int = 7, warmup: int = 2
                 ) -> list[float]:
    """Median wall time of each fn, measured in interleaved rounds so load hits all alike.

    Every fn is warmed up first (imports, caches, first-call costs stay out of the timing).
    """
    if repeat < 1:
        raise ValueError(f"repeat must be at least 1, got {repeat}")
    for fn in fns:
        for _ in range(warmup):
            fn()
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            t0 = time.perf_counter()
            fn()
            times[i].append(time.perf_counter() - t0)
    return [statistics.median(t) for t in times]


def share_script_cache() -> None:
    """Make AppTest compile app.py once per process, as a Streamlit server does.

    AppTest gives every run a new ScriptCache, so each run re-read, re-parsed (magic) and
    re-compiled the ~1,000-line app.py: about 65 ms that a server spends only on its first
    run. Timings and tests then measure the script itself.
    """
    import streamlit.testing.v1.local_script_runner as runner
    from streamlit.runtime.scriptrunner.script_cache import ScriptCache

    if not getattr(runner, "_attention_lab_shared", False):
        shared = ScriptCache()
        runner.ScriptCache = lambda: shared  # looked up by name on every run
        runner._attention_lab_shared = True
