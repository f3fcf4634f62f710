"""The head atlas's Jensen–Shannon loop (atlas_metrics.js_rows: every head pair at once over
the rows packed side by side) against the loop it replaced, kept here as the reference: torch,
rows in blocks of 16, one head against every later head at a time (the atlas as of commit
7cda678). The atlas's distances must not move by more than 1e-5."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import model.analysis.atlas_metrics as atlas_metrics
from model import capture
from model.analysis.atlas import JS_ROWS, head_atlas, spread_rows
from model.analysis.atlas_groups import SAME_BELOW
from model.analysis.atlas_metrics import js_rows, packed_rows, pair_spans
from model.capture import key_side, query_side
from training.corpus import generate


def blocked_loop_js(attn: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, int]:
    """The old js_rows, slow and unchanged: (Σ over counted rows of JS (N, N), rows)."""
    a = torch.as_tensor(np.ascontiguousarray(attn[:, rows]), dtype=torch.float32)  # (N, R, K)
    n, r = a.shape[:2]
    out = np.zeros((n, n))
    if n < 2 or r == 0:
        return out, int(r)
    ln2 = float(np.log(2.0))
    used = (a != 0).any(0)  # (R, K)
    with torch.no_grad():
        for start in range(0, r, 16):
            block = used[start:start + 16].any(0).nonzero()
            width = int(block.max()) + 1 if len(block) else 1
            b = a[:, start:start + 16, :width].contiguous()  # (N, R', K')
            plogp = torch.special.xlogy(b, b).sum(-1)  # (N, R')
            for i in range(n - 1):
                s = b[i] + b[i + 1:]  # (N − i − 1, R', K')
                jsd = 0.5 * (plogp[i] + plogp[i + 1:] - torch.special.xlogy(s, s).sum(-1)) + ln2
                d = jsd.clamp_(0.0, ln2).sqrt_().sum(-1).double().numpy()
                out[i, i + 1:] += d
                out[i + 1:, i] += d
    return out, int(r)


def _heads(n: int, n_q: int, n_k: int, real: int, causal: bool, rng) -> np.ndarray:
    """(n, Q, K) rows over the seen keys: the first `real` keys, causal or not; a few heads
    nearly alike (where float32's rounding shows most) and one copy of head 0."""
    seen = np.zeros((n_q, n_k), dtype=bool)
    seen[:, :real] = True
    if causal:
        seen &= ~np.triu(np.ones((n_q, n_k), dtype=bool), 1)
    x = rng.gamma(0.4, size=(n, n_q, n_k)) * seen
    x[1] = x[0] * (1 + 0.01 * rng.random((n_q, n_k)))
    x[2] = x[0]
    x[3, :, 0] += 50.0 * seen[:, 0]  # a sink
    return x / np.maximum(x.sum(-1, keepdims=True), 1e-30)


@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("cells", [None, 37, 500])
def test_packed_loop_matches_the_blocked_loop(causal, cells, monkeypatch):
    # cells: JS_BLOCK_CELLS small enough to cut one head's run of pairs into several steps
    if cells is not None:
        monkeypatch.setattr(atlas_metrics, "JS_BLOCK_CELLS", cells)
    rng = np.random.default_rng(7)
    attn = _heads(11, 21, 23, 19, causal, rng)  # keys 19..22 are padding, as in a batch
    rows = spread_rows(np.ones(21, dtype=bool), 17)
    rows[1] = False
    got, r = js_rows(attn, rows)
    want, r_old = blocked_loop_js(attn, rows)
    assert r == r_old == int(rows.sum())
    # float32 resolves distances down to SAME_BELOW: past it both loops read rounding (about
    # 1e-4 for identical heads, each its own), so they are compared where it is resolved
    resolved = want / r >= SAME_BELOW
    assert resolved.sum() == 11 * 10 - 3 * 2  # every ordered pair but among heads 0, 1, 2
    assert np.abs(got / r - want / r)[resolved].max() < 1e-5
    assert (got / r)[~resolved].max() < SAME_BELOW
    np.testing.assert_array_equal(got, got.T)
    assert np.all(np.diag(got) == 0)
    # the copy of head 0 is at float32's rounding from it, the sink far from it
    assert got[0, 2] / r < 1e-3 < got[0, 3] / r


def test_pair_spans_cover_each_pair_once_in_triu_order():
    for n, most in ((2, 1), (5, 1), (5, 3), (7, 100), (12, 7)):
        seen = []
        for lo, runs in pair_spans(n, most):
            assert lo == len(seen) and 0 < sum(j1 - j0 for _, j0, j1 in runs) <= most
            seen += [(i, j) for i, j0, j1 in runs for j in range(j0, j1)]
        first, second = np.triu_indices(n, 1)
        assert seen == list(zip(first.tolist(), second.tolist())), (n, most)


def test_packed_rows_keep_each_rows_keys_and_no_more():
    rng = np.random.default_rng(2)
    attn = _heads(4, 6, 8, 6, True, rng)  # causal over 6 real keys of 8
    p, starts = packed_rows(attn)
    widths = np.diff(np.append(starts, p.shape[1]))
    assert widths.tolist() == [1, 2, 3, 4, 5, 6]  # a causal row reads its past only
    for r, w in enumerate(widths):
        np.testing.assert_allclose(p[:, starts[r]:starts[r] + w], attn[:, r, :w], atol=1e-37)
        assert not attn[:, r, w:].any()


@pytest.fixture(scope="module")
def tiny_atlas(bundle):
    return head_atlas(bundle, pairs=generate(7, seed=11), n=6, batch=4, induction=False)


def test_the_atlas_distances_match_the_blocked_loop_on_captures_made_here(bundle, tiny_atlas):
    atlas = tiny_atlas
    assert set(atlas.kinds) == {"enc_self", "dec_self", "cross"}
    per_input = -(-JS_ROWS // len(atlas.inputs))
    for kind in atlas.kinds:
        total, counted = 0.0, 0
        for inp in atlas.inputs:  # one capture per input, not the atlas's batches
            tr = capture(bundle, [inp.source], [inp.target], target_lang=inp.target_lang,
                         names=["attn"])
            n_q = len(tr.tokens(query_side(kind))[0])
            n_k = len(tr.tokens(key_side(kind))[0])
            a = tr.attn[kind][:, 0, :, :n_q, :n_k]  # (L, H, Q, K)
            flat = a.reshape(-1, n_q, n_k)
            blocked = tr.masks[kind][0, :n_q, :n_k]
            s, r = blocked_loop_js(flat, spread_rows((~blocked).sum(-1) >= 2, per_input))
            total, counted = total + s, counted + r
        assert atlas.rows[kind] == counted
        want = total / counted
        got = atlas.distance(kind)
        assert np.abs(got - want).max() < 1e-5, (kind, np.abs(got - want).max())
        assert want[np.triu_indices(len(want), 1)].min() > 1e-3  # the heads do differ
