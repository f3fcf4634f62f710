"""docs/api.md's table of entry points names only what can be imported as written: each row's
`from MODULE import NAME, ...` runs, and every name is a callable of that module."""

from __future__ import annotations

import importlib
import re

import pytest

from tests.conftest import ROOT

ROW = re.compile(r"^\| `from ([\w.]+) import ([\w, ]+)` \|", re.M)


def entry_points(text: str) -> list[tuple[str, str]]:
    """(module, name) for every name the table's rows import."""
    return [(module, name.strip()) for module, names in ROW.findall(text)
            for name in names.split(",")]


def not_importable(pairs: list[tuple[str, str]]) -> list[str]:
    """'module.name' for each pair that does not import, or is not callable."""
    bad = []
    for module, name in pairs:
        try:
            obj = getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError):
            bad.append(f"{module}.{name}")
            continue
        if not callable(obj):
            bad.append(f"{module}.{name} (not callable)")
    return bad


def test_every_entry_point_in_the_api_page_imports():
    pairs = entry_points((ROOT / "docs" / "api.md").read_text(encoding="utf-8"))
    assert len(pairs) >= 15, f"only {len(pairs)} entry points found: {pairs}"
    assert not not_importable(pairs)


@pytest.mark.parametrize("row,bad", [
    ("| `from model import capture, nosuch` | x |", ["model.nosuch"]),
    ("| `from model.nosuch import capture` | x |", ["model.nosuch.capture"]),
    ("| `from model import ModelConfig` | x |", []),
])
def test_the_check_catches_a_name_that_is_not_there(row, bad):
    assert not_importable(entry_points(row)) == bad
