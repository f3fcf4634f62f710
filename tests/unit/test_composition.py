"""model.analysis.composition_scores against an oracle written here from the raw parameters
(state-dict names, full D × D matrices in float64, norms folded by hand), on the shipped
`paper`, a pre-LN lab model, and tiny GPT-2, Llama (grouped kv heads), BERT and T5 models
whose norm weights are randomised so that folding them matters."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from model import load_checkpoint  # noqa: E402
from model.analysis import composition_scores  # noqa: E402
from model.backends import backend_for  # noqa: E402
from tests.hf_folders import save_families  # noqa: E402
from tests.unit.conftest import make_bundle  # noqa: E402
from tests.unit.test_qk_terms import hf_model  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
TOL = 1e-6
FAMILIES = ("gpt2", "llama", "bert", "t5")


# ---- the oracle: every matrix from parameter names, every product formed in full ----

def _p(model, name: str) -> np.ndarray:
    return dict(model.named_parameters())[name].detach().double().numpy()


def _heads_linear(w: np.ndarray, n: int) -> list[np.ndarray]:
    """nn.Linear weight (n·Dh, D), y = x wᵀ -> per head (D, Dh) in x @ W form."""
    dh = w.shape[0] // n
    return [w[i * dh:(i + 1) * dh].T for i in range(n)]


def _out_linear(w: np.ndarray, n: int) -> list[np.ndarray]:
    """nn.Linear output weight (D, n·Dh) -> per head (Dh, D) in x @ W form."""
    dh = w.shape[1] // n
    return [w[:, i * dh:(i + 1) * dh].T for i in range(n)]


def oracle_layer(bundle, family: str, kind: str, layer: int):
    """(W_Q, W_K, W_V, W_O per head, γ_q, γ_kv, layernorm?) read by parameter name."""
    m, h = bundle.model, bundle.config.n_heads
    if family == "lab":
        stack = "encoder" if kind == "enc_self" else "decoder"
        attn = "cross_attn" if kind == "cross" else "self_attn"
        pre = f"{stack}.layers.{layer}.{attn}"
        q, k, v = (_heads_linear(_p(m, f"{pre}.w_{x}.weight"), h) for x in "qkv")
        o = _out_linear(_p(m, f"{pre}.w_o.weight"), h)
        gq = gk = None
        if bundle.config.norm == "pre":
            block = {"enc_self": "attn_block", "dec_self": "self_block",
                     "cross": "cross_block"}[kind]
            gq = gk = _p(m, f"{stack}.layers.{layer}.{block}.norm.weight")
            if kind == "cross":
                gk = _p(m, "encoder.final_norm.weight")
        return q, k, v, o, gq, gk, True
    if family == "gpt2":
        w = _p(m, f"transformer.h.{layer}.attn.c_attn.weight")  # (D, 3D), x @ W
        d = w.shape[0]
        dh = d // h
        q, k, v = ([w[:, s * d + i * dh: s * d + (i + 1) * dh] for i in range(h)]
                   for s in range(3))
        wo = _p(m, f"transformer.h.{layer}.attn.c_proj.weight")  # (D, D), x @ W
        o = [wo[i * dh:(i + 1) * dh] for i in range(h)]
        g = _p(m, f"transformer.h.{layer}.ln_1.weight")
        return q, k, v, o, g, g, True
    if family == "llama":
        pre = f"model.layers.{layer}.self_attn"
        q = _heads_linear(_p(m, f"{pre}.q_proj.weight"), h)
        n_kv = bundle.config.hf.num_key_value_heads
        k_kv = _heads_linear(_p(m, f"{pre}.k_proj.weight"), n_kv)
        v_kv = _heads_linear(_p(m, f"{pre}.v_proj.weight"), n_kv)
        per = h // n_kv
        k = [k_kv[i // per] for i in range(h)]
        v = [v_kv[i // per] for i in range(h)]
        o = _out_linear(_p(m, f"{pre}.o_proj.weight"), h)
        g = _p(m, f"model.layers.{layer}.input_layernorm.weight")
        return q, k, v, o, g, g, False
    if family == "bert":
        pre = f"encoder.layer.{layer}.attention"
        q, k, v = (_heads_linear(_p(m, f"{pre}.self.{x}.weight"), h)
                   for x in ("query", "key", "value"))
        o = _out_linear(_p(m, f"{pre}.output.dense.weight"), h)
        return q, k, v, o, None, None, True
    assert family == "t5"
    stack = "encoder" if kind == "enc_self" else "decoder"
    sub, name = (1, "EncDecAttention") if kind == "cross" else (0, "SelfAttention")
    pre = f"{stack}.block.{layer}.layer.{sub}"
    q, k, v = (_heads_linear(_p(m, f"{pre}.{name}.{x}.weight"), h) for x in "qkv")
    o = _out_linear(_p(m, f"{pre}.{name}.o.weight"), h)
    gq = gk = _p(m, f"{pre}.layer_norm.weight")
    if kind == "cross":
        gk = _p(m, "encoder.final_layer_norm.weight")
    return q, k, v, o, gq, gk, False


def oracle_matrices(bundle, family: str, kind: str, layer: int, fold: bool):
    """[(W_QK (D, D), W_OV (D, D)) per head], norms folded as TransformerLens' fold_ln."""
    q, k, v, o, gq, gk, layernorm = oracle_layer(bundle, family, kind, layer)
    d = q[0].shape[0]
    eye = np.eye(d)
    fold = fold and gq is not None
    centre = eye - 1.0 / d if fold and layernorm else eye
    rq = centre @ np.diag(gq) if fold else eye
    rk = centre @ np.diag(gk) if fold else eye
    return [((rq @ q[i]) @ (rk @ k[i]).T, (rk @ v[i]) @ (o[i] @ centre))
            for i in range(len(q))]


