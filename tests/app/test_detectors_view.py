"""Heads › Detectors through AppTest on the tiny 'paper' checkpoint: the maps show
model.analysis.detect_heads' numbers, the sink takes validation pairs, a head opens."""

from __future__ import annotations

import numpy as np
import torch

from model import load_checkpoint
from model.analysis.detectors import detect_heads, quick_detectors
from tests.app import test_views_heads_bertviz as base
from tests.app.conftest import run_app
from tests.app.test_views import array, charts, ok, texts

TEXT, heads_part = base.TEXT, base.heads_part
models, paper, trace = base.models, base.paper, base.trace  # the tiny checkpoints' fixtures


def _maps(at) -> dict[str, np.ndarray]:
    return {f["layout"]["meta"]["kind"]: array(f["data"][0]["z"]) for f in charts(at)
            if "detector" in f["layout"].get("meta", {})}


def previous_token_by_hand(trace, kind: str) -> np.ndarray:
    """(L, H): mean weight a real query q ≥ 1 puts on key q − 1, over every sentence, from
    the Trace's own attention array (not through model.analysis)."""
    side = {"enc_self": "src", "dec_self": "tgt"}[kind]
    attn = trace.attn[kind].astype(np.float64)  # (L, B, H, Q, K)
    total, rows = np.zeros(attn.shape[::2][:2]), 0  # (L, H)
    for b, pieces in enumerate(trace.tokens(side)):
        n = len(pieces)
        q = np.arange(1, n)
        total += attn[:, b][:, :, q, q - 1].sum(-1)  # (L, H)
        rows += n - 1
    return total / rows


def test_previous_token_map_is_the_weight_on_the_key_before(models, paper, trace):
    """The drawn previous-token maps against the attention weights themselves."""
    at = heads_part(run_app({"view": "heads", "text": TEXT}), "detectors")
    ok(at)
    got = _maps(at)
    assert set(got) == {"enc_self", "dec_self"}
    for kind, z in got.items():
        want = previous_token_by_hand(trace, kind)
        assert z.shape == want.shape
        np.testing.assert_allclose(z, want, atol=1e-5, err_msg=kind)


def test_detector_maps_rank_and_open_a_head(models, paper, trace):
    at = heads_part(run_app({"view": "heads", "text": TEXT}), "detectors")
    assert not at.error, texts(at.error)
    quick = quick_detectors(trace)
    got = _maps(at)
    assert set(got) == {"enc_self", "dec_self"}  # previous token: self-attention only
    for kind, z in got.items():
        np.testing.assert_allclose(z, quick["previous_token"][kind], atol=1e-9)
    table = at.dataframe[0].value
    assert len(table) == min(20, 2 * 2 * 4) and list(table.iloc[:, -1]) == sorted(
        table.iloc[:, -1], reverse=True)

    at.radio(key="det_detector").set_value("induction").run(timeout=120)
    ok(at)
    full = detect_heads(paper, trace)
    for kind, z in _maps(at).items():
        np.testing.assert_allclose(z, full["induction"][kind], atol=1e-6)
    at.radio(key="det_detector").set_value("positional").run(timeout=120)
    ok(at)
    assert set(_maps(at)) == {"enc_self", "dec_self", "cross"}

    picks = at.selectbox(key="det_open_head").options
    at.selectbox(key="det_open_head").set_value(("cross", 1, 2)).run()
    at.button(key="det_open").click().run()
    ok(at)
    assert len(picks) == 3 * 2 * 4
    assert at.radio(key="view").value == "attention"
    assert (at.query_params["kind"], at.query_params["layer"], at.query_params["head"]) == (
        "cross", "1", "2")


def test_sink_adds_validation_pairs(models, paper, trace, monkeypatch):
    from training import corpus
    from ui.views.heads import detectors as view

    sample = corpus.generate(6, seed=3)
    monkeypatch.setattr(view, "val_split", lambda bundle, key: sample)
    at = heads_part(run_app({"view": "heads", "text": TEXT}), "detectors")
    at.radio(key="det_detector").set_value("sink").run()
    ok(at)
    before = _maps(at)
    np.testing.assert_allclose(before["cross"], quick_detectors(trace)["sink"]["cross"])
    assert "typed input only" in texts(at.caption)
    at.button(key="det_sink_go").click().run(timeout=120)
    ok(at)
    after = _maps(at)
    want = detect_heads(paper, trace, pairs=sample[:view.SINK_PAIRS], run=False)["sink"]
    for kind, z in after.items():
        np.testing.assert_allclose(z, want[kind], atol=1e-6)
    assert not np.allclose(after["enc_self"], before["enc_self"])


