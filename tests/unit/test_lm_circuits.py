"""Issue 37's worked example on the shipped language model (checkpoints/lm, skipped while it is
not there): its best induction head's keys read the previous-token head.

- K-composition: among the layer-0 heads, the induction head composes most with a
  previous-token head, well above the random baseline;
- on a repeated sequence, where the head attends from the second copy to the token after the
  first copy, the largest key-side share of its score is a previous-token head's output."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from model import capture, load_checkpoint
from model.analysis import composition_scores, detect_heads, qk_components
from tests.conftest import needs

LM = Path(__file__).resolve().parents[2] / "checkpoints" / "lm"
REPEATED = "river mill barn hill sky lamp river mill barn hill sky lamp"

pytestmark = needs((LM / "model.safetensors").is_file(),
                                reason="checkpoints/lm is not shipped yet")


@pytest.fixture(scope="module")
def lm():
    bundle = load_checkpoint(LM)
    trace = capture(bundle, [REPEATED])
    found = detect_heads(bundle, trace)
    return bundle, trace, found["induction"]["dec_self"], found["previous_token"]["dec_self"]


def test_the_induction_head_k_composes_with_a_previous_token_head(lm):
    bundle, _, induction, previous = lm
    head = int(np.argmax(induction[1]))
    scores = composition_scores(bundle)
    k = scores["k"]["dec_self"][1, head, 0]  # (H,) over layer-0 heads
    best = int(np.argmax(k))
    assert previous[0, best] > 0.5, (k, previous[0])
    assert k[best] > 2 * scores["baseline"]["k"]["dec_self"]


def test_its_largest_key_side_term_is_a_previous_token_head(lm):
    bundle, trace, induction, previous = lm
    n = len(trace.tgt_tokens[0])
    period = (n - 1) // 2  # <s> then the pieces twice
    query = n - 2  # in the second copy
    key = query - period + 1  # the piece after the query's first copy
    # every layer-1 head scores about 0.9 on random tokens; at this query the one that does
    # the induction move here is the one with the most weight on that key
    attn = trace.attn["dec_self"][1, 0, :, query, key]
    head = int(np.argmax(attn))
    assert induction[1, head] > 0.5 and attn[head] > 0.5, (attn, induction[1])
    c = qk_components(bundle, trace, "dec_self", 1, head, query, key)
    assert abs(c.terms.sum() + c.bias - c.score) < 1e-4
    side = c.terms.sum(axis=0)
    top = c.key_parts[int(np.argmax(side))]
    assert top.startswith("L0H") and previous[0, int(top[3:])] > 0.5, (top, side)


def test_l1h5_reads_l0h2_wherever_it_does_the_induction_move(lm):
    """The closing note's example: the shipped induction head L1 H5 and previous-token head
    L0 H2. At every second-copy query where L1 H5 puts over half its weight on the piece after
    the query's first copy, L0 H2's output is the largest key-side term of that score, and L0 H2
    is the layer-0 head L1 H5 K-composes with most."""
    bundle, trace, induction, previous = lm
    assert induction[1, 5] > 0.9 and previous[0, 2] > 0.9
    k_comp = composition_scores(bundle)["k"]["dec_self"][1, 5, 0]
    assert int(np.argmax(k_comp)) == 2, k_comp
    toks = trace.tgt_tokens[0]
    moves = 0
    for query in range(len(toks)):
        firsts = [p for p in range(query - 1) if toks[p] == toks[query]]
        if not firsts or trace.attn["dec_self"][1, 0, 5, query, firsts[-1] + 1] <= 0.5:
            continue
        c = qk_components(bundle, trace, "dec_self", 1, 5, query, firsts[-1] + 1)
        side = c.terms.sum(axis=0)
        assert c.key_parts[int(np.argmax(side))] == "L0H2", (query, dict(zip(c.key_parts, side)))
        moves += 1
    assert moves >= 3
