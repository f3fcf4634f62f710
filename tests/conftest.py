"""Shared test setup: repository root, and the skip-or-fail rule for missing system tools and
shipped files (`needs`)."""

import os
from pathlib import Path

# before any test module imports torch (tests/unit/conftest.py does, ahead of model): set
# only by model/__init__.py it comes after OpenMP has started, whose idle threads then spin
# on the shared cores (measured: 64-row translations 5-13x slower at load ~7)
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import pytest  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() == "true"


def skip_or_fail(reason: str) -> None:
    """Skip on a developer machine; in CI (CI=true) a missing tool is a failure."""
    if in_ci():
        pytest.fail(f"{reason} (CI=true, so this is a failure, not a skip)", pytrace=False)
    pytest.skip(reason)


def installed_minilm() -> Path:
    """checkpoints/minilm, or skip_or_fail where `make models` has not installed and verified
    it (model.backends.minilm_status, imported here so that torch loads after this file's
    OMP_WAIT_POLICY)."""
    from model.backends import MINILM_FOLDER, minilm_status

    folder = ROOT / "checkpoints" / MINILM_FOLDER
    if not (folder / "config.json").is_file() or minilm_status(folder) is not None:
        skip_or_fail(f"{folder} is not installed and verified (make run / make test install it)")
    return folder


def needs(ok: object, reason: str) -> pytest.MarkDecorator:
    """A mark for a test that needs something a checkout may lack (a shipped checkpoint):
    when ok is false the test goes through skip_or_fail, never a silent skipif."""
    return pytest.mark.needs(bool(ok), reason=reason)


def pytest_configure(config) -> None:
    config.addinivalue_line("markers", "needs(ok, reason): see tests/conftest.needs")


@pytest.hookimpl(tryfirst=True)  # before pytest's own skip marks (an empty parametrize)
def pytest_runtest_setup(item) -> None:
    for mark in item.iter_markers("needs"):
        if not mark.args[0]:
            skip_or_fail(mark.kwargs["reason"])


@pytest.fixture(scope="module")
def one_thread():
    """torch at one intra-op thread for a module of tiny models, restored afterwards: their
    tensors are so small that thread start-up costs more than the work on a busy 2-core
    machine. A module asks for it with pytestmark = pytest.mark.usefixtures("one_thread")."""
    import torch  # here, not above: OMP_WAIT_POLICY must be set before torch starts OpenMP

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="session", autouse=True)
def _run_from_repo_root():
    """Relative paths (app.py, checkpoints/) resolve the same wherever pytest was started."""
    before = Path.cwd()
    os.chdir(ROOT)
    yield
    os.chdir(before)
