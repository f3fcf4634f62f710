"""One vocabulary for sides (issue 35): model/capture.py defines which side ("src"/"tgt", or
its stack "enc"/"dec") each attention kind's queries and keys come from, and Trace.tokens(side),
Trace.ids(side), Trace.length(side, b) read them. An `ast` check names any other module that
writes its own side map, picks src_*/tgt_* fields by a condition, or picks a side by kind."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from model.capture import KIND_SIDES, Trace, key_side, query_side, side_of
from tests.unit.test_layout import code_files

ROOT = Path(__file__).resolve().parents[2]
HOME = "model/capture.py"
OWNED_ELSEWHERE = ("ui/tour/",)  # another engineer's this round (see test_backend_boundary)
SIDE_NAMES = {"src", "tgt", "enc", "dec"}
KEYS = {"enc_self", "dec_self", "cross", "enc", "dec", "src", "tgt"}
FIELDS = {"src_tokens", "tgt_tokens", "src_ids", "tgt_ids"}


def _leaves(node: ast.AST) -> list[ast.AST]:
    return [n for e in node.elts for n in _leaves(e)] if isinstance(node, ast.Tuple) else [node]


def side_maps(source: str, filename: str = "<source>") -> list[str]:
    """'file:line: code' for each dict literal mapping kinds or sides to side names, and each
    conditional choosing between a Trace's src_* and tgt_* fields."""
    found = []
    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, ast.Dict) and len(node.keys) >= 2 and all(
                isinstance(k, ast.Constant) and k.value in KEYS for k in node.keys):
            leaves = [v for value in node.values for v in _leaves(value)]
            if all(isinstance(v, ast.Constant) and v.value in SIDE_NAMES for v in leaves):
                found.append(f"{filename}:{node.lineno}: {ast.unparse(node)}")
        elif isinstance(node, ast.IfExp) and {getattr(node.body, "attr", None),
                                               getattr(node.orelse, "attr", None)} & FIELDS:
            found.append(f"{filename}:{node.lineno}: {ast.unparse(node)}")
        elif isinstance(node, ast.IfExp) and all(
                isinstance(b, ast.Constant) and b.value in SIDE_NAMES
                for b in (node.body, node.orelse)) and "kind" in ast.unparse(node.test):
            found.append(f"{filename}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_no_side_map_outside_the_trace():
    bad = []
    for p in code_files(ROOT, ("app.py", "ui", "viz", "model")):
        rel = str(p.relative_to(ROOT))
        if rel != HOME and not rel.startswith(OWNED_ELSEWHERE):
            bad += side_maps(p.read_text(encoding="utf-8"), rel)
    assert not bad, "use model.capture's sides and Trace.tokens/ids/length:\n" + "\n".join(bad)


@pytest.mark.parametrize("code", [
    '_Q_SIDE = {"enc_self": "src", "dec_self": "tgt", "cross": "tgt"}',
    '_SIDES = {"enc_self": ("src", "src"), "dec_self": ("tgt", "tgt"), "cross": ("tgt", "src")}',
    '_TOKENS = {"enc": "src", "dec": "tgt"}',
    'x = trace.src_tokens if side == "src" else trace.tgt_tokens',
    'n = trace.length("src" if kind == "enc_self" else "tgt", b)',
])
def test_the_check_finds_side_maps(code):
    assert side_maps(code), code


@pytest.mark.parametrize("code", [
    '_SIDES = {"enc": "encoder", "dec": "decoder"}',
    'SIDES = {"src": (N_("encoder input"), "enc"), "tgt": (N_("decoder input"), "dec")}',
    'x = trace.tokens(query_side(kind))',
])
def test_the_check_leaves_labels_alone(code):
    assert not side_maps(code), code


def test_trace_sides():
    tr = Trace(src_tokens=[["a", "b"], ["c"]], tgt_tokens=[["x"], ["y", "z", "w"]],
               src_ids=np.array([[1, 2], [3, 0]]), tgt_ids=np.array([[4, 0, 0], [5, 6, 7]]),
               masks={}, scores={}, attn={}, q={}, k={}, v={}, hidden={},
               pos_table=np.zeros((1, 1), np.float32), logits=None, pad_id=0)
    assert tr.tokens("src") is tr.tokens("enc") is tr.src_tokens
    assert tr.ids("dec") is tr.ids("tgt") is tr.tgt_ids
    assert [tr.length(s, 1) for s in ("src", "tgt", "enc", "dec")] == [1, 3, 1, 3]
    assert [(query_side(k), key_side(k)) for k in KIND_SIDES] == list(KIND_SIDES.values())
    assert KIND_SIDES["cross"] == ("tgt", "src")
    with pytest.raises(ValueError, match="side must be"):
        side_of("source")
