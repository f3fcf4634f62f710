"""view=patch tells the truth (issue 39, items 3 and 2): a warning when the clean–corrupted gap
is too small for normalised effects, no progress bar left above a refusal, a cut input says
where it was cut, the mismatch hint names the word whose pieces differ, and an exact sweep
estimated over ~3 s waits for a button that shows the estimate (attribution first)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from model.budget import Dims
from tests.app.conftest import run_app
from tests.app.test_views import charts, ok, texts
from tests.tiny_model import save_tiny_checkpoint
from ui import cost

CLEAN, CORRUPT = "The cat eats fish.", "The dog eats fish."


def _open(timeout: float = 120, **query):
    return run_app({"ckpt": "paper", "view": "patch", **query}, timeout=timeout)


def test_a_tiny_gap_is_a_warning(tmp_path, monkeypatch):
    """A random model's logits barely move: the gap is a few hundredths, and every effect
    divided by it would read as a large one."""
    save_tiny_checkpoint(tmp_path / "paper", max_len=40)
    monkeypatch.setenv("ATTN_CHECKPOINTS_DIR", str(tmp_path))
    at = _open(text="The cat eats fish.", corrupt="The cat eats dish.")
    ok(at)
    assert "differ by only" in texts(at.warning) and charts(at)


def test_the_shipped_pair_has_no_gap_warning():
    at = _open(text=CLEAN, corrupt=CORRUPT)
    ok(at)
    assert not at.warning, texts(at.warning)


def test_the_mismatch_names_the_word_whose_pieces_differ():
    at = _open(text="고양이가 생선을 먹어요.", corrupt="강아지가 생선을 많이 먹어요.")
    ok(at)
    shown = texts(at.warning)
    assert "same number of pieces" in shown and "많이" in shown, shown
    assert "강아지" not in shown and "고양이" not in shown  # a swap of as many pieces is fine
    assert not charts(at)
    at = _open(text=CLEAN, corrupt="The big cat eats fish.")
    shown = texts(at.warning)
    assert "adds “big” (pieces: ▁big)" in shown and "cat" not in shown, shown


def test_no_progress_is_left_above_a_refusal():
    for corrupt in (CLEAN, "The big dog eats fish."):  # nothing differs; pieces differ
        at = _open(text=CLEAN, corrupt=corrupt)
        ok(at)
        assert at.warning
        assert not at.get("progress"), "a progress bar is left above the refusal"


def test_a_cut_input_says_where_it_was_cut():
    long = " ".join(["The cat eats fish."] * 264)  # 5,015 characters, 1,322 pieces
    at = _open(text=long, corrupt="The dog eats fish. " + long[19:], timeout=300)
    ok(at)
    shown = texts(at.warning)
    assert f"clean sentence ({len(long):,} characters)" in shown, shown
    assert "cut to 519 pieces, after “. ▁The ▁cat”" in shown
    assert f"corrupted sentence ({len(long):,} characters)" in shown


def test_a_slow_exact_sweep_waits_for_its_button(monkeypatch):
    """On a server 10,000 times slower the shipped model's sweep is estimated over 3 s: the
    attribution shows first, the button names the estimate, and a click runs the sweep."""
    monkeypatch.setattr(cost, "FLOPS_PER_THREAD", cost.FLOPS_PER_THREAD / 10_000)
    at = _open(text="Winter is cold.", corrupt="Winter is hot.")  # a pair no test ran before
    ok(at)
    go = at.button(key="patch_go")
    assert go.label.startswith("Run exact patching (about ")
    assert "attribution" in texts(at.caption) and charts(at)  # the cheap result, shown first
    go.click().run(timeout=120)
    ok(at)
    assert "exact (one patched run per cell)" in texts(at.caption)


def test_the_estimate_tells_a_second_from_minutes():
    """GPT-2 small on 200 tokens (89 s measured in the issue): asks; the shipped checkpoints'
    short sentences: run at once."""
    gpt2 = Dims(batch=32, src=0, tgt=200, layers={"dec_self": 12}, heads=12, d_head=64,
                d_model=768, d_ff=3072, vocab=50257)
    sweep = cost.sweep_seconds(gpt2, rows=146, extra_passes=2)
    assert cost.asks_first(sweep) and sweep > 30
    lab = Dims(batch=25, src=8, tgt=10, layers={"enc_self": 3, "dec_self": 3, "cross": 3},
               heads=4, d_head=32, d_model=128, d_ff=512, vocab=16000)
    assert not cost.asks_first(cost.sweep_seconds(lab, rows=24 + 3 * 8 * 3, extra_passes=2))
    assert cost.forward_flops(replace(lab, batch=2)) == pytest.approx(
        2 * cost.forward_flops(replace(lab, batch=1)))