def oracle(bundle, family: str, fold: bool = True) -> dict:
    kinds = bundle.kinds
    mats = {kind: [oracle_matrices(bundle, family, kind, i, fold)
                   for i in range(bundle.n_layers(kind))] for kind in kinds}
    fro = np.linalg.norm
    out: dict = {"q": {}, "k": {}, "v": {}}
    for kind in kinds:
        n_l, n_h = len(mats[kind]), len(mats[kind][0])
        for side in "qkv":
            src = kind if kind != "cross" else ("dec_self" if side == "q" else "enc_self")
            n_e = len(mats[src])
            arr = np.full((n_l, n_h, n_e, len(mats[src][0])), np.nan)
            for li in range(n_l):
                for lj in range(n_e):
                    ok = (lj < li if kind != "cross" else lj <= li if side == "q" else True)
                    if not ok:
                        continue
                    for b, (qk_b, ov_b) in enumerate(mats[kind][li]):
                        for a, (_, ov_a) in enumerate(mats[src][lj]):
                            right = {"q": qk_b, "k": qk_b.T, "v": ov_b}[side]
                            arr[li, b, lj, a] = fro(ov_a @ right) / (fro(ov_a) * fro(right))
            out[side][kind] = arr
    return out


def _max_diff(ours: dict, theirs: dict) -> float:
    worst = 0.0
    for side in "qkv":
        assert set(ours[side]) == set(theirs[side])
        for kind, arr in theirs[side].items():
            got = ours[side][kind]
            assert got.shape == arr.shape, (side, kind)
            np.testing.assert_array_equal(np.isnan(got), np.isnan(arr))
            ok = ~np.isnan(arr)
            assert ok.any()
            worst = max(worst, float(np.abs(got[ok] - arr[ok]).max()))
    return worst


# ---- models ----

def randomise_norms(model: torch.nn.Module) -> None:
    """Norm weights away from 1 (random init leaves them at 1, which would hide folding)."""
    gen = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if ("norm" in name.lower() or ".ln_" in name) and name.endswith("weight"):
                p.copy_(0.5 + torch.rand(p.shape, generator=gen))


def tweaked_bundles(root: Path, families, *tweaks) -> dict:
    """{family: bundle} of test_qk_terms' tiny models, each tweak(model) applied, saved and
    loaded through load_checkpoint."""
    save_families(root, families, hf_model, *tweaks)
    return {family: load_checkpoint(root / family) for family in families}


@pytest.fixture(scope="module")
def hf_bundles(tmp_path_factory):
    return tweaked_bundles(tmp_path_factory.mktemp("composition_models"), FAMILIES,
                           randomise_norms)


@pytest.fixture(scope="module")
def paper():
    return load_checkpoint(ROOT / "checkpoints" / "paper")


@pytest.fixture(scope="module")
def pre_ln(tokenizer):
    bundle = make_bundle(tokenizer, norm="pre", pos_encoding="learned", activation="gelu")
    randomise_norms(bundle.model)
    return bundle


# ---- tests ----

@pytest.mark.parametrize("fold", [True, False])
def test_paper_agrees_with_the_oracle(paper, fold):
    assert _max_diff(composition_scores(paper, fold_norms=fold), oracle(paper, "lab")) < TOL


