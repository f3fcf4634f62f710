"""Every hostile input through the app's cleaning and capture(): no exception, no NaN, a
well-formed Trace; and 32 threads on one shared model, each getting its single-thread result."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from model import capture
from model.inputs import MAX_CHARS, MAX_LINES, clean_lines
from tests.hostile.inputs import CASES, Hostile


def run(bundle, case: Hostile):
    """The app's path: clean, then one capture of what is left (None when nothing is)."""
    lines, notes = clean_lines(case.source)
    if not lines:
        return lines, notes, None
    return lines, notes, capture(bundle, lines, target_lang="auto")


def check_trace(trace, lines: list[str], bundle) -> None:
    """Shapes agree with the Trace contract; probabilities are finite, rows sum to 1."""
    cfg = bundle.config
    n_b, n_s = trace.src_ids.shape
    n_t = trace.tgt_ids.shape[1]
    assert n_b == len(lines) == len(trace.src_tokens) == len(trace.tgt_tokens)
    assert trace.sources == lines and len(trace.src_cut) == n_b
    assert 2 <= n_s <= cfg.max_len - 1 and 1 <= n_t <= cfg.max_len - 1
    for b in range(n_b):
        n = len(trace.src_tokens[b])
        assert (trace.src_ids[b, :n] != trace.pad_id).all()
        assert (trace.src_ids[b, n:] == trace.pad_id).all()
        assert trace.src_tokens[b][-1] == "</s>"
        assert all(isinstance(p, str) for p in trace.src_tokens[b] + trace.tgt_tokens[b])
    sizes = {"enc_self": (n_s, n_s), "dec_self": (n_t, n_t), "cross": (n_t, n_s)}
    for kind, (nq, nk) in sizes.items():
        shape = (cfg.n_enc_layers if kind == "enc_self" else cfg.n_dec_layers, n_b,
                 cfg.n_heads, nq, nk)
        attn, mask = trace.attn[kind], trace.masks[kind]
        assert attn.shape == trace.scores[kind].shape == shape
        assert mask.shape == (n_b, nq, nk) and mask.dtype == bool
        assert np.isfinite(attn).all() and np.isfinite(trace.scores[kind]).all()
        assert (attn[np.broadcast_to(mask[None, :, None], shape)] == 0).all()
        open_rows = ~mask.all(-1)  # (B, Q): rows with at least one key allowed
        sums = attn.sum(-1).transpose(0, 2, 1, 3)  # (L, H, B, Q)
        np.testing.assert_allclose(sums[:, :, open_rows], 1.0, atol=1e-4)
    for side, n in (("enc", n_s), ("dec", n_t)):
        assert trace.hidden[side].shape[1:] == (n_b, n, cfg.d_model)
        assert np.isfinite(trace.hidden[side]).all()
    assert trace.logits.shape == (n_b, n_t, cfg.vocab_size) and np.isfinite(trace.logits).all()


@pytest.mark.parametrize("case", CASES, ids=str)
def test_capture_survives(hostile_bundle, case):
    lines, notes, trace = run(hostile_bundle, case)
    assert len(lines) <= MAX_LINES and sum(map(len, lines)) <= MAX_CHARS
    for line in lines:  # what reaches the tokenizer is encodable, stripped, control-free
        line.encode("utf-8")
        assert line == line.strip() and "\n" not in line and "\x00" not in line
    if "control character" in case.note or "only the first" in case.note:
        assert any(case.note in n for n in notes), notes
    if trace is None:  # nothing left: the app shows its prompt (tests/hostile/test_app_hostile)
        return
    check_trace(trace, lines, hostile_bundle)
    if "too long" in case.note:
        assert max(trace.src_cut) > 0


RAW = [c for c in CASES if c.text and len(c.text) < 300 and c.text.strip()]


def test_capture_takes_raw_text_too(hostile_bundle):
    """The public API without the app's cleaning: surrogates, controls, markup, one batch."""
    lines = [c.text for c in RAW][:MAX_LINES]
    trace = capture(hostile_bundle, lines, target_lang="ko")
    assert trace.sources == lines and np.isfinite(trace.attn["cross"]).all()
    assert len(trace.src_tokens) == len(lines)