def _terms_chart(at) -> dict:
    return next(f for f in charts(at) if "add up to the score" in
                str(f["layout"].get("title", {}).get("text", "")))


def test_steps_view_splits_the_chosen_score(models, paper, trace):
    from model.analysis import qk_terms

    at = run_app({"view": "steps", "text": TEXT, "kind": "enc_self", "layer": "1", "head": "2"})
    ok(at)
    at.selectbox(key="steps_query").set_value(3).run()
    at.selectbox(key="qk_key").set_value(1).run()
    ok(at)
    bars = _terms_chart(at)["data"][0]
    want = qk_terms(paper, trace, "enc_self", 1, 2, 3, 1)
    np.testing.assert_allclose(array(bars["x"]), list(want.values()), atol=1e-6)
    assert abs(sum(want.values()) - trace.scores["enc_self"][1, 0, 2, 3, 1]) < 1e-4


def test_tour_qk_step_has_the_terms_table(models):
    at = run_app({"view": "tour", "text": TEXT, "step": "8"})
    ok(at)
    assert "add up to it" in texts(at.caption)
    table = at.dataframe[0].value
    assert list(table.iloc[:4, 0]) == ["token·token", "token·position", "position·token",
                                       "position·position"]
    assert str(table.iloc[-1, 0]).startswith("sum (recorded score")


def test_contributions_view_on_a_hugging_face_gpt2(models):
    """The tiny GPT-2 (listed with ATTN_MODELS) gets direct logit attribution that adds up."""
    from model.analysis.contributions import head_contributions

    at = run_app({"ckpt": "tiny-gpt2", "view": "contrib", "text": base.HF_TEXT}, timeout=120)
    ok(at)
    assert not at.error, texts(at.error)
    assert at.radio(key="_w_contrib_measure").value == "dla"  # DLA offered and first
    c = head_contributions(load_checkpoint(models[1] / "tiny-gpt2"),
                           base.HF_TEXT.splitlines()[0])
    assert abs(c.dla_total() - c.logit) < 1e-4
    want = dla_by_hand(models[1] / "tiny-gpt2", base.HF_TEXT.splitlines()[0])
    assert np.abs(want).max() > 1e-3  # a random model's heads: small, but not nothing
    np.testing.assert_allclose(array(charts(at)[0]["data"][0]["z"]), want, rtol=1e-3,
                               atol=1e-7)


def dla_by_hand(folder, text: str) -> np.ndarray:
    """(L, H) direct logit attribution of a GPT-2 folder's heads to its top next token, with
    plain transformers and this test's hooks: each head's slice of the input to its block's
    c_proj times its rows of c_proj's weight, through ln_f with its scale frozen on the final
    residual (centre, divide by σ, times γ), dotted with the token's unembedding. float64."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(folder)
    lm = AutoModelForCausalLM.from_pretrained(folder, attn_implementation="eager",
                                              dtype=torch.float64).eval()
    n_h = lm.config.n_head
    dh = lm.config.n_embd // n_h
    seen: dict = {}
    hooks = [blk.attn.c_proj.register_forward_pre_hook(
        lambda _m, args, i=i: seen.__setitem__(i, args[0][0, -1].clone()))
        for i, blk in enumerate(lm.transformer.h)]
    hooks.append(lm.transformer.ln_f.register_forward_pre_hook(
        lambda _m, args: seen.__setitem__("x", args[0][0, -1].clone())))
    with torch.no_grad():
        logits = lm(torch.tensor([tok(text)["input_ids"]])).logits[0, -1]
    for hk in hooks:
        hk.remove()
    ln = lm.transformer.ln_f
    x = seen["x"]
    sigma = torch.sqrt(x.var(unbiased=False) + ln.eps)
    w_u = lm.lm_head.weight[int(logits.argmax())].detach()  # (D,)
    out = np.zeros((len(lm.transformer.h), n_h))
    with torch.no_grad():
        for layer, blk in enumerate(lm.transformer.h):
            w_o = blk.attn.c_proj.weight  # Conv1D: (D in, D out)
            for h in range(n_h):
                cut = slice(h * dh, (h + 1) * dh)
                wrote = seen[layer][cut] @ w_o[cut]  # (D,)
                out[layer, h] = float(((wrote - wrote.mean()) * ln.weight / sigma) @ w_u)
    return out
