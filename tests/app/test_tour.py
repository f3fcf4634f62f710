"""The guided tour (view=tour) through AppTest: every step on both shipped checkpoints and on a
tiny random decoder-only GPT-2 (listed through ATTN_MODELS), the step in the link, the numbers
against the model's own Trace."""

from __future__ import annotations

import json
import os
import re

import numpy as np
import pytest

from model import capture, load_checkpoint
from tests.app.conftest import run_app
from tests.app.test_views import array
from tests.conftest import ROOT, needs
from ui.views.tour.steps import STEPS
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
    from tests.hf_folders import make_tokenizer
    from tests.unit.test_hf import make_model

    root = tmp_path_factory.mktemp("hf")
    model, template = make_model("gpt2")
    model.save_pretrained(root / "tiny-gpt2", safe_serialization=True)
    make_tokenizer(template).save_pretrained(root / "tiny-gpt2")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ATTN_MODELS", str(root / "tiny-gpt2"))
        mp.setenv("HF_HUB_OFFLINE", "1")
        yield root / "tiny-gpt2"


@needs(SHIPPED, reason="the shipped checkpoints are not here")
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


def _said(at) -> str:
    """Every markdown, caption and code text of the page, markdown escapes removed."""
    texts = [m.value for m in at.markdown] + [c.value for c in at.caption] + \
        [c.value for c in at.code]
    return re.sub(r"\\(.)", r"\1", "\n".join(texts))


def _charts(at) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def _close(got, want, what: str, atol: float = 1e-4) -> None:
    got = array(got) if not isinstance(got, np.ndarray) else got
    want = np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    np.testing.assert_allclose(got.astype(np.float64), want, atol=atol, err_msg=what)


def _softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


@pytest.fixture(scope="module")
def paper_trace():
    """The model's own Trace of TEXT, every encoder hook of layer 0 included, computed here
    and not by the app: the oracle for every number the tour shows."""
    bundle = load_checkpoint(ROOT / "checkpoints" / "paper")
    hooks = [n for n in bundle.model.hook_names()
             if n in ("encoder.hook_tok", "encoder.hook_pos") or n.startswith("encoder.layers.0.")]
    trace = capture(bundle, TEXT.split("\n"), target_lang="auto",
                    names=["attn", "scores", "q", "k", "v", "hidden", "logits", *hooks])
    return bundle, trace


