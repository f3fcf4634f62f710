"""model.analysis.qk_terms: the terms add up to the recorded score (≤ 1e-4) on the lab's two
variants and on tiny GPT-2, BERT, Llama and T5 models built here."""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from model import capture, load_checkpoint  # noqa: E402
from model.analysis import qk_terms  # noqa: E402
from tests.hf_folders import SPECIALS, WORDS, save_families  # noqa: E402

N = len(SPECIALS) + len(WORDS)
LINES = ["the cat eats fish every day .", "winter is cold"]


def hf_model(family: str):
    from transformers import (
        BertConfig,
        BertModel,
        GPT2Config,
        GPT2LMHeadModel,
        LlamaConfig,
        LlamaForCausalLM,
        T5Config,
        T5ForConditionalGeneration,
    )

    torch.manual_seed(0)
    if family == "gpt2":
        return GPT2LMHeadModel(GPT2Config(vocab_size=N, n_embd=16, n_layer=2, n_head=4,
                                          n_positions=32, bos_token_id=2, eos_token_id=3,
                                          pad_token_id=0)), None
    if family == "bert":
        return BertModel(BertConfig(vocab_size=N, hidden_size=16, num_hidden_layers=2,
                                    num_attention_heads=2, intermediate_size=32,
                                    max_position_embeddings=32, pad_token_id=0)), \
            "[CLS] $A [SEP]"
    if family == "llama":
        return LlamaForCausalLM(LlamaConfig(
            vocab_size=N, hidden_size=32, intermediate_size=48, num_hidden_layers=2,
            num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
            pad_token_id=0, bos_token_id=2, eos_token_id=3)), "<s> $A"
    return T5ForConditionalGeneration(T5Config(
        vocab_size=N, d_model=16, d_kv=4, d_ff=32, num_layers=2, num_decoder_layers=2,
        num_heads=4, relative_attention_num_buckets=8, pad_token_id=0, eos_token_id=3,
        decoder_start_token_id=0)), "$A </s>"


@pytest.fixture(scope="module")
def hf_bundles(tmp_path_factory):
    families = ("gpt2", "bert", "llama", "t5")
    root = save_families(tmp_path_factory.mktemp("qk_models"), families, hf_model)
    return {family: load_checkpoint(root / family) for family in families}


def _cells(trace, kind: str, n: int = 6):
    """A few (layer, batch, head, query, key) unblocked cells, first and last layer included."""
    rng = np.random.default_rng(0)
    n_l, n_b, n_h, _, _ = trace.scores[kind].shape
    out = []
    for i in range(n):
        b = i % n_b
        layer = [0, n_l - 1][i % 2]
        n_q = len(trace.tgt_tokens[b] if kind != "enc_self" else trace.src_tokens[b])
        free = np.argwhere(~trace.masks[kind][b][:n_q])  # real queries, unblocked keys
        q, k = free[rng.integers(len(free))]
        out.append((layer, b, int(rng.integers(n_h)), int(q), int(k)))
    return out


def _assert_adds_up(bundle, trace, kind: str, expect: set[str] | None = None) -> dict:
    terms = {}
    for layer, b, h, q, k in _cells(trace, kind):
        terms = qk_terms(bundle, trace, kind, layer, h, q, k, batch=b)
        want = float(trace.scores[kind][layer, b, h, q, k])
        assert sum(terms.values()) == pytest.approx(want, abs=1e-4), (layer, b, h, q, k, terms)
        if expect is not None:
            assert expect <= set(terms), terms
    return terms


ADDED = {"token·token", "token·position", "position·token", "position·position", "bias"}


