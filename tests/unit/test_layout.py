"""The rooms and their rules, read with the standard library's `ast` (imports inside functions
count too), never by grep:

- imports run one way: app -> ui -> viz -> model, and training -> model (the training room
  beside model/: model never imports it; ui reads only its public modules);
- no import cycle anywhere in the code (app, ui, viz, model, benchmarks, tests, deploy);
- the core of model/ never reaches up into its backends, analysis/ or patching/;
- app, ui and viz use model/ through its public API only, never the adapters' insides
  (one backend's package or module, patching's helpers, training's internals);
- no `_`-prefixed name is imported from, or read off, another module of the repository
  (gettext's `_` excepted);
- ui/views keeps no module-level mutable state (a dict, list or set the module changes, or a
  lock): process-wide caches live in ui/runtime.py's table.

Each checker takes the repository root, so a test can run it on a planted violation in a
scratch tree and see it name the offender. Files are read through tests/unit/boundaries.py, the
one walker every boundary test shares (its per-node rules: model kinds, backend imports, sides,
the core's lab-free contents).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

# the one walker's helpers (files parsed once, imports resolved): tests/unit/boundaries.py
from tests.unit.boundaries import CODE, code_files, import_nodes, module_name, parse

ROOT = Path(__file__).resolve().parents[2]
ROOMS = ("model", "viz", "ui")
OURS = ("app", "ui", "viz", "model", "training", "benchmarks", "tests", "deploy")
# model's public API for app, ui and viz: the package, its core modules (model/*.py), the
# analyses, the backends' registry (model.backends itself) and patching's entry point; of the
# training room (training/, beside model/), the two modules the knows view reads and the
# language model's history the training view reads. Anything deeper is an adapter's inside.
PUBLIC_PACKAGES = ("model.analysis",)
PUBLIC_MODULES = {"model", "model.backends", "model.patching", "training.knowledge",
                  "training.corpus", "training.lm.history"}
MUTATORS = {"append", "extend", "insert", "pop", "popitem", "remove", "clear", "update",
            "setdefault", "add", "discard", "move_to_end", "appendleft", "extendleft", "sort"}
CONTAINERS = {"dict", "list", "set", "OrderedDict", "defaultdict", "deque", "Counter",
              "WeakValueDictionary", "WeakKeyDictionary", "WeakSet"}
LOCKS = {"Lock", "RLock", "Semaphore", "BoundedSemaphore", "Condition", "Event"}
CACHES = {"lru_cache", "cache", "cache_data", "cache_resource"}  # decorators that keep results


def imports(root: Path, path: Path, modules: set[str] | None = None) -> set[str]:
    """Absolute names of every module `path` imports, relative imports resolved. `from a
    import b` names a.b when that is a module (of `modules`; either may be, without them),
    else a: importing a submodule does not run the package's names again."""
    found: set[str] = set()
    for node, stem in import_nodes(root, path):
        subs = {f"{stem}.{alias.name}" for alias in node.names} \
            if isinstance(node, ast.ImportFrom) else set()
        if modules is None:
            found |= {stem} | subs
        else:
            found |= subs & modules
            if not subs or subs - modules:
                found.add(stem)
    return found


def graph(root: Path, dirs: tuple[str, ...] = CODE) -> dict[str, set[str]]:
    """module -> the repository modules (or streamlit) it imports."""
    modules = {module_name(root, p): p for p in code_files(root, dirs)}
    return {name: {m for m in imports(root, path, set(modules))
                   if m.split(".")[0] in (*OURS, "streamlit")}
            for name, path in modules.items()}


def room(name: str) -> str:
    return name.split(".")[0]


def find_cycle(g: dict[str, set[str]], within: set[str] | None = None) -> list[str] | None:
    """One import cycle among g's modules (or those `within`), as a -> b -> a; a package's
    __init__ is a module of its own."""
    nodes = set(g) if within is None else within
    edges = {m: {d for d in g[m] if d in nodes and d != m} for m in nodes}
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
            return cycle
    return None


def all_cycles(g: dict[str, set[str]]) -> list[str]:
    """One cycle per knot of mutually importing modules (strongly connected component)."""
    reach = {m: set() for m in g}
    for m in g:  # modules reachable from m (graphs of a few hundred modules: cheap enough)
        todo = [d for d in g[m] if d in g]
        while todo:
            d = todo.pop()
            if d not in reach[m]:
                reach[m].add(d)
                todo += [e for e in g[d] if e in g]
    knots = {frozenset({m} | {d for d in reach[m] if m in reach[d]}) for m in g if m in reach[m]}
    return sorted(" -> ".join(find_cycle(g, set(k)) or []) for k in knots)