def test_cleaning_rules():
    lines, notes = clean_lines("a\r\nb\x00c\n\n \u2028d\u2029e\ud800f\n" + "x\n" * 20)
    assert lines[:5] == ["a", "bc", "d", "ef", "x"] and len(lines) == MAX_LINES
    assert any("1 control" in n for n in notes) and any("1 invalid" in n for n in notes)
    assert any("first 16" in n for n in notes)
    lines, notes = clean_lines("y" * (MAX_CHARS + 5))
    assert lines == ["y" * MAX_CHARS] and "20,000" in notes[0]
    assert clean_lines(None) == ([], [])
    assert clean_lines("\t \u3000") == ([], [])


def test_32_threads_each_get_their_own_result(hostile_bundle):
    """32 different hostile inputs at once against one shared model; some with ablation."""
    work = []
    for case in CASES:
        lines, _ = clean_lines(case.source)
        if lines and case.text is not None and len(case.text) < 200:
            work.append(lines[:2])
    work = work[:32]
    assert len(work) == 32

    def one(i: int):
        ablate = {("enc_self", i % 2, i % 4)} if i % 3 == 0 else set()
        return capture(hostile_bundle, work[i], target_lang="auto", ablate=ablate)

    single = [one(i) for i in range(32)]
    with ThreadPoolExecutor(max_workers=32) as pool:
        multi = list(pool.map(one, range(32)))
    for i, (a, b) in enumerate(zip(single, multi, strict=True)):
        assert a.sources == b.sources == work[i]
        assert a.src_tokens == b.src_tokens and a.tgt_tokens == b.tgt_tokens
        assert a.ablate == b.ablate
        np.testing.assert_array_equal(a.logits, b.logits)
        for kind in a.attn:
            np.testing.assert_array_equal(a.attn[kind], b.attn[kind])
        np.testing.assert_array_equal(a.hidden["dec"], b.hidden["dec"])


def test_largest_input_is_cut_before_any_tensor(hostile_bundle, monkeypatch):
    """Characters and lines are capped before tokenizing; pieces before padding; decoding steps
    by the budget. Nothing bigger than MAX_LINES × max_len ever reaches a tensor."""
    from model.backends.lab import decode
    from model.backends.lab.tokenizer import Tokenizer

    seen_text, seen_pad = [], []
    encode, pad = Tokenizer.encode, Tokenizer.pad
    monkeypatch.setattr(Tokenizer, "encode",
                        lambda self, text: seen_text.append(len(text)) or encode(self, text))
    monkeypatch.setattr(Tokenizer, "pad",
                        lambda self, seqs: seen_pad.append((len(seqs), max(map(len, seqs))))
                        or pad(self, seqs))
    hostile = "\n".join(["a" * 1_200] * 40) + "\n" + "가" * 100_000
    lines, notes = clean_lines(hostile)
    assert len(lines) == MAX_LINES and sum(map(len, lines)) <= MAX_CHARS
    trace = capture(hostile_bundle, lines, target_lang="auto")
    limit = hostile_bundle.config.max_len - 1
    assert max(seen_text) <= MAX_CHARS
    assert all(rows <= MAX_LINES and width <= limit for rows, width in seen_pad), seen_pad
    assert trace.src_ids.shape == (MAX_LINES, limit) and max(trace.src_cut) > 0
    assert decode.default_max_steps(hostile_bundle, 519) == min(limit - 1, decode.ROW_STEPS)


def test_decoding_budget():
    from types import SimpleNamespace

    from model.backends.lab.decode import ROW_STEPS, chunks, default_max_steps

    big = SimpleNamespace(config=SimpleNamespace(max_len=520))
    assert default_max_steps(big, 519) == ROW_STEPS == 256  # a row's room, however many rows
    assert default_max_steps(big, 10) == 30  # short sentences keep 2 × length + 10
    rooms = [default_max_steps(big, 519)] * MAX_LINES
    assert chunks(rooms, range(MAX_LINES)) == [list(range(MAX_LINES))]  # the app's largest input
    # is decoded in one greedy call, as before


def test_frozen_trace_cannot_be_changed(hostile_bundle):
    """The app shares one cached Trace between sessions; its arrays are read-only."""
    from model.capture import freeze

    trace = freeze(capture(hostile_bundle, ["Winter is cold."], target_lang="ko"))
    for arr in (trace.attn["cross"], trace.src_ids, trace.masks["enc_self"], trace.logits,
                trace.hidden["enc"], trace.pos_table):
        with pytest.raises(ValueError, match="read-only"):
            arr[(0,) * arr.ndim] = 1
