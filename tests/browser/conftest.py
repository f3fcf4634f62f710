"""Real-browser harness: a Streamlit server subprocess and Debian Chromium through Playwright.

Fixtures
    streamlit_server_factory(env=None) -> base URL   (one server per distinct env, session-wide)
    streamlit_server                     -> base URL   (the app with the default environment)
    browser                              -> playwright Browser (session)
    page_log                             -> PageLog: outside requests, console errors, dialogs,
                                            exception boxes; assert_clean() / problems()
    page                                 -> fresh Page in a new context; teardown asserts page_log
Helpers
    open_app(page, base_url, **query)    -> goto with the query string, then wait_for_app
    wait_for_app(page)                   -> app root present and the script no longer running
"""

import os
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode, urlsplit

import pytest

from benchmarks.sessions import stop_server
from tests.conftest import ROOT, skip_or_fail

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
LOCAL_HOSTS = {"localhost", "127.0.0.1", "::1", "[::1]"}
ALLOWED_SCHEMES = {"http", "https", "ws", "wss", "data", "blob", "about"}
HEALTH_TIMEOUT_S = 90
SETTLE_S = 0.5


def pytest_collection_modifyitems(items):
    """Everything under tests/browser/ carries the `browser` marker."""
    here = Path(__file__).parent
    for item in items:
        if here in Path(item.path).parents:
            item.add_marker(pytest.mark.browser)


# --- server -------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _log_tail(path: Path, lines: int = 40) -> str:
    text = path.read_text(errors="replace") if path.exists() else ""
    return "\n".join(text.splitlines()[-lines:]) or "(empty log)"


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as resp:
            return resp.read().strip() == b"ok"
    except OSError:
        return False


def _start_server(env: dict[str, str], log_path: Path) -> tuple[subprocess.Popen, str]:
    port = _free_port()
    cmd = [
        sys.executable, "-m", "streamlit", "run", "app.py",
        "--server.headless", "true",
        "--server.port", str(port),
        "--server.address", "localhost",
        "--browser.gatherUsageStats", "false",
        "--server.fileWatcherType", "none",
    ]  # fmt: skip
    full_env = {**os.environ, "PYTHONUNBUFFERED": "1", **env}
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            cmd, cwd=ROOT, env=full_env, stdout=log, stderr=subprocess.STDOUT
        )
    base = f"http://localhost:{port}"
    deadline = time.monotonic() + HEALTH_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            break
        if _healthy(f"{base}/_stcore/health"):
            return proc, base
        time.sleep(0.25)
    stop_server(proc)
    why = (
        f"it exited with code {proc.returncode}"
        if proc.returncode is not None and proc.returncode != -15
        else f"/_stcore/health did not answer 'ok' within {HEALTH_TIMEOUT_S} s"
    )
    pytest.fail(
        f"streamlit server on port {port} did not come up: {why}. "
        f"Log tail ({log_path}):\n{_log_tail(log_path)}",
        pytrace=False,
    )


@pytest.fixture(scope="session")
def streamlit_server_factory(tmp_path_factory):
    """Call with extra environment (e.g. {"ATTN_MODELS": ...}); returns the server's base URL.

    Servers are shared per distinct environment for the whole session and stopped at the end.
    """
    servers: dict[tuple, tuple[subprocess.Popen, str]] = {}

    def start(env: dict[str, str] | None = None) -> str:
        key = tuple(sorted((env or {}).items()))
        if key not in servers:
            log_path = tmp_path_factory.mktemp("streamlit") / "server.log"
            servers[key] = _start_server(dict(env or {}), log_path)
        return servers[key][1]

    yield start
    for proc, _ in servers.values():
        stop_server(proc)


@pytest.fixture(scope="session")
def streamlit_server(streamlit_server_factory) -> str:
    return streamlit_server_factory()


# --- browser ------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def browser():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        skip_or_fail("playwright not installed: pip install -r requirements-dev.txt")
    if not Path(CHROMIUM).exists():
        skip_or_fail("chromium not installed: apt-get install chromium")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@dataclass
