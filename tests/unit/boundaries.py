"""One `ast` walker for the boundary rules of the rooms (issue 55: it replaces the three
walkers test_backend_boundary, test_sides and test_backends each had, with their own
exemptions). Each file is parsed once per process; each rule is a function of one node (and
where the file sits) that returns why the node breaks it, or None; each rule names the rooms it
reads and the paths it exempts, and an exemption that names no file is itself a finding.

The rules:
- kind: only model/backends/ knows which kind a model is: no `.lab` read, no `is_lab` /
  `is_native`, no comparison with a model kind ("native", "hf") or a model type, no `.family`
  compared with anything but the three shapes, no backend config read (`.hf`, a config's
  `.family`), no bundle's `.kind` compared with anything;
- backend import: no import of a backend's own modules (anything under model.backends but the
  package and its contract, base) outside model/backends/, except by the public face, which
  re-exports the lab's network (the training room, which trains it, sits outside model/);
- sides: model/capture.py alone maps attention kinds to sides; no module picks a Trace's
  src_*/tgt_* field, or a side, by a condition;
- core: the core (model/*.py but the public face and the dispatcher) holds no lab-only code: it
  imports no backend and no lab-only dependency (sentencepiece), and defines no public name a
  module of model/backends/lab/ defines and no name marked as the lab's own (`native`, `lab`).

Shape of a finding: 'path:line: code (why)'.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CODE = ("app.py", "ui", "viz", "model", "training", "benchmarks", "tests", "deploy")


# ---- files, parsed once -------------------------------------------------------------------


def module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def code_files(root: Path, dirs: tuple[str, ...] = CODE) -> list[Path]:
    files = []
    for d in dirs:
        p = root / d
        files += [p] if p.is_file() else sorted(p.rglob("*.py")) if p.is_dir() else []
    return files


def _stamp(path: Path) -> tuple[int, int]:
    stat = path.stat()
    return stat.st_mtime_ns, stat.st_size


@functools.cache
def _parsed(path: Path, stamp: tuple[int, int]) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), str(path))


def parse(path: Path) -> ast.Module:
    """The file's tree, parsed once while the file is unchanged (the checks share it)."""
    return _parsed(path, _stamp(path))


