"""Rollout and flow aim at the pooled sentence vector on a mean-pooling model (issue 54, item
4): on all-MiniLM-L6-v2 (checkpoints/minilm), the rollout view's pooled chart against a rollout
run here the other way round (a row vector carried from the top layer down), and the flow
graph's pooled-output node against the last hidden states' own sizes."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from model import capture, load_checkpoint
from model.backends import facts
from tests.app.conftest import run_app
from tests.app.test_views import array
from tests.conftest import ROOT, skip_or_fail

MINILM = ROOT / "checkpoints" / "minilm"
LINES = ["The cat sat on the mat.", "Winter is cold."]


@pytest.fixture(scope="module")
def trace():
    if not (MINILM / "config.json").is_file():
        skip_or_fail("checkpoints/minilm is not installed (make run or make test installs it)")
    bundle = load_checkpoint(MINILM)
    assert facts(bundle).pooling == "mean"  # what the views key on
    return capture(bundle, LINES)


def _charts(at) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def _pooled_by_hand(trace, b: int) -> np.ndarray:
    """p = (1/n)·1 at the output, then p ← p·A'_l from the last layer to the first, with
    A'_l = 0.5·mean_h A_l + 0.5·I, rows renormalised: the same product read the other way."""
    n = len(trace.src_tokens[b])
    p = np.full(n, 1.0 / n)
    for layer in reversed(range(trace.attn["enc_self"].shape[0])):
        a = trace.attn["enc_self"][layer, b, :, :n, :n].astype(np.float64).mean(0)
        a = 0.5 * a + 0.5 * np.eye(n)
        p = p @ (a / a.sum(-1, keepdims=True))
    return p


def test_rollout_targets_the_pooled_vector(trace):
    at = run_app({"ckpt": "minilm", "text": "\n".join(LINES), "view": "heads"}, timeout=240)
    at.radio(key="_w_heads_part").set_value("rollout").run(timeout=240)
    assert not at.exception, [e.value for e in at.exception]
    pooled = [c for c in _charts(at) if "pooled sentence vector" in
              json.dumps(c["layout"].get("title", ""))]
    assert len(pooled) == 1, [c["layout"].get("title") for c in _charts(at)]
    got = np.asarray(array(pooled[0]["data"][0]["y"]), np.float64)
    np.testing.assert_allclose(got, _pooled_by_hand(trace, 0), atol=1e-6)
    assert got.sum() == pytest.approx(1.0, abs=1e-6)


def test_flow_graph_ends_in_the_pooled_output(trace):
    at = run_app({"ckpt": "minilm", "text": "\n".join(LINES), "view": "flow"}, timeout=240)
    assert not at.exception, [e.value for e in at.exception]
    spec = next(c for c in _charts(at) if "pooled output" in json.dumps(c))
    hover = [t for tr in spec["data"] for t in (tr.get("text") or [])
             if isinstance(t, str) and t.startswith("mean pooling:")]
    top = trace.hidden["enc"][-1, 0, :len(trace.src_tokens[0])].astype(np.float64)
    sizes = np.linalg.norm(top, axis=-1)
    shares = sizes / sizes.sum()  # ‖x_i‖ / Σ‖x_j‖: each piece's part of the mean
    kept = sorted(round(float(s), 3) for s in shares if s >= 0.05)  # the default threshold
    said = sorted(float(re.match(r"mean pooling: ([\d.]+)", t).group(1)) for t in hover)
    assert kept and said == kept, (said, kept)
    assert all("pooled output (mean of" in t for t in hover)


def _embed_cos(bundle, lines, ablate=frozenset()) -> float:
    from model import embed

    v = embed(bundle, lines, ablate).astype(np.float64)
    return float(v[0] @ v[1] / (np.linalg.norm(v[0]) * np.linalg.norm(v[1])))


@pytest.fixture(scope="module")
def minilm(trace):
    return load_checkpoint(MINILM)


def test_knock_out_measures_the_cosine_to_line_b(minilm):
    """The knock-out on a sentence-embedding model shows cos(line 1, line 2) without the
    ticked heads and its change, named in words; embedded here line by line."""
    out = {("enc_self", 1, 8), ("enc_self", 0, 2)}
    at = run_app({"ckpt": "minilm", "text": "\n".join(LINES), "view": "heads",
                  "ablate": "enc_self:0:2,enc_self:1:8"}, timeout=240)
    at.radio(key="_w_heads_part").set_value("ablation").run(timeout=240)
    assert not at.exception, [e.value for e in at.exception]
    (metric,) = at.metric
    assert "Cosine of line 1 to line 2" in metric.label
    before, after = _embed_cos(minilm, LINES), _embed_cos(minilm, LINES, out)
    assert float(metric.value) == pytest.approx(after, abs=1e-4)
    assert float(metric.proto.delta) == pytest.approx(after - before, abs=1e-4)
    assert abs(after - before) > 1e-3
    said = " ".join(c.value for c in at.caption)
    assert "the change in the cosine of line 1 to line 2" in said
    assert "the mean of its last-layer piece vectors, then scaled to length 1" in said


def test_scan_measures_the_cosine_to_line_b(minilm):
    at = run_app({"ckpt": "minilm", "text": "\n".join(LINES), "view": "heads"}, timeout=240)
    at.radio(key="_w_heads_part").set_value("scan").run(timeout=240)
    at.button(key="scan_go").click().run(timeout=300)
    assert not at.exception, [e.value for e in at.exception]
    spec = next(c for c in _charts(at) if "cosine of line 1 to line 2" in
                json.dumps(c["layout"].get("title", "")))
    z = np.asarray(array(spec["data"][0]["z"]), np.float64)
    assert z.shape == (6, 12)
    base = _embed_cos(minilm, LINES)
    for layer, head in [(0, 2), (1, 8), (5, 0)]:
        want = _embed_cos(minilm, LINES, {("enc_self", layer, head)}) - base
        assert z[layer, head] == pytest.approx(want, abs=1e-5), (layer, head)


