"""Reading benchmarks/results.json for the README's blocks: a part of it by key, the run it came
from, and the one renderer of a table row whose benchmark module writes its own rows."""

from __future__ import annotations

import importlib
from collections.abc import Callable


class MissingResult(KeyError):
    """A block's renderer needs a results key that results.json does not hold."""


def part(results: dict, key: str) -> dict:
    """results['bench_x']['part'] for key 'bench_x.part', or MissingResult naming the key."""
    node = results
    for step in key.split("."):
        if not isinstance(node, dict) or step not in node:
            raise MissingResult(f"benchmarks/results.json has no {key!r}; run "
                                f"`python -m benchmarks {key.split('.')[0]}` first")
        node = node[step]
    return node


def provenance(results: dict, key: str) -> str:
    """'`key`, <date>, <n> cores, load average <l>': which run a figure comes from."""
    p = part(results, key)
    load = p.get("load_average")
    if isinstance(load, list | tuple) and load:
        how = f"load average {load[0]:.1f} (1 min), {load[1]:.1f} (5 min)" if len(load) > 1 \
            else f"load average {load[0]:.1f}"
    elif "load_average_start" in p:
        how = f"load average {p['load_average_start']:.1f} at the start"
    else:
        how = "load average not recorded"
    when = p.get("measured", "date not recorded")
    return f"`{key}`, {when}, {p.get('cpu_cores', '?')} cores, {how}"


def flag(value: float, bound: float) -> str:
    """A measured figure against its upper target in the soak blocks' words: "within it" or
    "OVER it" (a missed target stands out in the README, it is not left to the reader)."""
    return "within it" if value <= bound else "OVER it"


def with_source(row: str, results: dict, key: str) -> str:
    """A table row '| what | measured | target |' with the run named in the measured cell."""
    head, _, target = row.rstrip().removesuffix("|").rstrip().rpartition(" | ")
    return f"{head} ({provenance(results, key)}) | {target} |"


def sourced_rows(key: str, doc: str) -> Callable[[dict], list[str]]:
    """The row function of a benchmark whose module (key's section, benchmarks/<section>.py)
    writes its rows with readme_rows(section results): each row names the run it came from."""
    section = key.split(".")[0]

    def rows(results: dict) -> list[str]:
        part(results, key)
        readme_rows = importlib.import_module(f"benchmarks.{section}").readme_rows
        return [with_source(r, results, key) for r in readme_rows(results[section])]

    rows.__doc__ = doc
    return rows