def _checks(bundle, t) -> dict:
    """One function per tour step (by STEPS id): (page text, charts, html) -> asserts."""
    H, b = 1, 0  # head=1 in the link; sentence 1
    src, tgt = t.src_tokens[b], t.tgt_tokens[b]
    m, (bs, n) = len(src), t.src_ids.shape
    d, n_heads = t.hidden["enc"].shape[-1], t.attn["enc_self"].shape[2]
    d_h = t.q["enc_self"].shape[-1]
    acts = t.acts
    q, k, v = (t.q["enc_self"][0, b, H], t.k["enc_self"][0, b, H], t.v["enc_self"][0, b, H])
    qk = q.astype(np.float64) @ k.T.astype(np.float64)
    mask = t.masks["enc_self"][b]
    probs = t.attn["enc_self"][0, b, H]
    context = acts["encoder.layers.0.self_attn.hook_context"][b]  # (H, n, Dh)
    vocab = bundle.tokenizer.ids_to_pieces(list(range(int(bundle.config.vocab_size))))

    def pieces(said, charts, html):
        assert f"vocabulary of {bundle.config.vocab_size:,} pieces" in said
        assert f"Sentence 1 has {m} pieces" in said
        assert "pieces: " + ", ".join(str(len(x)) for x in t.src_tokens) in said
        for row, (toks, page) in enumerate(zip(t.src_tokens, html, strict=True)):
            subs = [int(x) for x in re.findall(r"<sub[^>]*>(\d+)</sub>", page)]
            assert subs == t.src_ids[row, :len(toks)].tolist(), row

    def padding(said, charts, html):
        assert f"to the longest one, {n} pieces" in said and f"gets {n - m} pad slot(s)" in said
        assert f"inputs: (bs, n_enc_seq) = ({bs}, {n})" in said
        np.testing.assert_array_equal(np.array(charts[0]["data"][0]["text"], np.int64),
                                      t.src_ids)

    def embedding(said, charts, html):
        assert f"one row of {d} numbers" in said and f"√d_model = {np.sqrt(d):.1f}" in said
        assert f"input_embs: (bs, n_enc_seq, d_model) = ({bs}, {n}, {d})" in said
        _close(charts[0]["data"][0]["z"], acts["encoder.hook_tok"][b], "input_embs")

    def positional(said, charts, html):
        rows = t.pos_table.shape[0]
        assert f"pos_encoding: (max_len, d_model) = ({rows}, {d})" in said
        _close(charts[0]["data"][0]["z"], t.positions["enc"], "position ids")
        assert t.positions["enc"][b, :m].tolist() == list(range(1, m + 1))
        shown = array(charts[1]["data"][0]["z"])
        _close(shown, t.pos_table[:shown.shape[0]], "positional table")

    def embedding_sum(said, charts, html):
        assert f"both are ({n} × {d}) per sentence" in said
        _close(charts[0]["data"][0]["z"], t.hidden["enc"][0, b], "input_sums")
        _close(charts[0]["data"][0]["z"], acts["encoder.hook_tok"][b] +
               acts["encoder.hook_pos"][b], "input_sums = embs + pos", atol=1e-3)
        for bar, name in zip(charts[1]["data"], ("encoder.hook_tok", "encoder.hook_pos")):
            _close(bar["y"], np.linalg.norm(acts[name][b, :m].astype(np.float64), axis=-1),
                   name)

    def pad_mask(said, charts, html):
        assert f"Sentence 1 has {n - m} pad slot(s), so its last {n - m} column(s)" in said
        assert f"attn_mask: (bs, n_q_seq, n_k_seq) = ({bs}, {n}, {n})" in said
        _close(charts[0]["data"][0]["z"], mask.astype(float), "pad mask")
        assert mask[:, m:].all() and not mask[:, :m].any()

    def qkv(said, charts, html):
        assert f"d_model = {d} numbers" in said and f"n_heads = {n_heads} heads of " \
            f"d_model / n_heads = {d_h}" in said and f"Head {H} of layer 0" in said
        for fig, want, name in zip(charts, (q, k, v), "QKV"):
            _close(fig["data"][0]["z"], want, name)

    def scores(said, charts, html):
        assert f"a table of {n} × {n} per head" in said
        _close(charts[0]["data"][0]["z"], qk, "QKᵀ", atol=1e-3)

    def scale(said, charts, html):
        top = qk[0].max()
        assert f"√{d_h} = {np.sqrt(d_h):.2f}" in said
        assert f"goes from {top:.2f} to {top / np.sqrt(d_h):.2f}" in said
        _close(charts[0]["data"][0]["z"], t.scores["enc_self"][0, b, H], "QKᵀ/√d_k")
        _close(charts[0]["data"][0]["z"], qk / np.sqrt(d_h), "QKᵀ/√d_k by hand", atol=1e-3)

    def mask_fill(said, charts, html):
        assert f"Here {int(mask.sum())} of the {mask.size} cells are blocked" in said
        z = array(charts[0]["data"][0]["z"]).astype(np.float64)
        assert np.array_equal(~np.isfinite(z) | (z <= -1e8), mask)
        _close(np.where(mask, 0, z), np.where(mask, 0, qk / np.sqrt(d_h)), "masked", 1e-3)

    def softmax(said, charts, html):
        p = probs[:m, :m].astype(np.float64).copy()
        np.fill_diagonal(p, -1)  # the largest weight off the diagonal, found here by hand
        qi, ki = np.unravel_index(np.argmax(p), p.shape)
        assert f"Query “{src[qi]}” puts {probs[qi, ki]:.0%} of its weight on “{src[ki]}”" \
            in said
        _close(charts[0]["data"][0]["z"], probs, "attention probabilities")
        _close(probs, np.where(mask, 0, _softmax(np.where(mask, -1e9, qk / np.sqrt(d_h)))),
               "softmax by hand", atol=1e-4)

    def context_step(said, charts, html):
        assert f"context: (bs, n_heads, n_seq, d_model / n_heads) = ({bs}, {n_heads}, {n}, " \
            f"{d_h})" in said
        _close(charts[0]["data"][0]["z"], context[H], "context")
        _close(context[H], probs.astype(np.float64) @ v, "α·V by hand", atol=1e-4)

    def concat(said, charts, html):
        assert f"The {n_heads} heads' contexts" in said and f"a {d} × {d} linear layer" in said
        _close(charts[0]["data"][0]["z"], context.transpose(1, 0, 2).reshape(n, -1), "concat")
        _close(charts[1]["data"][0]["z"], acts["encoder.layers.0.self_attn.hook_out"][b],
               "·W_O")

    def residual(said, charts, html):
        after = acts["encoder.layers.0.hook_resid_mid"][b, :m].astype(np.float64)
        assert f"mean {after.mean(-1).mean():.3f} and standard deviation " \
            f"{after.std(-1).mean():.3f}" in said
        parts = (t.hidden["enc"][0, b, :m], acts["encoder.layers.0.self_attn.hook_out"][b, :m],
                 after)
        for bar, part in zip(charts[0]["data"], parts, strict=True):
            _close(bar["y"], np.linalg.norm(np.asarray(part, np.float64), axis=-1), bar["name"])

    def ffn(said, charts, html):
        hidden = acts["encoder.layers.0.ffn.hook_hidden"][b, :m]
        assert f"({d} → {hidden.shape[-1]})" in said
        assert f"{np.mean(hidden == 0):.0%} of the hidden values are exactly 0" in said
        _close(charts[0]["data"][0]["z"], hidden, "FFN hidden")

    def next_layer(said, charts, html):
        layers = t.hidden["enc"].shape[0] - 1
        assert f"{layers} layers in all" in said and f"= ({bs}, {n}, {d}) × {layers}" in said
        h = t.hidden["enc"][:, b, :m].astype(np.float64)
        unit = h / np.linalg.norm(h, axis=-1, keepdims=True)
        _close(charts[0]["data"][0]["z"], 1 - np.sum(unit[1:] * unit[:-1], -1), "1 − cos")

    def subsequent(said, charts, html):
        n_t = t.tgt_ids.shape[1]
        assert f"attn_dec_mask: (bs, n_dec_seq, n_dec_seq) = ({bs}, {n_t}, {n_t})" in said
        _close(charts[0]["data"][0]["z"], np.triu(np.ones((n_t, n_t)), 1), "subsequent")
        _close(charts[1]["data"][0]["z"], t.masks["dec_self"][b].astype(float), "combined")
        m_t = len(tgt)
        _close(charts[2]["data"][0]["z"], t.attn["dec_self"][0, b, H, :m_t, :m_t], "dec head")

    def cross(said, charts, html):
        last = t.attn["cross"].shape[0] - 1
        a = t.attn["cross"][last, b, H, :len(tgt), :m]
        qi, ki = np.unravel_index(np.argmax(np.where(np.eye(*a.shape, dtype=bool), -1, a)),
                                  a.shape)
        assert f"In layer {last}, head {H}, decoder piece “{tgt[qi]}” looks most at source " \
            f"piece “{src[ki]}” ({a[qi, ki]:.0%})" in said
        _close(charts[0]["data"][0]["z"], a, "cross")

    def output(said, charts, html):
        p = _softmax(t.logits[b, :len(tgt)].astype(np.float64))
        chosen = [vocab[i] for i in p.argmax(-1)]
        assert f"After “{tgt[0]}” the most likely piece is “{chosen[0]}” ({p[0].max():.0%})" \
            in said
        assert f"the most likely pieces read: {' '.join(chosen)}" in said
        _close(charts[0]["data"][0]["x"], np.sort(p[0])[::-1][:5], "top 5", atol=1e-5)
        assert f"logits: (bs, n_dec_seq, vocab_size) = ({bs}, {t.tgt_ids.shape[1]}, " \
            f"{bundle.config.vocab_size})" in said

    return {"pieces": pieces, "padding": padding, "embedding": embedding,
            "positional": positional, "sum": embedding_sum, "pad_mask": pad_mask, "qkv": qkv,
            "qk": scores, "scale": scale, "mask": mask_fill, "softmax": softmax,
            "context": context_step, "concat": concat, "residual": residual, "ffn": ffn,
            "next": next_layer, "subsequent": subsequent, "cross": cross, "output": output}


