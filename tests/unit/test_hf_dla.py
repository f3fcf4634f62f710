"""Direct logit attribution on Hugging Face decoder-only models (tiny GPT-2 and Llama built here):
the terms add up to the logit, each head's term is that head's own write, knock-out is exact."""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from model import capture, load_checkpoint  # noqa: E402
from model.analysis.contributions import head_contributions  # noqa: E402
from model.backends.hf.contributions import final_norm  # noqa: E402
from model.backends.hf.projections import projection_modules  # noqa: E402
from model.hooks import attn_prefix, hooks  # noqa: E402
from tests.hf_folders import save_families  # noqa: E402
from tests.unit.test_qk_terms import hf_model  # noqa: E402

TEXT = "the cat eats fish every day . winter is cold"


@pytest.fixture(scope="module")
def bundles(tmp_path_factory):
    families = ("gpt2", "llama", "bert")
    root = save_families(tmp_path_factory.mktemp("dla_models"), families, hf_model)
    return {family: load_checkpoint(root / family) for family in families}


@pytest.mark.parametrize("family", ["gpt2", "llama"])
@pytest.mark.parametrize("step", [None, 3])
def test_terms_add_up_to_the_logit(bundles, family, step):
    bundle = bundles[family]
    c = head_contributions(bundle, TEXT, step=step)
    assert c.dla is not None and set(c.dla) == {"dec_self"}
    assert c.dla["dec_self"].shape == (2, 4)
    assert c.dla_total() == pytest.approx(c.logit, abs=1e-4)
    # the model's own logit, from a capture of the same text
    t = capture(bundle, [TEXT], names=["logits"])
    assert c.logit == pytest.approx(float(t.logits[0, c.step, c.token_id]), abs=1e-4)
    assert {f"MLP layer {i}" for i in range(2)} <= set(c.other)
    # another token than the argmax adds up too
    other = head_contributions(bundle, TEXT, step=step, token_id=7)
    assert other.dla_total() == pytest.approx(other.logit, abs=1e-4)


def _head_writes(bundle, step: int) -> np.ndarray:
    """(L, H, D): each head's write at `step`, through the model's own output-projection module
    on a context where every other head is zero (minus the module's bias)."""
    model = bundle.model
    n_layers, n_heads = bundle.n_layers("dec_self"), bundle.config.n_heads
    got = {}

    def keep(x, name):
        got[name] = x[0, :, step].detach().clone()  # (H, Dh)

    names = [f"{attn_prefix('dec_self', i)}.hook_context" for i in range(n_layers)]
    ids = torch.tensor([bundle.tokenizer(TEXT)["input_ids"]])
    with torch.inference_mode(), hooks(dict.fromkeys(names, keep)):
        model(input_ids=ids, use_cache=False)
    mods = projection_modules(model, "decoder")["dec_self"]
    out = []
    for layer, name in enumerate(names):
        ctx = got[name]
        rows = []
        for h in range(n_heads):
            only = torch.zeros_like(ctx)
            only[h] = ctx[h]
            with torch.inference_mode():
                rows.append((mods[layer](only.reshape(1, -1))
                             - mods[layer](torch.zeros_like(only).reshape(1, -1)))[0].double())
        out.append(torch.stack(rows))
    return torch.stack(out).numpy()


def _through_final(bundle, x_last: np.ndarray, parts: np.ndarray, token: int) -> np.ndarray:
    """parts (..., D) through the final norm frozen at x_last, dotted with the token's row."""
    norm = final_norm(bundle.model)
    gamma = norm.weight.detach().double().numpy()
    w = bundle.model.get_output_embeddings().weight.detach().double().numpy()[token]
    if isinstance(norm, torch.nn.LayerNorm):
        sigma = np.sqrt(x_last.var() + norm.eps)
        return ((parts - parts.mean(-1, keepdims=True)) * gamma / sigma) @ w
    rms = np.sqrt((x_last ** 2).mean() + norm.variance_epsilon)
    return (parts * gamma / rms) @ w


@pytest.mark.parametrize("family", ["gpt2", "llama"])
def test_each_head_term_is_that_heads_own_write(bundles, family):
    """Computed another way (the output-projection module on one head's context): swapping
    or rolling heads' terms within dec_self keeps the sum and fails here."""
    bundle = bundles[family]
    c = head_contributions(bundle, TEXT, step=4)
    n_layers = bundle.n_layers("dec_self")
    got = {}
    name = f"decoder.layers.{n_layers - 1}.hook_resid_post"
    ids = torch.tensor([bundle.tokenizer(TEXT)["input_ids"]])
    def keep(x, n):  # returns None: the model's tensor goes on unchanged
        got[n] = x[0, 4].double()

    with torch.inference_mode(), hooks({name: keep}):
        bundle.model(input_ids=ids, use_cache=False)
    want = _through_final(bundle, got[name].numpy(), _head_writes(bundle, 4), c.token_id)
    np.testing.assert_allclose(c.dla["dec_self"], want, atol=1e-5)
    assert np.ptp(want) > 1e-3  # heads differ, so a swap would show


def test_knockout_is_the_logit_change_of_a_separate_run(bundles):
    bundle = bundles["llama"]
    c = head_contributions(bundle, TEXT, step=5)
    base = capture(bundle, [TEXT], names=["logits"]).logits[0, 5, c.token_id]
    gone = capture(bundle, [TEXT], names=["logits"], ablate={("dec_self", 1, 2)})
    assert c.knockout["dec_self"][1, 2] == pytest.approx(
        float(gone.logits[0, 5, c.token_id] - base), abs=1e-4)


def test_encoder_models_are_refused(bundles):
    with pytest.raises(ValueError, match="decoder-only Hugging Face"):
        head_contributions(bundles["bert"], TEXT)
