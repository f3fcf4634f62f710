"""Only model/backends/ knows which kind a model is (issue 35), read with `ast`, never by grep.

Outside model/backends/ (app.py, ui/, viz/, model/) no file may (tests/unit/boundaries.py, rules
`kind` and `backend import`):
- read `.lab` (Capabilities.lab): ask a named capability instead;
- name `is_lab` or `is_native` (define, import, call);
- compare a model kind or family with a string: anything with "native"/"hf", a `.model_type`
  with anything, a `.family` with a string other than the three shapes Capabilities.family
  takes ("seq2seq", "decoder", "encoder"), a bundle's `.kind` with anything;
- read a backend's own config: `.hf` (transformers' config) or a config's `.family`;
- import a backend's internals: any module under model.backends other than the package itself
  and its contract, model.backends.base (the public face and the training room may import the
  lab's: it re-exports its network; training/, which trains it, is a room beside model/).
Each finding names the file, the line and the code. tests/ may test a backend's insides.
"""

from __future__ import annotations

import pytest

from tests.unit.boundaries import check_code, offenders, repo_offenders


def test_no_model_specific_line_outside_the_backends():
    found = repo_offenders()
    bad = found["kind"] + found["backend import"]
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
    assert check_code(code, "kind"), code


@pytest.mark.parametrize("code", [
    'x = caps.family == "decoder"',
    'x = caps.family in ("seq2seq", "encoder")',
    'x = walk.kind == "enc_self"',
    'x = caps.teacher_forced and caps.logit_attribution',
    "x = trained_here(bundle)",
])
def test_the_check_leaves_capabilities_alone(code):
    assert not check_code(code, "kind"), code


def test_a_planted_backend_import_is_named(tmp_path):
    for rel, text in {"model/backends/__init__.py": "", "model/backends/base.py": "",
                      "model/backends/hf/__init__.py": "", "model/backends/hf/record.py": "",
                      "model/backends/lab/__init__.py": "",
                      "model/analysis/__init__.py": "",
                      "model/analysis/x.py": "from ..backends.hf.record import capture_hf\n"
                                             "from ..backends import capabilities\n"
                                             "from ..backends.base import Capabilities\n"
                                             "from ..backends.lab import LabBackend\n",
                      "model/y.py": "from .backends.lab import LabBackend\n",
                      "ui/y.py": "import model.backends.hf\n"}.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    # neither an analysis nor a core module may import the lab's modules
    assert offenders(tmp_path)["backend import"] == [
        "model/analysis/x.py:1: from ..backends.hf.record import capture_hf "
        "(imports model.backends.hf.record)",
        "model/analysis/x.py:4: from ..backends.lab import LabBackend "
        "(imports model.backends.lab)",
        "model/y.py:1: from .backends.lab import LabBackend (imports model.backends.lab)",
        "ui/y.py:1: import model.backends.hf (imports model.backends.hf)"]


def test_the_backends_never_import_what_is_built_on_them():
    """Inside model/, analysis/patching and the public face (model, model.dispatch) build on
    the backends, and the training room beside model/ on all of it; a backend imports only the
    core and its own package."""
    from tests.unit.test_layout import GRAPH

    above = ("model.analysis", "model.patching", "training", "model.dispatch")
    bad = sorted(f"{m} imports {d}" for m, deps in GRAPH.items()
                 if m.startswith("model.backends") for d in deps
                 if d == "model" or d.startswith(above))
    assert not bad, bad
