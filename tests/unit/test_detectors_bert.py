"""Issue 54's detectors on hand-built BERT-style attention: next token, punctuation, the sink's
place, and the positional detector when sinks exist (uniform, [CLS]-sink, previous-token,
fixed-offset and content heads). Every expected value is counted by hand from the patterns."""

from __future__ import annotations

import numpy as np
import pytest

from model.analysis.detector_scores import (
    FIRST,
    PUNCTUATION,
    is_punctuation,
    next_token,
    positional_shift,
    punctuation,
    uniform,
)
from model.analysis.detectors import finish, quick_detectors, trace_sums
from model.capture import Trace

PIECES = ["[CLS]", "the", "cat", ",", "sat", ".", "[SEP]"]
IDS = [101, 1996, 4937, 1010, 2938, 1012, 102]
N = len(PIECES)
HEADS = ("uniform", "cls", "sep", "previous", "next", "offset2", "punct", "content")
# the shuffled input: ordinary pieces 1..5 permuted, [CLS] and [SEP] kept in place
ORDER = [0, 4, 5, 1, 2, 3, 6]  # shuffled position i holds the original piece ORDER[i]


def _row(name: str, q: int, where: list[int]) -> np.ndarray:
    """One query's attention; `where[i]` = position of original piece i (content heads)."""
    a = np.zeros(N, np.float32)
    if name == "uniform":
        a[:] = 1.0 / N
    elif name == "cls":
        a[0] = 1.0
    elif name == "sep":
        a[N - 1] = 1.0
    elif name == "previous":
        a[max(q - 1, 0)] = 1.0
    elif name == "next":
        a[min(q + 1, N - 1)] = 1.0
    elif name == "offset2":
        a[min(q + 2, N - 1)] = 1.0
    elif name == "punct":
        a[where[3]] = a[where[5]] = 0.5  # ',' and '.' wherever they are
    elif name == "content":
        a[where[2]] = 1.0  # 'cat', wherever it is
    return a


def _trace(order: list[int]) -> Trace:
    where = [order.index(i) for i in range(N)]
    attn = np.stack([np.stack([_row(h, q, where) for q in range(N)]) for h in HEADS])
    return Trace(src_tokens=[[PIECES[i] for i in order]], tgt_tokens=[[]],
                 src_ids=np.array([[IDS[i] for i in order]], np.int64),
                 tgt_ids=np.zeros((1, 0), np.int64),
                 masks={"enc_self": np.zeros((1, N, N), bool)}, scores={},
                 attn={"enc_self": attn[None, None]},  # (L=1, B=1, H, Q, K)
                 q={}, k={}, v={}, hidden={}, pos_table=np.zeros((1, 1), np.float32),
                 logits=None)


PLAIN, SHUFFLED = _trace(list(range(N))), _trace(ORDER)
H = {name: i for i, name in enumerate(HEADS)}


def test_punctuation_pieces():
    assert all(is_punctuation(p) for p in (".", ",", "?", '"', "▁.", "Ġ,", "##!", "...", "—"))
    assert not any(is_punctuation(p) for p in ("[SEP]", "</s>", "cat", "$", "+", "3", "", "▁"))


def test_positional_is_zero_for_uniform_and_sink_heads_and_high_by_offset():
    total, rows = positional_shift(PLAIN, SHUFFLED, "enc_self")
    got = dict(zip(HEADS, total[0] / rows))
    assert rows == N
    # an even spread, and attention parked on [CLS] or [SEP], never count
    assert got["uniform"] == pytest.approx(0.0, abs=1e-7)
    assert got["cls"] == pytest.approx(0.0) and got["sep"] == pytest.approx(0.0)
    # previous-token: queries 2..6 keep their whole row on an ordinary key; query 0 looks
    # at itself ([CLS]) and query 1 at [CLS]
    assert got["previous"] == pytest.approx(5 / N)
    # fixed offset +2: queries 0..3 land on ordinary keys 2..5; 4..6 on [SEP]
    assert got["offset2"] == pytest.approx(4 / N)
    assert got["next"] == pytest.approx(5 / N)  # queries 0..4 on keys 1..5
    # heads that follow a word: 'cat' moves from 2 to 4, ',' and '.' from 3, 5 to 5, 2
    assert got["content"] == pytest.approx(0.0)
    assert got["punct"] == pytest.approx((0.5 - 1 / N) / (1 - 1 / N))  # '.'/',' share pos 5
    # unshuffled, the content head would look positional (every row on 'cat' at position 2):
    # the shuffle is what tells them apart
    total, rows = positional_shift(PLAIN, PLAIN, "enc_self")
    assert total[0][H["content"]] / rows == pytest.approx(1.0)


def test_chance_levels_are_what_a_uniform_head_scores():
    flat = uniform(PLAIN)
    chance = {d: a["enc_self"][0, 0] for d, a in finish(trace_sums(flat, flat)).items()}
    assert chance["positional"] == pytest.approx(0.0, abs=1e-7) and chance["positional"] < 1
    assert chance["next_token"] == pytest.approx(1 / N)
    assert chance["punctuation"] == pytest.approx(2 / N)
    assert chance["sink"] == pytest.approx(2 / N)  # the two punctuation pieces together


def test_next_token_and_punctuation():
    total, rows = next_token(PLAIN, "enc_self")
    assert rows == N - 1  # [SEP] has no next piece
    got = dict(zip(HEADS, total[0] / rows))
    assert got["next"] == pytest.approx(1.0)
    assert got["previous"] == pytest.approx(0.0) and got["uniform"] == pytest.approx(1 / N)
    assert got["offset2"] == pytest.approx(1 / (N - 1))  # query 5: q + 2 clipped to q + 1
    total, rows = punctuation(PLAIN, "enc_self")
    got = dict(zip(HEADS, total[0] / rows))
    assert rows == N and got["punct"] == pytest.approx(1.0)
    assert got["cls"] == pytest.approx(0.0) and got["uniform"] == pytest.approx(2 / N)
    # previous-token: query 4 on ',' and query 6 on '.'
    assert got["previous"] == pytest.approx(2 / N)


def test_the_sink_names_its_place():
    found = quick_detectors(PLAIN)
    score, place = found["sink"]["enc_self"][0], found.sink_place["enc_self"][0]
    assert found.first_piece["enc_self"] == "[CLS]"
    assert score[H["cls"]] == pytest.approx(1.0) and place[H["cls"]] == FIRST
    assert score[H["sep"]] == pytest.approx(1.0) and place[H["sep"]] == "[SEP]"
    assert score[H["punct"]] == pytest.approx(1.0) and place[H["punct"]] == PUNCTUATION
    # [CLS] appears only at the first position: that place, not one of its own
    assert "[CLS]" not in set(place)
    assert score[H["uniform"]] == pytest.approx(2 / N) and place[H["uniform"]] == PUNCTUATION