def test_tokens_view_draws_the_token_types_of_a_typed_pair():
    """A line "A [SEP] B" is a pair: the tokens view's token-type row equals the tokenizer's
    own token_type_ids for tokenizer(A, B); the single line beside it is all 0."""
    from transformers import AutoTokenizer

    if not (MINILM / "config.json").is_file():
        skip_or_fail("checkpoints/minilm is not installed (make run or make test installs it)")
    a, b = "A cat sits on the mat.", "A kitten rests on a rug."
    at = run_app({"ckpt": "minilm", "text": f"{a} [SEP] {b}\nWinter is cold.",
                  "view": "tokens"}, timeout=240)
    assert not at.exception, [e.value for e in at.exception]
    spec = next(c for c in _charts(at) if "Token-type (segment) ids" in
                json.dumps(c["layout"].get("title", "")))
    z = np.asarray(array(spec["data"][0]["z"]), np.float64)
    tok = AutoTokenizer.from_pretrained(MINILM)
    want = tok(a, b)["token_type_ids"]
    assert z[0, :len(want)].tolist() == want and sum(want) > 0
    single = len(tok("Winter is cold.")["input_ids"])
    assert z[1, :single].tolist() == [0] * single and np.isnan(z[1, single:]).all()
    said = re.sub(r"\\(.)", r"\1", " ".join(c.value for c in at.caption))  # md escapes
    assert "Line(s) 1 hold a pair “A [SEP] B”" in said


def _transformers_layer0(line: str) -> dict[str, np.ndarray]:
    """Layer 0 of plain transformers on one line: BertSelfOutput's output (the post-LN
    attention block) and BertIntermediate's (after GELU), by forward hooks."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(MINILM)
    model = AutoModel.from_pretrained(MINILM, attn_implementation="eager").eval()
    got: dict[str, np.ndarray] = {}
    layer = model.encoder.layer[0]
    hooks = [layer.attention.output.register_forward_hook(
                 lambda m, a, out: got.__setitem__("normed", out[0].double().numpy())),
             layer.intermediate.register_forward_hook(
                 lambda m, a, out: got.__setitem__("hidden", out[0].double().numpy()))]
    try:
        with torch.no_grad():
            model(**tok(line, return_tensors="pt"))
    finally:
        for h in hooks:
            h.remove()
    return got


def test_tour_steps_14_and_15_are_computed_from_the_weights(trace):
    """Steps 14 (the post-LN output) and 15 (the FFN with GELU) on minilm, against
    transformers' own modules."""
    want = _transformers_layer0(LINES[0])
    at = run_app({"ckpt": "minilm", "text": LINES[0], "view": "tour", "step": "14"},
                 timeout=240)
    assert not at.exception, [e.value for e in at.exception]
    bars = next(c for c in _charts(at) if "Vector length per piece" in
                json.dumps(c["layout"].get("title", "")))
    normed = next(t for t in bars["data"] if t["name"] == "after the norm")
    np.testing.assert_allclose(np.asarray(array(normed["y"]), np.float64),
                               np.linalg.norm(want["normed"], axis=-1), atol=1e-4)
    at = run_app({"ckpt": "minilm", "text": LINES[0], "view": "tour", "step": "15"},
                 timeout=240)
    assert not at.exception, [e.value for e in at.exception]
    said = " ".join(m.value for m in at.markdown)
    assert "the activation GELU" in said and "computed here from this layer's weights" in said
    spec = next(c for c in _charts(at) if "FFN hidden layer after the activation" in
                json.dumps(c["layout"].get("title", "")))
    np.testing.assert_allclose(np.asarray(array(spec["data"][0]["z"]), np.float64),
                               want["hidden"], atol=1e-4)
    assert not any("no chart here" in x.value for x in [*at.info, *at.warning])


def test_tour_step_5_says_which_lines_are_pairs(trace):
    at = run_app({"ckpt": "minilm", "text": "Winter is cold.\nA cat sits. [SEP] A kitten rests.",
                  "view": "tour", "step": "5"}, timeout=240)
    assert not at.exception, [e.value for e in at.exception]
    said = re.sub(r"\\(.)", r"\1", " ".join(m.value for m in at.markdown))
    assert "line(s) 2 hold a pair “A [SEP] B”" in said
    assert "0 for every piece of these" not in said


def test_patch_view_measures_the_cosine_to_the_clean_line(minilm):
    """Patching on a sentence-embedding model: the page's metric is each run's cosine to the
    clean line's embedding (clean 1, corrupted the two lines' cosine from model.embed)."""
    clean, corrupt = "A cat sits on the mat.", "A dog sits on the mat."
    at = run_app({"ckpt": "minilm", "view": "patch", "text": clean, "corrupt": corrupt},
                 timeout=240)
    assert not at.exception, [e.value for e in at.exception]
    at.radio(key="patch_method").set_value("attribution").run(timeout=240)
    said = re.sub(r"\\(.)", r"\1", " ".join(m.value for m in at.markdown))
    found = re.search(r"each run's vector is compared with the clean line's by cosine: clean "
                      r"([\d.]+), corrupted ([\d.]+)", said)
    assert found, said[-600:]
    assert float(found.group(1)) == pytest.approx(1.0, abs=1e-3)
    assert float(found.group(2)) == pytest.approx(_embed_cos(minilm, [clean, corrupt]),
                                                  abs=1e-3)
    assert "mean last hidden state" not in said
