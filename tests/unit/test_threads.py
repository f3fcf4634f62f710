"""One shared model, many threads: each gets exactly its single-thread result."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np

from model import capture

INPUTS = [f"The dog eats {n} apples." if i % 2 else f"개가 사과를 {n}번 먹어요."
          for i, n in enumerate(range(16))]


def _run(bundle, i: int):
    ablate = {("enc_self", 0, i % 4)} if i % 3 == 0 else set()
    return capture(bundle, [INPUTS[i]], targets=["겨울은 추워요."], target_lang="ko", ablate=ablate)


def test_sixteen_threads_match_single_thread(bundle):
    single = [_run(bundle, i) for i in range(16)]
    with ThreadPoolExecutor(max_workers=16) as pool:
        for _round in range(2):
            multi = list(pool.map(lambda i: _run(bundle, i), range(16)))
            for a, b in zip(single, multi, strict=True):
                assert a.src_tokens == b.src_tokens
                assert a.ablate == b.ablate
                assert np.array_equal(a.logits, b.logits)
                for kind in a.attn:
                    assert np.array_equal(a.attn[kind], b.attn[kind])
                assert np.array_equal(a.hidden["enc"], b.hidden["enc"])
