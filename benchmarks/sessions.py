"""Many browser sessions against one `streamlit run` server, timed from inside each page.

Used by benchmarks/bench_load.py, benchmarks/bench_app.py and tests/browser/test_load.py.
Each page records, in its own clock, when Ctrl+Enter was pressed in the sentence box and when
a chart last changed; a session is done when the script is idle, the tokens view shows the
typed sentence's pieces and no chart has changed for QUIET_MS. Latency = last chart change -
key press. Requests that leave localhost are aborted and reported.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode, urlsplit

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run"]
LOCAL = {"localhost", "127.0.0.1", "::1", "[::1]"}
BOX = '[data-testid="stSidebar"] textarea'
QUIET_MS = 300

WATCH_JS = """() => {
  window.__lt = {t0: null, last: null};
  document.addEventListener('keydown', e => {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) window.__lt.t0 = performance.now();
  }, true);
  new MutationObserver(muts => {
    for (const m of muts) {
      const el = m.target.nodeType === 1 ? m.target : m.target.parentElement;
      if (el && el.closest('[data-testid="stPlotlyChart"]')) {
        window.__lt.last = performance.now();
        return;
      }
    }
  }).observe(document.body, {subtree: true, childList: true, attributes: true,
                             characterData: true});
}"""

STATE_JS = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  const state = app ? app.getAttribute('data-test-script-state') : 'initial';
  const busy = ['initial', 'running', 'rerunRequested'].includes(state) ||
               document.querySelector('[data-testid="stStatusWidget"]') !== null;
  const charts = Array.from(document.querySelectorAll('[data-testid="stPlotlyChart"]'));
  const chips = Array.from(document.querySelectorAll(
      '[data-testid="stMain"] [data-testid="stHtml"]')).map(h =>
    Array.from(h.querySelectorAll('span')).filter(s => s.querySelector('sub'))
      .map(s => s.firstChild ? s.firstChild.textContent : ''));
  const lt = window.__lt || {};
  return {busy, charts: charts.length, drawn: charts.every(c => c.querySelector('svg.main-svg')),
          chips, t0: lt.t0 ?? null,
          boxes: document.querySelectorAll('[data-testid="stSidebar"] textarea').length,
          last: lt.last ?? null, now: performance.now(),
          exceptions: document.querySelectorAll('[data-testid="stException"]').length,
          errors: Array.from(document.querySelectorAll('[data-testid="stAlertContentError"]'))
            .map(e => e.innerText.slice(0, 200))};
}"""


# --- server -------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def healthy(base: str, timeout: float = 2) -> bool:
    try:
        with urllib.request.urlopen(f"{base}/_stcore/health", timeout=timeout) as resp:
            return resp.read().strip() == b"ok"
    except OSError:
        return False


def start_server(env: dict[str, str], log: Path, wait_s: float = 90
                 ) -> tuple[subprocess.Popen, str]:
    """`streamlit run app.py` on a free localhost port; returns once /_stcore/health is ok."""
    port = free_port()
    cmd = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
           "--server.port", str(port), "--server.address", "localhost",
           "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"]
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT,
                                env={**os.environ, "PYTHONUNBUFFERED": "1", **env})
    base = f"http://localhost:{port}"
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline and proc.poll() is None:
        if healthy(base):
            return proc, base
        time.sleep(0.25)
    stop_server(proc)
    raise RuntimeError(f"streamlit did not come up; log: {log}")


