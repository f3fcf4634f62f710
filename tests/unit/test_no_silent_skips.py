"""No silent skips (issue 60): a test that needs a shipped file says so with tests.conftest.needs,
which goes through skip_or_fail (a failure under CI=true); no other skipif is left in the
tests but the platform one named here."""

from __future__ import annotations

import re

import pytest

from tests import conftest
from tests.conftest import ROOT, needs

ALLOWED = {"tests/unit/test_heap.py"}  # skipif(not linux): glibc's malloc_trim, not a file


def test_no_skipif_outside_the_allowed_platform_check():
    found = [str(p.relative_to(ROOT)) for p in (ROOT / "tests").rglob("*.py")
             if re.search(r"mark\.skipif\(", p.read_text(encoding="utf-8"))]
    assert set(found) <= ALLOWED | {"tests/unit/test_no_silent_skips.py"}, found


class _Item:
    def __init__(self, *marks):
        self.marks = marks

    def iter_markers(self, name):
        return (m for m in self.marks if m.name == name)


@pytest.mark.parametrize("ci, outcome", [("true", pytest.fail.Exception),
                                         ("", pytest.skip.Exception)])
def test_a_missing_file_fails_in_ci_and_skips_elsewhere(monkeypatch, ci, outcome):
    monkeypatch.setenv("CI", ci)
    with pytest.raises(outcome, match="no checkpoints/x"):
        conftest.pytest_runtest_setup(_Item(needs(False, reason="no checkpoints/x").mark))
    conftest.pytest_runtest_setup(_Item(needs(True, reason="unused").mark))  # present: runs
