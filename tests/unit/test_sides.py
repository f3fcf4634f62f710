"""One vocabulary for sides (issue 35): model/capture.py defines which side ("src"/"tgt", or
its stack "enc"/"dec") each attention kind's queries and keys come from, and Trace.tokens(side),
Trace.ids(side), Trace.length(side, b) read them. An `ast` check (tests/unit/boundaries.py, rule
`sides`) names any other module that writes its own side map, picks src_*/tgt_* fields by a
condition, or picks a side by kind."""

from __future__ import annotations

import numpy as np
import pytest

from model.capture import KIND_SIDES, Trace, key_side, query_side, side_of
from tests.unit.boundaries import check_code, repo_offenders


def test_no_side_map_outside_the_trace():
    bad = repo_offenders()["sides"]
    assert not bad, "use model.capture's sides and Trace.tokens/ids/length:\n" + "\n".join(bad)


@pytest.mark.parametrize("code", [
    '_Q_SIDE = {"enc_self": "src", "dec_self": "tgt", "cross": "tgt"}',
    '_SIDES = {"enc_self": ("src", "src"), "dec_self": ("tgt", "tgt"), "cross": ("tgt", "src")}',
    '_TOKENS = {"enc": "src", "dec": "tgt"}',
    'x = trace.src_tokens if side == "src" else trace.tgt_tokens',
    'n = trace.length("src" if kind == "enc_self" else "tgt", b)',
])
def test_the_check_finds_side_maps(code):
    assert check_code(code, "sides"), code


@pytest.mark.parametrize("code", [
    '_SIDES = {"enc": "encoder", "dec": "decoder"}',
    'SIDES = {"src": (N_("encoder input"), "enc"), "tgt": (N_("decoder input"), "dec")}',
    'x = trace.tokens(query_side(kind))',
])
def test_the_check_leaves_labels_alone(code):
    assert not check_code(code, "sides"), code


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
