"""A replica killed mid-class: 3 replicas behind nginx (deploy/cluster.py), 9 sessions, 3 on
each replica by their sticky cookie, each typing its own sentence into the attention view. One
replica's process gets SIGKILL. Then the 6 sessions on the other replicas rerun with a new
sentence and must draw it with no error, the 3 on the killed replica reload and must get their
own sentence (kept in the URL) drawn by another replica, and nginx's access log must show no 5xx
for any session (those whose replica lived, as the issue asks, and the moved ones too, since the
failed attempt is retried on the next replica). Everything is counted and printed.

Two kinds of session, the same scenario:
- Chromium through Playwright (Debian's /usr/bin/chromium), every request that leaves
  localhost aborted, console errors, dialogs and exception boxes collected;
- the page's own HTTP requests and websocket spoken directly (benchmarks.bench_capacity.
  WireSession): the same server work without 9 browsers, and it runs where Chromium is absent.
Finally the supervisor is stopped with SIGTERM (what Ctrl-C and `make cluster-stop` send) and no
replica or nginx process may outlive it.
"""

from __future__ import annotations

import html
import os
import signal
import time
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest

from benchmarks.bench_capacity import WireSession
from benchmarks.sessions import TYPE_JS  # the same typing a browser session does
from tests.cluster.conftest import SENTENCES, Cluster, access_log, sticky_keys
from tests.conftest import skip_or_fail

REPLICAS, PER_REPLICA = 3, 3
VICTIM = "replica-1"
DRAW_TIMEOUT_S = 120
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run"]
LOCAL = {"localhost", "127.0.0.1", "::1", "[::1]"}


# --- two kinds of session --------------------------------------------------------------------


class Wire:
    """A session over the wire (no browser)."""

    def __init__(self, base: str, key: str) -> None:
        self.s = WireSession(base, {"lab_replica": key})
        self.problems: list[str] = []
        self.moved_problems: list[str] = []  # unused: a wire session has no console

    def _check(self, res, sentence: str) -> list[str]:
        self.problems += [f"exception: {e}" for e in res.exceptions]
        self.problems += [f"error box: {e}" for e in res.errors]
        assert parse_qs(res.query).get("text") == [sentence], res.query
        return res.charts[0] if res.charts else []

    def type(self, sentence: str) -> list[str]:
        """Type the sentence into the box (a rerun); the first chart's x labels."""
        if self.s.ws is None:
            self.s.open(urlencode({"view": "attention"}))
        return self._check(self.s.set("text", sentence, timeout=DRAW_TIMEOUT_S), sentence)

    def reload(self, sentence: str) -> list[str]:
        """A new page load of the same URL, with the same cookies."""
        return self._check(self.s.open(self.s.query, timeout=DRAW_TIMEOUT_S), sentence)

    def close(self) -> None:
        self.s.close()


