"""The steps view's mask sentence names only what this head's mask blocks in this line
(viz.steps.mask_caption). It said "pad keys, future positions" on every head: on MiniLM's
encoder (no causal mask) and on any line without padding. The expected sentence here comes from
the kind and the lengths (padding = a line shorter than the batch's padded length, future keys =
a causal self-attention with two or more queries), not from the mask matrix it reads."""

from __future__ import annotations

import pytest

from model import capture, load_checkpoint
from model.analysis.inspect import head_weights
from model.capture import key_side, query_side
from tests.hf_folders import save_families
from tests.unit.test_hf import make_model
from viz import steps
from viz.tour import trace_walk

FILL = "-1e9"
SENTENCE = {
    (True, True): "Mask: blocked cells (pad keys, future positions) set to -1e9",
    (False, True): "Mask: future positions (keys after the query) set to -1e9",
    (True, False): "Mask: padding keys set to -1e9",
}
NONE = "Mask: no cell is blocked in this line"


def expected(trace, walk, kind: str, b: int) -> str:
    padded = walk.blocked.shape[1]
    pads = trace.length(key_side(kind), b) < padded
    causal = kind == "dec_self" and trace.length(query_side(kind), b) > 1
    return SENTENCE.get((pads, causal), NONE)


def check(trace, walk, kind: str, b: int) -> None:
    got = steps.mask_caption(walk, trace, FILL)
    assert got.startswith(expected(trace, walk, kind, b)), (kind, b, got)


def test_lab_translator_every_kind_both_lines(bundle):
    """Line 0 is the shorter on both sides, so it has padding keys; line 1 has none."""
    trace = capture(bundle, ["Winter is cold.", "The big dog eats fish every day."],
                    ["겨울은 추워요.", "큰 개가 매일 생선을 먹어요."], target_lang="ko",
                    names=steps.act_names({k: bundle.n_layers(k) for k in bundle.kinds}))
    seen = set()
    for kind in bundle.kinds:
        for b in (0, 1):
            walk = steps.walkthrough(trace, head_weights(bundle, kind, 0), kind, 0, b, 0)
            check(trace, walk, kind, b)
            seen.add(expected(trace, walk, kind, b))
    assert seen == {*SENTENCE.values(), NONE}  # all four sentences met


@pytest.fixture(scope="module")
def hf(tmp_path_factory) -> dict:
    root = save_families(tmp_path_factory.mktemp("mask_caption"), ("bert", "gpt2"), make_model)
    return {f: load_checkpoint(root / f) for f in ("bert", "gpt2")}


@pytest.mark.parametrize("family", ["bert", "gpt2"])
def test_hugging_face_encoder_and_decoder(hf, family):
    """BERT: nothing blocked on one line, padding keys on the shorter of two; never 'future'.
    GPT-2: future keys on one line, both on the shorter of two."""
    bundle = hf[family]
    kind = "enc_self" if family == "bert" else "dec_self"
    for lines in (["the cat eats fish"], ["the cat", "the dog eats fish every day"]):
        trace = capture(bundle, lines)
        for b in range(len(lines)):
            check(trace, trace_walk(trace, kind, 0, b, 0), kind, b)
    one = capture(bundle, ["the cat eats fish"])
    got = steps.mask_caption(trace_walk(one, kind, 0, 0, 0), one, FILL)
    assert ("future" in got) == (family == "gpt2"), got
