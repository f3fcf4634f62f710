"""Every benchmark module has committed evidence: benchmarks/results.json holds, for each
benchmarks/bench_*.py, at least one part saved with its date, core count and load average
(what benchmarks.common.save_results writes), so no figure a reader is shown lacks its run."""

from __future__ import annotations

import re

from benchmarks.common import load_results
from tests.conftest import ROOT

STAMP = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC")


def evidence(part: object) -> list[str]:
    """What a saved part lacks of its provenance (empty when it has date, cores and load)."""
    if not isinstance(part, dict):
        return ["not a part (a dict of figures)"]
    missing = []
    if not STAMP.fullmatch(str(part.get("measured", ""))):
        missing.append("date")
    cores = part.get("cpu_cores")
    if not isinstance(cores, int) or isinstance(cores, bool) or cores < 1:
        missing.append("cores")
    load = part.get("load_average")
    if not (isinstance(load, list) and len(load) == 3
            and all(isinstance(x, int | float) and x >= 0 for x in load)):
        missing.append("load average")
    return missing


def unproven(results: dict, modules: list[str]) -> dict[str, str]:
    """{module: why} for each bench module without one fully stamped part in results."""
    out = {}
    for name in modules:
        parts = results.get(name)
        if not isinstance(parts, dict) or not parts:
            out[name] = "no entry in benchmarks/results.json"
        elif not any(not evidence(p) for p in parts.values()):
            out[name] = "; ".join(f"{k} lacks {', '.join(evidence(p))}" for k, p in parts.items())
    return out


def bench_modules() -> list[str]:
    return sorted(p.stem for p in (ROOT / "benchmarks").glob("bench_*.py"))


def test_every_bench_module_has_a_dated_result_with_cores_and_load():
    modules = bench_modules()
    assert len(modules) >= 20, modules
    missing = unproven(load_results(), modules)
    assert not missing, "benchmarks without evidence (run `python -m benchmarks NAME`):\n" + \
        "\n".join(f"{k}: {v}" for k, v in missing.items())


def test_the_check_names_what_a_result_lacks():
    """A module with no entry, one whose only part lacks its load average (as bench_bertviz's
    did, saved before loads were recorded) and one fully stamped are told apart."""
    stamped = {"measured": "2026-11-28 23:00 UTC", "cpu_cores": 2, "load_average": [1.0, 2, 3]}
    results = {"bench_a": {"p": {"x": 1, **stamped}},
               "bench_b": {"p": {"measured": "2026-11-23 01:37 UTC", "cpu_cores": 2}}}
    assert unproven(results, ["bench_a", "bench_b", "bench_c"]) == {
        "bench_b": "p lacks load average", "bench_c": "no entry in benchmarks/results.json"}
    assert evidence({**stamped, "cpu_cores": True}) == ["cores"]
    assert evidence({**stamped, "measured": "yesterday"}) == ["date"]
