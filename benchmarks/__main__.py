"""Run benchmarks/bench_*.py modules' main() in name order, print what they report, and keep
their figures in benchmarks/results.json.

    python -m benchmarks                          # every bench_*.py but the soak
    python -m benchmarks bench_soak               # the soak (make soak)
    python -m benchmarks bench_bertviz            # one module
    python -m benchmarks bench_app:attention_512  # some parts of a module (main(parts=[...]))

A main() returns lines to print, or a common.Report whose figures are merged into
results.json under the module's name, part by part (other keys are left as they are).
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

from benchmarks.common import Report, save_results

# Run only when named: the soak is 2,000 inputs (make soak), too long for every make bench.
ON_DEMAND = {"bench_soak"}


def _selection(args: list[str]) -> list[tuple[str, list[str] | None]]:
    """(module name, parts or None for all) for each argument, or every bench_*.py except
    the ON_DEMAND ones."""
    names = sorted(p.stem for p in Path(__file__).parent.glob("bench_*.py"))
    if not args:
        return [(name, None) for name in names if name not in ON_DEMAND]
    picked = []
    for arg in args:
        name, _, parts = arg.partition(":")
        if name not in names:
            raise SystemExit(f"no benchmark {name!r}; there are {', '.join(names)}")
        picked.append((name, [p for p in parts.split(",") if p] or None))
    return picked


def main(args: list[str] | None = None) -> None:
    picked = _selection(sys.argv[1:] if args is None else args)
    if not picked:
        print("no benchmarks yet")
        return
    for name, parts in picked:
        print(f"== {name}" + (f" ({', '.join(parts)})" if parts else ""), flush=True)
        module = importlib.import_module(f"benchmarks.{name}")
        out = module.main(parts=parts) if parts else module.main()
        lines = out.lines if isinstance(out, Report) else out
        for line in lines or ():
            print(line, flush=True)
        if isinstance(out, Report) and out.figures:
            save_results(name, out.figures)
            print(f"   figures saved to benchmarks/results.json under {name!r}", flush=True)


if __name__ == "__main__":
    main()
