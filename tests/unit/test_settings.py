"""model/settings.py: every ATTN_* variable read in one place, typed, validated, and the README's
table of settings generated from it."""

from __future__ import annotations

import ast
import dataclasses
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from model.budget import MB
from model.gate import gate_from_env
from model.settings import (
    NAMES,
    Settings,
    SettingsError,
    defaults,
    keep_hub_offline,
    settings,
    settings_table,
)
from tests.conftest import ROOT

CODE_ROOMS = ("app.py", "ui", "viz", "model")
VARIABLE = re.compile(r"ATTN_[A-Z0-9_]+")


def test_defaults_are_the_documented_ones():
    s = Settings.from_env({})
    assert s == Settings()
    assert (s.trace_cache_mb, s.inflight_mb, s.runs, s.queue, s.queue_timeout_s) == \
        (2048, 3072, 1, 64, 90)
    assert (s.device, s.allow_hub, s.models, str(s.checkpoints_dir)) == \
        ("cpu", False, (), "checkpoints")
    blank = Settings.from_env({name: "  " for name in NAMES})  # empty counts as unset
    assert blank == s


def test_values_parse_to_their_types(tmp_path):
    s = Settings.from_env({"ATTN_INFLIGHT_MB": "0.05", "ATTN_QUEUE": "0", "ATTN_RUNS": " 3 ",
                           "ATTN_QUEUE_TIMEOUT_S": "0.5", "ATTN_TRACE_CACHE_MB": "0",
                           "ATTN_DEVICE": "AUTO", "ATTN_ALLOW_HUB": "1",
                           "ATTN_MODELS": f" {tmp_path / 'a'} {os.pathsep}{os.pathsep}~/b",
                           "ATTN_CHECKPOINTS_DIR": str(tmp_path)})
    assert (s.inflight_mb, s.queue, s.runs, s.queue_timeout_s, s.trace_cache_mb) == \
        (0.05, 0, 3, 0.5, 0.0)
    assert isinstance(s.runs, int) and isinstance(s.queue, int)
    assert (s.device, s.allow_hub, s.checkpoints_dir) == ("auto", True, tmp_path)
    assert s.models == (tmp_path / "a", Path("~/b").expanduser())
    gate = gate_from_env({"ATTN_INFLIGHT_MB": "512", "ATTN_QUEUE": "3", "ATTN_RUNS": "2"})
    assert (gate.budget, gate.queue_limit, gate.runs) == (512 * MB, 3, 2)


@pytest.mark.parametrize("name,value", [
    ("ATTN_QUEUE", "abc"), ("ATTN_QUEUE", "-1"), ("ATTN_QUEUE", "2.5"), ("ATTN_RUNS", "0"),
    ("ATTN_INFLIGHT_MB", "0"), ("ATTN_INFLIGHT_MB", "nan"), ("ATTN_TRACE_CACHE_MB", "-5"),
    ("ATTN_QUEUE_TIMEOUT_S", "inf"), ("ATTN_QUEUE_TIMEOUT_S", "ninety"), ("ATTN_DEVICE", "tpu"),
    ("ATTN_ALLOW_HUB", "yes")])
def test_a_bad_value_is_refused_naming_the_variable(name, value):
    with pytest.raises(SettingsError) as err:
        Settings.from_env({name: value})
    message = str(err.value)
    assert message.startswith(f"{name}={value!r} is not valid: ") and "\n" not in message
    assert err.value.name == name
    with pytest.raises(SettingsError, match=name):  # the gate reads through the same parse
        gate_from_env({name: value})


def test_settings_reads_the_environment_at_each_call(monkeypatch):
    monkeypatch.setenv("ATTN_QUEUE", "7")
    assert settings().queue == 7
    monkeypatch.setenv("ATTN_QUEUE", "8")
    assert settings().queue == 8
    monkeypatch.delenv("ATTN_QUEUE")
    assert settings().queue == 64
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings().queue = 1  # type: ignore[misc]


@pytest.mark.parametrize("value,offline", [(None, True), ("0", True), ("1", False),
                                           ("yes", True)])
def test_hub_stays_offline_unless_allowed(value, offline):
    env = {} if value is None else {"ATTN_ALLOW_HUB": value}
    keep_hub_offline(env)
    assert (env.get("HF_HUB_OFFLINE") == "1") is offline


def test_readme_table_is_generated_from_the_settings():
    readme = (ROOT / "docs" / "limits.md").read_text(encoding="utf-8")  # the README links it
    block = re.search(r"<!-- settings -->\n(.*?)\n<!-- /settings -->", readme, re.S)
    assert block, "docs/limits.md has no <!-- settings --> block"
    assert block.group(1) == settings_table(), \
        "docs/limits.md settings table is stale: paste `python -c 'from model.settings import " \
        "settings_table; print(settings_table())'`"
    assert {f"`{name}`" for name in NAMES} <= set(re.findall(r"`ATTN_[A-Z_]+`", block.group(1)))


