"""The Hugging Face Trace records the positions the model itself gave every slot, pads
included (issue 54): BERT and GPT-2 number every slot of a right-padded batch 0 … n−1, RoBERTa
gives real tokens padding_idx + 1 + i and pads padding_idx, and -1 is left only where positions
are no absolute rows (T5's relative bias). Checked against transformers' own numbering on tiny
random models built here: BERT's position_ids buffer, RoBERTa's
create_position_ids_from_input_ids, and the pads' embedding output recomputed from the tables
at those rows."""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from model import capture, load_checkpoint  # noqa: E402
from tests.hf_folders import SPECIALS, WORDS, make_tokenizer  # noqa: E402
from tests.unit.test_hf import make_model  # noqa: E402

LINES = ["the cat eats fish every day .", "winter is cold", "a dog"]


def _roberta():
    from transformers import RobertaConfig, RobertaModel

    torch.manual_seed(0)
    cfg = RobertaConfig(vocab_size=len(SPECIALS) + len(WORDS), hidden_size=16,
                        num_hidden_layers=1, num_attention_heads=2, intermediate_size=32,
                        max_position_embeddings=40, pad_token_id=0, type_vocab_size=1)
    return RobertaModel(cfg), "[CLS] $A [SEP]"


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("pad_positions")
    out = {}
    for name, build in (("bert", lambda: make_model("bert")), ("gpt2", lambda: make_model("gpt2")),
                        ("roberta", _roberta)):
        model, template = build()
        model.save_pretrained(root / name, safe_serialization=True)
        make_tokenizer(template).save_pretrained(root / name)
        out[name] = root / name
    return out


def _lengths(trace, side):
    return [len(t) for t in trace.tokens(side)]


def test_bert_pads_keep_their_slot_numbers(folders):
    bundle = load_checkpoint(folders["bert"])
    t = capture(bundle, LINES, names={"hidden"})
    pos = t.positions["enc"]
    n = pos.shape[1]
    assert min(_lengths(t, "src")) < n  # there are pad slots
    want = bundle.model.embeddings.position_ids[0, :n].numpy()
    assert (pos == want[None, :]).all() and (pos >= 0).all()
    # what the model computed at a pad slot: its word, type 0 and position rows, LayerNorm'd
    emb = bundle.model.embeddings
    b, j = 2, n - 1
    with torch.no_grad():
        x = (emb.word_embeddings.weight[int(t.src_ids[b, j])] + emb.token_type_embeddings.weight[0]
             + emb.position_embeddings.weight[int(pos[b, j])])
        x = emb.LayerNorm(x).numpy()
    np.testing.assert_allclose(t.hidden["enc"][0, b, j], x, atol=1e-5)


def test_gpt2_pads_keep_their_slot_numbers(folders):
    t = capture(load_checkpoint(folders["gpt2"]), LINES, names={"attn"})
    pos = t.positions["dec"]
    assert min(_lengths(t, "tgt")) < pos.shape[1]
    assert (pos == np.arange(pos.shape[1])[None, :]).all()


def test_roberta_numbers_from_its_pad_row(folders):
    from transformers.models.roberta.modeling_roberta import RobertaEmbeddings

    bundle = load_checkpoint(folders["roberta"])
    t = capture(bundle, LINES, names={"attn"})
    ids = torch.tensor(t.src_ids)
    pad = bundle.model.embeddings.position_embeddings.padding_idx
    want = RobertaEmbeddings.create_position_ids_from_input_ids(ids, pad).numpy()
    assert (t.positions["enc"] == want).all()
    assert (want[2, _lengths(t, "src")[2]:] == pad).all()  # the pads read the pad row
