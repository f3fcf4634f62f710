"""model.backends.Facts (issue 54, item 2): what pages say about a model, checked against the
model itself, never against the code that wrote the facts: the lab's blocked cells as its
network fills them, all-MiniLM-L6-v2's files (config.json, tokenizer.json, the safetensors'
tensor names, sentence_bert_config.json, the pooling config) and transformers' own extended
attention mask."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from model import capture, load_checkpoint
from model.backends import facts
from tests.conftest import ROOT, skip_or_fail

PAPER = ROOT / "checkpoints" / "paper"
MINILM = ROOT / "checkpoints" / "minilm"


@pytest.fixture(scope="module")
def paper():
    if not (PAPER / "config.json").is_file():
        skip_or_fail("the shipped paper checkpoint is not here")
    return load_checkpoint(PAPER)


@pytest.fixture(scope="module")
def minilm():
    if not (MINILM / "config.json").is_file():
        skip_or_fail("checkpoints/minilm is not installed (make run or make test installs it)")
    return load_checkpoint(MINILM)


def test_lab_facts_are_what_its_network_does(paper):
    f = facts(paper)
    tr = capture(paper, ["Winter is cold.", "The big dog eats the fish every day."],
                 names=["attn", "encoder.layers.0.self_attn.hook_masked"])
    masked = tr.acts["encoder.layers.0.self_attn.hook_masked"]  # (B, H, S, S)
    blocked = np.broadcast_to(tr.masks["enc_self"][:, None], masked.shape)
    assert blocked.any() and np.all(masked[blocked] == np.float32(f.mask_fill_value))
    assert f.mask_fill == "-1e9" and f.mask_fill_value == -1e9
    pieces = paper.tokenizer.pieces("Winter is cold.")
    assert f.tokenizer == "sentencepiece" and pieces[0].startswith(f.word_mark)
    # the first position after the pad row: ids 1 … n, and the table's rows fix the limit
    assert tr.positions["enc"][0, 0] == 1 and f.pad_positions == "pad_row"
    assert f.max_positions == tr.pos_table.shape[0] - 1
    roles = dict(f.specials)
    assert tr.src_tokens[0][-1] in roles and roles[tr.src_tokens[0][-1]] == "eos"
    assert roles.get(tr.src_tokens[0][0]) == "language"  # <2ko> / <2en> leads every source
    assert f.output == "translation" and f.effect_unit == "nats" and f.pooling == "none"


def test_minilm_facts_are_what_its_folder_says(minilm):
    from safetensors import safe_open

    config = json.loads((MINILM / "config.json").read_text())
    tokenizer = json.loads((MINILM / "tokenizer.json").read_text())
    trained = json.loads((MINILM / "sentence_bert_config.json").read_text())
    pooling = json.loads((MINILM / "1_Pooling" / "config.json").read_text())
    modules = json.loads((MINILM / "modules.json").read_text())
    with safe_open(str(MINILM / "model.safetensors"), "pt") as weights:
        names = set(weights.keys())
    f = facts(minilm)
    assert tokenizer["model"]["type"] == "WordPiece" and f.tokenizer == "wordpiece"
    assert f.word_mark == tokenizer["model"]["continuing_subword_prefix"]
    assert f.max_positions == config["max_position_embeddings"]
    assert f.trained_length == trained["max_seq_length"]
    assert f.activation == config["hidden_act"]
    assert f.token_types == any("token_type_embeddings" in n for n in names)
    assert f.embedding_norm == any(n.endswith("embeddings.LayerNorm.weight") for n in names)
    assert (f.pooling == "mean") == bool(pooling["pooling_mode_mean_tokens"])
    assert f.normalize == any(m["type"].endswith("Normalize") for m in modules)
    # transformers' own eager mask adds this to a blocked key: the recorder must match it
    from transformers.masking_utils import bidirectional_mask_function, eager_mask

    dtype = next(minilm.model.parameters()).dtype
    additive = eager_mask(1, 3, 3, mask_function=bidirectional_mask_function,
                          attention_mask=torch.tensor([[True, True, False]]), dtype=dtype)
    assert f.mask_fill == "dtype_min" and f.mask_fill_value == float(additive.min())
    ids = minilm.tokenizer("The cat sat.")["input_ids"]
    pieces = minilm.tokenizer.convert_ids_to_tokens(ids)
    roles = dict(f.specials)
    assert roles[pieces[0]] == "start" and roles[pieces[-1]] == "separator"
    # every slot, pads included, reads position row = its index (BERT's position_ids)
    assert f.pad_positions == "counted"
    assert minilm.model.embeddings.position_ids[0, :8].tolist() == list(range(8))
    korean = minilm.tokenizer.tokenize("겨울은 추워요.")
    assert "ko" not in f.languages and "en" in f.languages
    assert sum(len(p.removeprefix("##")) == 1 for p in korean) > len(korean) // 2  # jamo
    assert f.output == "embedding" and f.effect_unit == "cosine"
