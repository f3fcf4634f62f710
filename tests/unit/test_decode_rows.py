"""Greedy translation does not depend on how many other lines share the call
(model/backends/lab/decode.py): each row gets the steps it would get alone, rows are decoded
CHUNK_ROWS at a time, and max_len still caps every row. A tiny random model rarely writes its
end piece, so most rows run to their limit: the limits themselves are what is compared."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from model.backends.lab import decode
from model.dispatch import encode, translate
from tests.unit.conftest import make_bundle

# English lines of different lengths; the long one reaches the position table's cap (46 steps)
LINES = ["The cat eats.", "My friend reads a book in the park every morning.",
         "Winter is cold.", "A child drinks water after school with her older brother.",
         " ".join(["The big dog eats the fish in the park."] * 6)]
ROWS = 300

pytestmark = pytest.mark.usefixtures("one_thread")  # tiny tensors: threads only cost here


@pytest.fixture(scope="module")
def bundle(tokenizer):
    """The unit tests' random model with a 48-row position table: every row here is cheap."""
    return make_bundle(tokenizer, max_len=48)


@pytest.fixture(scope="module")
def calls(bundle):
    """Each line alone, and all of them cycled through one 300-row call."""
    alone = [translate(bundle, [line], "ko")[0] for line in LINES]
    many = translate(bundle, [LINES[i % len(LINES)] for i in range(ROWS)], "ko")
    return alone, many


def test_a_line_comes_out_the_same_alone_and_among_300(calls):
    alone, many = calls
    assert len(many) == ROWS
    for i, t in enumerate(many):
        one = alone[i % len(LINES)]
        assert (t.ids, t.finished, len(t.steps)) == (one.ids, one.finished, len(one.steps)), i
        assert t.probs == pytest.approx(one.probs, abs=1e-5), i


def test_each_row_gets_its_own_room_whatever_the_call(bundle, calls):
    """An unfinished row ran exactly its limit: 2 x its source pieces + 10, within the position
    table (max_len - 2), counted here from the encoded batch, not from the decoder."""
    alone, many = calls
    lengths = encode(bundle, LINES, target_lang="ko").lengths
    cap = bundle.config.max_len - 2
    unfinished = [i for i, t in enumerate(alone) if not t.finished]
    assert unfinished, "the random model ended every line: the limits went untested"
    assert any(2 * lengths[i] + 10 > cap for i in unfinished)  # the cap is reached too
    sixteen = translate(bundle, [LINES[i % len(LINES)] for i in range(16)], "ko")
    for i in unfinished:
        room = min(cap, 2 * lengths[i] + 10)
        assert len(alone[i].steps) == room, (i, lengths[i])
        assert len(sixteen[i].steps) == len(many[i].steps) == room, i
    assert min(len(t.steps) for t in many) >= min(len(t.steps) for t in sixteen)


def test_big_calls_run_in_chunks_within_the_work_limit(bundle, calls, monkeypatch):
    """The worst-case guard: no greedy call holds more than CHUNK_WORK rows x steps² (16 rows
    at the full ROW_STEPS), so a call's time grows with its rows, not with their square; short
    rows share one call. Which chunk a row lands in changes nothing it writes."""
    alone, _ = calls
    assert [len(c) for c in decode.chunks([decode.ROW_STEPS] * 40, range(40))] == [16, 16, 8]
    assert [len(c) for c in decode.chunks([30] * 300, range(300))] == [300]
    seen = []
    real = decode.greedy

    def spy(model, src, **kw):
        seen.append((src.shape[0], max(kw["max_steps"])))
        return real(model, src, **kw)

    monkeypatch.setattr(decode, "greedy", spy)
    # the tiny model's rooms are 26, 34 and 46 steps; a limit of 16 rows of 46 cuts 40 rows
    # (8 of 26, 8 of 34, 24 of 46 once sorted) after 16, then 16 and 8
    monkeypatch.setattr(decode, "CHUNK_WORK", 16 * 46 ** 2)
    out = translate(bundle, [LINES[i % len(LINES)] for i in range(40)], "ko")
    assert seen == [(16, 34), (16, 46), (8, 46)]
    assert all(rows * steps ** 2 <= decode.CHUNK_WORK for rows, steps in seen)
    for i, t in enumerate(out):
        one = alone[i % len(LINES)]
        assert (t.ids, t.finished, len(t.steps)) == (one.ids, one.finished, len(one.steps)), i
    seen.clear()
    out = translate(bundle, ["Winter is cold."] * 40, "ko", max_len=4)
    assert seen == [(40, 4)] and all(len(t.steps) <= 4 for t in out)  # max_len caps every row
    seen.clear()
    translate(bundle, ["Winter is cold."] * 3, "ko", max_len=10_000)
    assert seen == [(3, bundle.config.max_len - 2)]  # nor beyond the position table
    big = SimpleNamespace(config=SimpleNamespace(max_len=4096))
    assert decode.default_max_steps(big, 4000) == decode.ROW_STEPS == 256
