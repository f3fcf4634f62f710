"""view=why through its link (AppTest): the component × component matrix, the top terms in
words, composition maps with their baseline, what the head writes; on `paper` and
checkpoints/lm, in English and Korean, with hostile URL values (the toy backend's page, which
says why it has nothing to show, is in test_third_backend's every-view test)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from tests.app.conftest import run_app
from tests.app.test_views import array, charts, texts
from tests.conftest import skip_or_fail

ROOT = Path(__file__).resolve().parents[2]
LM = ROOT / "checkpoints" / "lm"
PAPER_LINK = {"ckpt": "paper", "view": "why", "text": "The cat eats fish.", "kind": "cross",
              "layer": "2", "head": "1"}


def _clean(at) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, texts(at.error)


def test_paper_cross_head_in_english_and_link_kept():
    at = run_app({"ckpt": "paper", "view": "why", "text": "The cat eats fish.",
                  "kind": "cross", "layer": "2", "head": "1"}, timeout=120)
    _clean(at)
    figs = charts(at)
    titles = [f["layout"]["title"]["text"] for f in figs]
    assert titles[0].startswith("Score ")
    terms = array(figs[0]["data"][0]["z"])
    assert terms.shape[0] > 5 and terms.shape[1] > 5  # decoder × encoder components
    assert any("composition" in str(f["layout"]) for f in figs)  # Q/K/V maps
    shown = texts(at.markdown)
    assert "of this score" in shown and "meets" in shown
    assert any("promoted" in t for t in titles)  # the direct effect (post-LN, decoder stream)
    assert at.query_params["view"] == "why" and at.query_params["kind"] == "cross"
    assert at.query_params["layer"] == "2" and at.query_params["head"] == "1"


def test_korean_and_hostile_values_fall_back_with_a_note():
    at = run_app({"ckpt": "paper", "view": "why", "text": "The cat eats fish.",
                  "kind": "enc_self", "layer": "99", "head": "-3", "lang_ui": "ko"},
                 timeout=120)
    _clean(at)
    shown = texts(at.markdown) + texts(at.caption) + texts(at.info) + texts(at.warning)
    assert "이 점수" in shown  # the top terms in Korean
    assert "99" in shown  # the note naming the refused layer
    assert "로짓에 대한 직접 효과가 없습니다" in shown  # encoder heads: said why


def test_language_model_induction_head():
    if not (LM / "model.safetensors").is_file():
        skip_or_fail("checkpoints/lm is not here")
    text = "river mill barn hill sky lamp river mill barn hill sky lamp"
    at = run_app({"ckpt": "lm", "view": "why", "text": text, "kind": "dec_self",
                  "layer": "1", "head": "0"}, timeout=120)
    _clean(at)
    figs = charts(at)
    assert "Score " in figs[0]["layout"]["title"]["text"]
    comp = [f for f in figs if "composition" in str(f["layout"])][0]
    k = array(comp["data"][1]["z"])  # K-composition, (1 layer before, 6 heads)
    assert k.shape == (2, 6) and np.isnan(k[1]).all()  # layer 1: no path from itself
    assert any("promoted" in f["layout"]["title"]["text"] for f in figs)


def composition_by_hand(later: int, head: int) -> dict[str, np.ndarray]:
    """{"q"|"k"|"v": (later, H)} composition of checkpoints/lm's decoder head (later, head)
    with every head of the layers before it, from the plain transformers weights as full
    D × D matrices (float64, RMSNorm γ folded into the reading side; rotary ignored, as the
    definition is of the weight matrices): ‖W_OV^A M‖ / (‖W_OV^A‖ ‖M‖) with M = W_QK^B,
    (W_QK^B)ᵀ, W_OV^B (row-vector form)."""
    from transformers import AutoModelForCausalLM

    lm = AutoModelForCausalLM.from_pretrained(LM, dtype=torch.float64)
    cfg = lm.config
    dh, group = cfg.head_dim, cfg.num_attention_heads // cfg.num_key_value_heads

    def head_mats(layer: int, h: int) -> dict[str, np.ndarray]:
        blk = lm.model.layers[layer]
        gamma = blk.input_layernorm.weight.detach().numpy()[:, None]  # (D, 1)
        a = blk.self_attn
        rows = slice(h * dh, (h + 1) * dh)
        kv = slice((h // group) * dh, (h // group + 1) * dh)
        w_q = gamma * a.q_proj.weight.detach().numpy()[rows].T  # (D, Dh)
        w_k = gamma * a.k_proj.weight.detach().numpy()[kv].T
        w_v = gamma * a.v_proj.weight.detach().numpy()[kv].T
        w_o = a.o_proj.weight.detach().numpy()[:, rows].T  # (Dh, D)
        return {"qk": w_q @ w_k.T, "ov": w_v @ w_o}  # (D, D) each

    b = head_mats(later, head)
    reads = {"q": b["qk"], "k": b["qk"].T, "v": b["ov"]}
    out = {s: np.full((later, cfg.num_attention_heads), np.nan) for s in reads}
    for layer in range(later):
        for h in range(cfg.num_attention_heads):
            ov = head_mats(layer, h)["ov"]
            for side, m in reads.items():
                out[side][layer, h] = np.linalg.norm(ov @ m) / (
                    np.linalg.norm(ov) * np.linalg.norm(m))
    return out


def test_language_model_composition_maps_are_the_weights():
    """The drawn Q-, K- and V-composition of the induction head L1 H0 with layer 0's heads
    against the products of the plain transformers weights (to float32 precision)."""
    if not (LM / "model.safetensors").is_file():
        skip_or_fail("checkpoints/lm is not here")
    text = "river mill barn hill sky lamp river mill barn hill sky lamp"
    at = run_app({"ckpt": "lm", "view": "why", "text": text, "kind": "dec_self",
                  "layer": "1", "head": "0"}, timeout=120)
    _clean(at)
    comp = [f for f in charts(at) if "composition" in str(f["layout"])][0]
    want = composition_by_hand(1, 0)
    for i, side in enumerate(("q", "k", "v")):
        z = array(comp["data"][i]["z"])  # (earlier layer, head): layer 1 has no path
        assert np.isnan(z[1]).all(), side
        np.testing.assert_allclose(z[:1], want[side], rtol=1e-4, err_msg=side)
    # K-composition is the induction head's signature: its strongest earlier head stands out
    assert np.nanmax(want["k"]) > 2 * comp_baseline(comp, "K")


def comp_baseline(fig: dict, side: str) -> float:
    """The random baseline printed in a composition subplot's title."""
    import re

    titles = [a["text"] for a in fig["layout"]["annotations"]]
    hit = next(t for t in titles if t.startswith(f"{side}-composition"))
    return float(re.search(r"random: ([0-9.]+)", hit).group(1))


