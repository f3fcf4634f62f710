"""The attention view's long mode at 16,384 pieces in real Chromium (issue 38).

A tiny rotary model (1 layer, 1 head, 8 wide, word-level pieces) keeps the capture to seconds
on the shared machine. The long text is pasted into the view's own box; the page says it is in
long mode, draws its five charts without an error box, and a 512 × 512 zoom redraws the exact
cells. Times are only checked against generous limits (the machine is shared): the issue's
targets (first draw ≤ 5 s after the server finishes, a 512² drill-down ≤ 1 s) are printed.
"""

from __future__ import annotations

import re
import time

import pytest

from benchmarks.big_models import WORDS, build
from tests.browser.conftest import wait_for_app

N = 16_384
CHARTS = '[data-testid="stPlotlyChart"]'
ERROR_BOX = '[data-testid="stAlertContentError"], [data-testid="stException"]'


@pytest.fixture(scope="module")
def server(streamlit_server_factory, tmp_path_factory):
    root = tmp_path_factory.mktemp("long_browser")
    build(root / "tinylong", "llama", layers=1, heads=1, kv=1, hidden=8, positions=N + 8, ffn=8)
    return streamlit_server_factory({"ATTN_MODELS": str(root), "HF_HUB_OFFLINE": "1",
                                     "OMP_NUM_THREADS": "1"})


def test_16384_pieces_draw_in_long_mode_and_zoom_exactly(page, server):
    page.goto(f"{server}/?ckpt=tinylong&view=attention&text=the+cat+eats+fish")
    wait_for_app(page, timeout=240)  # the first run loads the model on a busy machine
    page.get_by_text("Long text: paste or upload").click()
    box = page.get_by_label("Long text", exact=True)
    box.fill(" ".join(WORDS[(i * 7) % len(WORDS)] for i in range(N - 1)))  # + <s>: N pieces
    start = time.monotonic()
    box.press("Control+Enter")
    page.get_by_text(f"Long mode: {N:,} pieces").wait_for(timeout=120_000)
    page.locator(CHARTS).nth(4).wait_for(timeout=60_000)
    wait_for_app(page, timeout=120)
    drawn = time.monotonic() - start
    assert page.locator(ERROR_BOX).count() == 0
    assert page.locator(CHARTS).count() == 5
    title = page.locator(CHARTS).nth(1).inner_text()
    assert f"queries {N - 512}–{N - 1}" in title, title
    first = page.get_by_label("Zoom: first query")  # a 512 × 512 block at the start
    first.fill("0")
    start = time.monotonic()
    first.press("Enter")
    page.get_by_text(f"queries 0–511, keys {N - 512}–{N - 1}").wait_for(timeout=60_000)
    zoom = time.monotonic() - start
    print(f"long mode at {N:,} pieces: drawn {drawn:.1f} s after the text was sent (capture "
          f"included); a zoom redrawn in {zoom:.2f} s")
    # measured 50.6 s and 13.0 s at load average ~18 before the zoom became a fragment; after:
    # 22.2 s (the server's last frame at 19.3 s) and 1.6-3.9 s at load 7-8, 52 s / 11.8 s at 15-20
    assert drawn < 240 and zoom < 90

    # drag a box on the pooled map, from 30 % to 40 % of its plot area along both axes: the
    # exact block opens at the box's corner, 1,024 cells a side (the box spans ~1,640 cells)
    area = page.locator(CHARTS).nth(0).locator(".nsewdrag").first.bounding_box()
    x0, y0 = area["x"] + 0.3 * area["width"], area["y"] + 0.3 * area["height"]
    x1, y1 = area["x"] + 0.4 * area["width"], area["y"] + 0.4 * area["height"]
    page.mouse.move(x0, y0)
    page.mouse.down()
    page.mouse.move(x1, y1, steps=8)
    page.mouse.up()
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        title = page.locator(CHARTS).nth(1).inner_text()
        found = re.search(r"queries (\d+)–(\d+), keys (\d+)–(\d+)", title)
        if found and found.group(1) != "0":
            break
        page.wait_for_timeout(250)
    assert found and found.group(1) != "0", title
    q0, q1, k0, k1 = (int(g) for g in found.groups())
    assert 0.25 * N < q0 < 0.35 * N and 0.25 * N < k0 < 0.35 * N, title
    assert q1 - q0 == k1 - k0 == 1023, title
    assert int(page.get_by_label("Zoom: first query").input_value()) == q0
    assert page.locator(ERROR_BOX).count() == 0

    # a .txt file wins over the box; the uploader announces the 8 MB it takes, not 200
    assert "8MB per file" in page.locator('[data-testid="stFileUploaderDropzone"]').inner_text()
    page.locator('input[type="file"]').set_input_files(files=[{
        "name": "long.txt", "mimeType": "text/plain",
        "buffer": " ".join(WORDS[i % len(WORDS)] for i in range(700)).encode()}])
    page.get_by_text("Long mode: 701 pieces").wait_for(timeout=120_000)
    wait_for_app(page, timeout=120)
    assert page.locator(ERROR_BOX).count() == 0
