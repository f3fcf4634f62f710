"""Shared test setup: repository root, and the skip-or-fail rule for missing system tools."""

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() == "true"


def skip_or_fail(reason: str) -> None:
    """Skip on a developer machine; in CI (CI=true) a missing tool is a failure."""
    if in_ci():
        pytest.fail(f"{reason} (CI=true, so this is a failure, not a skip)", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session", autouse=True)
def _run_from_repo_root():
    """Relative paths (app.py, checkpoints/) resolve the same wherever pytest was started."""
    before = Path.cwd()
    os.chdir(ROOT)
    yield
    os.chdir(before)
