"""Real model sizes in Chromium (issue 30): the attention view of a random GPT-2-shaped model
(12 × 12 heads, 512 tokens) and a Llama-8B-shaped one (32 layers × 32 query heads sharing 8
key/value heads, 256 tokens), each through a real `streamlit run` and Debian's Chromium.

Per model: the server's own time for the page (AppTest run of the same link, warm), the
browser's time from the page's load to the last chart drawn, that minus the server's time,
the main thread's round trip after drawing (a trivial evaluate, median of 5), and the chart
payload (the figures' JSON as the page receives it).

The random model folders come from benchmarks/big_models.py (`build_folder`, `text_of`, also
reached here by tests/app/test_big_models.py and tests/browser/test_big_grid.py).
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from pathlib import Path
from urllib.parse import urlencode, urlsplit

from benchmarks.big_models import build_folder, text_of
from benchmarks.common import ROOT, Report, save_results

# --- measuring one page in Chromium ------------------------------------------------------

CASES = {  # part name -> (model, words typed, view)
    "gpt2_12x12_512": ("gpt2-12", 512, "attention"),
    "llama_32x32_256": ("llama-32", 255, "attention"),  # + <s> = 256 pieces
}
SCREENS = {  # docs/ file -> (model, words); the attention view at three sizes
    "attention-12x12.png": ("gpt2-12", 40),
    "attention-32x32.png": ("llama-32", 40),
    "attention-80x64.png": ("llama-80", 24),
}
QUIET_MS = 500  # no chart change for this long: drawing has finished
CHART = '[data-testid="stPlotlyChart"]'

# Installed before the page's own scripts: when the script last went idle, when a chart last
# changed (both in the page's clock, performance.now(), whose 0 is the navigation's start)
TIMER_JS = """(() => {
  window.__bb = {idle: null, last: null};
  const watch = () => {
    const app = document.querySelector('[data-testid="stApp"]');
    if (!app) { setTimeout(watch, 20); return; }
    const note = () => {
      const s = app.getAttribute('data-test-script-state');
      if (s === 'notRunning') window.__bb.idle = performance.now();
    };
    new MutationObserver(note).observe(app, {attributes: true,
                                             attributeFilter: ['data-test-script-state']});
    new MutationObserver(muts => {
      for (const m of muts) {
        const el = m.target.nodeType === 1 ? m.target : m.target.parentElement;
        if (el && el.closest('[data-testid="stPlotlyChart"]')) {
          window.__bb.last = performance.now(); return;
        }
      }
    }).observe(document.body, {subtree: true, childList: true, attributes: true});
  };
  watch();
})();"""

STATE_JS = """([sel, n]) => {
  const app = document.querySelector('[data-testid="stApp"]');
  const state = app ? app.getAttribute('data-test-script-state') : 'initial';
  // idle before the observer was watching (it never is for a model this size): count from now
  if (state === 'notRunning' && window.__bb.idle === null) window.__bb.idle = performance.now();
  const charts = Array.from(document.querySelectorAll(sel));
  const plots = charts.map(c => c.querySelector('.js-plotly-plot'));
  return {state, n: charts.length,
          drawn: charts.length === n && charts.every(c => c.querySelector('svg.main-svg')),
          traces: plots.map(p => p && p.data ? p.data.length : null),
          errors: document.querySelectorAll('[data-testid="stException"]').length,
          idle: window.__bb.idle, last: window.__bb.last, now: performance.now()};
}"""


def round_trip_s(page, repeat: int = 5) -> float:
    """Median wall time of a trivial script evaluated in the page (its main thread is free)."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        page.evaluate("() => 1")
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def measure_page(page, base: str, query: dict[str, str], n_charts: int,
                 timeout_s: float = 300) -> dict:
    """Open the link in a fresh page and wait until n_charts are drawn and quiet.

    Returns seconds from navigation to the script's last idle (the server done, as the page
    saw it) and to the last chart change, draw_s = their difference, the round trip after
    drawing, and the trace count of each chart."""
    page.add_init_script(TIMER_JS)
    page.goto(f"{base}/?{urlencode(query)}", wait_until="commit")
    deadline = time.monotonic() + timeout_s
    while True:
        st = page.evaluate(STATE_JS, [CHART, n_charts])
        if st["errors"]:
            raise AssertionError("an exception box on the page")
        done = (st["state"] == "notRunning" and st["drawn"] and st["last"] is not None
                and st["idle"] is not None and st["now"] - st["last"] >= QUIET_MS
                and st["now"] - st["idle"] >= QUIET_MS)
        if done:
            break
        if time.monotonic() > deadline:
            raise TimeoutError(f"charts not drawn after {timeout_s:.0f} s: {st}")
        time.sleep(0.1)
    last, idle = st["last"] / 1000, st["idle"] / 1000
    return {"to_server_done_s": idle, "to_last_chart_s": last,
            "draw_after_server_s": max(0.0, last - idle), "round_trip_s": round_trip_s(page),
            "traces": st["traces"]}


