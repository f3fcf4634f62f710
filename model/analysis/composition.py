"""Composition scores between attention heads (Elhage et al. 2021, "A Mathematical Framework
for Transformer Circuits"): how much a later head reads what an earlier head writes.

Per head, in the x @ W (row-vector) form: W_QK = W_Q W_Kᵀ and W_OV = W_V W_O, both (D, D);
the score reads x_q W_QK x_kᵀ and the head writes x W_OV. For an earlier head A and a later B:

    Q-composition  ‖W_OV^A W_QK^B‖_F  / (‖W_OV^A‖_F ‖W_QK^B‖_F)   A's output read as B's query
    K-composition  ‖W_OV^A W_QK^Bᵀ‖_F / (‖W_OV^A‖_F ‖W_QK^B‖_F)   A's output read as B's key
    V-composition  ‖W_OV^A W_OV^B‖_F  / (‖W_OV^A‖_F ‖W_OV^B‖_F)   A's output moved on by B

(the paper's column-vector formulas, transposed). Scores lie in [0, 1] and do not change when
either matrix is scaled. They are computed from each head's factors without forming a D × D
matrix: with W_V = Q_V R_V (reduced QR, so ‖Q_V X‖ = ‖X‖), ‖W_V W_O W_Q W_Kᵀ‖ = ‖R_V (W_O W_Q)
R_Kᵀ‖, a Dh × Dh product: about 3 Dh² D (L·H)² multiply-adds in all (a GPT-2-small
shape: about 200 G, tens of seconds on one free core).

Conventions:
- Biases are ignored (the paper's definition is of the weight matrices).
- Norms (fold_norms=True, the default) follow TransformerLens' fold_ln=True with
  center_writing_weights=True: a pre-norm's γ is folded into the W_Q/W_K/W_V that read
  through it (rows scaled by γ), and where that norm is a LayerNorm (it removes the mean) the
  reading matrices are centred along D and every W_O's output is centred, since no reader sees
  a write along the all-ones direction. RMSNorm (Llama, T5): γ folded, nothing centred.
  Post-LN models (the lab's `paper`, BERT) normalise after the residual add: there is no
  per-head place to fold, so nothing is folded. fold_norms=False: the raw weights.
- Grouped key/value heads (Llama, Mistral…): each query head uses its kv head's W_K and W_V
  (repeated), so heads sharing a kv head have equal K- and V-side factors.
- Which heads count as earlier, per attention kind and side (the stream that side reads):
  enc_self and dec_self: heads of the same kind in layers before (layer < l);
  cross: the query side reads the decoder stream (dec_self heads of layers ≤ l: a block's
  self-attention runs before its cross-attention), keys and values read the encoder's output
  (enc_self heads of every layer). result["earlier"][c][kind] names that kind.
  Left out: cross-attention heads as writers into the decoder stream.
- Pairs with no path (the earlier head at the same or a later layer) are NaN, not 0, so a
  mean or a map tells "no path" from "no composition".

Shape legend: L layers, H heads, D model size, Dh head size.
"""

from __future__ import annotations

import numpy as np

from ..backends import backend_for
from ..norms import blas_threads

SEEDS = 5  # random weight sets averaged for the baseline
CHUNK = 16  # earlier heads per block of products


def _fold(w: dict, fold: bool) -> dict:
    """W_Q/W_K/W_V with their pre-norm folded in, W_O centred where the norm centres."""
    out = {n: w[n] for n in ("W_Q", "W_K", "W_V", "W_O")}
    if not fold:
        return out
    centre = bool(w.get("centred"))
    for side, name in (("q", "W_Q"), ("k", "W_K"), ("v", "W_V")):
        gamma = w.get(f"norm_{side}")
        if gamma is None:
            continue
        m = out[name] * np.asarray(gamma, np.float64)[None, :, None]  # diag(γ) W per head
        out[name] = m - m.mean(axis=1, keepdims=True) if centre else m
    if centre:
        out["W_O"] = out["W_O"] - out["W_O"].mean(axis=2, keepdims=True)
    return out


def _r(m: np.ndarray) -> np.ndarray:
    """R (N, Dh, Dh) of each m = Q R (reduced QR) in a stack (N, D, Dh): Q's columns are
    orthonormal, so ‖Q R X‖ = ‖R X‖ and ‖X Rᵀ Qᵀ‖ = ‖X Rᵀ‖."""
    return np.linalg.qr(m, mode="r")


