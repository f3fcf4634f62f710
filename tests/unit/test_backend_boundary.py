"""Only model/backends/ knows which kind a model is (issue 35), read with `ast`, never by grep.

Outside model/backends/ (app.py, ui/, viz/, model/) no file may:
- read `.lab` (a backend's class flag, or Capabilities.lab): ask a named capability instead;
- name `is_lab` or `is_native` (define, import, call);
- compare a model kind or family with a string: anything with "native"/"hf", a `.model_type`
  with anything, a `.family` with a string other than the three shapes Capabilities.family
  takes ("seq2seq", "decoder", "encoder");
- read a backend's own config: `.hf` (transformers' config) or a config's `.family`;
- import a backend's internals: any module under model.backends other than the package itself
  and its contract, model.backends.base.
Each finding names the file, the line and the code. tests/ may test a backend's insides.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.unit.test_layout import code_files, import_nodes

ROOT = Path(__file__).resolve().parents[2]
ROOMS = ("app.py", "ui", "viz", "model")
BACKENDS = "model/backends/"
# the tour's own modules are another engineer's this round (its Facts.lab mirrors caps.lab);
# named here so that the exemption is visible, not silent
OWNED_ELSEWHERE = ("ui/tour/",)
KIND_STRINGS = {"native", "hf"}
SHAPES = {"seq2seq", "decoder", "encoder"}  # Capabilities.family: a shape, not a kind
NAMES = {"is_lab", "is_native"}
ALLOWED_IMPORTS = {"model.backends", "model.backends.base"}
# who may import the lab backend's own modules (issue 55 moved the lab's network there): the
# public face re-exports its classes (from model import Transformer, Tokenizer, ...), and the
# training room builds and trains that network
LAB_USERS = ("model/__init__.py", "model/training/")


def _chain(node: ast.AST) -> list[str]:
    """ctx.bundle.config.family -> ['ctx', 'bundle', 'config', 'family']."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    elif isinstance(node, ast.Call):
        parts.append("()")
    return parts[::-1]


def _strings(node: ast.AST) -> set[str]:
    items = node.elts if isinstance(node, ast.Tuple | ast.List | ast.Set) else [node]
    return {n.value for n in items if isinstance(n, ast.Constant) and isinstance(n.value, str)}


def _attr(node: ast.AST) -> str:
    return node.attr if isinstance(node, ast.Attribute) else ""


def kind_branches(source: str, filename: str = "<source>") -> list[str]:
    """'file:line: code (why)' for every model-specific line of one module (see the module
    docstring); imports are checked by backend_imports."""
    found = []

    def hit(node: ast.AST, why: str) -> None:
        found.append(f"{filename}:{node.lineno}: {ast.unparse(node)} ({why})")

    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, ast.Attribute) and node.attr == "lab":
            hit(node, "reads .lab: ask a named capability")
        elif isinstance(node, ast.Attribute) and node.attr == "hf":
            hit(node, "reads a backend's config (.hf)")
        elif isinstance(node, ast.Attribute) and node.attr == "family" \
                and {"config", "cfg"} & set(_chain(node)[:-1]):
            hit(node, "reads a config's family: ask capabilities(bundle).family")
        elif isinstance(node, ast.Name) and node.id in NAMES \
                or isinstance(node, ast.Attribute) and node.attr in NAMES:
            hit(node, "a model-kind test")
        elif isinstance(node, ast.FunctionDef) and node.name in NAMES:
            found.append(f"{filename}:{node.lineno}: def {node.name} (a model-kind test)")
        elif isinstance(node, ast.ImportFrom) and any(a.name in NAMES for a in node.names):
            hit(node, "a model-kind test")
        elif isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            strings = set().union(*(_strings(s) for s in sides))
            attrs = {_attr(s) for s in sides}
            if strings & KIND_STRINGS:
                hit(node, "compares with a model kind")
            elif "model_type" in attrs:
                hit(node, "compares a model type")
            elif "family" in attrs and strings - SHAPES:
                hit(node, "compares a family with a model kind")
    return found


def backend_imports(root: Path, path: Path) -> list[str]:
    """'file:line imports module' for each import of a backend's internals."""
    bad = []
    for node, stem in import_nodes(root, path):
        names = [f"{stem}.{a.name}" for a in node.names] if isinstance(node, ast.ImportFrom) \
            else [stem]
        for name in sorted({stem, *names}):
            inside = name.startswith("model.backends.") and name.split(".")[2] not in {"base"}
            if name.startswith("model.backends.lab") \
                    and str(path.relative_to(root)).startswith(LAB_USERS):
                continue
            # `from model.backends import capabilities` names a function, not a module
            if inside and (root / "model" / "backends" / name.split(".")[2]).exists():
                bad.append(f"{path.relative_to(root)}:{node.lineno} imports {name}")
                break
    return bad


def offenders(root: Path) -> list[str]:
    files = [p for p in code_files(root, ROOMS)
             if not str(p.relative_to(root)).startswith((BACKENDS, *OWNED_ELSEWHERE))]
    bad = []
    for p in files:
        bad += kind_branches(p.read_text(encoding="utf-8"), str(p.relative_to(root)))
        bad += backend_imports(root, p)
    return sorted(bad)


def test_no_model_specific_line_outside_the_backends():
    bad = offenders(ROOT)
    assert not bad, "model-specific lines outside model/backends/:\n" + "\n".join(bad)


@pytest.mark.parametrize("code", [
    "if capabilities(bundle).lab: pass",
    "x = caps.lab and y",
    "from model.backends import is_lab",
    "x = is_native(bundle, 'ablation')",
    "def is_lab(b): return True",
    'x = "native" if caps.raw_hooks else cfg.family',
    'x = d.family == "native"',
    'x = bundle.config.hf.model_type in {"bert", "gpt2"}',
    'x = cfg.model_type == name',
    "x = getattr(bundle.config.hf, 'd_kv', 0)",
    'x = ctx.bundle.config.family',
])
def test_the_check_finds_model_specific_lines(code):
    assert kind_branches(code), code


@pytest.mark.parametrize("code", [
    'x = caps.family == "decoder"',
    'x = caps.family in ("seq2seq", "encoder")',
    'x = walk.kind == "enc_self"',
    'x = caps.teacher_forced and caps.logit_attribution',
    "x = trained_here(bundle)",
])
def test_the_check_leaves_capabilities_alone(code):
    assert not kind_branches(code), code


def test_a_planted_backend_import_is_named(tmp_path):
    for rel, text in {"model/backends/__init__.py": "", "model/backends/base.py": "",
                      "model/backends/hf/__init__.py": "", "model/backends/hf/record.py": "",
                      "model/analysis/__init__.py": "",
                      "model/analysis/x.py": "from ..backends.hf.record import capture_hf\n"
                                             "from ..backends import capabilities\n"
                                             "from ..backends.base import Capabilities\n",
                      "ui/y.py": "import model.backends.hf\n"}.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    assert offenders(tmp_path) == ["model/analysis/x.py:1 imports model.backends.hf.record",
                                   "ui/y.py:1 imports model.backends.hf"]


def test_the_backends_never_import_what_is_built_on_them():
    """Inside model/, analysis/patching/training and the public face (model, model.dispatch)
    build on the backends; a backend imports only the core and its own package."""
    from tests.unit.test_layout import GRAPH

    above = ("model.analysis", "model.patching", "model.training", "model.dispatch")
    bad = sorted(f"{m} imports {d}" for m, deps in GRAPH.items()
                 if m.startswith("model.backends") for d in deps
                 if d == "model" or d.startswith(above))
    assert not bad, bad
