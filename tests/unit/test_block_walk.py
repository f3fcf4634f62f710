"""The tour's steps 14 and 15 on Hugging Face models (issue 54): a layer's norm, FFN and
activation rebuilt from the weights (model.analysis.block_walk over Backend.block_weights),
against transformers' own module outputs, hooked on a second, independent load of the folder:
BERT's BertSelfOutput (LN(x + attention)), BertIntermediate (after GELU) and BertOutput (the
layer's output); GPT-2's MLP input to c_proj (after its activation) and the block's output,
and that GPT-2 stays two LayerNorms and an ungated FFN (test_block_walk_gated: Llama, T5)."""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from model import capture, load_checkpoint  # noqa: E402
from model.analysis.block_walk import block_walk  # noqa: E402
from model.backends import MINILM_FOLDER, backend_for  # noqa: E402
from tests.conftest import ROOT, installed_minilm  # noqa: E402
from tests.hf_folders import make_tokenizer  # noqa: E402
from tests.unit.test_hf import eager_twin, make_model  # noqa: E402

LINES = ["the cat eats fish every day .", "winter is cold"]
MINILM = ROOT / "checkpoints" / MINILM_FOLDER
ATOL = 1e-5


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("block_walk")
    for family in ("bert", "gpt2"):
        model, template = make_model(family)
        model.save_pretrained(root / family, safe_serialization=True)
        make_tokenizer(template).save_pretrained(root / family)
    return root


def hooked(model, modules: dict, inputs: bool = False) -> tuple[dict, list]:
    got, handles = {}, []
    for name, module in modules.items():
        if inputs:
            def keep(mod, args, name=name):
                got[name] = args[0].detach().double().numpy()
            handles.append(module.register_forward_pre_hook(keep))
        else:
            def keep(mod, args, out, name=name):
                got[name] = (out[0] if isinstance(out, tuple) else out).detach().double().numpy()
            handles.append(module.register_forward_hook(keep))
    return got, handles


def _bert_check(bundle, twin, tok_lines, b: int, layer: int) -> None:
    trace = capture(bundle, tok_lines, names={"attn", "v", "hidden"})
    walk = block_walk(bundle, trace, "enc_self", layer, b)
    m = trace.length("src", b)
    block = twin.encoder.layer[layer]
    got, handles = hooked(twin, {"normed": block.attention.output,
                                  "hidden": block.intermediate, "out": block.output})
    try:
        enc = bundle.tokenizer(tok_lines[b], return_tensors="pt")
        with torch.no_grad():
            twin(**enc)
    finally:
        for h in handles:
            h.remove()
    for name in ("normed", "hidden", "out"):
        np.testing.assert_allclose(getattr(walk, name), got[name][0, :m], atol=ATOL,
                                   err_msg=name)
    np.testing.assert_allclose(walk.out, trace.hidden["enc"][layer + 1, b, :m], atol=ATOL)
    assert walk.norm == "post" and walk.ffn_in is walk.normed


def test_bert_steps_14_and_15_match_transformers(folders):
    bundle = load_checkpoint(folders / "bert")
    twin = eager_twin(folders / "bert")
    for layer in (0, 1):
        _bert_check(bundle, twin, LINES, 1, layer)  # sentence 2: padded in the batch
    w = backend_for(bundle).block_weights("enc_self", 0)
    assert w["activation"] == "gelu" and w["W_in"].shape == (16, 32)
    assert w["norm_kind"] == "layer" and w["W_gate"] is None and w["parts"]["gate"] == ""


def test_gpt2_pre_norm_walk_matches_transformers(folders):
    bundle = load_checkpoint(folders / "gpt2")
    twin = eager_twin(folders / "gpt2")
    trace = capture(bundle, LINES, names={"attn", "v", "hidden"})
    b, layer = 0, 1
    walk = block_walk(bundle, trace, "dec_self", layer, b)
    m = trace.length("tgt", b)
    block = twin.transformer.h[layer]
    got, handles = hooked(twin, {"hidden": block.mlp.c_proj}, inputs=True)
    try:
        enc = bundle.tokenizer(LINES[b], return_tensors="pt")
        with torch.no_grad():
            out = twin(**enc, output_hidden_states=True)
    finally:
        for h in handles:
            h.remove()
    np.testing.assert_allclose(walk.hidden, got["hidden"][0, :m], atol=ATOL)
    np.testing.assert_allclose(walk.out, out.hidden_states[layer + 1][0, :m].double().numpy(),
                               atol=ATOL)
    assert walk.norm == "pre" and walk.activation == "gelu_new"
    assert np.abs(walk.ffn_in - walk.added).max() > 1e-3  # LN₂ sits before the FFN
    # the RMS-norm and gated-FFN paths leave GPT-2 as it was: two LayerNorms, one Linear in
    w = backend_for(bundle).block_weights("dec_self", layer)
    assert w["norm_kind"] == "layer" and w["W_gate"] is None and walk.gate is None
    assert walk.norm_kind == "layer" and not walk.gated and walk.parts == ("c_fc", "c_proj", "")
    ln = twin.transformer.h[layer].ln_2
    np.testing.assert_array_equal(w["ln_ffn"]["beta"], ln.bias.detach().double().numpy())
    np.testing.assert_allclose(walk.hidden, w["act"](walk.pre_activation), atol=1e-12)


def test_minilm_gelu_matches_transformers():
    installed_minilm()
    from transformers import AutoModel

    bundle = load_checkpoint(MINILM)
    twin = AutoModel.from_pretrained(MINILM, attn_implementation="eager").eval()
    _bert_check(bundle, twin, ["The cat sat on the mat.", "Winter is cold."], 0, 0)
    walk = block_walk(bundle, capture(bundle, ["Winter is cold."], names={"attn", "v", "hidden"}),
                      "enc_self", 0, 0)
    assert walk.activation == "gelu" and walk.hidden.shape[1] == 1536
    assert (walk.hidden < 0).any()  # GELU lets small negative values through (ReLU would not)