def test_lab_variants_add_up(variant_bundle):
    t = capture(variant_bundle, ["The cat eats fish.", "Winter is cold."], target_lang="ko")
    for kind in ("enc_self", "dec_self", "cross"):
        _assert_adds_up(variant_bundle, t, kind, ADDED)
    # layer 0 of self-attention: the embedding alone, no earlier layers' term
    zero = qk_terms(variant_bundle, t, "enc_self", 0, 1, 2, 1)
    assert set(zero) == ADDED
    later = qk_terms(variant_bundle, t, "enc_self", 1, 1, 2, 1)
    assert {"layers·embedding", "embedding·layers", "layers·layers"} <= set(later)


def _layer0_position_input(bundle, t, q: int) -> np.ndarray:
    """What layer 0's attention reads of position q's table row (sentence 0): the row itself
    (post-LN: the input is tok + pos), or its share of the pre-attention LayerNorm frozen at
    the whole input's scale, γ ⊙ (p − mean p) / σ(x) (pre-LN; β belongs to the bias term)."""
    p = t.pos_table[t.positions["enc"][0][q]].astype(np.float64)
    if bundle.config.norm == "post":
        return p
    norm = bundle.model.encoder.layers[0].attn_block.norm
    x = t.hidden["enc"][0, 0, q].astype(np.float64)  # the layer's input, tok + pos
    return norm.weight.detach().double().numpy() * (p - p.mean()) / np.sqrt(x.var() + norm.eps)


def test_lab_layer0_position_term_is_the_positions_own_product(variant_bundle):
    """At layer 0, position·position is (W_q^h p̂_q)·(W_k^h p̂_k)/√Dh from the table, the
    weights and (pre-LN) the first LayerNorm alone, p̂ as _layer0_position_input says."""
    t = capture(variant_bundle, ["The cat eats fish."], target_lang="ko")
    attn = variant_bundle.model.encoder.layers[0].self_attn
    dh = variant_bundle.config.d_model // variant_bundle.config.n_heads
    w_q = attn.w_q.weight.detach().double().numpy()[dh:2 * dh]
    w_k = attn.w_k.weight.detach().double().numpy()[dh:2 * dh]
    p_q, p_k = (_layer0_position_input(variant_bundle, t, i) for i in (3, 1))
    want = (w_q @ p_q) @ (w_k @ p_k) / np.sqrt(dh)
    got = qk_terms(variant_bundle, t, "enc_self", 0, 1, 3, 1)["position·position"]
    assert got == pytest.approx(want, abs=1e-5)


@pytest.mark.parametrize("family,kind", [("gpt2", "dec_self"), ("bert", "enc_self")])
def test_added_position_models_add_up(hf_bundles, family, kind):
    bundle = hf_bundles[family]
    t = capture(bundle, LINES)
    _assert_adds_up(bundle, t, kind, ADDED)


def test_rotary_bands_add_up_with_grouped_heads(hf_bundles):
    bundle = hf_bundles["llama"]
    t = capture(bundle, LINES)
    assert len(set(t.kv_groups.tolist())) == 2  # 4 query heads read 2 key/value heads
    terms = _assert_adds_up(bundle, t, "dec_self")
    assert len(terms) == 4 and all(name.startswith("θ") for name in terms)  # Dh 8: 4 pairs


def test_t5_content_plus_bias(hf_bundles):
    bundle = hf_bundles["t5"]
    t = capture(bundle, LINES, ["cold winter", "the cat"])
    for kind in ("enc_self", "dec_self"):
        terms = _assert_adds_up(bundle, t, kind, {"content q·k", "relative-position bias"})
        assert terms["relative-position bias"] != 0.0
    assert set(_assert_adds_up(bundle, t, "cross")) == {"content q·k"}


def test_bad_addresses_are_refused(variant_bundle):
    t = capture(variant_bundle, ["The cat eats fish."], target_lang="ko")
    with pytest.raises(ValueError, match="head must be between"):
        qk_terms(variant_bundle, t, "enc_self", 0, 9, 0, 0)
    with pytest.raises(ValueError, match="no recorded scores"):
        qk_terms(variant_bundle, t, "nope", 0, 0, 0, 0)