def pair_scores(earlier: dict, later: dict, sides: tuple[str, ...] = ("q", "k", "v")
                ) -> dict[str, np.ndarray]:
    """{side: (Nb, Na)} composition of each later head b with each earlier head a, for each of
    `sides` ("q", "k", "v"; each costs the same).

    earlier: W_V (Na, D, Dh), W_O (Na, Dh, D); later: W_Q, W_K, W_V (Nb, D, Dh), W_O (Nb, Dh, D).
    """
    r_va = _r(earlier["W_V"])  # (Na, Dh, Dh): W_V^A = Q R_VA
    o_a = earlier["W_O"]
    ov_a = np.einsum("aij,ajd->aid", r_va, o_a)  # (Na, Dh, D), same norm as W_OV^A
    n_ov_a = np.linalg.norm(ov_a, axis=(1, 2))
    r = {name: _r(later[name]) for name in ("W_Q", "W_K")}
    r_ob = _r(np.swapaxes(later["W_O"], 1, 2))  # W_O^Bᵀ = Q R_OB
    n_qk = np.linalg.norm(np.einsum("bij,bkj->bik", r["W_Q"], r["W_K"]), axis=(1, 2))
    n_ov_b = np.linalg.norm(np.einsum("bij,bkj->bik", _r(later["W_V"]), r_ob), axis=(1, 2))

    def score(reader: np.ndarray, r_other: np.ndarray, denom_b: np.ndarray) -> np.ndarray:
        # ‖W_V^A W_O^A reader^B otherᵀ‖ = ‖(R_VA W_O^A) reader^B R_otherᵀ‖. The middle product
        # for CHUNK earlier heads against every later head is one large GEMM, (c·Dh, D) @
        # (D, Nb·Dh): numpy's broadcast matmul would instead call BLAS once per pair on 64 × 768
        # blocks, about 10x slower on a 144-head model
        n_b, _, dh = reader.shape
        flat = np.swapaxes(reader, 0, 1).reshape(reader.shape[1], n_b * dh)  # (D, Nb·Dh)
        right = np.swapaxes(r_other, 1, 2)  # (Nb, Dh, Dh): R_otherᵀ
        num = np.empty((len(o_a), n_b))
        for a in range(0, len(o_a), CHUNK):
            block = ov_a[a:a + CHUNK]  # (c, Dh_a, D)
            c, dh_a = block.shape[:2]
            mid = (block.reshape(c * dh_a, -1) @ flat).reshape(c * dh_a, n_b, dh)
            full = np.matmul(np.swapaxes(mid, 0, 1), right)  # (Nb, c·Dh_a, Dh)
            full = full.reshape(n_b, c, dh_a * dh)
            num[a:a + CHUNK] = np.sqrt(np.einsum("bcx,bcx->cb", full, full))
        with np.errstate(divide="ignore", invalid="ignore"):
            return (num / (n_ov_a[:, None] * denom_b[None, :])).T

    args = {"q": (later["W_Q"], r["W_K"], n_qk), "k": (later["W_K"], r["W_Q"], n_qk),
            "v": (later["W_V"], r_ob, n_ov_b)}
    return {side: score(*args[side]) for side in sides}


def _stack(layers: list[dict]) -> dict:
    return {n: np.concatenate([w[n] for w in layers]) for n in ("W_Q", "W_K", "W_V", "W_O")}


def _sources(kinds: tuple[str, ...]) -> dict[str, dict[str, str]]:
    """side -> kind -> the kind whose heads write into the stream that side reads."""
    out: dict[str, dict[str, str]] = {"q": {}, "k": {}, "v": {}}
    for kind in kinds:
        for side in out:
            out[side][kind] = (kind if kind != "cross" else
                               "dec_self" if side == "q" else "enc_self")
    return out


def _reachable(kind: str, side: str, n_later: int, n_earlier: int) -> np.ndarray:
    """bool (L_later, L_earlier): whether layer j's heads write before layer i reads."""
    i, j = np.arange(n_later)[:, None], np.arange(n_earlier)[None, :]
    if kind != "cross":
        return j < i
    if side == "q":
        return j <= i
    return np.ones((n_later, n_earlier), bool)


