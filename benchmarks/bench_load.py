"""20 browser sessions at once against one `streamlit run` server (issue 8): p50/p95 from
Ctrl+Enter to the last chart drawn, the server's health round trip meanwhile, the server's CPU
and peak memory. Uses checkpoints/ (the shipped models) or a random paper-shaped model.

Client and server share this machine: the browsers' rendering competes with the server, so
the server's own CPU seconds are reported beside the latencies.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

from benchmarks.common import ROOT, Report, paper_bundle
from benchmarks.sessions import (
    Session,
    close_all,
    collect,
    launch_browser,
    open_session,
    peak_rss_mib,
    percentile,
    start_server,
    stop_server,
    type_all,
    wait_idle,
)
from model import capture, save_checkpoint

N = 20
SUBJECTS = ["The cat", "My friend", "The big dog", "A child", "The teacher"]
PREDICATES = ["eats the fish.", "reads a book in the park.", "drinks water.", "is cold."]
TOKENS_CHARTS = 4


def sentences(n: int) -> list[str]:
    return [f"{s} {p}" for s in SUBJECTS for p in PREDICATES][:n]


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def checkpoint_env(tmp: Path) -> tuple[dict[str, str], object, str]:
    bundle, label = paper_bundle()
    if label == "checkpoints/paper":
        return {"ATTN_CHECKPOINTS_DIR": str(ROOT / "checkpoints")}, bundle, label
    save_checkpoint(bundle.model, bundle.tokenizer, tmp / "paper", card={"variant": "paper"})
    return {"ATTN_CHECKPOINTS_DIR": str(tmp)}, bundle, label


def run_sessions(n: int = N, env_extra: dict[str, str] | None = None) -> dict:
    """Open n sessions on the empty prompt, type n different sentences at once, time them."""
    launched = launch_browser()
    if launched is None:
        return {"skipped": "playwright or /usr/bin/chromium missing"}
    pw, browser = launched
    with tempfile.TemporaryDirectory() as tmp:
        env, bundle, label = checkpoint_env(Path(tmp))
        proc, base = start_server({**env, **(env_extra or {})}, Path(tmp) / "server.log")
        sessions = [Session(s, {"view": "tokens", "text": ""},
                            capture(bundle, [s], target_lang="auto").src_tokens[0])
                    for s in sentences(n)]
        try:
            for s in sessions:
                open_session(browser, base, s)
            wait_idle(sessions, 300, charts=False)
            cpu0, t0 = cpu_seconds(proc.pid), time.monotonic()
            type_all(sessions)
            health = collect(sessions, TOKENS_CHARTS, 300, base=base)
            wall, cpu = time.monotonic() - t0, cpu_seconds(proc.pid) - cpu0
            problems = [p for s in sessions for p in s.problems]
            return {"label": label, "latencies": [s.latency_s for s in sessions],
                    "health": health, "wall": wall, "server_cpu": cpu,
                    "rss": peak_rss_mib(proc.pid), "problems": problems}
        finally:
            close_all(sessions)
            stop_server(proc)
            browser.close()
            pw.stop()


def main() -> Report:
    """The 20 sessions; their figures go to results.json as bench_load.sessions_20."""
    load = os.getloadavg()
    r = run_sessions()
    if "skipped" in r:
        return Report([f"skipped: {r['skipped']}"])
    lat = r["latencies"]
    figures = {"sessions_20": {
        "model": r["label"], "sessions": N, "charts": TOKENS_CHARTS, "view": "tokens",
        "p50_s": round(percentile(lat, 50), 2), "p95_s": round(percentile(lat, 95), 2),
        "max_s": round(max(lat), 2), "latencies_s": [round(t, 2) for t in lat],
        "wall_s": round(r["wall"], 1), "server_cpu_s": round(r["server_cpu"], 1),
        "health_max_s": round(max(r["health"]), 2), "server_peak_rss_mib": round(r["rss"]),
        "problems": len(r["problems"]),
        # the browsers share the cores with the server: the load before they start
        "load_average_start": round(load[0], 1)}}
    return Report([
        f"model: {r['label']}; {N} sessions on one server, each typing a different sentence "
        "(tokens view, 4 charts)",
        f"input -> last chart drawn: p50 {percentile(lat, 50):.2f} s, "
        f"p95 {percentile(lat, 95):.2f} s, max {max(lat):.2f} s",
        f"all {N} done after {r['wall']:.1f} s; server CPU meanwhile {r['server_cpu']:.1f} s "
        f"({r['server_cpu'] / N:.2f} s per session); health round trip max "
        f"{max(r['health']):.2f} s",
        f"server peak RSS (VmHWM): {r['rss']:.0f} MiB; problems: {len(r['problems'])}",
    ], figures)


if __name__ == "__main__":
    print("\n".join(main().lines))
