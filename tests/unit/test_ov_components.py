"""model.analysis.ov_components: what one head writes at a query, split by its keys' upstream
components, adds up to the recorded α · v · W_O (≤ 1e-4) on the shipped `paper` (post-LN) and
`seed001` (pre-LN), and tiny GPT-2, grouped-kv Llama (rotary), BERT (post-LN) and T5 models;
dropping a component breaks it; the direct effect on the logits agrees with the head
contributions' direct logit attribution where both exist."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from model import capture, load_checkpoint  # noqa: E402
from model.analysis import ov_components  # noqa: E402
from model.backends import backend_for  # noqa: E402
from tests.unit.test_composition import randomise_norms, tweaked_bundles  # noqa: E402
from tests.unit.test_qk_components import louder  # noqa: E402
from tests.unit.test_qk_terms import LINES  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
TOL = 1e-4
SENTENCES = ["The cat eats fish.", "Winter is cold."]


def _worst(bundle, trace, kind: str) -> float:
    """Largest |Σ writes − output| over every layer, two heads, two queries, both sentences."""
    worst = 0.0
    n_l, n_b, n_h = trace.attn[kind].shape[:3]
    for layer in range(n_l):
        for b in range(n_b):
            n_q = trace.length("src" if kind == "enc_self" else "tgt", b)
            for head, query in ((0, n_q - 1), (n_h - 1, n_q // 2)):
                o = ov_components(bundle, trace, kind, layer, head, query, batch=b)
                assert o.parts[-1] == "bias" and o.writes.shape[0] == len(o.parts)
                assert abs(o.share.sum() - 1) < 1e-6
                assert abs(o.weights.sum() - 1) < 1e-4  # every key the head reads is there
                worst = max(worst, float(np.abs(o.writes.sum(0) - o.output).max()))
    return worst


@pytest.fixture(scope="module")
def lab():
    return {name: load_checkpoint(ROOT / "checkpoints" / name) for name in ("paper", "seed001")}


@pytest.fixture(scope="module")
def hf(tmp_path_factory):
    return tweaked_bundles(tmp_path_factory.mktemp("ov_models"),
                           ("gpt2", "llama", "bert", "t5"), randomise_norms, louder)


@pytest.mark.parametrize("name", ["paper", "seed001"])
def test_lab_writes_add_up(lab, name):
    bundle = lab[name]
    trace = capture(bundle, SENTENCES)
    for kind in ("enc_self", "dec_self", "cross"):
        assert _worst(bundle, trace, kind) < TOL, kind


@pytest.mark.parametrize("family,kinds", [("gpt2", ("dec_self",)), ("llama", ("dec_self",)),
                                          ("bert", ("enc_self",)),
                                          ("t5", ("enc_self", "dec_self", "cross"))])
def test_hf_writes_add_up(hf, family, kinds):
    bundle = hf[family]
    trace = capture(bundle, LINES)
    for kind in kinds:
        assert _worst(bundle, trace, kind) < TOL, kind
        o = ov_components(bundle, trace, kind, 1, 0, 2)
        assert np.linalg.norm(o.output) > 0.05  # loud enough for the tolerance to mean much


def test_dropping_a_component_breaks_the_identity(hf, lab):
    for bundle, lines, kind in ((hf["llama"], LINES, "dec_self"),
                                (lab["paper"], SENTENCES, "cross")):
        o = ov_components(bundle, capture(bundle, lines), kind, 1, 1, 2)
        assert np.abs(o.writes.sum(0) - o.output).max() < TOL
        for i, name in enumerate(o.parts):
            if np.linalg.norm(o.writes[i]) > 1e-2:  # every component that writes matters
                rest = o.writes.sum(0) - o.writes[i]
                assert np.abs(rest - o.output).max() > 1e-3, name
        assert {"L0H1", "MLP 0", "bias"} <= set(o.parts)


def test_direct_effect_agrees_with_head_contributions(hf, lab):
    """ov_components' logits at one token equal backend.attribution's DLA of the same head."""
    for bundle, kind, source in ((lab["seed001"], "cross", SENTENCES[0]),
                                 (lab["seed001"], "dec_self", SENTENCES[0]),
                                 (hf["gpt2"], "dec_self", LINES[0]),
                                 (hf["llama"], "dec_self", LINES[0])):
        trace = capture(bundle, [source])
        step = trace.length("tgt", 0) - 1
        got = backend_for(bundle).attribution(source, None, None, step, None, 3)
        for layer, head in ((0, 0), (1, 1)):
            o = ov_components(bundle, trace, kind, layer, head, step)
            want = got.dla[kind][layer, head]
            assert abs(o.logits[got.token_id] - want) < 1e-4 * max(1.0, abs(want)), kind
            assert o.promoted[0][1] >= o.logits[got.token_id] >= o.suppressed[0][1]


def test_no_direct_effect_says_why_and_bad_addresses_raise(hf, lab):
    paper = lab["paper"]
    trace = capture(paper, SENTENCES[:1])
    o = ov_components(paper, trace, "enc_self", 0, 0, 1)
    assert o.logits is None and "encoder" in o.no_logits and o.promoted == []
    assert ov_components(paper, trace, "cross", 2, 0, 1).logits is not None  # post-LN too
    for bad in ({"layer": 9}, {"head": 9}, {"query": 99}, {"batch": 3}):
        args = {"layer": 0, "head": 0, "query": 0, "batch": 0, **bad}
        with pytest.raises(ValueError):
            ov_components(paper, trace, "cross", args["layer"], args["head"], args["query"],
                          batch=args["batch"])
    bert = hf["bert"]
    assert ov_components(bert, capture(bert, LINES), "enc_self", 1, 0, 1).logits is None
