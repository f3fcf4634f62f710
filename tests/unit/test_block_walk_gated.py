"""The tour's steps 14 and 15 on RMS norms and gated FFNs: Backend.block_weights and
model.analysis.block_walk on tiny random Llama (RMSNorm, gate_proj/up_proj/down_proj with
SiLU), Gemma (its RMS norm scales by 1 + weight) and T5 (T5LayerNorm; DenseReluDense wi/wo
with ReLU, or gated-GELU wi_0/wi_1/wo) models, against transformers' own modules: each norm
and FFN run by the model itself on the same input, and the walk through layers 0 and 1
against the modules of a second, independent load hooked in its forward pass. The norms' γ
are randomised before saving (they are built as ones, Gemma's as zeros), so a walk that
dropped γ, or subtracted a mean, would fail. Gemma 2 (two more norms around its FFN) and a
seq2seq decoder layer (a norm after cross-attention) are refused."""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from model import capture, load_checkpoint  # noqa: E402
from model.analysis.block_walk import block_walk, layer_norm, normalise  # noqa: E402
from model.backends import backend_for  # noqa: E402
from tests.hf_folders import SPECIALS, WORDS, save_families  # noqa: E402
from tests.unit.test_block_walk import hooked  # noqa: E402
from tests.unit.test_hf import eager_twin, make_model  # noqa: E402

N = len(SPECIALS) + len(WORDS)
LINES = ["the cat eats fish every day .", "winter is cold"]
ATOL = 1e-5
DECODERS = ("llama", "gemma", "gemma2")


def build(family: str):
    import transformers as tf

    torch.manual_seed(0)
    if family in DECODERS:  # Gemma: RMS norm × (1 + weight); Gemma 2: two more norms
        model, config = {"llama": (tf.LlamaForCausalLM, tf.LlamaConfig),
                         "gemma": (tf.GemmaForCausalLM, tf.GemmaConfig),
                         "gemma2": (tf.Gemma2ForCausalLM, tf.Gemma2Config)}[family]
        return model(config(
            vocab_size=N, hidden_size=32, intermediate_size=48, num_hidden_layers=2,
            num_attention_heads=4, num_key_value_heads=2, head_dim=8, max_position_embeddings=64,
            pad_token_id=0, bos_token_id=2, eos_token_id=3)), "<s> $A"
    if family in ("marian", "gpt2"):  # test_hf's: tests/app/test_tour_gated reads gpt2 too
        return make_model(family)
    return tf.T5ForConditionalGeneration(tf.T5Config(
        vocab_size=N, d_model=16, d_kv=4, d_ff=32, num_layers=2, num_decoder_layers=2,
        num_heads=4, relative_attention_num_buckets=8, pad_token_id=0, eos_token_id=3,
        decoder_start_token_id=0,
        feed_forward_proj="gated-gelu" if family == "t5-gated" else "relu")), "$A </s>"


def random_gammas(model) -> None:
    """Every norm's γ away from 1, so the walk must read it."""
    gen = torch.Generator().manual_seed(1)
    for module in model.modules():
        if "Norm" in type(module).__name__:
            with torch.no_grad():
                module.weight.copy_(1 + 0.5 * torch.randn(module.weight.shape, generator=gen))


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    return save_families(tmp_path_factory.mktemp("gated"), (*DECODERS, "t5", "t5-gated",
                                                             "marian"), build, random_gammas)


def _layer(twin, family: str, layer: int):
    return twin.model.layers[layer] if family in DECODERS else twin.encoder.block[layer]


def _modules(block, family: str) -> dict:
    """(norm before attention, norm before the FFN, FFN, FFN's output Linear) of one layer."""
    if family in DECODERS:
        return {"ln_attn": block.input_layernorm, "ln_ffn": block.post_attention_layernorm,
                "ffn": block.mlp, "down": block.mlp.down_proj}
    return {"ln_attn": block.layer[0].layer_norm, "ln_ffn": block.layer[1].layer_norm,
            "ffn": block.layer[1].DenseReluDense, "down": block.layer[1].DenseReluDense.wo}


