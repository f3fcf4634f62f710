"""ui/serve.py: `make run`'s server warms the app's imports and models before the first page."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from tests.conftest import ROOT
from tests.tiny_model import save_tiny_checkpoint
from ui import runtime, serve
from ui.catalog import open_folder


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """One tiny checkpoint, copied under four names."""
    root = tmp_path_factory.mktemp("warm")
    first = save_tiny_checkpoint(root / "m0")
    for i in range(1, 4):
        shutil.copytree(first, root / f"m{i}")
    return root


def test_warm_folders_are_the_default_then_the_listed_ones_at_most_three(tiny, monkeypatch):
    monkeypatch.setenv("ATTN_CHECKPOINTS_DIR", str(ROOT / "checkpoints"))
    monkeypatch.setenv("ATTN_MODELS", os.pathsep.join(str(tiny / f"m{i}") for i in (2, 0, 3)))
    # the picker puts paper first, then the rest by name; m1 is not listed
    assert [p.name for p in serve.warm_folders()] == ["paper", "m0", "m2"]
    monkeypatch.setenv("ATTN_MODELS", "")
    assert [p.name for p in serve.warm_folders()] == ["paper"]


def test_warm_up_fills_the_cache_the_pages_read(tiny, monkeypatch):
    monkeypatch.setenv("ATTN_CHECKPOINTS_DIR", str(tiny / "none"))  # no shipped models
    monkeypatch.setenv("ATTN_MODELS", str(tiny / "m1"))
    runtime.load_bundle.clear()
    stages = serve.warm_up()
    assert list(stages) == ["imports", "load m1"]
    assert all(v >= 0 for v in stages.values())

    def no_loading(folder):
        raise AssertionError(f"{folder} was loaded again, not taken from the warm cache")

    monkeypatch.setattr(runtime, "load_checkpoint", no_loading)
    bundle, key = open_folder(tiny / "m1")
    assert bundle.model is not None and key.startswith(str(tiny / "m1"))
    runtime.load_bundle.clear()


def test_a_folder_that_does_not_load_is_logged_and_skipped(tiny, tmp_path, monkeypatch, caplog):
    bad = tmp_path / "broken"
    bad.mkdir()
    (bad / "config.json").write_text("{not json", encoding="utf-8")
    monkeypatch.setenv("ATTN_CHECKPOINTS_DIR", str(tiny / "none"))
    monkeypatch.setenv("ATTN_MODELS", os.pathsep.join([str(bad), str(tiny / "m2")]))
    runtime.load_bundle.clear()
    with caplog.at_level("ERROR", logger="attention_lab"):
        stages = serve.warm_up()
    assert list(stages) == ["imports", "load m2"]
    assert any("broken" in r.getMessage() for r in caplog.records)
    runtime.load_bundle.clear()


_MISSING = r"""
import ast, sys
from ui.serve import warm_up
warm_up()
tree = ast.parse(open("app.py", encoding="utf-8").read())
names = [a.name for n in tree.body if isinstance(n, ast.Import) for a in n.names]
names += [n.module for n in tree.body if isinstance(n, ast.ImportFrom) and n.module != "__future__"]
print([m for m in names if m not in sys.modules])
"""


def test_warm_up_imports_every_module_app_py_imports(tiny):
    env = {**os.environ, "ATTN_MODELS": "", "ATTN_CHECKPOINTS_DIR": str(tiny / "none")}
    out = subprocess.run([sys.executable, "-c", _MISSING], cwd=ROOT, env=env, timeout=120,
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stdout


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_launcher_serves_and_says_when_it_is_warm(tiny, tmp_path):
    """`python -m ui.serve run app.py ...` (make run's line) answers /_stcore/health and prints
    the warm-up's stages, the listed model loaded, without a page having been opened."""
    port, log = _free_port(), tmp_path / "serve.log"
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "ATTN_MODELS": str(tiny / "m3"),
           "ATTN_CHECKPOINTS_DIR": str(tiny / "none")}
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "ui.serve", "run", "app.py", "--server.headless", "true",
             "--server.port", str(port), "--server.address", "localhost",
             "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
            cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline, healthy = time.monotonic() + 120, False
        while time.monotonic() < deadline and "Warm-up done" not in log.read_text():
            assert proc.poll() is None, log.read_text()
            if not healthy:
                try:
                    with urllib.request.urlopen(f"http://localhost:{port}/_stcore/health",
                                                timeout=2) as resp:
                        healthy = resp.read().strip() == b"ok"
                except OSError:
                    pass
            time.sleep(0.25)
        text = log.read_text()
        assert "Warm-up done: imports" in text and "load m3" in text, text
        with urllib.request.urlopen(f"http://localhost:{port}/_stcore/health", timeout=5) as r:
            assert r.read().strip() == b"ok"
        assert "Traceback" not in text, text
    finally:
        proc.terminate()
        proc.wait(timeout=30)