def test_reached_from_the_attention_view():
    at = run_app({"ckpt": "paper", "view": "attention", "text": "The cat eats fish.",
                  "kind": "cross", "layer": "2", "head": "3"}, timeout=120)
    at.button(key="attn_why").click().run(timeout=120)
    _clean(at)
    assert at.query_params["view"] == "why" and at.query_params["head"] == "3"
    assert charts(at)[0]["layout"]["title"]["text"].startswith("Score ")


def test_presenter_mode_text_is_at_least_18_px():
    from tests.app.test_presenter_fonts import MIN_PX, font_sizes

    at = run_app({**PAPER_LINK, "present": "1"}, timeout=120)
    _clean(at)
    specs = charts(at)
    assert len(specs) >= 4
    small = [(i, where, size) for i, spec in enumerate(specs)
             for where, size in font_sizes(spec) if size < MIN_PX]
    assert not small, small


def test_query_and_key_come_from_the_link_and_go_back_into_it():
    at = run_app({**PAPER_LINK, "kind": "enc_self", "layer": "1", "query": "1", "key": "3"},
                 timeout=120)
    _clean(at)
    assert at.selectbox(key="why_query").value == 1 and at.selectbox(key="why_key").value == 3
    assert at.query_params["query"] == "1" and at.query_params["key"] == "3"
    at.selectbox(key="why_key").set_value(2).run(timeout=120)  # a new pick rewrites the link
    _clean(at)
    assert at.query_params["key"] == "2"


@pytest.mark.parametrize("query, key, note", [
    ("99", "0", "Query position '99'"), ("-1", "0", "Query position '-1'"),
    ("²", "x<b>", "Query position '²'"), ("1", "99", "Key position '99'"),
    ("1", "1" * 5000, "Key position"), ("0", "", "Key position ''")])
def test_bad_query_or_key_in_the_link_is_a_note(query, key, note):
    at = run_app({**PAPER_LINK, "kind": "enc_self", "layer": "1", "query": query, "key": key},
                 timeout=120)
    _clean(at)
    warned = texts(at.warning)
    assert note in warned, warned
    assert len(warned) < 600  # the value is quoted cut short
    assert charts(at)[0]["layout"]["title"]["text"].startswith("Score ")  # defaults drawn


def test_korean_note_for_a_bad_key():
    at = run_app({**PAPER_LINK, "kind": "enc_self", "layer": "1", "query": "1", "key": "99",
                  "lang_ui": "ko"}, timeout=120)
    _clean(at)
    assert "키 위치" in texts(at.warning), texts(at.warning)


def test_a_layer_of_5000_digits_is_a_note_not_a_crash():
    at = run_app({**PAPER_LINK, "layer": "1" * 5000}, timeout=120)  # int() refuses > 4,300
    _clean(at)
    assert "from the link is not between 0" in texts(at.warning)


def test_a_second_session_reuses_the_split_and_the_composition(monkeypatch):
    """The score split (a forward in the backend's qk_parts) and the composition scores are
    kept in ui/runtime's why_cache for every session: a rerun and a second session on the same
    link compute neither again; another head splits once more. Counted on the backend."""
    import model.analysis.components as comps
    import model.analysis.composition as composition
    from model.backends import backend_for
    from ui import runtime

    runtime.why_cache.clear()
    calls = {"qk": 0, "comp": 0}
    real_threads = composition.blas_threads  # entered once per composition_scores run

    def threads(*args, **kwargs):
        calls["comp"] += 1
        return real_threads(*args, **kwargs)

    monkeypatch.setattr(composition, "blas_threads", threads)
    seen = set()

    def counting(bundle):
        backend = real_backend_for(bundle)
        cls = type(backend)
        if cls not in seen:  # wrap the class's qk_parts once
            seen.add(cls)
            real = cls.qk_parts

            def qk_parts(self, *args, **kwargs):
                calls["qk"] += 1
                return real(self, *args, **kwargs)

            monkeypatch.setattr(cls, "qk_parts", qk_parts)
        return backend

    real_backend_for = backend_for
    monkeypatch.setattr(comps, "backend_for", counting)
    link = {**PAPER_LINK, "kind": "enc_self", "layer": "1", "query": "1", "key": "2"}
    at = run_app(link, timeout=120)
    _clean(at)
    assert calls == {"qk": 1, "comp": 1}
    at.run(timeout=120)
    _clean(at)
    again = run_app(link, timeout=120)  # another session
    _clean(again)
    assert calls == {"qk": 1, "comp": 1}
    again.selectbox(key="why_key").set_value(3).run(timeout=120)
    _clean(again)
    assert calls == {"qk": 2, "comp": 1}
