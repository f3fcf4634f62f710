"""Positions of Hugging Face models: rotary frequencies, T5's bias, scores by distance, and the
positional view's figures for them (hand-worked values and the families' own formulas)."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import torch

from model.analysis.distance import score_by_distance
from model.backends.hf.positions import position_kind, rotary_frequencies, t5_bias
from viz import positional


def test_score_by_distance_hand_worked():
    scores = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]])
    causal = np.triu(np.ones((3, 3), bool), k=1)
    d, mean = score_by_distance(scores, causal)
    assert d.tolist() == [-2, -1, 0]
    np.testing.assert_allclose(mean, [7.0, (4 + 8) / 2, (1 + 5 + 9) / 3])
    d, mean = score_by_distance(scores, np.ones((3, 3), bool))
    assert len(d) == len(mean) == 0


def test_rotary_frequencies_are_the_llama_formula():
    import transformers as tf

    cfg = tf.LlamaConfig(hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                         num_key_value_heads=1, intermediate_size=8, vocab_size=20,
                         rope_theta=10000.0)
    theta = rotary_frequencies(tf.LlamaForCausalLM(cfg))
    d_head = 16
    np.testing.assert_allclose(theta, 10000.0 ** (-np.arange(0, d_head, 2) / d_head), rtol=1e-6)


def test_t5_bias_is_the_models_compute_bias():
    import transformers as tf

    torch.manual_seed(0)
    model = tf.T5ForConditionalGeneration(tf.T5Config(
        vocab_size=20, d_model=8, d_kv=4, d_ff=8, num_layers=1, num_decoder_layers=1,
        num_heads=2, relative_attention_num_buckets=8, decoder_start_token_id=0))
    bias = t5_bias(model, 5)
    assert set(bias) == {"encoder", "decoder"} and bias["encoder"].shape == (2, 5, 5)
    table = model.encoder.block[0].layer[0].SelfAttention.relative_attention_bias.weight
    # distance 0 is bucket 0 in both directions: the diagonal is row 0 of the table
    np.testing.assert_allclose(np.diagonal(bias["encoder"], axis1=1, axis2=2).T,
                               table[0].detach().numpy()[None].repeat(5, 0), atol=1e-7)

    class Bundle:
        pass

    b = Bundle()
    b.model = model
    assert position_kind(b, np.zeros((1, 8), np.float32)) == "t5"
    fig = positional.t5_bias_heatmap(bias["decoder"], 1, "decoder")
    go.Figure(fig.to_dict())
    np.testing.assert_allclose(fig.data[0].z, bias["decoder"][1])


def test_rotary_distance_figure():
    theta = np.array([1.0, 0.1, 0.01])
    fig = positional.rotary_distance(theta, 4, (np.array([-1, 0]), np.array([0.5, 2.0])),
                                     "layer 0 head 1")
    go.Figure(fig.to_dict())
    ideal = np.asarray(fig.data[0].y)
    assert ideal[4] == 6.0  # d = 0: Σ 2 cos 0 over 3 pairs = Dh
    np.testing.assert_allclose(ideal[5], 2 * np.cos(theta).sum())
    assert list(fig.data[1].x) == [-1, 0]
    go.Figure(positional.rotary_frequencies(theta).to_dict())
