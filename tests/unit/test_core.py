"""Issue 55: the core of model/ (model/*.py but the public face model/__init__.py and the
dispatcher model/dispatch.py) holds the contracts and the shared machinery only. The `core`
rule of the one boundary checker (tests/unit/boundaries.py) names any core module that imports
a backend or a dependency only the lab's model has (sentencepiece), or defines a public name a
module of model/backends/lab/ defines, or a name marked as the lab's own (native_*, lab_*).
No exemption of any rule may name a path that no longer exists."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.boundaries import (
    ROOT,
    check_code,
    is_core,
    lab_names,
    offenders,
    repo_offenders,
    stale_exemptions,
)


def test_the_core_holds_no_lab_code():
    bad = repo_offenders()["core"]
    assert not bad, "lab-only code in the core (move it to model/backends/lab/):\n" + \
        "\n".join(bad)


def test_no_exemption_is_stale():
    assert stale_exemptions() == []


def test_the_core_is_model_star_but_the_face_and_the_dispatcher():
    core = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "model").glob("*.py")
                  if is_core(str(p.relative_to(ROOT))))
    assert "model/capture.py" in core and "model/masks.py" in core
    assert "model/__init__.py" not in core and "model/dispatch.py" not in core
    assert not any("/backends/" in p or "/analysis/" in p for p in core)
    # the lab's own names are read from its package, not listed here
    assert {"Transformer", "Tokenizer", "ModelConfig", "capture_native", "greedy"} <= \
        lab_names(ROOT)


@pytest.mark.parametrize("code", [
    "def capture_native(bundle, batch): ...",  # marked as the lab's
    "def native_dims(bundle, batch): ...",
    "def _native_helper(): ...",  # private or not, named as the lab's
    "LAB_HOOKS = ('hook_q',)",
    "class Transformer:\n    pass",  # a name the lab defines
    "def greedy(model, src): ...",
    "from .backends.lab.decode import greedy",  # a backend
    "from .backends import backend_for",
    "import model.backends.hf.record",
    "import sentencepiece as spm",  # the lab tokenizer's dependency
])
def test_the_rule_finds_lab_code_in_a_core_module(code):
    assert check_code(code, "core", "model/x.py"), code


@pytest.mark.parametrize("code", [
    "class Trace:\n    pass",
    "MASK_FILL = -1e9",
    "from .hooks import Head, hooks",
    # top-level statements only: an import inside a function is test_layout's (its import
    # graph counts them, and the core may import no backend there either)
    "def capture(bundle, lines):\n    from .backends import x\n    return x",
    "def _read(path): ...",  # a private helper the lab has one of too: a name, not lab code
])
def test_the_rule_leaves_the_cores_own_code_alone(code):
    assert not check_code(code, "core", "model/x.py"), code


def test_the_face_the_dispatcher_and_the_rooms_above_are_not_the_core(tmp_path: Path):
    """The same lines planted in a scratch tree are named in a core module only."""
    line = "from .backends.lab.decode import greedy\n"
    for rel, text in {"model/__init__.py": line, "model/dispatch.py": "from .backends import "
                      "backend_for\n", "model/capture.py": line,
                      "model/analysis/x.py": "from ..backends import backend_for\n",
                      "model/backends/lab/decode.py": "def greedy(): ...\n",
                      "model/old.py": "def greedy(): ...\n"}.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    assert offenders(tmp_path)["core"] == [
        "model/capture.py:1: from .backends.lab.decode import greedy "
        "(imports model.backends.lab.decode: the core imports no backend)",
        "model/old.py:1: def greedy (defines greedy, which model/backends/lab/ defines)"]
