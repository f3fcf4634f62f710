"""model.analysis.lens: the last layer's lens is the model's own output, and earlier layers
read the same unembedding."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

from model import capture
from model.analysis.lens import logit_lens
from tests.unit.conftest import make_bundle

SOURCES = ["the cat eats fish", "winter is cold"]
TARGETS = ["고양이는 생선을 먹어요", "겨울은 추워요"]


@pytest.mark.parametrize("norm", ["pre", "post"])
def test_last_layer_is_the_models_output_distribution(tokenizer, norm):
    bundle = make_bundle(tokenizer, norm=norm)
    trace = capture(bundle, SOURCES, TARGETS, target_lang="ko")
    for b in range(len(SOURCES)):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # the Trace is read-only: no torch warning
            lens = logit_lens(bundle, trace, b, k=3)
        n = len(trace.tgt_tokens[b])
        assert lens["layers"] == list(range(bundle.config.n_dec_layers + 1))
        assert lens["tokens"] == list(trace.tgt_tokens[b])
        # oracle: softmax of the logits the real forward pass returned, ranked by numpy
        probs = torch.softmax(torch.tensor(trace.logits[b, :n]), -1).numpy()
        for t in range(n):
            order = np.argsort(-probs[t])[:3]
            got = lens["top"][-1][t]
            assert [p for p, _ in got] == [tokenizer.id_to_piece(int(i)) for i in order]
            np.testing.assert_allclose([q for _, q in got], probs[t, order], rtol=1e-4)


def test_an_early_layer_is_the_unembedded_residual(tokenizer):
    bundle = make_bundle(tokenizer, norm="pre")
    trace = capture(bundle, SOURCES, TARGETS, target_lang="ko")
    lens = logit_lens(bundle, trace, 1, k=1)
    n = len(trace.tgt_tokens[1])
    h = torch.tensor(trace.hidden["dec"][1, 1, :n])  # after decoder layer 1
    model = bundle.model
    with torch.no_grad():
        p = torch.softmax(model.project(model.decoder.final_norm(h)), -1)
    top_p, top_i = p.max(-1)
    assert [row[0][0] for row in lens["top"][1]] == [tokenizer.id_to_piece(int(i)) for i in top_i]
    np.testing.assert_allclose([row[0][1] for row in lens["top"][1]], top_p.numpy(), rtol=1e-4)
