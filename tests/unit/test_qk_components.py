"""model.analysis.qk_components: the component × component terms plus the bias add up to the
recorded score (≤ 1e-4) on the shipped `paper` (post-LN), a pre-LN lab model, and tiny GPT-2,
grouped-kv Llama (rotary), BERT (post-LN) and T5 (relative bias, all three kinds) models;
dropping a component, the bias or the rotation breaks the identity."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from model import capture, load_checkpoint  # noqa: E402
from model.analysis import qk_components  # noqa: E402
from tests.unit.conftest import make_bundle  # noqa: E402
from tests.unit.test_composition import randomise_norms, tweaked_bundles  # noqa: E402
from tests.unit.test_qk_terms import LINES  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
TOL = 1e-4


def _cells(trace, kind: str, n: int = 5):
    """(layer, batch, head, query, key) unblocked cells, every layer, both sentences."""
    rng = np.random.default_rng(0)
    n_l, n_b, n_h, _, _ = trace.scores[kind].shape
    out = []
    for layer in range(n_l):
        for _ in range(n):
            b = int(rng.integers(n_b))
            n_q = len(trace.tgt_tokens[b] if kind != "enc_self" else trace.src_tokens[b])
            n_k = len(trace.src_tokens[b] if kind != "dec_self" else trace.tgt_tokens[b])
            free = np.argwhere(~trace.masks[kind][b][:n_q, :n_k])  # real tokens only
            q, k = free[rng.integers(len(free))]
            out.append((layer, b, int(rng.integers(n_h)), int(q), int(k)))
    return out


def louder(model) -> None:
    """Projections × 5 (random init, std 0.02, gives scores near 0.01, too quiet to test) and
    random biases (initialised to 0, which would leave the bias row and column empty)."""
    gen = torch.Generator().manual_seed(2)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith(("proj.weight", "c_attn.weight", "c_proj.weight", "query.weight",
                              "key.weight", "value.weight", "dense.weight")):
                p.mul_(5.0)
            elif name.endswith("bias"):
                p.copy_(0.3 * torch.randn(p.shape, generator=gen))


def _worst(bundle, trace, kind: str) -> float:
    worst = 0.0
    for layer, b, h, q, k in _cells(trace, kind):
        c = qk_components(bundle, trace, kind, layer, h, q, k, batch=b)
        assert c.terms.shape == (len(c.query_parts), len(c.key_parts))
        assert c.query_parts[-1] == c.key_parts[-1] == "bias" and c.terms[-1, -1] == 0
        assert c.score == pytest.approx(float(trace.scores[kind][layer, b, h, q, k]))
        worst = max(worst, abs(c.terms.sum() + c.bias - c.score))
    return worst


@pytest.fixture(scope="module")
def lab_models(tokenizer):
    pre = make_bundle(tokenizer, norm="pre", pos_encoding="learned", activation="gelu")
    randomise_norms(pre.model)
    return {"paper": load_checkpoint(ROOT / "checkpoints" / "paper"), "pre": pre}


@pytest.fixture(scope="module")
def hf_bundles(tmp_path_factory):
    return tweaked_bundles(tmp_path_factory.mktemp("component_models"),
                           ("gpt2", "llama", "bert", "t5"), randomise_norms, louder)


@pytest.mark.parametrize("name", ["paper", "pre"])
@pytest.mark.parametrize("kind", ["enc_self", "dec_self", "cross"])
def test_lab_components_add_up(lab_models, name, kind):
    bundle = lab_models[name]
    trace = capture(bundle, ["The cat eats fish.", "Winter is cold."])
    assert _worst(bundle, trace, kind) < TOL


@pytest.mark.parametrize("family,kind", [("gpt2", "dec_self"), ("llama", "dec_self"),
                                         ("bert", "enc_self"), ("t5", "enc_self"),
                                         ("t5", "dec_self"), ("t5", "cross")])
def test_hf_components_add_up(hf_bundles, family, kind):
    bundle = hf_bundles[family]
    trace = capture(bundle, LINES)
    assert _worst(bundle, trace, kind) < TOL
    c = qk_components(bundle, trace, kind, 1, 0, 3, 2)
    assert abs(c.score) > 0.05  # loud enough for the tolerance to mean something


def test_component_names_follow_the_stream(lab_models, hf_bundles):
    paper = lab_models["paper"]
    trace = capture(paper, ["The cat eats fish."])
    c = qk_components(paper, trace, "cross", 2, 1, 2, 2)
    assert c.query_parts[:2] == ["embedding", "position"]
    assert {"L1H3", "L1H3 cross", "MLP 1", "L2H0"} <= set(c.query_parts)  # decoder stream
    assert "L2H0 cross" not in c.query_parts  # the head's own layer's cross heads come after
    assert {"L2H3", "MLP 2"} <= set(c.key_parts) and "L0H0 cross" not in c.key_parts
    llama = hf_bundles["llama"]
    c = qk_components(llama, capture(llama, LINES), "dec_self", 1, 3, 4, 2)
    assert "position" not in c.query_parts  # rotary: positions enter by rotation
    assert c.query_parts == ["embedding", "L0H0", "L0H1", "L0H2", "L0H3", "MLP 0", "bias"]


def test_dropping_a_part_breaks_the_identity(hf_bundles, monkeypatch):
    """The identity is not vacuous: leaving out one head's write, the bias, or the rotation
    of the parts moves the sum away from the score."""
    import model.backends.hf.components as comp

    bundle = hf_bundles["llama"]
    trace = capture(bundle, LINES)
    cell = ("dec_self", 1, 1, 5, 2)
    c = qk_components(bundle, trace, *cell)
    assert abs(c.terms.sum() + c.bias - c.score) < TOL
    assert abs(c.score) > 0.05
    i = c.query_parts.index("L0H1")
    assert abs(c.terms.sum() - c.terms[i].sum() + c.bias - c.score) > 1e-3
    j = c.key_parts.index("MLP 0")
    assert abs(c.terms.sum() - c.terms[:, j].sum() + c.bias - c.score) > 1e-3
    gpt2 = hf_bundles["gpt2"]  # GPT-2 has biases: the bias row and column matter
    g = qk_components(gpt2, capture(gpt2, LINES), *cell)
    assert abs(g.terms[-1].sum() + g.terms[:, -1].sum() + g.bias) > 1e-3
    monkeypatch.setattr(comp, "_rotate", lambda parts, model, position: parts)
    c2 = qk_components(bundle, trace, *cell)
    assert abs(c2.terms.sum() + c2.bias - c2.score) > 1e-3


def test_refusals(hf_bundles, lab_models):
    trace = capture(lab_models["paper"], ["The cat eats fish."])
    with pytest.raises(ValueError, match="head"):
        qk_components(lab_models["paper"], trace, "enc_self", 0, 9, 0, 0)


def test_t5_position_bias_is_in_the_bias_and_cross_keys_read_the_encoder(hf_bundles):
    from model.backends.hf.positions import t5_bias

    t5 = hf_bundles["t5"]
    trace = capture(t5, LINES)
    c = qk_components(t5, trace, "enc_self", 1, 2, 3, 1)
    rel = float(t5_bias(t5.model, 4)["encoder"][2, 3, 1])
    assert abs(rel) > 1e-3 and abs(c.terms.sum() + c.bias - rel - c.score) > 1e-3
    x = qk_components(t5, trace, "cross", 1, 0, 2, 1)
    assert "L0H0 cross" in x.query_parts and "L1H0" in x.query_parts
    assert "MLP 1" in x.key_parts and not any("cross" in p for p in x.key_parts)
