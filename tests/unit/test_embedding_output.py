"""Issue 54 item 4: on a sentence-embedding model the output a knock-out, the scan and patching
measure is the sentence embedding (its cosines), checked against an independent computation:
a second load of the folder with plain transformers (AutoModel, eager attention), heads
knocked out by a pre-hook of the test's own on the attention output projection (its input is
the heads' contexts side by side), and the pooling written again in numpy.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from model import load_checkpoint  # noqa: E402
from model.analysis.ablation import ablation_effect  # noqa: E402
from model.analysis.similarity import partner, pooled_knockout, pooled_scan  # noqa: E402
from model.backends import facts  # noqa: E402
from model.patching import effect, patch  # noqa: E402
from tests.hf_folders import make_tokenizer  # noqa: E402
from tests.unit.test_hf import make_model  # noqa: E402
from tests.unit.test_similarity import write_sentence_files  # noqa: E402

LINES = ["the cat eats fish every day .", "a dog runs", "winter is cold ."]


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("embedding_output") / "mean"
    model, template = make_model("bert")
    model.save_pretrained(root, safe_serialization=True)
    make_tokenizer(template).save_pretrained(root)
    write_sentence_files(root, "mean", True, 64)
    return root


@pytest.fixture(scope="module")
def bundle(folder):
    return load_checkpoint(folder)


@pytest.fixture(scope="module")
def oracle(folder):
    """embed(lines, out) -> (B, D) float64: mean pooling over real pieces, then length 1, with
    the heads in `out` ({(layer, head)}) zeroed before the attention output projection."""
    from transformers import AutoModel, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(folder)
    model = AutoModel.from_pretrained(folder, attn_implementation="eager").eval()
    dh = model.config.hidden_size // model.config.num_attention_heads

    def run(lines: list[str], out=frozenset()) -> np.ndarray:
        handles = []
        for layer in {la for la, _ in out}:
            heads = [h for la, h in out if la == layer]

            def zero(module, args, heads=heads):
                x = args[0].clone()  # (B, n, H·Dh): the heads' contexts side by side
                for h in heads:
                    x[..., h * dh:(h + 1) * dh] = 0.0
                return (x,)

            dense = model.encoder.layer[layer].attention.output.dense
            handles.append(dense.register_forward_pre_hook(zero))
        try:
            enc = tok(lines, padding=True, return_tensors="pt")
            with torch.no_grad():
                h = model(**enc).last_hidden_state.double().numpy()  # (B, n, D)
        finally:
            for handle in handles:
                handle.remove()
        m = enc["attention_mask"].numpy().astype(np.float64)[:, :, None]
        v = (h * m).sum(1) / m.sum(1)
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    return run


def _cos(u: np.ndarray, v: np.ndarray) -> float:
    return float(u @ v / (np.linalg.norm(u) * np.linalg.norm(v)))


def test_the_facts_name_the_cosine():
    assert partner(1, 0) is None and partner(3, 0) == 1 and partner(3, 2) == 0


def test_knockout_measures_the_cosines_of_the_embeddings(bundle, oracle):
    assert facts(bundle).effect_unit == "cosine"
    out = {("enc_self", 0, 1), ("enc_self", 1, 0)}
    effect = ablation_effect(bundle, LINES, out)
    assert effect["measure"] == "cosine"
    p = effect["pooled"]
    before, after = oracle(LINES), oracle(LINES, {(0, 1), (1, 0)})
    np.testing.assert_allclose(p.before, before @ before.T, atol=2e-6)
    np.testing.assert_allclose(p.after, after @ after.T, atol=2e-6)
    np.testing.assert_allclose(p.moved, (before * after).sum(-1), atol=2e-6)
    assert np.abs(p.after - p.before).max() > 1e-4  # the heads mattered: far above atol
    again = pooled_knockout(bundle, LINES, "")
    np.testing.assert_allclose(again.after, again.before, atol=1e-6)


def test_scan_of_a_pair_is_the_change_in_their_cosine(bundle, oracle):
    scan = pooled_scan(bundle, LINES[0], LINES[2])
    (kind,) = scan
    got = scan[kind]
    assert got.shape == (2, 2)
    base = oracle([LINES[0], LINES[2]])
    for layer in range(2):
        for head in range(2):
            v = oracle([LINES[0], LINES[2]], {(layer, head)})
            want = _cos(v[0], v[1]) - _cos(base[0], base[1])
            assert abs(got[layer, head] - want) < 2e-6, (layer, head)
    assert np.abs(got).max() > 1e-4


def test_scan_of_one_line_is_the_change_in_its_embedding(bundle, oracle, monkeypatch):
    from model.analysis import similarity as sim

    scan = pooled_scan(bundle, LINES[1])
    got = next(iter(scan.values()))
    base = oracle([LINES[1]])[0]
    for layer in range(2):
        for head in range(2):
            v = oracle([LINES[1]], {(layer, head)})[0]
            assert abs(got[layer, head] - (_cos(v, base) - 1.0)) < 2e-6, (layer, head)
    assert (got <= 1e-7).all() and got.min() < -1e-5
    monkeypatch.setattr(sim, "CELLS_PER_FORWARD", 1)  # one copy per forward: same numbers
    np.testing.assert_allclose(next(iter(pooled_scan(bundle, LINES[1]).values())), got,
                               atol=1e-7)


@pytest.mark.parametrize("method", ["exact", "attribution"])
def test_patching_measures_the_cosine_to_the_clean_line(bundle, oracle, method):
    clean, corrupted = "the cat eats fish", "the dog eats fish"
    p = patch(bundle, clean, corrupted, method=method, parts=("heads", "resid"))
    assert p.metric == "pooled_cosine"
    v = oracle([clean, corrupted])
    assert p.clean_metric == pytest.approx(1.0, abs=1e-6)
    assert p.corrupted_metric == pytest.approx(_cos(v[0], v[1]), abs=1e-5)
    assert np.abs(p.heads["enc_self"]).max() > 1e-3
    if method == "exact":  # the first block's whole input from the clean run is the clean run
        assert effect(bundle, clean, corrupted, [("resid", "enc", 0, None)]) == pytest.approx(
            1.0, abs=1e-5)
