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