def back_edges(g: dict[str, set[str]], which: str, banned: tuple[str, ...]) -> list[str]:
    return sorted(f"{mod} imports {dep}" for mod, deps in g.items() if room(mod) == which
                  for dep in deps if room(dep) in banned)


def model_internals(root: Path) -> list[str]:
    """'file:line imports module' for app/ui/viz imports of model beyond its public API."""
    bad = []
    for path in code_files(root, ("app.py", "ui", "viz")):
        for node, stem in import_nodes(root, path):
            if room(stem) not in ("model", "training"):
                continue
            # `from training import knowledge`: the submodule is what is imported
            names = [f"{stem}.{a.name}" for a in node.names] if isinstance(node, ast.ImportFrom) \
                else [stem]
            names = sorted({m if is_module(root, m) else stem for m in names})
            bad += [f"{path.relative_to(root)}:{node.lineno} imports {m}" for m in names
                    if not public_model(root, m)]
    return sorted(bad)


def is_module(root: Path, name: str) -> bool:
    where = root.joinpath(*name.split("."))
    return where.with_suffix(".py").is_file() or (where / "__init__.py").is_file()


def public_model(root: Path, name: str) -> bool:
    """Whether module `name` belongs to model's public API (see PUBLIC_MODULES)."""
    return name in PUBLIC_MODULES or name in PUBLIC_PACKAGES \
        or name.startswith(tuple(p + "." for p in PUBLIC_PACKAGES)) \
        or (name.count(".") == 1 and (root / "model" / f"{name[6:]}.py").is_file())


def private_imports(root: Path) -> list[str]:
    """'file:line module._name' for each `_`-prefixed name imported from another repository
    module, or read off one (`mod._name`); gettext's `_` and dunders are allowed."""
    def private(name: str) -> bool:
        return name.startswith("_") and name != "_" and not name.startswith("__")

    bad = []
    for path in code_files(root):
        rel, aliases = path.relative_to(root), {}
        for node, stem in import_nodes(root, path):
            if room(stem) not in OURS:
                continue
            for alias in node.names:
                if isinstance(node, ast.ImportFrom) and private(alias.name):
                    bad.append(f"{rel}:{node.lineno} {stem}.{alias.name}")
                if isinstance(node, ast.ImportFrom):
                    aliases[alias.asname or alias.name] = f"{stem}.{alias.name}"
                elif alias.asname:
                    aliases[alias.asname] = alias.name
                else:
                    aliases[alias.name.split(".")[0]] = alias.name.split(".")[0]
        for node in ast.walk(parse(path)):
            if isinstance(node, ast.Attribute) and private(node.attr) \
                    and isinstance(node.value, ast.Name) and node.value.id in aliases:
                bad.append(f"{rel}:{node.lineno} {aliases[node.value.id]}.{node.attr}")
    return sorted(bad)


def _container(value: ast.expr | None) -> str | None:
    """'dict'/'list'/'lock'… when `value` builds a mutable container or a lock."""
    if isinstance(value, (ast.Dict, ast.DictComp)):
        return "dict"
    if isinstance(value, (ast.List, ast.ListComp)):
        return "list"
    if isinstance(value, (ast.Set, ast.SetComp)):
        return "set"
    if isinstance(value, ast.Call):
        f = value.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        if name in LOCKS:
            return "lock"
        if name in CONTAINERS:
            return name
    return None


def _base_name(node: ast.expr) -> str | None:
    while isinstance(node, (ast.Subscript, ast.Attribute)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def module_state(root: Path, folder: str = "ui/views") -> list[str]:
    """'file:line NAME (kind)' for module-level locks and caching functions (lru_cache,
    st.cache_*: their cache belongs in ui/runtime.py's table), and for module-level dicts, lists
    and sets that the module itself changes (item or attribute stores, mutating methods,
    `global` rebinding)."""
    bad = []
    for path in sorted((root / folder).rglob("*.py")):
        tree, rel = parse(path), path.relative_to(root)
        made: dict[str, tuple[int, str]] = {}
        for node in tree.body:
            targets = node.targets if isinstance(node, ast.Assign) else \
                [node.target] if isinstance(node, ast.AnnAssign) else []
            kind = _container(getattr(node, "value", None))
            for t in targets:
                if isinstance(t, ast.Name) and kind:
                    made[t.id] = (node.lineno, kind)
        changed: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Global):
                changed.update(node.names)
            elif isinstance(node, (ast.Assign, ast.AugAssign, ast.Delete)):
                targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) \
                    else [node.target]
                changed.update(n for t in targets if isinstance(t, (ast.Subscript, ast.Attribute))
                               and (n := _base_name(t)))
                if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
                    changed.add(node.target.id)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr in MUTATORS and (n := _base_name(node.func.value)):
                changed.add(n)
        bad += [f"{rel}:{line} {name} ({kind})" for name, (line, kind) in made.items()
                if kind == "lock" or name in changed]
        bad += [f"{rel}:{node.lineno} {node.name} (cache)" for node in tree.body
                if isinstance(node, ast.FunctionDef) and any(_decorator(d) in CACHES
                                                             for d in node.decorator_list)]
    return sorted(bad)


