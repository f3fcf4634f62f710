"""The README's view table names every view by its URL (patch and the detectors included), and
its install line installs what .ci/run installs for Chromium (a colour-emoji font among them)."""

from __future__ import annotations

import ast
import re

from model.analysis.detectors import DETECTORS
from tests.conftest import ROOT
from ui.views import VIEWS


def _table() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index("| view | what you see |")
    return text[start:text.index("\n\n", start)].splitlines()[2:]


def test_every_view_is_in_the_table_with_its_url():
    urls = [row.split("`")[1] for row in _table()]
    names = [re.match(r"\?view=([a-z_]+)", u).group(1) for u in urls]
    assert not set(VIEWS) - set(names), f"views missing from the README: {set(VIEWS) - set(names)}"
    assert not set(names) - set(VIEWS), f"README rows for no view: {set(names) - set(VIEWS)}"
    assert any(u.startswith("?view=patch&") and "corrupt=" in u for u in urls)


def test_every_detector_is_in_the_table_with_its_url():
    rows = [r for r in _table() if r.startswith("| `?view=heads&detector=")]
    assert len(rows) == 1, "one row for the detectors, its URL naming detector="
    for name in DETECTORS:
        assert f"`{name}`" in rows[0] or f"detector={name}`" in rows[0], name


def _installed_by_ci() -> set[str]:
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    return set(re.findall(r"missing\+=\(([\w.-]+)\)", script))


def test_ci_installs_a_colour_emoji_font_and_the_readme_says_so():
    """Debian's Chromium has no colour-emoji font: emoji draw as empty boxes without one."""
    ci = _installed_by_ci()
    assert "fonts-noto-color-emoji" in ci
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    line = re.search(r"`apt-get install (chromium[^`]*)`", readme)
    assert line, "README has no apt-get install line for the browser tests"
    assert (ci - {"nginx"}) <= set(line.group(1).split()), (ci, line.group(1))


def test_alert_icons_need_no_emoji_font():
    """icon= of every st.* call in ui/ and app.py is a Material Symbol, drawn by Streamlit's
    own font, never an emoji that needs one."""
    found = []
    for path in [ROOT / "app.py", *sorted((ROOT / "ui").rglob("*.py"))]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                for kw in node.keywords:
                    if kw.arg == "icon" and isinstance(kw.value, ast.Constant):
                        found.append((path.name, kw.value.value))
    assert found, "no icon= found: the test no longer looks at anything"
    bad = [(f, v) for f, v in found if not str(v).startswith(":material/")]
    assert not bad, bad


def test_the_patching_paragraph_is_the_shipped_checkpoints():
    """docs/api.md's figures for `paper`'s cat/dog pair come from a generated block whose
    results (bench_patch.paper) are what the shipped checkpoint gives now (the prose had
    0.13 / 0.10 / 0.13 / 0.14 and 0.85 after a retraining gave 0.18 / 0.15 and 0.79)."""
    from benchmarks import readme as figures
    from benchmarks.bench_patch import LAB_PAIR
    from benchmarks.common import load_results
    from benchmarks.readme_results import part
    from model import load_checkpoint
    from model.patching import effect, patch

    text = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    assert "patching" in figures.blocks_in(text)
    saved = part(load_results(), "bench_patch.paper")
    bundle = load_checkpoint(ROOT / "checkpoints" / "paper")
    p = patch(bundle, *LAB_PAIR)
    last = saved["cross_last_layer"]
    assert [round(float(v), 2) for v in p.heads["cross"][last]] == saved["cross_last_heads"]
    together = effect(bundle, *LAB_PAIR, [("head", "cross", last, h)
                                          for h in range(p.heads["cross"].shape[1])])
    assert round(together, 2) == saved["cross_last_together"]