@pytest.mark.parametrize("fold", [True, False])
def test_pre_ln_lab_model_agrees_with_the_oracle(pre_ln, fold):
    ours = composition_scores(pre_ln, fold_norms=fold)
    assert _max_diff(ours, oracle(pre_ln, "lab", fold)) < TOL
    if fold:  # folding changed something: the raw scores differ
        raw = oracle(pre_ln, "lab", False)
        diff = np.nanmax(np.abs(ours["k"]["cross"] - raw["k"]["cross"]))
        assert diff > 1e-3


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("fold", [True, False])
def test_hf_families_agree_with_the_oracle(hf_bundles, family, fold):
    bundle = hf_bundles[family]
    ours = composition_scores(bundle, fold_norms=fold)
    assert _max_diff(ours, oracle(bundle, family, fold)) < TOL
    if fold and family != "bert":  # the norms were folded: unfolded scores are different
        other = oracle(bundle, family, False)
        kind = bundle.kinds[0]
        assert np.nanmax(np.abs(ours["q"][kind] - other["q"][kind])) > 1e-3


def test_shapes_nan_pattern_and_sources(paper):
    got = composition_scores(paper)
    n_l, n_h = paper.config.n_dec_layers, paper.config.n_heads
    for side in "qkv":
        for kind in ("enc_self", "dec_self", "cross"):
            arr = got[side][kind]
            assert arr.shape == (n_l, n_h, n_l, n_h) and arr.dtype == np.float64
            finite = arr[~np.isnan(arr)]
            assert ((finite >= 0) & (finite <= 1)).all()
        for kind in ("enc_self", "dec_self"):  # only earlier layers: a strict lower triangle
            filled = ~np.isnan(got[side][kind][:, 0, :, 0])
            np.testing.assert_array_equal(filled, np.tri(n_l, k=-1, dtype=bool))
    assert not np.isnan(got["k"]["cross"]).any()  # every encoder head wrote the memory
    np.testing.assert_array_equal(~np.isnan(got["q"]["cross"][:, 0, :, 0]),
                                  np.tri(n_l, dtype=bool))  # self-attention of layers ≤ l
    assert got["earlier"]["q"]["cross"] == "dec_self"
    assert got["earlier"]["k"]["cross"] == "enc_self"


def test_baseline_is_of_the_random_size(paper, hf_bundles):
    """Random Gaussian factors: E‖W_OV W_QK‖² ≈ D³Dh², ‖W_OV‖² ≈ ‖W_QK‖² ≈ D²Dh, so a score
    near 1/√D; the trained model's largest scores stand above it."""
    for bundle in (paper, hf_bundles["llama"]):
        got = composition_scores(bundle)
        d = bundle.config.d_model
        for side in "qkv":
            for kind, base in got["baseline"][side].items():
                assert 0.5 / np.sqrt(d) < base < 2.0 / np.sqrt(d), (side, kind, base)
    got = composition_scores(paper)
    assert np.nanmax(got["k"]["enc_self"]) > got["baseline"]["k"]["enc_self"]


def test_grouped_kv_heads_are_repeated(hf_bundles):
    bundle = hf_bundles["llama"]
    w = backend_for(bundle).circuit_weights("dec_self", 1)
    n_h, n_kv = bundle.config.n_heads, bundle.config.hf.num_key_value_heads
    assert w["W_Q"].shape[0] == w["W_K"].shape[0] == w["W_V"].shape[0] == n_h
    assert w["W_O"].shape == (n_h, w["W_Q"].shape[2], w["W_Q"].shape[1])
    per = n_h // n_kv
    np.testing.assert_array_equal(w["kv_groups"], np.arange(n_h) // per)
    k_proj = _p(bundle.model, "model.layers.1.self_attn.k_proj.weight")  # (G·Dh, D)
    dh = k_proj.shape[0] // n_kv
    for h in range(n_h):
        g = h // per
        np.testing.assert_array_equal(w["W_K"][h], k_proj[g * dh:(g + 1) * dh].T)
    assert not np.array_equal(w["W_K"][0], w["W_K"][per])
    assert all(x.dtype == np.float64 for x in (w["W_Q"], w["W_K"], w["W_V"], w["W_O"]))


def test_unknown_layouts_are_refused(hf_bundles, paper):
    with pytest.raises(ValueError, match="kind"):
        backend_for(hf_bundles["bert"]).circuit_weights("cross", 0)
    with pytest.raises(ValueError, match="layers"):
        backend_for(paper).circuit_weights("enc_self", 9)