class PageLog:
    """What a page did that a browser test must not see; tests may inspect or clear it."""

    blocked: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)
    app_exceptions: list[str] = field(default_factory=list)  # st.exception boxes left on screen

    def problems(self) -> list[str]:
        return (
            [f"blocked outside request: {u}" for u in self.blocked]
            + [f"console error: {m}" for m in self.console_errors]
            + [f"dialog: {d}" for d in self.dialogs]
            + [f"app exception (traceback in the server log): {e}" for e in self.app_exceptions]
        )

    def assert_clean(self) -> None:
        problems = self.problems()
        assert not problems, "browser page was not clean:\n  " + "\n  ".join(problems)


def _is_local(url: str) -> bool:
    parts = urlsplit(url)
    if parts.scheme not in ALLOWED_SCHEMES:
        return False
    if parts.scheme in {"data", "blob", "about"}:
        return True
    return parts.hostname in LOCAL_HOSTS


@pytest.fixture
def page_log() -> PageLog:
    return PageLog()


@pytest.fixture
def page(browser, page_log):
    """A new page in a fresh context; outside requests are aborted and recorded."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    # make test runs two workers on two cores: a click or a wait that takes 10 s alone can take
    # well over 30 s (Playwright's default) while the other worker draws a big model. Speed is
    # judged in make bench, not here.
    context.set_default_timeout(90_000)

    def guard(route):
        if _is_local(route.request.url):
            route.continue_()
        else:
            page_log.blocked.append(route.request.url)
            route.abort()

    def guard_ws(ws):
        if _is_local(ws.url):
            ws.connect_to_server()
        else:
            page_log.blocked.append(ws.url)
            ws.close()

    context.route("**/*", guard)
    context.route_web_socket(lambda url: True, guard_ws)
    pg = context.new_page()
    pg.on("console", lambda m: m.type == "error" and page_log.console_errors.append(m.text))
    pg.on("pageerror", lambda e: page_log.console_errors.append(f"uncaught: {e}"))

    def on_dialog(dialog):
        page_log.dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    pg.on("dialog", on_dialog)
    yield pg
    if not pg.is_closed():
        page_log.app_exceptions += pg.locator('[data-testid="stException"]').all_inner_texts()
    context.close()
    page_log.assert_clean()


# --- helpers ------------------------------------------------------------------------------

_BUSY_JS = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app) return true;
  const state = app.getAttribute('data-test-script-state');
  if (state === 'initial' || state === 'running' || state === 'rerunRequested') return true;
  return document.querySelector('[data-testid="stStatusWidget"]') !== null;
}"""


def wait_for_app(page, timeout: float = 60) -> None:
    """Wait until the app root is there and the script has been idle for SETTLE_S seconds."""
    page.wait_for_selector('[data-testid="stApp"]', timeout=timeout * 1000)
    deadline = time.monotonic() + timeout
    idle_since = None
    while time.monotonic() < deadline:
        if page.evaluate(_BUSY_JS):
            idle_since = None
        elif idle_since is None:
            idle_since = time.monotonic()
        elif time.monotonic() - idle_since >= SETTLE_S:
            return
        page.wait_for_timeout(100)
    raise TimeoutError(f"app still running after {timeout} s: {page.url}")


def open_app(page, base_url: str, **query) -> None:
    """Open the app with URL query parameters (e.g. view="attention", layer=0) and settle."""
    url = f"{base_url}/" + (f"?{urlencode(query, doseq=True)}" if query else "")
    page.goto(url)
    wait_for_app(page)


def settled(read, ok, timeout: float = 90, what: str = "page"):
    """Call read() until ok(value) holds, then return the value.

    Why: Streamlit replaces elements one by one during a rerun, so a single read can catch a
    mix of old and new blocks in any DOM order (two CI runs failed on exactly that)."""
    deadline = time.monotonic() + timeout
    value = read()
    while not ok(value):
        if time.monotonic() > deadline:
            last = repr(value)[:1500]
            raise AssertionError(f"{what} never settled within {timeout} s; last read: {last}")
        time.sleep(0.5)
        value = read()
    return value
