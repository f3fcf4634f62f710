"""The logit lens on Hugging Face decoder-only models (GPT-2 and a grouped-kv Llama): its last
layer reads exactly the model's own next-piece distribution (transformers records that state
after the final norm), every earlier layer goes through the final norm first, and models
without a decoder-only output layer are refused by name."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from model import capture, load_checkpoint
from model.analysis.lens import logit_lens
from model.backends import backend_for, capabilities
from tests.hf_folders import SPECIALS, WORDS, save_families, wide_gpt2
from tests.unit.test_hf import make_model

TEXT = ["the cat eats fish every day .", "winter is cold"]


def build(family: str):
    import transformers as tf

    if family != "llama":
        return make_model(family)
    torch.manual_seed(0)
    cfg = tf.LlamaConfig(vocab_size=len(SPECIALS) + len(WORDS), hidden_size=24,
                         num_hidden_layers=3, num_attention_heads=6, num_key_value_heads=2,
                         intermediate_size=32, max_position_embeddings=32, pad_token_id=0,
                         bos_token_id=2, eos_token_id=3)
    return tf.LlamaForCausalLM(cfg), "<s> $A"


@pytest.fixture(scope="module")
def bundles(tmp_path_factory):
    root = save_families(tmp_path_factory.mktemp("lens"), ("gpt2", "llama", "bert"), build)
    return {f: load_checkpoint(root / f) for f in ("gpt2", "llama", "bert")}


@pytest.mark.parametrize("family", ["gpt2", "llama"])
def test_last_layer_of_the_lens_is_the_models_output(bundles, family):
    bundle = bundles[family]
    assert capabilities(bundle).logit_lens
    trace = capture(bundle, TEXT, names={"hidden", "logits"})
    for b in range(len(TEXT)):
        lens = logit_lens(bundle, trace, b, k=3)
        n = len(lens["tokens"])
        assert lens["layers"] == list(range(bundle.config.n_dec_layers + 1))
        logits = trace.logits[b, :n].astype(np.float64)
        p = np.exp(logits - logits.max(-1, keepdims=True))
        p /= p.sum(-1, keepdims=True)
        for pos in range(n):
            want = np.argsort(-p[pos])[:3]
            got = [piece for piece, _ in lens["top"][-1][pos]]
            pieces = backend_for(bundle).vocabulary()
            assert got == [pieces[i] for i in want]
            assert lens["top"][-1][pos][0][1] == pytest.approx(p[pos, want[0]], abs=1e-5)


def test_earlier_layers_go_through_the_final_norm(bundles):
    bundle = bundles["llama"]
    trace = capture(bundle, TEXT[:1], names={"hidden"})
    states = torch.tensor(trace.hidden["dec"][:, 0])
    model = bundle.model
    with torch.no_grad():
        want = model.lm_head(model.model.norm(states[1])).numpy()
        got = backend_for(bundle).unembed(states).numpy()
    np.testing.assert_allclose(got[1], want, atol=1e-5)
    with pytest.raises(ValueError, match="L \\+ 1"):
        backend_for(bundle).unembed(states[:2])


def test_an_encoder_has_no_lens(bundles):
    assert not capabilities(bundles["bert"]).logit_lens
    with pytest.raises(ValueError):
        backend_for(bundles["bert"]).unembed(torch.zeros(3, 2, 16))


def test_output_rows_beyond_the_tokenizer_are_named_by_id(tmp_path):
    """A model whose output is wider than its tokenizer (vocabularies padded to a round size;
    the GPT-2-small shape of 50,257 rows over the tests' word list): the lens's top pieces
    can be rows no piece names. It raised IndexError (the embeddings view's lens could not be
    drawn); such a row is now "[id i]", and every probability is still the model's own."""
    n = len(SPECIALS) + len(WORDS)
    bundle = load_checkpoint(save_families(tmp_path, ("gpt2",), lambda _f: wide_gpt2(40)) / "gpt2")
    assert len(backend_for(bundle).vocabulary()) == n
    trace = capture(bundle, TEXT[:1], names={"hidden", "logits"})
    lens = logit_lens(bundle, trace, 0, k=n + 40)  # every row, so the unnamed ones too
    logits = trace.logits[0].astype(np.float64)
    p = np.exp(logits - logits.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    pieces = backend_for(bundle).vocabulary()
    for pos, row in enumerate(lens["top"][-1]):
        want = np.argsort(-p[pos])
        assert [piece for piece, _ in row] == [
            pieces[i] if i < n else f"[id {i}]" for i in want]
        np.testing.assert_allclose([q for _, q in row], p[pos, want], atol=1e-5)
