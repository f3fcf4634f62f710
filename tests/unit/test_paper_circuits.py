"""Issue 37's worked example on the shipped `paper`: on "The cat eats fish." the first decoder
step (<s>, which predicts ▁고양이) reads ▁cat through every layer-2 cross head. Their keys find
▁cat mostly by the encoder's positional term (the subject's slot), then its token embedding;
what they write promotes ▁고양이 among the first two pieces (direct effect, post-LN norms
frozen). On the weights shipped for issue 42 (2026-11-27): attention 0.995-0.999, positional
term +3.67 to +5.11 of scores 7.71-9.12; ▁고양이 first for heads 0, 2 and 3, second for head 1
after ▁마리 (the counter for animals: 2.26 against 2.13). The weights before it had ▁고양이
first in all four. On the weights retrained in session 21 (bare family nouns read "my"):
▁고양이 first for heads 2 and 3, second for head 0 (after ".") and head 1 (after ▁마리)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from model import capture, load_checkpoint
from model.analysis import ov_components, qk_components
from tests.floors import holds

PAPER = Path(__file__).resolve().parents[2] / "checkpoints" / "paper"


@pytest.fixture(scope="module")
def run():
    bundle = load_checkpoint(PAPER)
    return bundle, capture(bundle, ["The cat eats fish."])


def test_layer_2_cross_heads_carry_cat_into_goyangi(run):
    bundle, trace = run
    cat = trace.src_tokens[0].index("▁cat")
    assert trace.tgt_tokens[0][1] == "▁고양이"
    firsts = []
    for head in range(bundle.config.n_heads):
        assert trace.attn["cross"][2, 0, head, 0, cat] > 0.9
        c = qk_components(bundle, trace, "cross", 2, head, 0, cat)
        side = c.terms.sum(axis=0)  # what each encoder component adds to the score
        assert c.key_parts[int(np.argmax(side))] == "position", (head, side)
        o = ov_components(bundle, trace, "cross", 2, head, 0)
        firsts.append(o.promoted[0][0])
        assert "▁고양이" in [t for t, _ in o.promoted[:2]], (head, o.promoted[:3])
    assert holds("paper_cross_heads_goyangi_first", firsts.count("▁고양이")), firsts