def baseline(d: int, dh: int, n_heads: int, seeds: int = SEEDS) -> dict[str, float]:
    """{"q"|"k"|"v": mean score} of random Gaussian W_Q, W_K, W_V (D, Dh) and W_O (Dh, D):
    n_heads earlier × n_heads later heads, over `seeds` seeds (0, 1, …). About 1/√D."""
    sums = {"q": 0.0, "k": 0.0, "v": 0.0}
    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        earlier, later = ({n: rng.standard_normal(shape) for n, shape in
                           (("W_Q", (n_heads, d, dh)), ("W_K", (n_heads, d, dh)),
                            ("W_V", (n_heads, d, dh)), ("W_O", (n_heads, dh, d)))}
                          for _ in range(2))
        got = pair_scores(earlier, later)
        for c in sums:
            sums[c] += float(got[c].mean()) / seeds
    return sums


def composition_scores(bundle, *, fold_norms: bool = True, seeds: int = SEEDS) -> dict:
    """Q-, K- and V-composition between every pair of heads (module docstring).

    Returns {"q"|"k"|"v": {kind: float64 (L, H, L', H)}} indexed (later layer, later head,
    earlier layer, earlier head), NaN where the earlier head cannot reach the later one (L' is
    the earlier kind's layer count: L except for a cross head's keys and values);
    "earlier": {"q"|"k"|"v": {kind: earlier kind}}; "baseline": {"q"|"k"|"v": {kind: float}},
    the same scores of random Gaussian matrices of the same shapes (mean over `seeds`); and
    "fold_norms". Every kind the model has is a key.
    """
    # One BLAS thread, as multiply_adds' time estimate assumes: these are many small products
    # and QRs (72 heads × (384, 32) on MiniLM), and OpenBLAS's default of one spinning thread
    # per core (or the server's two) made them 17-46 s instead of 1.1-1.7 s on the busy
    # 2-core machine, so the why view's 0.9 s estimate let a 46 s run start without its button
    with blas_threads():
        return _scores(bundle, fold_norms, seeds)


def _scores(bundle, fold_norms: bool, seeds: int) -> dict:
    backend = backend_for(bundle)
    kinds = tuple(backend.caps.kinds)
    weights = {kind: [_fold(backend.circuit_weights(kind, i), fold_norms)
                      for i in range(bundle.n_layers(kind))] for kind in kinds}
    sources = _sources(kinds)
    result: dict = {"q": {}, "k": {}, "v": {}, "earlier": sources,
                    "baseline": {"q": {}, "k": {}, "v": {}}, "fold_norms": fold_norms}
    for kind in kinds:
        later = weights[kind]
        n_l, n_h, d, dh = len(later), *later[0]["W_Q"].shape
        for side in ("q", "k", "v"):
            src = sources[side][kind]
            earlier = weights.get(src)
            if earlier is None:  # a model whose cross heads' writers are absent: none
                raise ValueError(f"{kind} reads {src} heads, which this model lacks")
            got = pair_scores(_stack(earlier), _stack(later), (side,))[side]  # (L·H, L'·H)
            n_e = len(earlier)
            arr = got.reshape(n_l, n_h, n_e, earlier[0]["W_O"].shape[0])
            ok = _reachable(kind, side, n_l, n_e)
            result[side][kind] = np.where(ok[:, None, :, None], arr, np.nan)
        base = baseline(d, dh, n_h, seeds)
        for side in ("q", "k", "v"):
            result["baseline"][side][kind] = base[side]
    return result


def multiply_adds(bundle, seeds: int = SEEDS) -> float:
    """Multiply-adds composition_scores does (its products, the random baseline's included):
    per kind and side, (earlier heads)·(later heads)·Dh²·(D + Dh). For a time estimate."""
    backend = backend_for(bundle)
    kinds = tuple(backend.caps.kinds)
    sources = _sources(kinds)
    total = 0.0
    for kind in kinds:
        n_h, d, dh = backend.circuit_weights(kind, 0)["W_Q"].shape
        pair = dh * dh * (d + dh)
        later = bundle.n_layers(kind) * n_h
        for side in ("q", "k", "v"):
            total += bundle.n_layers(sources[side][kind]) * n_h * later * pair
        total += seeds * 3 * n_h * n_h * pair
    return total