def _decorator(node: ast.expr) -> str:
    """lru_cache of @lru_cache, @functools.lru_cache(maxsize=8), @st.cache_data(...)."""
    node = node.func if isinstance(node, ast.Call) else node
    return node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")


GRAPH = graph(ROOT)


@pytest.mark.parametrize("which,banned", [("model", ("viz", "ui", "streamlit", "app", "training")),
                                          ("training", ("viz", "ui", "streamlit", "app")),
                                          ("viz", ("ui", "streamlit", "app")),
                                          ("ui", ("app",))])
def test_imports_run_one_way(which, banned):
    bad = back_edges(GRAPH, which, banned)
    assert not bad, bad


def test_no_import_cycles_anywhere():
    cycles = all_cycles(GRAPH)
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def test_the_core_never_imports_its_adapters_or_analyses():
    """backends/analysis/patching/training build on the core; the core (model/*.py but
    dispatch and the package's public face) never reaches up into them."""
    upper = ("model.backends", "model.analysis", "model.patching", "training")
    core = [m for m in GRAPH if room(m) == "model" and m.count(".") == 1
            and m != "model.dispatch"
            and (ROOT / (m.replace(".", "/") + ".py")).is_file()]
    bad = sorted(f"{m} imports {d}" for m in core for d in GRAPH[m] if d.startswith(upper))
    assert not bad, bad


def test_app_ui_and_viz_use_only_models_public_api():
    bad = model_internals(ROOT)
    assert not bad, "beyond model's public API:\n" + "\n".join(bad)


def test_no_private_name_crosses_a_module():
    bad = private_imports(ROOT)
    assert not bad, "private names taken from another module:\n" + "\n".join(bad)


def test_views_keep_no_module_level_mutable_state():
    bad = module_state(ROOT)
    assert not bad, "module-level mutable state in ui/views:\n" + "\n".join(bad)


def test_the_graph_is_the_real_one():
    """The checker is not vacuous: the real graph has the edges we know of."""
    assert "model.capture" in GRAPH["model.dispatch"]
    assert any(d.startswith("model.") for d in GRAPH["model.analysis.heads"])
    assert imports(ROOT, ROOT / "training" / "train.py") >= {"training.corpus"}
    assert "ui.i18n" in GRAPH["ui.text"] and "ui.i18n" in GRAPH["app"]
    assert len(GRAPH) > 150


