"""Presenter mode is legible from the back of a room (issue 39, item 5): every text a chart
draws is at least 18 px at 1280 × 720, read from the figures the page sends (AppTest on the
shipped 'paper' checkpoint). Numbers on heatmap cells too small for 18 px are left out (the
hover keeps them); a single head fits the screen."""

from __future__ import annotations

import pytest

from tests.app.conftest import run_app
from tests.app.test_views import charts
from ui.presenter import MAX_SINGLE_HEIGHT, MIN_PX, ZOOM

TEXT = "겨울은 추워요.\n감기 조심하세요."
PAGES = [{"view": "attention"}, {"view": "masks"}, {"view": "steps"},
         {"view": "positional"}, {"view": "embeddings"}, {"view": "translation"},
         {"view": "heads"}, {"view": "heads", "detector": "previous_token"},
         {"view": "compare"}, {"view": "contrib"}, {"view": "flow"},
         {"view": "patch", "corrupt": "여름은 추워요."}, {"view": "tour", "step": "11"},
         {"view": "tour", "step": "4"}]


def font_sizes(spec: dict) -> list[tuple[str, float]]:
    """(where, size) of every text a figure draws: the layout's font, each size set under a
    *font key anywhere in the figure (ticks, annotations, colour bars, legends, titles), and
    the numbers on heatmap cells (their textfont: without a size plotly.js shrinks them to
    fit the cell, "autoSize", 4 px in the masks row, so no size counts as 0)."""
    layout = spec.get("layout", {})
    base = layout.get("font", {}).get("size", 12)
    found = [("layout.font", base)]

    def walk(node, path: str) -> None:
        if isinstance(node, list):
            for i, item in enumerate(node):
                walk(item, f"{path}[{i}]")
        elif isinstance(node, dict):
            for key, value in node.items():
                if key == "template":
                    continue
                if key.endswith("font") and isinstance(value, dict) and "size" in value:
                    found.append((f"{path}.{key}", value["size"]))
                walk(value, f"{path}.{key}")

    walk(spec, "")
    for i, trace in enumerate(spec.get("data", [])):
        if trace.get("type") == "heatmap" and trace.get("texttemplate"):
            found.append((f"data[{i}].cell numbers",
                          trace.get("textfont", {}).get("size", 0)))
        if "text" in str(trace.get("mode", "")):  # a scatter's written labels (flow's tokens):
            found.append((f"data[{i}].text labels",  # the theme's 12 px where none is set
                          trace.get("textfont", {}).get("size", 0)))
    return found


@pytest.mark.parametrize("page", PAGES, ids=lambda p: "-".join(p.values()))
def test_every_chart_text_is_at_least_18_px(page):
    at = run_app({"ckpt": "paper", "text": TEXT, "present": "1", **page}, timeout=240)
    assert not at.exception, [e.value for e in at.exception]
    specs = charts(at)
    assert specs or page["view"] in ("heads", "translation"), "the view draws charts"
    small = [(i, where, size) for i, spec in enumerate(specs)
             for where, size in font_sizes(spec) if size < MIN_PX]
    assert not small, small


def test_the_single_head_fits_the_screen():
    long = "My friend reads a book in the park and the child drinks water every day " * 2
    at = run_app({"ckpt": "paper", "text": long, "present": "1", "view": "attention"},
                 timeout=240)
    single = charts(at)[0]
    assert len(single["data"]) == 1 and single["data"][0]["type"] == "heatmap"
    assert single["layout"]["height"] <= MAX_SINGLE_HEIGHT


def test_outside_presenter_mode_figures_are_as_built():
    at = run_app({"ckpt": "paper", "text": TEXT, "view": "attention"}, timeout=240)
    assert charts(at)[0]["layout"].get("font", {}).get("size") is None


def _charts_in_columns(at) -> int:
    return sum(len(col.get("plotly_chart")) for col in at.columns)


def test_the_masks_rows_are_one_chart_wide_on_a_projector():
    """'What a mask does to one head' was three charts to a 1280-px row: titles cut off, cells
    too small for a number. In presenter mode every chart of the view is full width."""
    normal = run_app({"ckpt": "paper", "text": TEXT, "view": "masks"}, timeout=240)
    assert _charts_in_columns(normal) == len(charts(normal))  # two and three to a row
    at = run_app({"ckpt": "paper", "text": TEXT, "present": "1", "view": "masks"}, timeout=240)
    assert not at.exception, [e.value for e in at.exception]
    assert charts(at) and _charts_in_columns(at) == 0


LONG = " ".join(["My friend reads a book in the park and the child drinks water."] * 6)


@pytest.mark.parametrize("view", ["attention", "masks", "steps"])
def test_named_ticks_leave_room_for_18_px_labels(view):
    """Axes that name every k-th token (tickvals) were thinned for 12-px labels: at 18 px on
    a projector they overlapped, more so once the single head is 600 px high."""
    at = run_app({"ckpt": "paper", "text": LONG, "present": "1", "view": view}, timeout=240)
    assert not at.exception, [e.value for e in at.exception]
    checked = 0
    for spec in charts(at):
        layout = spec["layout"]
        for name, axis in layout.items():
            if name[:5] not in ("xaxis", "yaxis") or not isinstance(axis, dict):
                continue
            vals = axis.get("tickvals")
            if not isinstance(vals, list) or len(vals) < 2:
                continue
            lo, hi = axis.get("domain", [0.0, 1.0])
            # presenting, Chromium draws a chart ZOOM x its layout height (440 -> 660 px,
            # measured for ui.presenter.MAX_SINGLE_HEIGHT) at the layout's own font sizes, so
            # a y label's room is the drawn height's; the width is already the drawn one
            room = ((layout.get("height") or 450) * ZOOM - 160 if name[0] == "y"
                    else (layout.get("width") or 1200) - 150) * (hi - lo)
            assert room / len(vals) >= (22 if name[0] == "y" else 26) - 1e-9, (name, len(vals))
            checked += 1
    assert checked, "no axis names chosen tokens: the test looks at nothing"
