"""How close the memory estimates the admission gate relies on come to measured peaks (#29).

The rows are the ones the estimate-vs-peak tests measure, run here in the same fresh child
process (one torch thread, freed memory given back as the server does) so their figures are
kept in results.json instead of only printed by pytest:

capture: model.dispatch.estimate_capture against capture()'s peak RSS (tests/unit/test_budget.py:
    the paper checkpoint, 4-layer GPT-2 and Llama shapes with their real vocabularies, Marian).
runs: the logit lens, the validation average, knocking heads out and the importance scan against
    their estimates (tests/unit/test_budget_runs.py).

The tests hold every row to ±30 %; this records where each one lands. Peaks are memory, not
time, so the machine's load moves them little, but it is recorded with them.

    python -m benchmarks bench_estimates            # both parts
    python -m benchmarks bench_estimates:runs       # one
"""

from __future__ import annotations

from benchmarks.common import Report

MB = 2**20


def _capture_rows() -> list[dict]:
    from tests.unit.peaks import run_child
    from tests.unit.test_budget import CHILD

    return [{"label": r["label"], "batch": r["batch"], "src": r["src"], "tgt": r["tgt"],
             "estimate_mb": round(r["estimate"] / MB, 1), "peak_mb": round(r["peak"] / MB, 1)}
            for r in run_child(CHILD, timeout_s=900)]


def _runs_rows() -> list[dict]:
    from tests.unit.peaks import run_child
    from tests.unit.test_budget_runs import CHILD

    return [{"label": f"{r['run']} {r['size']}", "estimate_mb": round(r["estimate"] / MB, 1),
             "peak_mb": round(r["peak"] / MB, 1)}
            for r in run_child(CHILD, timeout_s=900) if "estimate" in r]


PARTS = {"capture": _capture_rows, "runs": _runs_rows}


def spread(rows: list[dict]) -> tuple[float, float]:
    """(lowest, highest) estimate ÷ peak − 1 over the rows, e.g. (-0.12, 0.15)."""
    errors = [r["estimate_mb"] / r["peak_mb"] - 1 for r in rows]
    return min(errors), max(errors)


def main(parts: list[str] | None = None) -> Report:
    unknown = sorted(set(parts or ()) - set(PARTS))
    if unknown:
        raise SystemExit(f"bench_estimates has no part {unknown}; it has {', '.join(PARTS)}")
    lines, figures = [], {}
    for name in parts or PARTS:
        rows = PARTS[name]()
        lo, hi = spread(rows)
        figures[name] = {"rows": rows, "low": round(lo, 3), "high": round(hi, 3)}
        lines += [f"{name} {r['label']}: estimate {r['estimate_mb']:.0f} MB, peak "
                  f"{r['peak_mb']:.0f} MB ({r['estimate_mb'] / r['peak_mb']:.2f})" for r in rows]
        lines.append(f"{name}: estimates land within {lo:+.0%} … {hi:+.0%} of the peaks")
    return Report(lines, figures)


if __name__ == "__main__":
    print("\n".join(main().lines))
