"""What bench_capacity's runs say in words: the lines it prints (summary) and the README block
on capacity through nginx (readme_cluster), both from a run's results.
"""

from __future__ import annotations

from collections.abc import Callable

from benchmarks.capacity_common import TARGET_S, THINK_S
from benchmarks.capacity_nginx import CLUSTER_PARTS


def summary(res: dict) -> list[str]:
    rate = res["rate_at_p95_1s"]
    how = (f"through {res['through']}, {res['replicas']} replica(s)" if "through" in res
           else "in one process (AppTest, one thread each)")
    lines = [f"{res['sessions']} sessions {how}, "
             f"{res['seconds']:g} s per rate, {res['cores']} cores; 4 in 5 requests another "
             "view of the cached input, 1 in 5 a new sentence"]
    lines += [f"{s['rate']:4.1f} reruns/s: p50 {s['p50_s']:.2f} s, p95 {s['p95_s']:.2f} s "
              f"({s['reruns']} reruns, "
              + (f"{s['cpu_s_per_rerun']:.2f} CPU s each, " if "cpu_s_per_rerun" in s else "")
              + f"{s['problems']} problems, load average {s['load_1min']})" for s in res["steps"]]
    if rate is None:
        lines.append("p95 did not cross 1 s between the rates tried" if res["steps"]
                     and res["steps"][-1]["p95_s"] <= TARGET_S else
                     "p95 was over 1 s at every rate tried")
    else:
        lines.append(f"p95 crosses {TARGET_S:g} s at {rate:.2f} reruns/s: about "
                     f"{rate * THINK_S:.0f} students at one request every {THINK_S:g} s each")
    return lines


def _verdict(res: dict) -> str:
    rate = res["rate_at_p95_1s"]
    if rate is not None:
        return (f"p95 crosses 1 s for good at {rate:.2f} reruns/s: about {rate * THINK_S:.0f} "
                f"students at one request every {THINK_S:g} s")
    if res["steps"] and all(s["p95_s"] > TARGET_S for s in res["steps"]):
        low = min(s["rate"] for s in res["steps"])
        return (f"p95 was over 1 s at every rate tried, so this run names no knee: under this "
                f"load, fewer than {low:g} reruns/s (fewer than about {low * THINK_S:.0f} "
                f"students at one request every {THINK_S:g} s) keep 95 % within a second")
    return "p95 did not cross 1 s for good between the rates tried"


def readme_cluster(results: dict, part: Callable[[dict, str], dict],
                   provenance: Callable[[dict, str], str]) -> str:
    """The README block on capacity through nginx: 1 and 2 replicas, from results.json.

    benchmarks.readme passes its part() and provenance() in (imports run readme -> benches).
    """
    runs = [(n, k, part(results, f"bench_capacity.{k}")) for k, n in CLUSTER_PARTS.items()]
    by_rate = [{s["rate"]: s for s in r["steps"]} for _, _, r in runs]
    rates = sorted(set().union(*by_rate))
    head = " | ".join(f"{n} replica{'s' if n > 1 else ''}: p50 | p95 | server CPU per rerun"
                      for n, _, _ in runs)
    rows = [f"| reruns/s | {head} |", "|---" * (1 + 3 * len(runs)) + "|"]
    for rate in rates:
        cells = []
        for steps in by_rate:
            st = steps.get(rate)
            cells += ([f"{st['p50_s']:.2f} s", f"{st['p95_s']:.2f} s",
                       f"{st['server_cpu_s_per_rerun']:.2f} s"] if st else ["–"] * 3)
        rows.append(f"| {rate:g} | " + " | ".join(cells) + " |")
    lines = []
    for n, key, r in runs:
        split = r.get("sessions_per_replica", [])
        spread = (f", the {r['sessions']} sessions split {' and '.join(map(str, split))} over "
                  "the replicas by their cookie" if n > 1 and split else "")
        src = provenance(results, f"bench_capacity.{key}")
        lines.append(f"- {n} replica{'s' if n > 1 else ''} ({src}, "
                     f"load average {r.get('load_1min_before', '?')} before the run, the load "
                     f"per rate {', '.join(str(s['load_1min']) for s in r['steps'])}"
                     f"{spread}): {_verdict(r)}.")
    return "\n".join(rows) + "\n\n" + "\n".join(lines)
