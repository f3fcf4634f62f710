"""Issue 37's worked example on the shipped `paper`: on "The cat eats fish." the first decoder
step (<s>, which predicts ▁고양이) reads ▁cat through every layer-2 cross head. Their keys find
▁cat mostly by the encoder's positional term (the subject's slot), then its token embedding;
what they write promotes ▁고양이 more than any other piece (direct effect, post-LN norms
frozen). Measured 23:20 UTC on HEAD's paper: attention 0.989-0.997, positional term +2.74 to
+4.19 of scores 7.76-9.73."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from model import capture, load_checkpoint
from model.analysis import ov_components, qk_components

PAPER = Path(__file__).resolve().parents[2] / "checkpoints" / "paper"


@pytest.fixture(scope="module")
def run():
    bundle = load_checkpoint(PAPER)
    return bundle, capture(bundle, ["The cat eats fish."])


def test_layer_2_cross_heads_carry_cat_into_goyangi(run):
    bundle, trace = run
    cat = trace.src_tokens[0].index("▁cat")
    assert trace.tgt_tokens[0][1] == "▁고양이"
    for head in range(bundle.config.n_heads):
        assert trace.attn["cross"][2, 0, head, 0, cat] > 0.9
        c = qk_components(bundle, trace, "cross", 2, head, 0, cat)
        side = c.terms.sum(axis=0)  # what each encoder component adds to the score
        assert c.key_parts[int(np.argmax(side))] == "position", (head, side)
        o = ov_components(bundle, trace, "cross", 2, head, 0)
        assert o.promoted[0][0] == "▁고양이", (head, o.promoted[:3])
