"""The importance scan's and the detectors' maps are clickable (issue 39 item 9), as the grid
and the statistics maps are: each cell carries viz.click's marker (the scan's name their
kind) and the chart asks Streamlit for selection events. The click itself, in Chromium:
tests/browser/test_grid_click.py."""

from __future__ import annotations

import json

import pytest

from tests.app.conftest import run_app
from tests.app.test_views import ok
from tests.conftest import ROOT, needs
from viz.click import TARGET

pytestmark = needs((ROOT / "checkpoints" / "paper" / "config.json").is_file(),
                                reason="needs checkpoints/paper")
TEXT = "The cat eats fish."


def _clickable(at) -> list[dict]:
    """Specs of the charts that ask for selections and carry click targets."""
    out = []
    for c in at.get("plotly_chart"):
        spec = json.loads(c.proto.spec)
        if c.proto.selection_mode and any(t.get("name") == TARGET for t in spec["data"]):
            out.append(spec)
    return out


def test_the_detector_maps_open_a_head_on_click():
    at = run_app({"view": "heads", "text": TEXT, "detector": "previous_token"}, timeout=120)
    ok(at)
    maps = _clickable(at)
    # cross-attention has no previous token: its map is a sentence, not a chart
    assert sorted(m["layout"]["meta"]["kind"] for m in maps) == ["dec_self", "enc_self"]
    marks = [t for t in maps[0]["data"] if t.get("name") == TARGET][0]
    assert len(marks["customdata"]) == 3 * 4  # a marker on each of 3 layers × 4 heads


def test_the_scan_map_names_each_kind_on_click():
    at = run_app({"view": "heads", "text": TEXT}, timeout=120)
    at.radio(key="_w_heads_part").set_value("scan").run(timeout=120)
    at.button(key="scan_go").click().run(timeout=300)
    ok(at)
    (scan,) = _clickable(at)
    kinds = [{row[3] for row in t["customdata"]} for t in scan["data"]
             if t.get("name") == TARGET]
    assert kinds == [{"enc_self"}, {"dec_self"}, {"cross"}]


@pytest.mark.parametrize("page", [{"view": "patch", "corrupt": "The dog eats fish."},
                                  {"view": "contrib"}], ids=["patch", "contrib"])
def test_the_patching_and_contribution_maps_name_each_kind(page):
    """Patching's heads map opens a head in the attention view; the contributions map picks
    it for the panel below (view=contrib)."""
    at = run_app({"text": TEXT, **page}, timeout=300)
    ok(at)
    (heads,) = _clickable(at)
    kinds = [{row[3] for row in t["customdata"]} for t in heads["data"]
             if t.get("name") == TARGET]
    assert len(kinds) >= 2 and all(len(k) == 1 for k in kinds)
    assert [k for (k,) in kinds] == [t["name"] for t in heads["data"] if t["type"] == "heatmap"]


def test_the_layer_chart_opens_one_of_its_heads():
    """view=attention: the layer's heads (second chart) are clickable as the grid is."""
    at = run_app({"view": "attention", "text": TEXT, "kind": "cross", "layer": "1"},
                 timeout=120)
    ok(at)
    layer, grid = _clickable(at)
    marks = [t for t in layer["data"] if t.get("name") == TARGET][0]
    assert [tuple(d) for d in marks["customdata"]] == [(1, h) for h in range(4)]
    assert len([t for t in grid["data"] if t.get("name") == TARGET][0]["customdata"]) == 12
