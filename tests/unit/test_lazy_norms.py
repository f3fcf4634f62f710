"""Trace.norms weighed on first read (LazyNorms, issue 40): the same arrays as weighing at
capture time, counted in full by the Trace cache before they exist, read-only once the Trace
is frozen, made once when many threads read at the same time, and kept lazy by merge only
where the pending product reads the merged Trace's own attention."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from model import capture  # noqa: E402
from model.backends.hf.projections import output_projections  # noqa: E402
from model.capture import freeze, merge, nbytes, trace_arrays  # noqa: E402
from model.norms import LazyNorms, Weighing, stack_norms  # noqa: E402

from .test_hf import bundles, model_root  # noqa: E402, F401, F811  (tiny random HF folders)

SRC = ["the cat eats fish every day .", "winter is cold"]
TGT = ["고양이는 매일 생선을 먹어요.", "겨울은 추워요."]


def _pending(norms: LazyNorms) -> list[str]:
    return [k for k, v in norms.parts().items() if isinstance(v, Weighing)]


def _eager_hf(bundle, trace, kind: str) -> np.ndarray:
    weights = [w for w, _ in output_projections(bundle)[kind]]
    groups = [int(g) for g in trace.kv_groups]
    return stack_norms(trace.attn[kind], trace.v[kind], weights, groups)


def test_lab_full_capture_weighs_on_first_read(bundle):
    tr = capture(bundle, SRC, TGT, target_lang="ko")
    assert isinstance(tr.norms, LazyNorms)
    assert sorted(_pending(tr.norms)) == sorted(bundle.kinds)  # nothing weighed yet
    made = sum(a.nbytes for a in trace_arrays(tr))
    # the cache counts the norms before they exist: reading them never passes its bound
    assert nbytes(tr) == made + sum(tr.attn[k].nbytes for k in bundle.kinds)
    eager = capture(bundle, SRC, TGT, target_lang="ko", names=["norms"])  # attn not kept
    assert _pending(eager.norms) == []  # weighed at once: nothing holds an unseen attn
    for kind in bundle.kinds:
        np.testing.assert_array_equal(tr.norms[kind], eager.norms[kind])
        assert tr.norms[kind].shape == tr.attn[kind].shape
    assert _pending(tr.norms) == [] and nbytes(tr) == made + sum(
        tr.norms[k].nbytes for k in bundle.kinds)


def test_an_ablated_head_reads_zero_when_weighed_late(bundle):
    tr = capture(bundle, SRC, TGT, target_lang="ko", ablate=[("cross", 1, 2)])
    assert "cross" in _pending(tr.norms)
    assert not tr.norms["cross"][1, :, 2].any()
    assert tr.norms["cross"][1, :, 1].any()


@pytest.mark.parametrize("family", ["gpt2", "marian"])
def test_hf_norms_equal_the_eager_product(bundles, family):  # noqa: F811
    b = bundles[family]
    tr = capture(b, ["the cat eats fish", "a dog"])
    assert _pending(tr.norms), "a full capture leaves the product for the first read"
    for kind in list(tr.norms):
        np.testing.assert_array_equal(tr.norms.get(kind), _eager_hf(b, tr, kind))
    assert {**tr.norms}.keys() == set(tr.norms) and all(
        isinstance(v, np.ndarray) for v in dict(tr.norms).values())


def test_frozen_trace_weighs_read_only_arrays(bundle):
    tr = freeze(capture(bundle, SRC, TGT, target_lang="ko"))
    for kind, arr in tr.norms.items():
        assert not arr.flags.writeable, kind
        with pytest.raises(ValueError):
            arr[0, 0, 0, 0, 0] = 1.0


def test_many_threads_read_one_array(bundles):  # noqa: F811
    tr = freeze(capture(bundles["gpt2"], ["the cat eats fish every day"] * 3))
    kind = next(iter(tr.norms))
    with ThreadPoolExecutor(8) as pool:
        got = list(pool.map(lambda _: tr.norms[kind], range(32)))
    assert all(g is got[0] for g in got)  # made once, under the lock


def test_merge_keeps_only_what_reads_its_own_attention(bundle):
    full = capture(bundle, SRC, TGT, target_lang="ko")
    other = capture(bundle, SRC, TGT, target_lang="ko", names=["attn", "norms"])
    merged = merge(full, other)  # full's attn wins, so full's pending products stay lazy
    assert sorted(_pending(merged.norms)) == sorted(bundle.kinds)
    merged = merge(capture(bundle, SRC, TGT, target_lang="ko", names=["hidden"]), other)
    # other's products read other's attn, which the merged Trace keeps: still lazy
    assert sorted(_pending(merged.norms)) == sorted(bundle.kinds)
    old = capture(bundle, SRC, TGT, target_lang="ko", names=["attn"])
    merged = merge(old, other)  # old's attn wins: other's products are weighed now
    assert _pending(merged.norms) == []
    for kind in bundle.kinds:
        np.testing.assert_array_equal(merged.norms[kind], full.norms[kind])
