"""bench_app's parts in Chromium against a `streamlit run` server: (c) Ctrl+Enter after a new
sentence -> last chart drawn, median of 5 (browser_median); (d) the server's peak RSS given the
largest input the app accepts (peak_memory). Each is skipped when playwright or Chromium is
missing.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

from benchmarks.sessions import (
    Session,
    close_all,
    collect,
    launch_browser,
    open_session,
    peak_rss_mib,
    start_server,
    stop_server,
    type_all,
    wait_idle,
)
from model import capture
from model.backends.lab.decode import source_batch
from model.inputs import MAX_CHARS, MAX_LINES

TYPED = ["The cat drinks water.", "My friend is cold.", "겨울은 추워요.", "A child reads a book.",
         "The big dog eats the fish."]


def browser_median(env, bundle) -> list[str]:
    """(c): one tab, five new sentences in turn, Ctrl+Enter -> last chart drawn."""
    launched = launch_browser()
    if launched is None:
        return ["(c) skipped: playwright or /usr/bin/chromium missing"]
    pw, browser = launched
    with tempfile.TemporaryDirectory() as tmp:
        proc, base = start_server(env, Path(tmp) / "server.log")
        s = Session("", {"view": "tokens"}, [])
        try:
            open_session(browser, base, s, viewport=(1280, 900))
            wait_idle([s], 300)
            times = []
            for text in TYPED:
                s.sentence = text
                s.expect_src = capture(bundle, [text], target_lang="auto").src_tokens[0]
                type_all([s])
                collect([s], 4, 120)
                times.append(s.latency_s)
        finally:
            close_all([s])
            stop_server(proc)
            browser.close()
            pw.stop()
    return [f"(c) browser, tokens view: Ctrl+Enter -> last chart drawn, median of 5 "
            f"{statistics.median(times):.2f} s (each: {', '.join(f'{t:.2f}' for t in times)})"]


def largest_input(bundle) -> str:
    """16 lines of one repeated letter: every line is cut to max_len pieces, and a trained
    model never ends such a translation, so decoding runs to its step budget too."""
    per_line = MAX_CHARS // MAX_LINES - 2
    return "\n".join(["a" * per_line] * MAX_LINES)


def peak_memory(env, bundle) -> list[str]:
    """(d): a fresh server: default page, then the largest input on tokens and attention."""
    launched = launch_browser()
    if launched is None:
        return ["(d) skipped: playwright or /usr/bin/chromium missing"]
    pw, browser = launched
    text = largest_input(bundle)
    src, _, cuts = source_batch(bundle, text.split("\n"), ["ko"] * MAX_LINES)
    lines = [f"(d) largest accepted input: {MAX_LINES} lines x {src.shape[1]} source pieces "
             f"({sum(cuts):,} pieces cut first), {len(text):,} characters"]
    with tempfile.TemporaryDirectory() as tmp:
        proc, base = start_server(env, Path(tmp) / "server.log")
        pages = []
        try:
            first = Session("", {"view": "tokens"}, [])
            pages.append(first)
            open_session(browser, base, first)
            wait_idle([first], 300)
            lines.append(f"    server after the default page: {peak_rss_mib(proc.pid):.0f} MiB")
            for view in ("tokens", "attention"):
                s = Session("", {"view": view, "text": text}, [])
                pages.append(s)
                t0 = time.monotonic()
                open_session(browser, base, s)
                wait_idle([s], 600)
                lines.append(f"    {view} view of it: page ready after "
                             f"{time.monotonic() - t0:.1f} s; server peak RSS "
                             f"{peak_rss_mib(proc.pid):.0f} MiB (target <= 2048)")
        finally:
            close_all(pages)
            stop_server(proc)
            browser.close()
            pw.stop()
    return lines
