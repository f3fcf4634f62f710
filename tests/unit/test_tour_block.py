"""The tour's steps 3, 13 and 14 on a Hugging Face model. model.analysis.token_rows (step 3)
against the embedding table read by parameter name. viz.tour.attention_block: layer 0's
attention output rebuilt from the recorded weights and values and the backend's W_O, b_O,
against what transformers' own output projection computed (a forward hook), and x + output
against the residual sum the next norm reads: a post-norm BERT and a pre-norm GPT-2."""

from __future__ import annotations

import os

import numpy as np
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from model import capture, load_checkpoint  # noqa: E402
from model.analysis.embedding_rows import token_rows  # noqa: E402
from model.backends import backend_for  # noqa: E402
from tests.hf_folders import make_tokenizer  # noqa: E402
from tests.unit.test_qk_terms import hf_model  # noqa: E402
from viz.tour import attention_block  # noqa: E402

LINES = ["the cat eats fish", "winter is"]
# per family: the output projection of layer 0's attention, and the module whose input is
# the residual sum x + output (BERT's post-norm LayerNorm, GPT-2's pre-FFN norm)
TABLES = {"bert": "embeddings.word_embeddings.weight", "gpt2": "transformer.wte.weight"}
MODULES = {"bert": ("encoder.layer.0.attention.output.dense",
                    "encoder.layer.0.attention.output.LayerNorm"),
           "gpt2": ("transformer.h.0.attn.c_proj", "transformer.h.0.ln_2")}


@pytest.fixture(scope="module", params=sorted(MODULES))
def recorded(request, tmp_path_factory):
    family = request.param
    model, template = hf_model(family)
    folder = tmp_path_factory.mktemp("tour_block") / family
    model.save_pretrained(folder, safe_serialization=True)
    make_tokenizer(template).save_pretrained(folder)
    bundle = load_checkpoint(folder)
    seen: dict[str, np.ndarray] = {}
    mods = dict(bundle.model.named_modules())
    proj, norm = MODULES[family]
    handles = [mods[proj].register_forward_hook(
                   lambda m, i, o: seen.__setitem__("out", o.detach().double().numpy())),
               mods[norm].register_forward_hook(
                   lambda m, i, o: seen.__setitem__("sum", i[0].detach().double().numpy()))]
    try:
        trace = capture(bundle, LINES)
    finally:
        for h in handles:
            h.remove()
    return family, bundle, trace, seen


def test_attention_output_and_residual_sum_match_transformers(recorded):
    family, bundle, trace, seen = recorded
    kind = "enc_self" if family == "bert" else "dec_self"
    hid = "enc" if family == "bert" else "dec"
    weights = backend_for(bundle).circuit_weights(kind, 0)
    for b in range(len(LINES)):
        m = len(trace.src_tokens[b] if family == "bert" else trace.tgt_tokens[b])
        concat, out = attention_block(trace, weights, kind, 0, b)
        h, dh = trace.v[kind].shape[2], trace.v[kind].shape[-1]
        assert concat.shape[1] == h * dh
        np.testing.assert_allclose(out[:m], seen["out"][b, :m], atol=1e-5)
        x = trace.hidden[hid][0, b, :m].astype(np.float64)
        np.testing.assert_allclose(x + out[:m], seen["sum"][b, :m], atol=1e-5)


def test_token_rows_are_the_tables_rows(recorded):
    family, bundle, trace, _seen = recorded
    table = dict(bundle.model.named_parameters())[TABLES[family]].detach().numpy()
    ids = trace.src_ids if family == "bert" else trace.tgt_ids
    for b in range(len(LINES)):
        np.testing.assert_array_equal(token_rows(bundle, ids[b]), table[ids[b]])
    with pytest.raises(ValueError):
        token_rows(bundle, np.array([table.shape[0]]))