def plant(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def scratch(tmp_path):
    """A small clean tree in the repository's shape; each test plants one violation in it."""
    return plant(tmp_path, {
        "app.py": "from ui import views\n",
        "model/__init__.py": "from .core import Trace\n",
        "model/core.py": "class Trace: ...\n\n\ndef _helper(): ...\n",
        "model/hf/__init__.py": "from .load import load\n",
        "model/hf/load.py": "def load(): ...\n",
        "model/analysis/__init__.py": "",
        "model/analysis/stats.py": "from ..core import Trace\n",
        "viz/__init__.py": "",
        "viz/fig.py": "from model import Trace\n",
        "ui/__init__.py": "",
        "ui/views/__init__.py": "VIEWS = {'a': 1}\nNAMES = ['a']\n",
        "ui/views/a.py": "from model.analysis.stats import Trace\n"
                         "from model.core import Trace as T\nfrom viz import fig\n"
                         "LIMITS = {'x': 1}\n\n\ndef render():\n    return LIMITS['x']\n",
    })


def clean_scratch_findings(root: Path) -> list:
    g = graph(root)
    return [find_cycle(g), back_edges(g, "viz", ("ui", "app")), model_internals(root),
            private_imports(root), module_state(root)]


def test_the_scratch_tree_is_clean(scratch):
    assert clean_scratch_findings(scratch) == [None, [], [], [], []]


def test_a_planted_cycle_is_named(scratch):
    plant(scratch, {"viz/fig.py": "from model import Trace\nfrom viz import colours\n",
                    "viz/colours.py": "def scale():\n    from viz.fig import Trace\n"})
    assert all_cycles(graph(scratch)) == ["viz.colours -> viz.fig -> viz.colours"]
    plant(scratch, {"tests/t.py": "import tests.u\n", "tests/u.py": "from tests import t\n"})
    assert all_cycles(graph(scratch)) == ["tests.t -> tests.u -> tests.t",
                                          "viz.colours -> viz.fig -> viz.colours"]


def test_a_planted_back_edge_is_named(scratch):
    plant(scratch, {"viz/fig.py": "from ui.views import VIEWS\n"})
    assert back_edges(graph(scratch), "viz", ("ui", "app")) == ["viz.fig imports ui.views"]


def test_a_planted_model_internal_import_is_named(scratch):
    plant(scratch, {"ui/catalog.py": "from model.hf import load\nimport model.hf.load\n"
                                     "from model import hf\nfrom model.analysis import stats\n",
                    "viz/x.py": "from model.backends.hf import HF\n"})
    assert model_internals(scratch) == ["ui/catalog.py:1 imports model.hf.load",
                                        "ui/catalog.py:2 imports model.hf.load",
                                        "ui/catalog.py:3 imports model.hf",
                                        "viz/x.py:1 imports model.backends.hf"]


def test_a_planted_private_import_is_named(scratch):
    plant(scratch, {"model/analysis/stats.py": "from ..core import _helper, Trace\n",
                    "ui/views/b.py": "from ui.i18n import _\nimport model.core as core\n"
                                     "X = core._helper\n"})
    assert private_imports(scratch) == ["model/analysis/stats.py:1 model.core._helper",
                                        "ui/views/b.py:3 model.core._helper"]


@pytest.mark.parametrize("code,name", [
    ("CACHE = {}\n\n\ndef render():\n    CACHE['k'] = 1\n", "CACHE (dict)"),
    ("SEEN: list = []\n\n\ndef render():\n    SEEN.append(1)\n", "SEEN (list)"),
    ("import threading\nLOCK = threading.Lock()\n", "LOCK (lock)"),
    ("from collections import OrderedDict\nKEPT = OrderedDict()\n\n\ndef render():\n"
     "    KEPT.move_to_end('k')\n", "KEPT (OrderedDict)"),
    ("STATE = {}\n\n\ndef render():\n    global STATE\n    STATE = {'a': 1}\n", "STATE (dict)"),
    ("ROWS = {'a': []}\n\n\ndef render():\n    ROWS['a'].append(1)\n", "ROWS (dict)"),
    ("import functools\n@functools.lru_cache(maxsize=8)\ndef ROWS_of(x):\n    return x\n",
     "ROWS_of (cache)"),
    ("import streamlit as st\n@st.cache_data\ndef ROWS_of(x):\n    return x\n",
     "ROWS_of (cache)"),
])
def test_planted_module_state_in_a_view_is_named(scratch, code, name):
    plant(scratch, {"ui/views/heads/b.py": code})
    word = name.split()[0]
    line = next(i for i, text in enumerate(code.splitlines(), 1)
                if text.startswith((f"{word} ", f"{word}:", f"def {word}(")))
    assert module_state(scratch) == [f"ui/views/heads/b.py:{line} {name}"]


@pytest.mark.parametrize("folder,limit", [("ui", 500), ("viz", 500), ("model", 500)])
def test_no_room_holds_a_file_over_500_lines(folder, limit):
    long = sorted(f"{p.relative_to(ROOT)}: {n}" for p in (ROOT / folder).rglob("*.py")
                  if (n := len(p.read_text(encoding="utf-8").splitlines())) > limit)
    assert not long, long


def long_benchmarks(root: Path = ROOT, limit: int = 300) -> list[str]:
    """'benchmarks/X.py: N' for each benchmark module of `limit` lines or more (issue 35: one
    idea per file, as the rooms are kept)."""
    return sorted(f"{p.relative_to(root)}: {n}" for p in (root / "benchmarks").glob("*.py")
                  if (n := len(p.read_text(encoding="utf-8").splitlines())) >= limit)


def test_every_benchmark_module_is_under_300_lines(scratch):
    assert long_benchmarks() == []
    plant(scratch, {"benchmarks/bench_long.py": "x = 1\n" * 300})
    assert long_benchmarks(scratch) == ["benchmarks/bench_long.py: 300"]


def test_app_entry_point_is_thin():
    assert len((ROOT / "app.py").read_text(encoding="utf-8").splitlines()) <= 200