ATTN_STATE_JS = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  const state = app ? app.getAttribute('data-test-script-state') : 'initial';
  const busy = ['initial', 'running', 'rerunRequested'].includes(state) ||
               document.querySelector('[data-testid="stStatusWidget"]') !== null;
  const plots = Array.from(document.querySelectorAll('[data-testid="stPlotlyChart"]'));
  const gd = plots.length ? plots[0].querySelector('.js-plotly-plot') : null;
  return {busy, charts: plots.length,
          drawn: plots.length > 0 && plots.every(c => c.querySelector('svg.main-svg')),
          x: gd && gd.data && gd.data[0] && gd.data[0].x ? Array.from(gd.data[0].x).map(String)
                                                          : [],
          boxes: document.querySelectorAll('[data-testid="stSidebar"] textarea').length,
          exceptions: Array.from(document.querySelectorAll('[data-testid="stException"]'))
            .map(e => e.innerText.slice(0, 200)),
          errors: Array.from(document.querySelectorAll('[data-testid="stAlertContentError"]'))
            .map(e => e.innerText.slice(0, 200))};
}"""


class Browser:
    """A Chromium context (its own cookies) holding one page; outside requests aborted."""

    def __init__(self, browser, base: str, key: str, expected) -> None:
        self.base, self.expected = base, expected
        self.problems: list[str] = []
        self.moved_problems: list[str] = []  # while its replica was dead, before the reload
        self.sink = self.problems
        self.context = browser.new_context(viewport={"width": 1280, "height": 900})
        self.context.add_cookies([{"name": "lab_replica", "value": key, "url": base}])

        def guard(route):
            parts = urlsplit(route.request.url)
            if parts.scheme in ("data", "blob", "about") or parts.hostname in LOCAL:
                route.continue_()
            else:
                self.problems.append(f"outside request: {route.request.url}")
                route.abort()

        def guard_ws(ws):
            if urlsplit(ws.url).hostname in LOCAL:
                ws.connect_to_server()
            else:
                self.problems.append(f"outside websocket: {ws.url}")
                ws.close()

        self.context.route("**/*", guard)
        self.context.route_web_socket(lambda url: True, guard_ws)
        self.page = self.context.new_page()
        self.page.on("console", lambda m: m.type == "error" and self.sink.append(
            f"console: {m.text}"))
        self.page.on("pageerror", lambda e: self.sink.append(f"page error: {e}"))
        self.page.on("dialog", lambda d: (self.sink.append(f"dialog: {d.message}"),
                                          d.dismiss()))
        self.page.goto(f"{base}/?{urlencode({'view': 'attention'})}")
        self._wait(lambda st: st["boxes"] > 0, "the page's first run")

    def _wait(self, done, what: str) -> dict:
        deadline = time.monotonic() + DRAW_TIMEOUT_S
        quiet_since = None
        while time.monotonic() < deadline:
            st = self.page.evaluate(ATTN_STATE_JS)
            ok = not st["busy"] and done(st)
            quiet_since = (quiet_since or time.monotonic()) if ok else None
            if quiet_since and time.monotonic() - quiet_since >= 0.5:
                self.sink += [f"exception: {e}" for e in st["exceptions"]]
                self.sink += [f"error box: {e}" for e in st["errors"]]
                return st
            self.page.wait_for_timeout(200)
        raise TimeoutError(f"{what} not done after {DRAW_TIMEOUT_S} s: {self.page.url}")

    def _drawn(self, sentence: str) -> list[str]:
        want = self.expected(sentence)
        st = self._wait(lambda st: st["drawn"] and [html.unescape(x) for x in st["x"]] == want,
                        f"the attention view of {sentence!r}")
        assert parse_qs(urlsplit(self.page.url).query).get("text") == [sentence], self.page.url
        return [html.unescape(x) for x in st["x"]]

    def type(self, sentence: str) -> list[str]:
        self.page.evaluate(TYPE_JS, sentence)
        return self._drawn(sentence)

    def reload(self, sentence: str) -> list[str]:
        self.sink = self.problems
        self.page.reload()
        return self._drawn(sentence)

    def close(self) -> None:
        self.context.close()


# --- the scenario ----------------------------------------------------------------------------


def fault_scenario(cluster: Cluster, make_session, expected, label: str) -> None:
    keys = sticky_keys(cluster, PER_REPLICA)
    victim_port = cluster.replica_ports[int(VICTIM.split("-")[1])]
    victim_addr = f"127.0.0.1:{victim_port}"
    sessions = {}  # key -> (replica name, session, sentence)
    sentences = iter(SENTENCES)
    counts = {"sessions": 0, "drawn before": 0, "reran on live replicas": 0,
              "reloaded and moved": 0}
    try:
        for name, ks in keys.items():
            for key in ks:
                sessions[key] = (name, make_session(key), next(sentences))
        for key, (_name, sess, sentence) in sessions.items():
            assert sess.type(sentence) == expected(sentence), (label, key, "wrong pieces drawn")
            counts["sessions"] += 1
            counts["drawn before"] += 1
        before = access_log(cluster.log)
        for ln in before:  # sticky: every request of a session reached its own replica
            if ln.key in sessions:
                assert cluster.replica_of(ln.upstreams[-1]) == sessions[ln.key][0], ln

        os.kill(cluster.pids[VICTIM], signal.SIGKILL)
        cluster.killed.append(VICTIM)
        t_kill = time.monotonic()
        for name, sess, _ in sessions.values():
            if name == VICTIM:
                sess.sink = sess.moved_problems
        n_before = len(before)

        for key, (name, sess, _) in list(sessions.items()):
            if name != VICTIM:
                new = next(sentences)
                assert sess.type(new) == expected(new), (label, key, "rerun not drawn")
                sessions[key] = (name, sess, new)
                counts["reran on live replicas"] += 1
        for key, (name, sess, sentence) in sessions.items():
            if name == VICTIM:
                assert sess.reload(sentence) == expected(sentence), (label, key, "reload")
                counts["reloaded and moved"] += 1
        recovery_s = time.monotonic() - t_kill
    finally:
        for _, sess, _ in sessions.values():
            sess.close()
    time.sleep(1.0)  # nginx logs a websocket when it closes

    after = access_log(cluster.log)[n_before:]
    mine = [ln for ln in access_log(cluster.log) if ln.key in sessions]
    live = [ln for ln in mine if sessions[ln.key][0] != VICTIM]
    on_victim = [ln for ln in after if ln.key in sessions and sessions[ln.key][0] == VICTIM]
    # their websockets to the victim, opened before the kill, are logged when the kill cut them
    cut = [ln for ln in on_victim if ln.status == 101 and ln.upstreams == [victim_addr]]
    moved = [ln for ln in on_victim if ln not in cut]
    retried = [ln for ln in after if len(ln.upstreams) > 1]
    refused = [ln for ln in (cluster.run_dir / "nginx-error.log").read_text().splitlines()
               if "connect() failed" in ln and f"//{victim_addr}/" in ln]
    counts.update({
        "requests of live sessions": len(live),
        "5xx to live sessions": sum(ln.status >= 500 for ln in live),
        "websockets cut by the kill": len(cut),
        "requests of moved sessions after the kill": len(moved),
        "5xx to moved sessions": sum(ln.status >= 500 for ln in moved),
        "requests nginx retried on another replica (logged)": len(retried),
        "connections to the dead replica nginx saw refused": len(refused),
        "5xx in the whole log": sum(ln.status >= 500 for ln in access_log(cluster.log)),
        "problems on live pages": sum(len(s.problems) for n, s, _ in sessions.values()
                                      if n != VICTIM),
        "problems on moved pages after reload": sum(len(s.problems) for n, s, _ in
                                                    sessions.values() if n == VICTIM),
        "console lines on moved pages while their replica was dead": sum(
            len(s.moved_problems) for n, s, _ in sessions.values() if n == VICTIM),
    })
    print(f"\n[{label}] killed {VICTIM} (port {victim_port}); recovered in {recovery_s:.1f} s")
    for k, v in counts.items():
        print(f"[{label}] {k}: {v}")
    for n, s, _ in sessions.values():
        for p in s.moved_problems:
            print(f"[{label}] while dead ({n}): {p[:160]}")

    assert counts["sessions"] == REPLICAS * PER_REPLICA
    assert counts["reran on live replicas"] == (REPLICAS - 1) * PER_REPLICA
    assert counts["reloaded and moved"] == PER_REPLICA
    assert counts["5xx to live sessions"] == 0, [ln for ln in live if ln.status >= 500]
    assert counts["5xx to moved sessions"] == 0, [ln for ln in moved if ln.status >= 500]
    for n, s, _ in sessions.values():
        assert not s.problems, (label, n, s.problems)
    # the moved sessions' requests after the kill were answered by a live replica
    assert moved and all(ln.upstreams[-1] != victim_addr for ln in moved), moved
    assert len(cut) == PER_REPLICA, cut  # the 3 sessions were connected to the victim
    # nginx itself found the replica dead (a request, or the supervisor's /healthz probe,
    # was refused there and passed on): its passive health check at work
    assert refused, "nginx never tried the dead replica: the failover was not exercised"
    # a moved session stays on its new replica: one answering replica per key after the kill
    for key in {ln.key for ln in moved}:
        assert len({ln.upstreams[-1] for ln in moved if ln.key == key}) == 1, key


@pytest.fixture
def cluster(nginx_present, cluster_checkpoints, tmp_path):
    c = Cluster.start(tmp_path / "run", REPLICAS,
                      {"ATTN_CHECKPOINTS_DIR": str(cluster_checkpoints)})
    yield c
    c.stop()  # asserts that no replica or nginx outlived the supervisor
    out = c.output()
    for name in c.killed:  # the supervisor noticed and said so
        assert f"{name} (pid {c.pids[name]}) exited with code -9" in out, out[-2000:]


def test_replica_killed_wire(cluster, expected_pieces):
    fault_scenario(cluster, lambda key: Wire(cluster.base, key), expected_pieces, "wire")


@pytest.fixture
def chromium():
    """Debian's Chromium through Playwright; checked before a cluster is started for it."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        skip_or_fail("playwright not installed: pip install -r requirements-dev.txt")
    if not os.path.exists(CHROMIUM):
        skip_or_fail("chromium not installed: apt-get install chromium")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


def test_replica_killed_chromium(chromium, cluster, expected_pieces):
    fault_scenario(cluster, lambda key: Browser(chromium, cluster.base, key, expected_pieces),
                   expected_pieces, "chromium")
