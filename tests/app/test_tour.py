"""The guided tour (view=tour) through AppTest: every step on both shipped checkpoints and on a
tiny random decoder-only GPT-2 (listed through ATTN_MODELS), the step in the link, the numbers
against the model's own Trace."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from model import capture, load_checkpoint
from tests.app.conftest import run_app
from tests.app.test_views import array
from tests.conftest import ROOT
from ui.views.tour_steps import STEPS
from viz.tour import trace_walk

N = len(STEPS)
TEXT = "겨울은 추워요.\n감기 조심하세요."
SHIPPED = [c for c in ("paper", "seed001") if (ROOT / "checkpoints" / c / "config.json").is_file()]


def problems(at) -> list[str]:
    return [e.value for e in at.error] + [str(x.value)[:300] for x in at.exception]


def link_step(at) -> str:
    value = at.query_params["step"]
    return value[0] if isinstance(value, list) else value


def step_title(at) -> str:
    return [h.value for h in at.subheader][-1]


@pytest.fixture(scope="module")
def gpt2(tmp_path_factory):
    """A tiny random GPT-2 folder (tests/unit/test_hf's builder), listed via ATTN_MODELS."""
    from tests.unit.test_hf import make_model, make_tokenizer

    root = tmp_path_factory.mktemp("hf")
    model, template = make_model("gpt2")
    model.save_pretrained(root / "tiny-gpt2", safe_serialization=True)
    make_tokenizer(template).save_pretrained(root / "tiny-gpt2")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ATTN_MODELS", str(root / "tiny-gpt2"))
        mp.setenv("HF_HUB_OFFLINE", "1")
        yield root / "tiny-gpt2"


@pytest.mark.skipif(not SHIPPED, reason="the shipped checkpoints are not here")
@pytest.mark.parametrize("ckpt", SHIPPED)
def test_every_step_on_a_shipped_checkpoint(ckpt):
    at = run_app({"view": "tour", "ckpt": ckpt, "text": TEXT})
    assert not problems(at) and step_title(at).startswith("1. ")
    for i in range(2, N + 1):
        at.button(key="tour_next").click().run(timeout=300)
        assert not problems(at), (ckpt, i, problems(at))
        assert step_title(at).startswith(f"{i}. "), (i, step_title(at))
        assert link_step(at) == str(i)
        assert not at.info, (i, [x.value for x in at.info])  # nothing skipped on our models
        assert at.code, i  # every step prints its tensor shapes


@pytest.mark.skipif("paper" not in SHIPPED, reason="the shipped paper checkpoint is not here")
def test_numbers_are_the_models_own():
    bundle = load_checkpoint(ROOT / "checkpoints" / "paper")
    trace = capture(bundle, TEXT.split("\n"), target_lang="auto")
    # step 2: the padded id matrix is the model's input, pad = 0
    at = run_app({"view": "tour", "ckpt": "paper", "text": TEXT, "step": "2"})
    fig = json.loads(at.get("plotly_chart")[0].proto.spec)
    text = np.array(fig["data"][0]["text"], dtype=np.int64)
    np.testing.assert_array_equal(text, trace.src_ids)
    assert (trace.src_ids[0, len(trace.src_tokens[0]):] == 0).all()
    # step 11: the softmax of head 1 (from the link) is the model's recorded attention
    at = run_app({"view": "tour", "ckpt": "paper", "text": TEXT, "step": "11", "head": "1"})
    assert not problems(at)
    z = fig_z(at.get("plotly_chart")[0])
    np.testing.assert_allclose(z, trace.attn["enc_self"][0, 0, 1], atol=1e-5)
    # step 9 quotes the first query's largest score before and after ÷√d_k
    at = run_app({"view": "tour", "ckpt": "paper", "text": TEXT, "step": "9"})
    qk = trace.q["enc_self"][0, 0, 0] @ trace.k["enc_self"][0, 0, 0].T
    said = " ".join(m.value for m in at.markdown)
    assert f"{qk[0].max():.2f}" in said and f"{qk[0].max() / np.sqrt(32):.2f}" in said


def fig_z(element) -> np.ndarray:
    return array(json.loads(element.proto.spec)["data"][0]["z"])


def test_bad_step_in_the_link_warns_and_shows_step_one():
    at = run_app({"view": "tour", "ckpt": SHIPPED[0] if SHIPPED else "paper", "step": "99"})
    assert not at.exception
    assert any("99" in w.value for w in at.warning)
    assert step_title(at).startswith("1. ")


def test_every_step_on_a_decoder_only_hf_model(gpt2):
    assert os.environ["ATTN_MODELS"]
    at = run_app({"view": "tour", "ckpt": "tiny-gpt2", "text": "the cat eats fish\nwinter is"})
    assert not problems(at), problems(at)
    skipped = []
    for i in range(2, N + 1):
        at.button(key="tour_next").click().run(timeout=300)
        assert not problems(at), (i, problems(at))
        assert step_title(at).startswith(f"{i}. ") and link_step(at) == str(i)
        if at.info:
            skipped.append(i)
    # embedding lookup, ·W_O, residual, FFN (not recorded for HF) and cross-attention (none)
    assert skipped == [3, 13, 14, 15, 18], skipped


def test_trace_walk_recomputes_the_hf_models_attention(gpt2):
    bundle = load_checkpoint(gpt2)
    trace = capture(bundle, ["the cat eats fish", "winter is cold"])
    for layer in range(trace.n_layers("dec_self")):
        for head in range(trace.attn["dec_self"].shape[2]):
            w = trace_walk(trace, "dec_self", layer, 1, head)
            np.testing.assert_allclose(w.probs, trace.attn["dec_self"][layer, 1, head],
                                       atol=1e-5)
            np.testing.assert_allclose(w.scaled, trace.scores["dec_self"][layer, 1, head],
                                       atol=1e-5)
