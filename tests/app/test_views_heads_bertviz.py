"""The bertviz, heads and compare views through AppTest; Hugging Face models through the picker.

Everything runs on tiny random models made here: two of this project's checkpoints ('paper' and
'seed001', in ATTN_CHECKPOINTS_DIR) and tiny BERT, GPT-2 and Marian folders listed with
ATTN_MODELS. No download, no trained checkpoint needed.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
import streamlit as st
import torch

from model import (
    ModelConfig,
    Tokenizer,
    Transformer,
    capture,
    load_checkpoint,
    parse_ablate,
    save_checkpoint,
)
from model.analysis.ablation import importance_scan
from model.analysis.heads import METRICS, head_stats
from model.analysis.rollout import rollout
from tests.app.conftest import run_app
from tests.app.test_views import array, charts, ok, texts
from tests.hf_folders import make_tokenizer
from tests.unit.test_hf import eager_twin, make_model, reference
from viz.bertviz_embed import bertviz_height

LINES = ["Winter is cold.", "The big dog eats the fish."]  # the first is a corpus seed sentence
TEXT = "\n".join(LINES)
WORDS = ["The cat", "The big dog", "My friend", "A child", "Winter"]
VERBS = ["eats the fish", "reads a book in the park", "is cold", "drinks water"]
KOREAN = ["고양이는 생선을 먹어요.", "큰 개가 생선을 먹어요.", "겨울은 추워요.", "감기 조심하세요."]
HF = {"tiny-bert": "bert", "tiny-gpt2": "gpt2", "tiny-marian": "marian"}
HF_KIND = {"bert": "enc_self", "gpt2": "dec_self", "marian": "cross"}
HF_TEXT = "the cat eats fish every day .\nwinter is cold"
N_HEADS, N_LAYERS = 4, 2


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """Tiny 'paper' and 'seed001' checkpoints, and a folder of tiny Hugging Face models."""
    root = tmp_path_factory.mktemp("checkpoints")
    lines = [f"{w} {v}." for w in WORDS for v in VERBS] + KOREAN
    tok = Tokenizer.train(lines * 30, vocab_size=420)
    for i, (name, extra) in enumerate((
            ("paper", {}),
            ("seed001", {"pos_encoding": "learned", "norm": "pre", "activation": "gelu"}))):
        cfg = ModelConfig(vocab_size=tok.vocab_size, d_model=32, n_heads=N_HEADS, d_ff=64,
                          n_enc_layers=N_LAYERS, n_dec_layers=N_LAYERS, max_len=40, **extra)
        torch.manual_seed(i)
        save_checkpoint(Transformer(cfg).eval(), tok, root / name, card={"variant": name})
    hf = tmp_path_factory.mktemp("hf_models")
    for folder, family in HF.items():
        model, template = make_model(family)
        model.save_pretrained(hf / folder, safe_serialization=True)
        make_tokenizer(template).save_pretrained(hf / folder)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ATTN_CHECKPOINTS_DIR", str(root))
        mp.setenv("ATTN_MODELS", str(hf))
        mp.setenv("HF_HUB_OFFLINE", "1")
        mp.delenv("ATTN_ALLOW_HUB", raising=False)
        yield root, hf


@pytest.fixture(scope="module")
def paper(models):
    return load_checkpoint(models[0] / "paper")


@pytest.fixture(scope="module")
def trace(paper):
    return capture(paper, LINES, target_lang="auto")


@pytest.fixture
def heights(monkeypatch) -> list[int]:
    """Heights passed to st.iframe (AppTest's element tree does not keep the layout)."""
    seen: list[int] = []
    original = st.iframe

    def spy(src, *args, **kwargs):
        seen.append(kwargs.get("height"))
        return original(src, *args, **kwargs)

    monkeypatch.setattr(st, "iframe", spy)
    return seen


def iframes(at) -> list:
    return [el.proto for el in at.get("iframe")]


def metric_of(fig: dict) -> str:
    return fig["layout"]["meta"]["metric"]


def heads_part(at, part: str):
    at.radio(key="_w_heads_part").set_value(part).run()
    ok(at)
    return at


# ---- bertviz -----------------------------------------------------------------------------


def test_bertviz_head_and_model_views(models, trace, heights):
    at = run_app({"view": "bertviz", "text": TEXT})
    ok(at)
    assert not at.error, texts(at.error)
    [frame] = iframes(at)
    page = frame.srcdoc
    assert "<title>bertviz head view</title>" in page
    assert all(f">{name}</option>" in page for name in ("Encoder", "Decoder", "Cross"))
    assert "cdnjs" not in page and "require.config({" not in page  # offline page
    assert heights[-1] == bertviz_height(trace, 0, "head", [0, 1])
    assert at.multiselect(key="bv_layers").value == [0, 1]

    at.radio(key="bv_view").set_value("model").run()
    ok(at)
    [frame] = iframes(at)
    assert "<title>bertviz model view</title>" in frame.srcdoc
    assert heights[-1] == bertviz_height(trace, 0, "model", [0, 1])
    at.multiselect(key="bv_layers").set_value([1]).run()
    ok(at)
    [frame] = iframes(at)
    assert '"include_layers":[1]' in frame.srcdoc
    assert heights[-1] == bertviz_height(trace, 0, "model", [1])
    at.multiselect(key="bv_layers").set_value([]).run()
    assert not iframes(at) and "at least one layer" in texts(at.info)


def test_bertviz_too_large_says_so_and_points_to_the_attention_view(models, monkeypatch):
    import viz.bertviz_embed as embed

    original = embed.bertviz_html
    monkeypatch.setattr(embed, "bertviz_html",
                        lambda *a, **kw: original(*a, **{**kw, "budget_bytes": 20_000}))
    at = run_app({"view": "bertviz", "text": "My friend drinks water."})  # not cached yet
    ok(at)
    assert not iframes(at)
    note = texts(at.info)
    assert "token input" in note and "attention view" in note
    at.button(key="bv_to_attention").click().run()
    ok(at)
    assert at.radio(key="view").value == "attention"
    assert at.query_params["view"] == "attention"


# ---- heads: statistics --------------------------------------------------------------------


def test_heads_statistics_with_gold_alignment_and_open_a_head(models, trace):
    at = run_app({"view": "heads", "text": TEXT, "kind": "cross"})
    ok(at)
    assert not at.error, texts(at.error)
    figs = charts(at)
    metrics = [metric_of(f) for f in figs]
    assert metrics[:2] == ["entropy", "distance"] and "alignment" in metrics  # a corpus sentence
    assert "prev_token" not in metrics  # not defined for cross attention
    want = head_stats(trace, "cross", 0)
    for fig in figs:
        if metric_of(fig) != "alignment":
            np.testing.assert_allclose(array(fig["data"][0]["z"]), want[metric_of(fig)])
        assert fig["data"][0]["z"] and fig["layout"]["title"]["text"]
    shown = texts(at.markdown)
    for metric in ("entropy", "pad_share", "alignment"):
        assert METRICS[metric].split(";")[0].replace("(", "").replace(")", "")[:30] in \
            shown.replace("(", "").replace(")", "")

    at.radio(key="hs_scope").set_value("batch").run()
    ok(at)
    np.testing.assert_allclose(array(charts(at)[0]["data"][0]["z"]),
                               head_stats(trace, "cross")["entropy"])
    at.radio(key="hs_kind").set_value("enc_self").run()
    ok(at)
    assert "prev_token" in [metric_of(f) for f in charts(at)]

    at.selectbox(key="hs_open_layer").select(1).run()
    at.selectbox(key="hs_open_head").select(3).run()
    at.button(key="hs_open").click().run()
    ok(at)
    assert at.radio(key="view").value == "attention"
    assert (at.query_params["kind"], at.query_params["layer"], at.query_params["head"]) == (
        "enc_self", "1", "3")
    assert charts(at)[0]["layout"]["title"]["text"].startswith(
        "encoder self-attention · layer 1 · head 3")


def test_validation_average_button(models, monkeypatch):
    from training import corpus

    sample = corpus.generate(6, seed=3)
    calls = []

    def small_splits(**kwargs):
        calls.append(kwargs)
        return {"train": [], "val": sample, "test": []}

    monkeypatch.setattr(corpus, "splits", small_splits)
    st.cache_resource.clear()
    try:
        at = run_app({"view": "heads", "text": "The cat is cold.", "kind": "cross"})
        ok(at)
        assert "validation" not in at.radio(key="hs_scope").options
        at.button(key="hs_val_go").click().run()
        ok(at)
        assert calls == [{"seed": 0, "n_train": 200_000, "n_val": 1_000, "n_test": 2_000}]
        assert at.radio(key="hs_scope").options[-1].startswith("6 validation pairs")
        assert at.radio(key="hs_scope").value == "validation"  # shown right away
        figs = charts(at)
        assert "alignment" in [metric_of(f) for f in figs]
        other = run_app({"view": "heads", "text": "The cat is cold."})  # shared result
        assert other.radio(key="hs_scope").options[-1].startswith("6 validation pairs")
    finally:
        st.cache_resource.clear()  # the fake validation split must not outlive this test


# ---- heads: ablation, scan, rollout -------------------------------------------------------


def checked(at) -> set[tuple[str, int, int]]:
    out = set()
    for box in at.checkbox:
        if box.key and box.key.startswith("abl:") and box.value:
            kind, layer, head = box.key.split(":")[1:]
            out.add((kind, int(layer), int(head)))
    return out


def test_ablation_grid_is_per_session_and_in_the_link(models, paper):
    one = heads_part(run_app({"view": "heads", "text": TEXT}), "ablation")
    two = heads_part(run_app({"view": "heads", "text": TEXT}), "ablation")
    n_boxes = sum(1 for box in one.checkbox if box.key.startswith("abl:"))
    assert n_boxes == 3 * N_LAYERS * N_HEADS and checked(one) == set()
    assert "no head knocked out" in texts(one.markdown)

    one.checkbox(key="abl:cross:1:2").check().run()
    ok(one)
    assert one.query_params["ablate"] == "cross:1:2"
    assert one.session_state["ablate"] == "cross:1:2" and checked(one) == {("cross", 1, 2)}
    shown = texts(one.markdown)
    assert "Before" in shown and "After" in shown and "cross:1:2" in shown
    [fig] = charts(one)
    assert fig["layout"]["title"]["text"].startswith("Ablating cross:1:2")
    assert [m.label for m in one.metric][0].startswith("Loss")
    one.checkbox(key="abl:enc_self:0:1").check().run()
    assert one.query_params["ablate"] == "cross:1:2,enc_self:0:1"

    two.run()  # the other session saw none of it
    ok(two)
    assert checked(two) == set() and "ablate" not in two.query_params
    assert two.session_state["ablate"] == "" and not charts(two)
    one.run()
    assert checked(one) == {("cross", 1, 2), ("enc_self", 0, 1)}
    one.button(key="abl_clear").click().run()
    assert checked(one) == set() and "ablate" not in one.query_params


def test_ablate_link_restores_the_toggles(models):
    at = heads_part(run_app({"view": "heads", "text": TEXT,
                             "ablate": "enc_self:0:1,cross:1:3"}), "ablation")
    assert checked(at) == {("enc_self", 0, 1), ("cross", 1, 3)}
    at.checkbox(key="abl:enc_self:0:1").uncheck().run()
    ok(at)
    assert at.query_params["ablate"] == "cross:1:3"
    assert parse_ablate(at.text_input(key="ablate").value) == {("cross", 1, 3)}


def test_importance_scan_and_rollout(models, paper, trace):
    at = heads_part(run_app({"view": "heads", "text": TEXT}), "scan")
    assert not charts(at) and "Scan every head" in texts(at.info)
    at.button(key="scan_go").click().run()
    ok(at)
    [fig] = charts(at)
    want = importance_scan(paper, LINES[0], "auto")
    for i, kind in enumerate(("enc_self", "dec_self", "cross")):
        np.testing.assert_allclose(array(fig["data"][i]["z"]), want[kind], atol=1e-6)
    assert re.search(r"Scan took \d+\.\d\d s", texts(at.caption))

    heads_part(at, "rollout")
    figs = charts(at)
    assert len(figs) == 3  # encoder map, bars for one query, decoder → source map
    np.testing.assert_allclose(array(figs[0]["data"][0]["z"]), rollout(trace, 0, "enc_self"))
    at.selectbox(key="ro_query").select(2).run()
    np.testing.assert_allclose(array(charts(at)[1]["data"][0]["y"]),
                               rollout(trace, 0, "enc_self")[2])


# ---- compare -----------------------------------------------------------------------------


def test_compare_two_inputs_and_two_checkpoints(models, trace):
    at = run_app({"view": "compare", "text": TEXT, "kind": "enc_self", "layer": "1",
                  "head": "2"})
    ok(at)
    assert at.radio(key="cmp_mode").value == "inputs"
    assert at.text_input(key="cmp_text").value != LINES[0]  # a line of as many pieces
    [fig] = charts(at)  # (ui/line_partner.py; tests/app/test_compare_partner.py)
    assert len(fig["data"]) == 2 and "no difference map" in fig["layout"]["title"]["text"]
    assert len(fig["data"][0]["y"]) == len(fig["data"][1]["y"])
    at.text_input(key="cmp_text").input(LINES[0]).run()  # same tokens: a difference map
    [fig] = charts(at)
    assert len(fig["data"]) == 3
    np.testing.assert_allclose(array(fig["data"][2]["z"]), 0, atol=1e-6)  # batch of 1 vs 2

    at.radio(key="cmp_mode").set_value("checkpoints").run()
    ok(at)
    assert (at.selectbox(key="cmp_a").value, at.selectbox(key="cmp_b").value) == (
        "paper", "seed001")
    figs = charts(at)
    assert len(figs) == 2 and len(figs[0]["data"]) == 3  # same tokenizer: difference shown
    n = trace.length("src", 0)
    np.testing.assert_array_equal(array(figs[0]["data"][0]["z"]),
                                  trace.attn["enc_self"][1, 0, 2, :n, :n])
    seed001 = capture(load_checkpoint(models[0] / "seed001"), LINES, target_lang="auto")
    np.testing.assert_array_equal(array(figs[0]["data"][1]["z"]),
                                  seed001.attn["enc_self"][1, 0, 2, :n, :n])
    assert figs[1]["layout"]["title"]["text"].startswith("Positional tables compared")
    assert [d["name"] for d in figs[1]["data"]] == ["paper", "seed001"]


# ---- Hugging Face models and the ckpt parameter ----------------------------------------


@pytest.mark.parametrize("name", list(HF))
def test_hugging_face_models_in_the_attention_and_bertviz_views(models, name, heights):
    family = HF[name]
    kind = HF_KIND[family]
    bundle = load_checkpoint(models[1] / name)
    tr = capture(bundle, HF_TEXT.split("\n"))
    ref = reference(eager_twin(models[1] / name), family, tr)  # an independent eager load
    at = run_app({"ckpt": name, "view": "attention", "text": HF_TEXT, "kind": kind, "layer": "1",
                  "head": "1"})
    ok(at)
    assert not at.error and not at.warning, texts(at.error) + texts(at.warning)
    assert at.selectbox(key="ckpt").value == name
    z = array(charts(at)[0]["data"][0]["z"])
    q_side, k_side = {"enc_self": ("src", "src"), "dec_self": ("tgt", "tgt"),
                      "cross": ("tgt", "src")}[kind]
    nq, nk = tr.length(q_side, 0), tr.length(k_side, 0)
    np.testing.assert_allclose(z, ref[kind][1][0, 1, :nq, :nk].numpy(), rtol=0, atol=2e-6)

    at.radio(key="view").set_value("bertviz").run()
    ok(at)
    [frame] = iframes(at)
    params = frame.srcdoc.split("window.attentionFromThousandths(", 1)[1]
    assert '"the"' in params and ('"Cross"' in params) == (family == "marian")
    assert heights[-1] == bertviz_height(tr, 0, "head", None)

    at.radio(key="view").set_value("heads").run()
    ok(at)
    assert charts(at) and not at.error
    heads_part(at, "ablation")  # knocking out heads works through the HF recorder (issue 12)
    assert "Tick heads above" in texts(at.info)
    for view in ("steps", "masks", "translation", "tokens", "embeddings"):
        at.radio(key="view").set_value(view).run()
        ok(at)
        assert not at.error, (view, texts(at.error))


def test_ablation_link_on_a_hugging_face_model_knocks_the_head_out(models):
    at = run_app({"ckpt": "tiny-bert", "view": "attention", "text": HF_TEXT,
                  "ablate": "enc_self:0:1"})
    ok(at)
    assert not at.error
    assert "not supported for this model" not in texts(at.warning)
    assert at.query_params["ablate"] == "enc_self:0:1"
    assert charts(at)


@pytest.mark.parametrize("ref, reason", [("../../etc", "paths are not accepted"),
                                         ("/etc", "paths are not accepted"),
                                         ("/etc/passwd", "paths are not accepted"),
                                         ("gpt2", "ATTN_ALLOW_HUB=1")])
def test_ckpt_link_names_only_listed_models(models, ref, reason):
    at = run_app({"ckpt": ref, "text": "Winter is cold."})
    ok(at)
    note = texts(at.warning)
    assert "refused" in note and reason in note and "Showing paper" in note, note
    assert at.selectbox(key="ckpt").value == "paper"
    assert at.query_params["ckpt"] == "paper"
    assert "tiny-gpt2" in at.selectbox(key="ckpt").options  # listed models are offered
    assert len(charts(at)) == 4  # the tokens view of the default model


def test_bertviz_data_is_the_selected_sentence(models, trace):
    at = run_app({"view": "bertviz", "text": TEXT})
    at.selectbox(key="sentence").select(1).run()
    ok(at)
    [frame] = iframes(at)
    params = frame.srcdoc.split("window.attentionFromThousandths(", 1)[1]
    data = json.JSONDecoder().raw_decode(params)[0]
    enc = data["attention"][0]
    n = trace.length("src", 1)
    assert len(enc["left_text"]) == n  # sentence 2, padding left out
    got = np.array(enc["attn"], dtype=float) / 1000
    np.testing.assert_allclose(got, trace.attn["enc_self"][:, 1, :, :n, :n], atol=5e-4)
