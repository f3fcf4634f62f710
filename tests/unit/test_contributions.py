"""Head contributions to one predicted logit: checked against the model's own forward passes."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from model import capture
from model.analysis.contributions import head_contributions
from model.hooks import attn_prefix

from .conftest import make_bundle

SRC = "the cat eats fish every day ."
TGT = "고양이는 매일 생선을 먹어요."


@pytest.fixture(scope="module")
def pre(tokenizer):
    return make_bundle(tokenizer, norm="pre", pos_encoding="learned", activation="gelu")


@pytest.fixture(scope="module")
def post(tokenizer):
    return make_bundle(tokenizer, norm="post", pos_encoding="sinusoidal", activation="relu")


def test_direct_attributions_and_the_other_terms_add_up_to_the_logit(pre):
    for step in (0, 3, None):
        c = head_contributions(pre, SRC, TGT, target_lang="ko", step=step)
        full = capture(pre, [SRC], [TGT], target_lang="ko", names=["logits"])
        assert c.logit == pytest.approx(float(full.logits[0, c.step, c.token_id]), abs=1e-5)
        assert c.token_id == int(full.logits[0, c.step].argmax())
        assert set(c.dla) == {"dec_self", "cross"}
        assert abs(c.dla_total() - c.logit) <= 1e-4, (step, c.dla_total(), c.logit)
        assert any("FFN" in k for k in c.other) and "embedding" in c.other


@pytest.mark.parametrize("step", [2, None])
def test_every_heads_attribution_from_its_own_context_and_w_o(pre, step):
    """Every head of every kind and layer, rebuilt independently: head h's recorded context
    placed alone in h's slot of that layer's real W_O Linear (bias off), through the frozen
    final LayerNorm's scale, onto the predicted token's unembedding row."""
    c = head_contributions(pre, SRC, TGT, target_lang="ko", step=step)
    cfg = pre.config
    last = f"decoder.layers.{cfg.n_dec_layers - 1}.hook_resid_post"
    prefixes = {(kind, layer): attn_prefix(kind, layer) for kind in ("dec_self", "cross")
                for layer in range(cfg.n_dec_layers)}
    tr = capture(pre, [SRC], [TGT], target_lang="ko",
                 names=[f"{p}.hook_context" for p in prefixes.values()] + [last])
    ln = pre.model.decoder.final_norm
    resid = torch.from_numpy(tr.acts[last][0, c.step]).double()
    sigma = torch.sqrt(resid.var(unbiased=False) + ln.eps)
    unembed = pre.model.tok_embed.weight[c.token_id].detach().double()
    assert set(c.dla) == {"dec_self", "cross"}
    for (kind, layer), prefix in prefixes.items():
        assert c.dla[kind].shape == (cfg.n_dec_layers, cfg.n_heads)
        lin = pre.model.get_submodule(prefix).w_o
        context = tr.acts[f"{prefix}.hook_context"][0]  # (H, n, Dh)
        d_h = context.shape[-1]
        for head in range(cfg.n_heads):
            x = torch.zeros(lin.in_features)
            x[head * d_h:(head + 1) * d_h] = torch.from_numpy(context[head, c.step])
            with torch.no_grad():
                out = (lin(x) - (lin.bias if lin.bias is not None else 0)).double()
            moved = (out - out.mean()) * ln.weight.detach().double() / sigma
            expect = float(moved @ unembed)
            assert c.dla[kind][layer, head] == pytest.approx(expect, abs=1e-5), (
                kind, layer, head)


def test_knockout_matches_a_run_with_that_head_ablated_on_post_ln(post):
    step = 2
    c = head_contributions(post, SRC, TGT, target_lang="ko", step=step)
    assert c.dla is None and np.isnan(c.dla_total())
    base = capture(post, [SRC], [TGT], target_lang="ko", names=["logits"]).logits[0, step]
    for head in (("enc_self", 0, 1), ("dec_self", 1, 0), ("cross", 1, 3)):
        after = capture(post, [SRC], [TGT], target_lang="ko", ablate={head},
                        names=["logits"]).logits[0, step]
        kind, layer, h = head
        assert c.knockout[kind][layer, h] == pytest.approx(
            float(after[c.token_id] - base[c.token_id]), abs=1e-4)
        top = c.knockout_top[head]
        change = after.astype(np.float64) - base
        assert top["promotes"][0][1] == pytest.approx(float(-change.min()), abs=1e-4)
        assert top["suppresses"][0][1] == pytest.approx(float(-change.max()), abs=1e-4)
    assert set(c.knockout) == {"enc_self", "dec_self", "cross"}


def test_top_tokens_and_bad_steps(pre):
    c = head_contributions(pre, SRC, TGT, target_lang="ko", step=1, k=5)
    promoted = c.dla_top[("cross", 0, 0)]["promotes"]
    assert len(promoted) == 5 and [v for _, v in promoted] == sorted(
        (v for _, v in promoted), reverse=True)
    with pytest.raises(ValueError, match="step"):
        head_contributions(pre, SRC, TGT, target_lang="ko", step=99)


def _valid(fig):
    import plotly.graph_objects as go

    return go.Figure(fig.to_dict())  # plotly's own validation of every property


def test_figures_for_both_measures_escape_tokens(pre, post):
    from viz import contributions as vc

    c = head_contributions(pre, SRC, TGT, target_lang="ko", step=1)
    c.token = "</script><b>x"
    for measure in ("dla", "knockout"):
        fig = _valid(vc.heads_figure(c, measure))
        assert "<b>x" not in fig.layout.title.text and "&lt;/script&gt;" in fig.layout.title.text
        _valid(vc.top_tokens_figure(c, ("cross", 1, 2), measure))
    terms = _valid(vc.terms_figure(c))
    assert sum(terms.data[0].x) == pytest.approx(c.logit, abs=1e-4)
    c_post = head_contributions(post, SRC, TGT, target_lang="ko", step=1)
    _valid(vc.heads_figure(c_post, "knockout"))
    with pytest.raises(ValueError, match="pre-LN"):
        vc.heads_figure(c_post, "dla")
    with pytest.raises(ValueError, match="pre-LN"):
        vc.terms_figure(c_post)