def prose_defaults(readme: str) -> list[tuple[str, str]]:
    """(variable, default) for each "`ATTN_X` (default V)" in the README's prose."""
    return re.findall(r"`(ATTN_[A-Z0-9_]+)`\s+\(default ([^)\s]+)\)", readme)


def test_defaults_quoted_in_the_readme_prose_are_the_settings():
    readme = "\n".join(p.read_text(encoding="utf-8")  # the README and the pages it links
                       for p in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))])
    quoted = prose_defaults(readme)
    assert len(quoted) >= 4
    wrong = [(name, value) for name, value in quoted if defaults().get(name) != value]
    assert not wrong, f"README prose quotes defaults that model/settings.py does not have: {wrong}"
    planted = readme.replace("`ATTN_QUEUE` (default 64)", "`ATTN_QUEUE` (default 32)")
    assert ("ATTN_QUEUE", "32") in prose_defaults(planted)


def environment_reads() -> list[str]:
    """'file:line NAME' for each ATTN_* variable name written as a string of its own in the app's
    code outside model/settings.py (an os.environ read somewhere else)."""
    found = []
    for room in CODE_ROOMS:
        paths = [ROOT / room] if room.endswith(".py") else sorted((ROOT / room).rglob("*.py"))
        for path in paths:
            if path == ROOT / "model" / "settings.py":
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                        and VARIABLE.fullmatch(node.value):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.value}")
    return found


def test_attn_variables_are_read_only_in_the_settings_module():
    assert environment_reads() == []


def benchmark_reads(root: Path = ROOT) -> list[str]:
    """'file:line NAME' where a benchmark reads one of the app's settings from the environment
    (os.environ.get / os.getenv / os.environ[...]) instead of through settings(); setting a
    variable for the app, and the benchmarks' own variables, are fine."""
    found = []
    for path in sorted((root / "benchmarks").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            key = None
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr in ("get", "getenv") and node.args:
                key = node.args[0]
            elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
                key = node.slice
            if isinstance(key, ast.Constant) and key.value in NAMES:
                found.append(f"{path.relative_to(root)}:{node.lineno} {key.value}")
    return sorted(found)


def test_benchmarks_read_the_apps_settings_through_the_module(tmp_path):
    assert benchmark_reads() == []
    (tmp_path / "benchmarks").mkdir()
    (tmp_path / "benchmarks" / "bench_x.py").write_text(
        'import os\nos.environ["ATTN_RUNS"] = "2"\nMB = float(os.environ["ATTN_INFLIGHT_MB"])\n'
        'Q = os.getenv("ATTN_QUEUE")\nM = os.environ.get("ATTN_BENCH_MODEL")\n', encoding="utf-8")
    assert benchmark_reads(tmp_path) == ["benchmarks/bench_x.py:3 ATTN_INFLIGHT_MB",
                                         "benchmarks/bench_x.py:4 ATTN_QUEUE"]


def test_environment_reads_finds_a_planted_read(tmp_path, monkeypatch):
    planted = ROOT / "ui" / "_planted_settings_read.py"
    planted.write_text('import os\nQ = os.environ.get("ATTN_QUEUE", "64")\n', encoding="utf-8")
    try:
        assert environment_reads() == ["ui/_planted_settings_read.py:2 ATTN_QUEUE"]
    finally:
        planted.unlink()


def test_start_check_prints_one_line_and_exits_2():
    env = {**os.environ, "ATTN_RUNS": "many"}
    code = "import sys; from model.settings import main; sys.exit(main(['--check']))"
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 2
    assert out.stderr.strip() == "attention lab: ATTN_RUNS='many' is not valid: expected a " \
        "whole number"
    ok = subprocess.run([sys.executable, "-c", code.replace("'--check'", "")],
                        env={**os.environ, "ATTN_QUEUE": "5"}, cwd=ROOT, capture_output=True,
                        text=True, timeout=120)
    assert ok.returncode == 0 and "ATTN_QUEUE=5" in ok.stdout.splitlines()


def test_the_page_names_a_bad_variable_instead_of_the_app(monkeypatch):
    from tests.app.conftest import run_app

    monkeypatch.setenv("ATTN_QUEUE_TIMEOUT_S", "soon")
    at = run_app({"text": "Winter is cold."})
    assert not at.exception
    shown = [e.value.replace("\\", "") for e in at.error]  # md() escapes markdown characters
    assert shown == ["This server's settings are wrong: ATTN_QUEUE_TIMEOUT_S='soon' is not valid: "
                     "expected a number"]
    assert not at.get("plotly_chart") and not at.sidebar.text_area
