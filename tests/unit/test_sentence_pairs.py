"""Sentence pairs "A [SEP] B" typed in one line (issue 54, item 4) on checkpoints/minilm: the
lab types the segments by rule (model.segments) and the model reads them as BERT does, against
an independent run of plain transformers on the tokenizer's own pair encoding,
tokenizer(A, B), whose token_type_ids are 0 for A and 1 for B."""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from model import capture, embed, load_checkpoint  # noqa: E402
from model.backends import MINILM_FOLDER, facts  # noqa: E402
from model.segments import is_pair, piece_types, token_types  # noqa: E402
from tests.conftest import ROOT, installed_minilm  # noqa: E402

MINILM = ROOT / "checkpoints" / MINILM_FOLDER
PAIRS = [("A cat sits on the mat.", "A kitten rests on a rug."),
         ("Is it cold?", "Winter is cold in Seoul, and the nights are long.")]


@pytest.fixture(scope="module")
def minilm():
    installed_minilm()
    return load_checkpoint(MINILM)


@pytest.fixture(scope="module")
def plain():
    from transformers import AutoModel, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(MINILM)
    return tok, AutoModel.from_pretrained(MINILM, attn_implementation="eager").eval()


def typed(a: str, b: str) -> str:
    return f"{a} [SEP] {b}"


def test_the_rule_gives_the_tokenizers_pair_types(plain):
    tok, _model = plain
    a, b = zip(*PAIRS)
    enc = tok(list(a), list(b), padding=True, return_tensors="pt")
    got = token_types(enc["input_ids"], tok.sep_token_id, tok.pad_token_id)
    assert torch.equal(got, enc["token_type_ids"])
    assert enc["token_type_ids"].sum() > 0  # there is a second segment to find
    one = tok([a[0], b[1]], padding=True, return_tensors="pt")  # single sentences: all 0
    assert not token_types(one["input_ids"], tok.sep_token_id, tok.pad_token_id).any()
    for row, types in zip(enc["input_ids"], enc["token_type_ids"]):
        pieces = [p for p in tok.convert_ids_to_tokens(row) if p != tok.pad_token]
        assert piece_types(pieces, "[SEP]") == types[: len(pieces)].tolist()
        assert is_pair(pieces, "[SEP]")
    assert not is_pair(tok.convert_ids_to_tokens(one["input_ids"][1]), "[SEP]")


def test_a_typed_pair_runs_as_the_tokenizers_pair(minilm, plain):
    tok, model = plain
    assert facts(minilm).token_types
    lines = [typed(*p) for p in PAIRS] + ["Winter is cold."]
    trace = capture(minilm, lines, names={"hidden"})
    for i, (a, b) in enumerate(PAIRS):
        enc = tok(a, b, return_tensors="pt")
        n = enc["input_ids"].shape[1]
        assert trace.src_ids[i, :n].tolist() == enc["input_ids"][0].tolist()
        with torch.no_grad():
            want = model(**enc).last_hidden_state[0].numpy()
            flat = model(input_ids=enc["input_ids"]).last_hidden_state[0].numpy()  # types 0
        got = trace.hidden["enc"][-1, i, :n]
        np.testing.assert_allclose(got, want, atol=1e-4)
        assert np.abs(got - flat).max() > 1e-2  # the types mattered: a test that can fail
    # the sentence-transformers embedding of the pair: mean over its pieces, length 1
    a, b = PAIRS[0]
    enc = tok(a, b, return_tensors="pt")
    with torch.no_grad():
        h = model(**enc).last_hidden_state[0].double().numpy()
    v = h.mean(0) / np.linalg.norm(h.mean(0))
    np.testing.assert_allclose(embed(minilm, [typed(a, b)])[0], v, atol=1e-5)


def test_score_decompositions_add_up_on_a_pair(minilm):
    """qk_terms and qk_components rebuild the embedding sum from the tables: on B's pieces
    they read token-type row 1, so their terms still add up to the recorded score."""
    from model.analysis import qk_components, qk_terms

    line = typed(*PAIRS[0])
    trace = capture(minilm, [line])
    n = len(trace.src_tokens[0])
    query, key = n - 2, n - 3  # both in segment B
    for layer, head in ((0, 2), (2, 5)):
        score = float(trace.scores["enc_self"][layer, 0, head, query, key])
        terms = qk_terms(minilm, trace, "enc_self", layer, head, query, key)
        assert abs(sum(terms.values()) - score) < 1e-3 * max(1.0, abs(score)), terms
        c = qk_components(minilm, trace, "enc_self", layer, head, query, key)
        assert abs(float(c.terms.sum()) + c.bias - score) < 1e-3 * max(1.0, abs(score))