@pytest.mark.parametrize("family", ["llama", "gemma", "t5", "t5-gated"])
def test_norms_and_ffn_equal_the_models_own_modules(family, folders):
    """block_weights' norms and FFN on one input against the model's LlamaRMSNorm / LlamaMLP /
    T5LayerNorm / T5DenseActDense / T5DenseGatedActDense on the same input."""
    bundle = load_checkpoint(folders / family)
    kind = "dec_self" if family in DECODERS else "enc_self"
    twin = eager_twin(folders / family)
    x = torch.randn(5, bundle.model.config.hidden_size if family in DECODERS else 16,
                    generator=torch.Generator().manual_seed(2)) * 3 + 1.0  # (5, D) mean ≠ 0
    x64 = x.double().numpy()
    for layer in (0, 1):
        w = backend_for(bundle).block_weights(kind, layer)
        mods = _modules(_layer(twin, family, layer), family)
        with torch.no_grad():
            want = {name: mods[name](x).double().numpy() for name in ("ln_attn", "ln_ffn", "ffn")}
        assert w["norm_kind"] == "rms" and w["norm"] == "pre" and "beta" not in w["ln_attn"]
        for name in ("ln_attn", "ln_ffn"):
            np.testing.assert_allclose(normalise(x64, w[name]), want[name], atol=ATOL,
                                       err_msg=f"{family} {layer} {name}")
            # a LayerNorm with the same γ (mean removed) is far from it: the check can fail
            as_layer = layer_norm(x64, {**w[name], "beta": 0 * w[name]["gamma"]})
            assert np.abs(as_layer - want[name]).max() > 1e-2
        gated = family != "t5"
        assert (w["W_gate"] is not None) == gated
        if gated:
            hidden = w["act"](x64 @ w["W_gate"] + w["b_gate"]) * (x64 @ w["W_in"] + w["b_in"])
        else:
            hidden = w["act"](x64 @ w["W_in"] + w["b_in"])
        np.testing.assert_allclose(hidden @ w["W_out"] + w["b_out"], want["ffn"], atol=ATOL,
                                   err_msg=f"{family} {layer} ffn")
    expect = {"llama": ("silu", {"in": "up_proj", "out": "down_proj", "gate": "gate_proj"}),
              "gemma": ("gelu_pytorch_tanh", {"in": "up_proj", "out": "down_proj",
                                              "gate": "gate_proj"}),
              "t5": ("relu", {"in": "wi", "out": "wo", "gate": ""}),
              "t5-gated": ("gelu_new", {"in": "wi_1", "out": "wo", "gate": "wi_0"})}[family]
    assert (w["activation"], w["parts"]) == expect


@pytest.mark.parametrize("family", ["llama", "gemma", "t5", "t5-gated"])
def test_walk_matches_the_hooked_layer(family, folders):
    """Layer 0 and 1 of a padded sentence: the FFN's input (the second RMS norm's output), its
    hidden units (down_proj's / wo's input), its output and the layer's output."""
    bundle = load_checkpoint(folders / family)
    twin = eager_twin(folders / family)
    trace = capture(bundle, LINES, names={"attn", "v", "hidden"})
    kind, side, stack = (("dec_self", "tgt", "dec") if family in DECODERS
                         else ("enc_self", "src", "enc"))
    b = 1  # the shorter sentence: padded in the batch
    m = trace.length(side, b)
    enc = bundle.tokenizer(LINES[b], return_tensors="pt")
    for layer in (0, 1):
        walk = block_walk(bundle, trace, kind, layer, b)
        block = _layer(twin, family, layer)
        mods = _modules(block, family)
        got, handles = hooked(twin, {"ffn_in": mods["ln_ffn"], "ffn_out": mods["ffn"],
                                      "out": block})
        pre, more = hooked(twin, {"hidden": mods["down"]}, inputs=True)
        try:
            with torch.no_grad():
                (twin if family in DECODERS else twin.encoder)(**enc)
        finally:
            for h in handles + more:
                h.remove()
        got.update(pre)
        for name in ("ffn_in", "hidden", "ffn_out", "out"):
            np.testing.assert_allclose(getattr(walk, name), got[name][0, :m], atol=ATOL,
                                       err_msg=f"{family} layer {layer} {name}")
        if layer == 0:  # hidden[2] of a 2-layer stack is after the final norm
            np.testing.assert_allclose(walk.out, trace.hidden[stack][1, b, :m], atol=ATOL)
        assert walk.norm == "pre" and walk.norm_kind == "rms"
        assert walk.gated == (family != "t5")
        if walk.gated:
            np.testing.assert_allclose(walk.hidden, walk.gate * walk.up, atol=1e-12)
            assert np.abs(walk.up - walk.hidden).max() > 1e-3  # the gate changes the units
        else:
            assert (walk.hidden == 0).any() and (walk.hidden >= 0).all()  # ReLU