def stop_server(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def peak_rss_mib(pid: int) -> float:
    """VmHWM (peak resident set size) of a process, in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM line")


# --- sessions -----------------------------------------------------------------------------


@dataclass
class Session:
    """One browser context (one user) and what it saw."""

    sentence: str
    query: dict[str, str]
    expect_src: list[str]  # encoder pieces the tokens view must show, specials included
    page: object = None
    context: object = None
    latency_s: float | None = None
    src: list[str] = field(default_factory=list)
    tgt: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def open_session(browser, base: str, s: Session, viewport=(800, 600)) -> None:
    """A fresh context (no shared cookies or storage) and page, guarded like the test harness."""
    s.context = browser.new_context(viewport={"width": viewport[0], "height": viewport[1]})

    def guard(route):
        parts = urlsplit(route.request.url)
        if parts.scheme in ("data", "blob", "about") or parts.hostname in LOCAL:
            route.continue_()
        else:
            s.problems.append(f"outside request: {route.request.url}")
            route.abort()

    s.context.route("**/*", guard)
    s.page = s.context.new_page()
    s.page.on("console", lambda m: m.type == "error" and s.problems.append(f"console: {m.text}"))
    s.page.on("pageerror", lambda e: s.problems.append(f"page error: {e}"))
    s.page.on("dialog", lambda d: (s.problems.append(f"dialog: {d.message}"), d.dismiss()))
    s.page.goto(f"{base}/?{urlencode(s.query)}", wait_until="commit")


def wait_idle(sessions: list[Session], timeout_s: float, charts: bool = True) -> None:
    """Every page has its app root and the script is idle (and, if `charts`, they are drawn)."""
    deadline = time.monotonic() + timeout_s
    pending = list(sessions)
    while pending:
        if time.monotonic() > deadline:
            raise TimeoutError(f"{len(pending)} page(s) still loading after {timeout_s:.0f} s")
        for s in list(pending):
            st = s.page.evaluate(STATE_JS)
            if st["errors"] or st["exceptions"]:
                raise AssertionError(f"error on the first page load: {st['errors']}")
            box = st["boxes"] > 0  # the sidebar is up: the first run has reached the widgets
            if not st["busy"] and box and (st["charts"] and st["drawn"] or not charts):
                pending.remove(s)
        time.sleep(0.2)


TYPE_JS = """(text) => {
  const box = document.querySelector('[data-testid="stSidebar"] textarea');
  const set = Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, 'value').set;
  box.focus();
  set.call(box, text);
  box.dispatchEvent(new Event('input', {bubbles: true}));
  box.dispatchEvent(new KeyboardEvent('keydown', {key: 'Enter', code: 'Enter', ctrlKey: true,
                                                  bubbles: true, cancelable: true}));
}"""


def type_all(sessions: list[Session]) -> None:
    """Each page: install the timer, put its sentence in the box and press Ctrl+Enter, all in one
    round trip per page (no actionability waits), so the sessions start close together."""
    for s in sessions:
        s.page.evaluate(WATCH_JS)
    for s in sessions:
        s.page.evaluate(TYPE_JS, s.sentence)


def collect(sessions: list[Session], n_charts: int, timeout_s: float, base: str | None = None
            ) -> list[float]:
    """Wait until every session shows its own result; fill in latency and pieces.

    Returns the /_stcore/health round-trip times measured meanwhile (server responsiveness).
    """
    deadline = time.monotonic() + timeout_s
    pending = list(sessions)
    health: list[float] = []
    next_health = 0.0
    while pending:
        now = time.monotonic()
        if now > deadline:
            raise TimeoutError(f"{len(pending)} session(s) unfinished after {timeout_s:.0f} s: "
                               + ", ".join(repr(s.sentence) for s in pending[:3]))
        if base and now >= next_health:
            t0 = time.perf_counter()
            health.append(time.perf_counter() - t0 if healthy(base, timeout=10) else float("inf"))
            next_health = now + 1.0
        for s in list(pending):
            st = s.page.evaluate(STATE_JS)
            if st["exceptions"] or st["errors"]:
                s.problems.append(f"exception or error box on the page: {st['errors']}")
            src = st["chips"][0] if st["chips"] else []
            done = (not st["busy"] and st["charts"] == n_charts and st["drawn"]
                    and src == s.expect_src and st["t0"] is not None and st["last"] is not None
                    and st["last"] > st["t0"] and st["now"] - st["last"] >= QUIET_MS)
            if done:
                s.latency_s = (st["last"] - st["t0"]) / 1000
                s.src = src
                s.tgt = st["chips"][1] if len(st["chips"]) > 1 else []
                pending.remove(s)
        time.sleep(0.1)
    return health


def close_all(sessions: list[Session]) -> None:
    for s in sessions:
        if s.context is not None:
            s.context.close()
            s.context = None


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0..100), linear interpolation."""
    return float(np.percentile(np.asarray(values, dtype=float), q))


def launch_browser():
    """(playwright, browser) with Debian's Chromium, or None when either is missing."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    if not Path(CHROMIUM).exists():
        return None
    pw = sync_playwright().start()
    return pw, pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
