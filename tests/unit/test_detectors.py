"""model.analysis.detectors: hand-built attention patterns, and the detectors on a tiny model."""

from __future__ import annotations

import numpy as np
import pytest

from model import capture
from model.analysis import detect_heads
from model.analysis.detectors import (
    DETECTORS,
    induction_score,
    quick_detectors,
    ranked,
    run_ids,
    shuffled_inputs,
)
from model.capture import Trace

# one sentence: a marker, then a 4-token sequence twice: <s> a b c d a b c d
IDS = [2, 5, 6, 7, 8, 5, 6, 7, 8]
PIECES = ["<s>", "a", "b", "c", "d", "a", "b", "c", "d"]
N = len(IDS)
HEADS = ("previous", "first", "induction", "duplicate", "self")


def _pattern(name: str) -> np.ndarray:
    """(Q, K) attention of one hand-built head, causal, rows summing to 1."""
    a = np.zeros((N, N), np.float32)
    for q in range(N):
        k = q  # by default a query looks at itself
        if name == "previous" and q >= 1:
            k = q - 1
        elif name == "first":
            k = 0
        elif name == "induction" and q >= 5:
            k = q - 4 + 1  # the token after the first copy of this one
        elif name == "duplicate" and q >= 5:
            k = q - 4  # the earlier copy of this same token
        a[q, k] = 1.0
    return a


def hand_trace(kind: str = "dec_self", heads=HEADS) -> Trace:
    """One layer, one sentence, a head per pattern, on the target (decoder) side."""
    attn = np.stack([_pattern(h) for h in heads])[None, None]  # (1, 1, H, Q, K)
    blocked = np.triu(np.ones((N, N), bool), 1)[None] if kind == "dec_self" \
        else np.zeros((1, N, N), bool)
    ids = np.array([IDS], np.int64)
    side = dict(tgt_tokens=[PIECES], tgt_ids=ids, src_tokens=[[]],
                src_ids=np.zeros((1, 0), np.int64))
    if kind == "enc_self":
        side = dict(src_tokens=[PIECES], src_ids=ids, tgt_tokens=[[]],
                    tgt_ids=np.zeros((1, 0), np.int64))
    return Trace(**side, masks={kind: blocked}, scores={}, attn={kind: attn}, q={}, k={}, v={},
                 hidden={}, pos_table=np.zeros((1, 1), np.float32), logits=None)


@pytest.mark.parametrize("kind", ["dec_self", "enc_self"])
def test_hand_built_heads_are_found(kind):
    t = hand_trace(kind)
    got = quick_detectors(t)
    prev, dup, sink = (got[d][kind][0] for d in ("previous_token", "duplicate_token", "sink"))
    h = {name: i for i, name in enumerate(HEADS)}
    assert prev[h["previous"]] == pytest.approx(1.0)
    assert prev.argmax() == h["previous"] and prev[h["first"]] == pytest.approx(1 / (N - 1))
    # the first-position head: all of every row on position 0 (the marker <s>)
    assert sink[h["first"]] == pytest.approx(1.0) and sink.argmax() == h["first"]
    assert sink[h["previous"]] < 0.5
    # copies: in causal attention only queries 5..8 have one (earlier), and the duplicate head
    # puts all on it; bidirectional, queries 1..4 have one too (later), which it ignores
    assert dup[h["duplicate"]] == pytest.approx(1.0 if kind == "dec_self" else 0.5)
    assert dup[h["self"]] == pytest.approx(0.0) and dup[h["induction"]] == pytest.approx(0.0)
    total, rows = induction_score(t, kind, prefix=1, length=4)
    ind = total[0] / rows
    assert ind[h["induction"]] == pytest.approx(1.0)
    assert ind.argmax() == h["induction"] and ind[h["duplicate"]] == pytest.approx(0.0)
    assert all(0.0 <= x <= 1.0 for d in got.values() for a in d.values() for x in a.ravel()
               if np.isfinite(x))
    # no punctuation piece in the sentence: that detector counts no row (NaN, an empty map)
    assert np.isnan(got["punctuation"][kind]).all()


def test_ranked_orders_heads():
    t = hand_trace()
    rows = ranked(quick_detectors(t)["sink"])
    assert rows[0][:3] == ("dec_self", 0, HEADS.index("first"))
    assert [r[3] for r in rows] == sorted((r[3] for r in rows), reverse=True)


def test_shuffle_keeps_markers_and_the_multiset():
    t = hand_trace()
    _, tgt = shuffled_inputs(t)
    assert tgt[0][0] == 2 and sorted(tgt[0]) == sorted(IDS) and tgt[0] != IDS


def test_run_ids_reproduces_the_capture(bundle):
    t = capture(bundle, ["The cat eats fish.", "Winter is cold."], ["고양이", "겨울"],
                target_lang="ko", names=["attn"])
    src = [list(t.src_ids[b, : len(x)]) for b, x in enumerate(t.src_tokens)]
    tgt = [list(t.tgt_ids[b, : len(x)]) for b, x in enumerate(t.tgt_tokens)]
    again = run_ids(bundle, src, tgt)
    for kind in t.attn:
        assert np.abs(again.attn[kind] - t.attn[kind]).max() < 1e-5
        assert (again.masks[kind] == t.masks[kind]).all()


def test_detect_heads_on_a_tiny_model(bundle):
    t = capture(bundle, ["The cat eats fish.", "Winter is cold."], ["고양이", "겨울"],
                target_lang="ko", names=["attn"])
    got = detect_heads(bundle, t)
    assert set(got) == set(DETECTORS)
    assert set(got["previous_token"]) == {"enc_self", "dec_self"}
    assert set(got["sink"]) == set(got["positional"]) == {"enc_self", "dec_self", "cross"}
    for detector, kinds in got.items():
        for kind, a in kinds.items():
            assert a.shape == (bundle.n_layers(kind), bundle.config.n_heads)
            if detector == "punctuation" and kind == "dec_self":
                assert np.isnan(a).all()  # the Korean targets (its keys) have no punctuation
                continue
            assert np.isfinite(a).all() and (a >= 0).all() and (a <= 1).all()
    quick = detect_heads(bundle, t, run=False)
    assert "induction" not in quick and "positional" not in quick
    np.testing.assert_allclose(quick["sink"]["cross"], got["sink"]["cross"])
    # validation traces join the sink average: a different value
    more = detect_heads(bundle, t, run=False, validation=[capture(
        bundle, ["My friend reads a book."], ["친구"], target_lang="ko", names=["attn"])])
    assert not np.allclose(more["sink"]["enc_self"], quick["sink"]["enc_self"])


def test_a_sink_on_a_fixed_token_that_is_not_first():
    """Every query of head 0 on the closing marker </s>: a sink although position 0 gets 0."""
    pieces, ids = ["a", "b", "c", "</s>"], np.array([[5, 6, 7, 3]], np.int64)
    attn = np.zeros((1, 1, 2, 4, 4), np.float32)
    attn[0, 0, 0, :, 3] = 1.0
    attn[0, 0, 1] = np.eye(4)
    t = Trace(src_tokens=[pieces], tgt_tokens=[[]], src_ids=ids,
              tgt_ids=np.zeros((1, 0), np.int64), masks={"enc_self": np.zeros((1, 4, 4), bool)},
              scores={}, attn={"enc_self": attn}, q={}, k={}, v={}, hidden={},
              pos_table=np.zeros((1, 1), np.float32), logits=None)
    sink = quick_detectors(t)["sink"]["enc_self"][0]
    assert sink[0] == pytest.approx(1.0) and sink[1] == pytest.approx(0.25)
