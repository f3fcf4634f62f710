"""A Llama-8B-shaped model (32 layers × 32 query heads, 8 key/value heads) at 256 tokens in
real Chromium (issue 30): the attention view finishes drawing its three charts, each one
plotly trace (the grid was 1,024 subplots and froze the page for a minute), and afterwards
the page's main thread answers a trivial script within 0.3 s. Times are not asserted beyond
generous limits: the machine is shared (benchmarks/bench_browser.py measures them)."""

from __future__ import annotations

import pytest

from benchmarks.bench_browser import build_folder, measure_page, text_of

ROUND_TRIP_S = 0.3


@pytest.fixture(scope="module")
def server(streamlit_server_factory, tmp_path_factory):
    root = tmp_path_factory.mktemp("big_grid")
    build_folder(root, "llama-32")
    return streamlit_server_factory({"ATTN_MODELS": str(root), "HF_HUB_OFFLINE": "1"})


def test_32_by_32_heads_draw_and_the_page_stays_responsive(page, server):
    query = {"ckpt": "llama-32", "view": "attention", "text": text_of(255), "layer": "31",
             "head": "31"}
    m = measure_page(page, server, query, 3, timeout_s=300)
    # head; the layer's heads and the grid, each + its click targets
    assert m["traces"] == [1, 2, 2], m
    assert m["round_trip_s"] <= ROUND_TRIP_S, m
    assert m["draw_after_server_s"] < 60, m  # the old grid took 62 s; 5 s is the target
    grid = page.locator('[data-testid="stPlotlyChart"]').nth(2)
    ticks = grid.locator("g.ytick text").all_text_contents()
    assert "layer 0" in ticks and "layer 31" in ticks
    assert "head 31 · kv 7" in grid.locator("g.xtick text").all_text_contents()
