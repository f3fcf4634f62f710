"""A decoder-only model whose output is wider than its tokenizer (padded vocabularies; the
GPT-2-small shape of 50,257 rows over a short word list, as the lab's look at that shape
builds it): generation's pieces and top-k, and head contributions' explained token, name a row
the tokenizer has no piece for "[id i]". transformers answers None there, and the generation,
KV-cache and contribution pages said 'None' (the continuation read "(empty)")."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from model import generate, load_checkpoint
from model.analysis.contributions import head_contributions
from model.backends import backend_for
from tests.hf_folders import SPECIALS, WORDS, save_families

N = len(SPECIALS) + len(WORDS)  # the tokenizer's pieces
EXTRA = 40  # output rows past them
TEXT = "the cat eats fish every day ."


def named(i: int, pieces: list[str]) -> str:
    return pieces[i] if i < N else f"[id {i}]"


@pytest.fixture(scope="module")
def wide(tmp_path_factory):
    import transformers as tf

    def build(_family: str):
        torch.manual_seed(0)
        return tf.GPT2LMHeadModel(tf.GPT2Config(
            vocab_size=N + EXTRA, n_embd=16, n_layer=2, n_head=4, n_positions=32,
            bos_token_id=2, eos_token_id=3, pad_token_id=0)), None

    def favour_unnamed(model) -> None:  # the final norm's output is row N + 5's direction
        with torch.no_grad():
            model.transformer.ln_f.weight.zero_()
            model.transformer.ln_f.bias.copy_(model.transformer.wte.weight[N + 5])

    root = save_families(tmp_path_factory.mktemp("wide"), ("gpt2",), build, favour_unnamed)
    bundle = load_checkpoint(root / "gpt2")
    assert len(backend_for(bundle).vocabulary()) == N
    return bundle


def test_generation_names_every_row_by_the_models_own_logits(wide):
    pieces = backend_for(wide).vocabulary()
    g = generate(wide, TEXT, max_new=3, top_k=N + EXTRA, logits=True)[0]
    assert any(i >= N for i in g.ids), g.ids  # the check must meet unnamed rows
    assert g.pieces == [named(i, pieces) for i in g.ids]
    for step, row in zip(g.steps, g.logits, strict=True):
        order = np.argsort(-row, kind="stable")
        got = [piece for piece, _p in step]
        assert got == [named(int(i), pieces) for i in order]
        assert "None" not in got


def test_contributions_name_the_explained_row(wide):
    c = head_contributions(wide, TEXT, knockout=False)
    logits = wide.model(torch.tensor([backend_for(wide).encode([TEXT]).src_lists[0]])).logits
    want = int(logits[0, -1].argmax())
    assert want >= N and c.token_id == want
    assert c.token == f"[id {want}]"