def test_gemma_style_norm_and_extra_norms(folders):
    """An RMS norm that scales by 1 + weight (Gemma's) is read as γ = 1 + weight, checked on
    the module; a block holding a norm the walk would not apply is refused: Marian's decoder
    layer (a norm after cross-attention) and a Llama layer given a third norm."""
    bundle = load_checkpoint(folders / "llama")
    norm = bundle.model.model.layers[0].input_layernorm
    x = torch.randn(4, 32, generator=torch.Generator().manual_seed(3)) + 0.5

    class OnePlus(torch.nn.Module):  # Gemma's RMS norm: x / rms · (1 + weight)
        def __init__(self):
            super().__init__()
            self.weight = torch.nn.Parameter(norm.weight.detach().clone() - 1)
            self.eps = norm.variance_epsilon

        def forward(self, h):
            return h / torch.sqrt(h.pow(2).mean(-1, keepdim=True) + self.eps) * (1 + self.weight)

    layer = bundle.model.model.layers[0]
    kept = layer.input_layernorm
    try:
        layer.input_layernorm = OnePlus()
        w = backend_for(bundle).block_weights("dec_self", 0)
        with torch.no_grad():
            want = layer.input_layernorm(x).double().numpy()
        np.testing.assert_allclose(normalise(x.double().numpy(), w["ln_attn"]), want, atol=ATOL)
        layer.extra_norm = torch.nn.LayerNorm(32)
        with pytest.raises(ValueError, match="extra_norm"):
            backend_for(bundle).block_weights("dec_self", 0)
    finally:
        layer.input_layernorm = kept
        if hasattr(layer, "extra_norm"):
            del layer.extra_norm
    gemma2 = load_checkpoint(folders / "gemma2")
    with pytest.raises(ValueError, match="pre_feedforward_layernorm"):
        backend_for(gemma2).block_weights("dec_self", 0)
    gemma = backend_for(load_checkpoint(folders / "gemma")).block_weights("dec_self", 0)
    weight = load_checkpoint(folders / "gemma").model.model.layers[0].input_layernorm.weight
    np.testing.assert_allclose(gemma["ln_attn"]["gamma"], 1 + weight.detach().double().numpy())
    marian = load_checkpoint(folders / "marian")
    with pytest.raises(ValueError, match="encoder_attn_layer_norm"):
        backend_for(marian).block_weights("dec_self", 0)
    assert backend_for(marian).block_weights("enc_self", 0)["norm_kind"] == "layer"


@pytest.mark.parametrize("family,kind", [("llama", "RMSNorm"), ("t5", "RMSNorm"),
                                         ("marian", "LayerNorm")])
def test_facts_name_the_norm_the_walk_rebuilds(folders, family, kind):
    # the sidebar's card line reads Facts.norm_kind: T5's norm is an RMS norm though its class
    # is called T5LayerNorm; the walk (block_weights' own γ probe) must agree with the words
    from model.backends import facts

    bundle = load_checkpoint(folders / family)
    assert facts(bundle).norm_kind == kind
    walked = backend_for(bundle).block_weights("dec_self" if family in DECODERS else "enc_self",
                                               0)
    assert walked["norm_kind"] == {"RMSNorm": "rms", "LayerNorm": "layer"}[kind]