@needs("paper" in SHIPPED, reason="the shipped paper checkpoint is not here")
def test_every_steps_numbers_are_the_traces(paper_trace):
    """All 19 steps on `paper`, head 1: each number the page says and each chart's values,
    against a Trace captured here (and, where a step shows a computation, that computation
    redone by hand: QKᵀ, ÷√d_k, the mask, softmax, α·V, 1 − cos, the output softmax)."""
    bundle, trace = paper_trace
    checks = _checks(bundle, trace)
    assert list(checks) == list(STEPS)  # every step has its check, in the tour's order
    for i, (step, check) in enumerate(checks.items(), 1):
        at = run_app({"view": "tour", "ckpt": "paper", "text": TEXT, "step": str(i),
                      "head": "1"}, timeout=300)
        assert not problems(at), (step, problems(at))
        assert step_title(at).startswith(f"{i}. "), (step, step_title(at))
        html = [str(h.proto.body) for h in at.get("html")]
        try:
            check(_said(at), _charts(at), html)
        except AssertionError as exc:
            raise AssertionError(f"step {i} ({step}): {exc}") from exc


@pytest.mark.parametrize("step", ["99", "9" * 5000])  # 5,000 digits: int() raised ValueError
def test_bad_step_in_the_link_warns_and_shows_step_one(step):
    at = run_app({"view": "tour", "ckpt": SHIPPED[0] if SHIPPED else "paper", "step": step})
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
    # cross-attention (none); the embedding rows, ·W_O, the residual and the FFN are read
    # from the table or rebuilt from the recorded attention and the weights
    # (tests/unit/test_tour_block and test_block_walk check them)
    assert skipped == [18], skipped


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
