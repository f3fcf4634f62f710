"""bench_tl_composition's comparison (issue 37) without TransformerLens: the lab's (later,
earlier) NaN-masked scores against a TransformerLens-ordered array, and the README block."""

from __future__ import annotations

import numpy as np

from benchmarks.bench_tl_composition import SIDES, block, differences


def test_differences_skip_no_path_pairs_and_report_tl_there():
    rng = np.random.default_rng(0)
    ours = {s: {"dec_self": rng.random((2, 3, 2, 3))} for s in SIDES}
    for s in SIDES:
        ours[s]["dec_self"][0] = np.nan  # layer 0 reads no earlier head
        ours[s]["dec_self"][1, :, 1] = np.nan  # nor layer 1 from itself
    theirs = {s: np.nan_to_num(ours[s]["dec_self"], nan=0.0) for s in SIDES}
    theirs["k"] = theirs["k"].copy()
    theirs["k"][1, 2, 0, 1] += 0.25  # a pair with a path
    theirs["v"] = theirs["v"].copy()
    theirs["v"][0, 0, 1, 0] = 0.5  # a pair without one: not a difference, but reported
    got = differences(ours, theirs, "dec_self")
    assert got["q"] == {"max_abs_diff": 0.0, "tl_no_path_max": 0.0, "pairs": 9}
    assert np.isclose(got["k"]["max_abs_diff"], 0.25)
    assert got["v"]["max_abs_diff"] == 0.0 and got["v"]["tl_no_path_max"] == 0.5


def test_block_without_a_run_says_so():
    assert "No run recorded yet" in block({})