def server_run(query: dict[str, str]) -> tuple[float, list[int]]:
    """The server's own time for the link (AppTest, warm: the second of two runs) and the
    bytes of each chart spec it sends."""
    from streamlit import config
    from streamlit.testing.v1 import AppTest

    from benchmarks.common import share_script_cache

    share_script_cache()
    config.set_option("client.showErrorDetails", "full")
    for _ in range(2):
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600)
        for key, value in query.items():
            at.query_params[key] = value
        t0 = time.perf_counter()
        at.run(timeout=600)
        took = time.perf_counter() - t0
    if at.exception:
        raise RuntimeError(f"the page raised: {at.exception[0].value}")
    return took, [len(el.proto.spec) for el in at.get("plotly_chart")]


def _query(model: str, words: int, view: str = "attention") -> dict[str, str]:
    return {"ckpt": model, "view": view, "text": text_of(words), "layer": "1", "head": "3"}


def screenshots(browser, base: str, out: Path) -> list[str]:
    """docs/attention-*.png: the attention view's layers × heads grid at 12 × 12, 32 × 32 and
    80 × 64 heads, and the layer's heads at 12 (wrapped into rows of 8)."""
    lines = []
    for name, (model, words) in SCREENS.items():
        # tall enough for the tallest chart: Streamlit scrolls its main block, not the page,
        # and what lies outside the viewport comes out blank in an element's screenshot
        context = browser.new_context(viewport={"width": 1280, "height": 1400})
        local_only(context)
        page = context.new_page()
        measure_page(page, base, _query(model, words), 3)
        # Streamlit's fixed header would cover the top of a chart scrolled to the viewport's top
        page.add_style_tag(content='[data-testid="stHeader"] {display: none !important;}')
        charts = page.locator(CHART)
        # the page scrolls inside Streamlit's main block, so full_page shows only the
        # viewport: the charts themselves are photographed (the grid; the layer's heads too)
        charts.nth(2).screenshot(path=str(out / name))
        lines.append(f"wrote docs/{name}")
        if model == "gpt2-12":
            layer = name.replace(".png", "-layer.png")
            charts.nth(1).screenshot(path=str(out / layer))
            lines.append(f"wrote docs/{layer}")
        context.close()
    return lines


def local_only(context) -> None:
    """Every request that leaves localhost is aborted."""
    def guard(route):
        host = urlsplit(route.request.url).hostname
        scheme = urlsplit(route.request.url).scheme
        if scheme in ("data", "blob", "about") or host in ("localhost", "127.0.0.1", "::1"):
            route.continue_()
        else:
            route.abort()

    context.route("**/*", guard)


def main(parts: list[str] | None = None) -> Report:
    """Both cases (and, with parts=['screens'], the docs/ screenshots). Without Chromium the
    server's side (its time, the chart payload) is still measured and saved."""
    from benchmarks.sessions import launch_browser, start_server, stop_server

    parts = parts or list(CASES)
    launched = launch_browser()
    lines = [] if launched else ["Chromium not available (playwright or /usr/bin/chromium "
                                 "missing): browser figures skipped, server side measured"]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        needed = {CASES[p][0] for p in parts if p in CASES}
        if "screens" in parts:
            needed |= {m for m, _w in SCREENS.values()}
        for model in sorted(needed):
            build_folder(root, model)
        env = {"ATTN_MODELS": str(root), "HF_HUB_OFFLINE": "1"}
        os.environ.update(env)  # the AppTest runs read the same folders
        server = start_server(env, root / "server.log") if launched else None
        try:
            for part in parts:
                if part == "screens":
                    if server:
                        lines += screenshots(launched[1], server[1], ROOT / "docs")
                    continue
                lines.append(_case(part, launched[1] if launched else None,
                                   server[1] if server else None))
        finally:
            if server:
                stop_server(server[0])
            if launched:
                launched[1].close()
                launched[0].stop()
    lines.append("targets: 32x32/256 draws within 5 s of the server, round trip <= 0.3 s, "
                 "payload <= 10 MB; 12x12/512 within 2 s. Machine shared with other work.")
    return Report(lines, {})  # figures already saved part by part


def _case(part: str, browser, base: str | None) -> str:
    """One case: the server's time and payload, then (with a browser) the page's times."""
    model, words, view = CASES[part]
    query = _query(model, words, view)
    server_s, spec = server_run(query)
    fig = {"server_s": round(server_s, 3), "payload_mb": round(sum(spec) / 1e6, 3),
           "charts": len(spec)}
    line = f"{part}: server {server_s:.2f} s (AppTest, warm); charts {sum(spec) / 1e6:.2f} MB"
    if browser is not None:
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        local_only(context)
        page = context.new_page()
        measure_page(page, base, query, 3)  # cold: model load, first capture
        page.close()
        page = context.new_page()
        m = measure_page(page, base, query, 3)  # warm, as the server's time is
        context.close()
        fig.update({"to_last_chart_s": round(m["to_last_chart_s"], 3),
                    "draw_after_server_s": round(m["draw_after_server_s"], 3),
                    "load_minus_server_s": round(m["to_last_chart_s"] - server_s, 3),
                    "round_trip_s": round(m["round_trip_s"], 3), "traces": m["traces"]})
        line += (f"; page load -> last chart {m['to_last_chart_s']:.2f} s, of which after the "
                 f"server finished {m['draw_after_server_s']:.2f} s (load minus server time "
                 f"{m['to_last_chart_s'] - server_s:.2f} s); round trip after drawing "
                 f"{m['round_trip_s'] * 1000:.0f} ms; traces per chart {m['traces']}")
    else:
        fig["browser"] = "not measured: no Chromium"
    save_results("bench_browser", {part: fig})
    return line