def absolute(root: Path, path: Path, node: ast.ImportFrom) -> str:
    """The module a `from … import` reads from, a relative one resolved against `path`."""
    if not node.level:
        return node.module or ""
    package = module_name(root, path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    base = package[: len(package) - node.level + 1]
    return ".".join([*base, node.module] if node.module else base)


def import_nodes(root: Path, path: Path) -> list[tuple[ast.stmt, str]]:
    """Every import statement of `path` with the absolute module it reads from."""
    out: list[tuple[ast.stmt, str]] = []
    for node in ast.walk(parse(path)):
        if isinstance(node, ast.Import):
            out += [(node, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            out.append((node, absolute(root, path, node)))
    return out


# ---- the rules ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Site:
    """Where a node sits: the repository root, the file, its path from the root."""

    root: Path
    path: Path
    rel: str


Check = Callable[[ast.AST, Site], "str | None"]

KIND_STRINGS = {"native", "hf"}  # the values Bundle.kind takes
SHAPES = {"seq2seq", "decoder", "encoder"}  # Capabilities.family: a shape, not a kind
KIND_TESTS = {"is_lab", "is_native"}
CONTRACTS = {"base"}  # model.backends.base: the Protocol everyone may read


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
    """String constants in a comparator (one, or a tuple/list/set of them)."""
    items = node.elts if isinstance(node, ast.Tuple | ast.List | ast.Set) else [node]
    return {n.value for n in items if isinstance(n, ast.Constant) and isinstance(n.value, str)}


def _attr(node: ast.AST) -> str:
    return node.attr if isinstance(node, ast.Attribute) else ""


def _bundle_kind(node: ast.AST) -> tuple[bool, bool]:
    """(reads a `.kind` attribute or getattr(x, 'kind'), and of something named *bundle*)."""
    if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "getattr" \
            and len(node.args) >= 2 and _strings(node.args[1]) == {"kind"}:
        return True, any("bundle" in p for p in _chain(node.args[0]))
    if isinstance(node, ast.Attribute) and node.attr == "kind":
        return True, any("bundle" in p for p in _chain(node.value))
    return False, False


def kind_line(node: ast.AST, _site: Site | None = None) -> str | None:
    """Why a node looks at which kind a model is (rule `kind`), or None."""
    if isinstance(node, ast.Attribute) and node.attr == "lab":
        return "reads .lab: ask a named capability"
    if isinstance(node, ast.Attribute) and node.attr == "hf":
        return "reads a backend's config (.hf)"
    if isinstance(node, ast.Attribute) and node.attr == "family" \
            and {"config", "cfg"} & set(_chain(node)[:-1]):
        return "reads a config's family: ask capabilities(bundle).family"
    if isinstance(node, ast.Name) and node.id in KIND_TESTS \
            or isinstance(node, ast.Attribute) and node.attr in KIND_TESTS \
            or isinstance(node, ast.FunctionDef) and node.name in KIND_TESTS \
            or isinstance(node, ast.ImportFrom) and any(a.name in KIND_TESTS
                                                        for a in node.names):
        return "a model-kind test"
    if not isinstance(node, ast.Compare):
        return None
    sides = [node.left, *node.comparators]
    strings = set().union(*(_strings(s) for s in sides))
    attrs = {_attr(s) for s in sides}
    kinds = [_bundle_kind(s) for s in sides]
    if strings & KIND_STRINGS:
        return "compares with a model kind"
    if any(of_bundle for _k, of_bundle in kinds):
        return "compares a bundle's kind: ask its capabilities"
    if "model_type" in attrs:
        return "compares a model type"
    if "family" in attrs and strings - SHAPES:
        return "compares a family with a model kind"
    return None


# who may import the lab backend's own modules (issue 55 moved the lab's network there): the
# public face re-exports its classes (from model import Transformer, Tokenizer, ...); the
# training room (training/, beside model/) builds and trains that network, and is not read here
LAB_USERS = ("model/__init__.py",)


def backend_import(node: ast.AST, site: Site) -> str | None:
    """Why an import reaches into one backend's own modules (rule `backend import`)."""
    if not isinstance(node, ast.Import | ast.ImportFrom):
        return None
    if isinstance(node, ast.ImportFrom):
        stem = absolute(site.root, site.path, node)
        names = {stem, *(f"{stem}.{a.name}" for a in node.names)}
    else:
        names = {a.name for a in node.names}
    for name in sorted(names):
        parts = name.split(".")
        if parts[:2] != ["model", "backends"] or len(parts) < 3 or parts[2] in CONTRACTS:
            continue
        # `from model.backends import capabilities` names a function, not a module
        if not (site.root / "model" / "backends" / parts[2]).exists():
            continue
        if parts[2] == "lab" and site.rel.startswith(LAB_USERS):
            continue
        return f"imports {name}"
    return None


SIDE_NAMES = {"src", "tgt", "enc", "dec"}
SIDE_KEYS = {"enc_self", "dec_self", "cross", "enc", "dec", "src", "tgt"}
SIDE_FIELDS = {"src_tokens", "tgt_tokens", "src_ids", "tgt_ids"}


def _leaves(node: ast.AST) -> list[ast.AST]:
    return [n for e in node.elts for n in _leaves(e)] if isinstance(node, ast.Tuple) else [node]


def side_pick(node: ast.AST, _site: Site | None = None) -> str | None:
    """Why a node writes its own side map or picks a side by a condition (rule `sides`)."""
    if isinstance(node, ast.Dict) and len(node.keys) >= 2 and all(
            isinstance(k, ast.Constant) and k.value in SIDE_KEYS for k in node.keys):
        leaves = [v for value in node.values for v in _leaves(value)]
        if all(isinstance(v, ast.Constant) and v.value in SIDE_NAMES for v in leaves):
            return "a side map: use model.capture's KIND_SIDES / SIDE_STACK"
    if isinstance(node, ast.IfExp) and {getattr(node.body, "attr", None),
                                        getattr(node.orelse, "attr", None)} & SIDE_FIELDS:
        return "picks a Trace field by a condition: Trace.tokens(side) / ids(side)"
    if isinstance(node, ast.IfExp) and all(
            isinstance(b, ast.Constant) and b.value in SIDE_NAMES
            for b in (node.body, node.orelse)) and "kind" in ast.unparse(node.test):
        return "picks a side by kind: query_side(kind) / key_side(kind)"
    return None


LAB_MARKS = ("native", "lab")  # the project's names for the lab's own code: native_dims, lab_setup
LAB_ONLY_DEPENDENCIES = {"sentencepiece"}  # the lab's tokenizer's; no other model needs it


@functools.cache
def _defined(path: Path, stamp: tuple[int, int]) -> frozenset[str]:
    """Public names defined at the top level of a module (functions, classes, assignments)."""
    out = set()
    for node in parse(path).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            out.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            out |= {t.id for t in targets if isinstance(t, ast.Name)}
    return frozenset(n for n in out if not n.startswith("_"))


def lab_names(root: Path) -> frozenset[str]:
    """Every public top-level name a module of model/backends/lab/ defines."""
    return frozenset().union(*(_defined(p, _stamp(p))
                               for p in sorted((root / "model" / "backends" / "lab")
                                               .glob("*.py"))))


def _marked(name: str) -> bool:
    words = name.lower().split("_")
    return any(w in LAB_MARKS for w in words)


def core_line(node: ast.AST, site: Site) -> str | None:
    """Why a top-level statement of a core module is the lab's, not the core's (rule `core`)."""
    if isinstance(node, ast.Import | ast.ImportFrom):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) \
            else [absolute(site.root, site.path, node)]
        for name in names:
            if name == "model.backends" or name.startswith("model.backends."):
                return f"imports {name}: the core imports no backend"
            if name.split(".")[0] in LAB_ONLY_DEPENDENCIES:
                return f"imports {name}, a dependency of the lab's model alone"
        return None
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        defined = [node.name]
    elif isinstance(node, ast.Assign | ast.AnnAssign):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        defined = [t.id for t in targets if isinstance(t, ast.Name)]
    else:
        return None
    for name in defined:
        if not name.startswith("_") and name in lab_names(site.root):
            return f"defines {name}, which model/backends/lab/ defines"
        if _marked(name):
            return f"defines {name}: named as the lab's own"
    return None


def is_core(rel: str) -> bool:
    """model/*.py but the public face (model/__init__.py) and the dispatcher (the one module
    that asks the registry for a bundle's backend)."""
    return rel.startswith("model/") and rel.count("/") == 1 \
        and rel not in ("model/__init__.py", "model/dispatch.py")


@dataclass(frozen=True)
class Rule:
    check: Check
    rooms: tuple[str, ...]  # path prefixes it reads
    exempt: dict[str, str]  # path prefix -> why it may
    top_level: bool = False  # reads only each module's top-level statements


RULES: dict[str, Rule] = {
    "kind": Rule(kind_line, ("app.py", "ui/", "viz/", "model/"),
                 {"model/backends/": "the one place that knows a model's kind"}),
    "backend import": Rule(backend_import, ("app.py", "ui/", "viz/", "model/"),
                           {"model/backends/": "a backend's own package"}),
    "sides": Rule(side_pick, ("app.py", "ui/", "viz/", "model/"),
                  {"model/capture.py": "defines the sides (KIND_SIDES, SIDE_STACK)"}),
    "core": Rule(core_line, ("model/",), {}, top_level=True),
}


def _applies(rule_name: str, rule: Rule, rel: str) -> bool:
    if not rel.startswith(rule.rooms) or rel.startswith(tuple(rule.exempt)):
        return False
    return is_core(rel) if rule_name == "core" else True


def _described(node: ast.AST) -> str:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return f"def {node.name}" if not isinstance(node, ast.ClassDef) else f"class {node.name}"
    text = ast.unparse(node)
    return text if len(text) <= 160 else text[:157] + "..."


def offenders(root: Path = ROOT, rules: dict[str, Rule] | None = None) -> dict[str, list[str]]:
    """{rule: ['path:line: code (why)', ...]}: every rule over every file it reads, in one
    walk of each file's tree."""
    rules = RULES if rules is None else rules
    found: dict[str, list[str]] = {name: [] for name in rules}
    for path in code_files(root, ("app.py", "ui", "viz", "model")):
        rel = str(path.relative_to(root))
        live = {n: r for n, r in rules.items() if _applies(n, r, rel)}
        if not live:
            continue
        site, tree = Site(root, path, rel), parse(path)
        nodes = list(ast.walk(tree))
        for name, rule in live.items():
            for node in tree.body if rule.top_level else nodes:
                why = rule.check(node, site)
                if why:
                    found[name].append(f"{rel}:{node.lineno}: {_described(node)} ({why})")
    return {name: sorted(hits) for name, hits in found.items()}


@functools.cache
def repo_offenders() -> dict[str, list[str]]:
    """offenders() of this checkout, computed once per test process (the rules' tests share
    one walk)."""
    return offenders(ROOT)


def check_code(code: str, rule: str, rel: str = "model/x.py", root: Path = ROOT) -> list[str]:
    """One rule on a snippet, as if it were the file `rel` (for the planted cases)."""
    checked, tree = RULES[rule], ast.parse(code)
    site = Site(root, root / rel, rel)
    return [f"{rel}:{n.lineno}: {_described(n)} ({why})"
            for n in (tree.body if checked.top_level else ast.walk(tree))
            if (why := checked.check(n, site))]


def stale_exemptions(root: Path = ROOT) -> list[str]:
    """'rule: prefix' for each exemption that names no file or folder of the repository."""
    named = [(name, prefix) for name, rule in RULES.items() for prefix in rule.exempt]
    named += [("backend import", prefix) for prefix in LAB_USERS]
    return sorted(f"{name}: {prefix}" for name, prefix in named
                  if not (root / prefix.rstrip("/")).exists())
