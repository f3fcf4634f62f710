"""bench_refactor's verdict (issue 55 item 9): after / before and the rounds' own spread are
the figures a reader checks, so they are checked here against numpy on made-up rounds, and the
verdict must turn when a slowdown exceeds the spread. No model runs (the bench itself does)."""

from __future__ import annotations

import numpy as np

from benchmarks.bench_refactor import readme_rows, summary

BEFORE = [100.0, 104.0, 98.0, 110.0, 101.0]


def test_ratio_and_spread_match_numpy():
    after = [x * 1.03 for x in reversed(BEFORE)]
    s = summary(BEFORE, after, digits=6)
    b, a = np.median(BEFORE), np.median(after)
    assert abs(s["after_over_before"] - a / b) < 1e-3
    assert abs(s["spread_before"] - np.ptp(BEFORE) / b) < 1e-3
    assert abs(s["spread_after"] - np.ptp(after) / a) < 1e-3
    assert np.allclose(s["round_ratios"], np.array(after) / np.array(BEFORE), atol=1e-3)
    assert s["within_noise"]  # 3 % slower, rounds spread over 12 %


def test_a_slowdown_beyond_the_spread_is_named():
    slower = [x * 1.5 for x in BEFORE]
    s = summary(BEFORE, slower)
    assert s["after_over_before"] == 1.5 and not s["within_noise"]
    section = {"capture": {"before_commit": "0f2af3d00000", "after_commit": "6fccf7b00000",
                           "rounds": 5, "models": {
                               "paper": {**s, "pieces": [512, 257],
                                         "over_control": summary(BEFORE, BEFORE, 3)},
                               "gpt2": {**summary(BEFORE, BEFORE), "pieces": [0, 512],
                                        "over_control": summary(BEFORE, BEFORE, 3)}}}}
    [row] = readme_rows(section)
    b = np.median(BEFORE)
    assert f"paper (512 pieces) {b:.0f} → {b * 1.5:.0f} ms, 1.50× " in row
    assert "OVER the noise" in row
    assert f"GPT-2 small shape (512 pieces) {b:.0f} → {b:.0f} ms, 1.00× " in row
    assert row.count("within noise") == 1
