"""The README's Python API example runs as written against the shipped checkpoint."""

from __future__ import annotations

import re
import runpy

from tests.conftest import ROOT


def test_readme_api_example_runs(tmp_path, capsys, monkeypatch):
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"## Python API.*?```python\n(.*?)```", text, re.S)
    assert block, "README has no Python API example"
    script = tmp_path / "example.py"
    script.write_text(block.group(1), encoding="utf-8")
    monkeypatch.chdir(ROOT)
    scope = runpy.run_path(str(script))
    assert scope["trace"].attn["cross"].ndim == 5
    assert scope["out"][0].text == "Winter is cold."
    assert "Winter is cold." in capsys.readouterr().out


def test_readme_benchmark_rows_match_the_committed_results():
    """Every row a benchmark writes from benchmarks/results.json stands in the README as is,
    so the README cannot drift from what was measured (rerun, then paste the printed rows)."""
    import importlib

    from benchmarks.common import load_results

    readme = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    results = load_results()
    assert {"bench_bertviz", "bench_app"} <= set(results)
    generated = []
    for name, section in sorted(results.items()):
        rows = getattr(importlib.import_module(f"benchmarks.{name}"), "readme_rows", None)
        for row in rows(section) if rows else ():
            assert row in readme, f"README row for {name} differs from results.json:\n{row}"
            generated.append(row)
    about_bertviz = [row for row in generated if "bertviz" in row]
    assert len(about_bertviz) >= 4  # bertviz page: like for like, as sent; attention view: both
    start = readme.index("## Benchmarks")
    end = next(i for i in range(start + 1, len(readme)) if readme[i].startswith("## "))
    table = [line for line in readme[start:end] if line.startswith("| ")]
    # no hand-written bertviz row beside the generated ones
    assert sum("bertviz" in line for line in table) == len(about_bertviz)


def test_readme_alignment_table_matches_the_cards():
    """The weights-vs-norms table in the README is what the shipped cards hold."""
    import json

    from model.training.alignment_table import HEADER, card_tables, layer_rows

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert HEADER in readme
    for name in ("paper", "seed001"):
        card = json.loads((ROOT / "checkpoints" / name / "card.json").read_text("utf-8"))
        tables = card_tables(card)
        assert tables is not None, f"{name}: card lacks the α or ‖αf(x)‖ alignment table"
        for row in layer_rows(name, *tables):
            assert row in readme, f"README row missing or stale: {row}"
