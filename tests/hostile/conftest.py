"""Tiny random models for the hostile suite: no shipped checkpoint needed.

`bundle` is an in-memory encoder–decoder (for capture()); `checkpoints` is a folder holding a
saved one named "paper", which the app tests select through ATTN_CHECKPOINTS_DIR.
"""

from __future__ import annotations

import pytest
import torch

from model import Bundle, ModelConfig, Tokenizer, Transformer, save_checkpoint

WORDS = ["The cat", "The big dog", "My friend", "A child", "Winter"]
VERBS = ["eats the fish", "reads a book in the park", "is cold", "drinks water"]
KOREAN = ["고양이는 생선을 먹어요.", "큰 개가 생선을 먹어요.", "겨울은 추워요.", "감기 조심하세요.",
          "내 친구는 공원에서 책을 읽어요."]
MAX_LEN = 40  # small, so long inputs are cut cheaply


@pytest.fixture(scope="session", autouse=True)
def _one_torch_thread():
    """Hundreds of tiny forwards: one intra-op thread each. With two threads on a busy 2-core
    machine every tiny matmul waits for a core and a capture takes seconds instead of 0.1 s."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="session")
def hostile_tokenizer() -> Tokenizer:
    lines = [f"{w} {v}." for w in WORDS for v in VERBS] + KOREAN
    return Tokenizer.train(lines * 30, vocab_size=420)


def tiny_model(tok: Tokenizer, **overrides) -> Transformer:
    params = dict(vocab_size=tok.vocab_size, d_model=32, n_heads=4, d_ff=64, n_enc_layers=2,
                  n_dec_layers=2, max_len=MAX_LEN)
    params.update(overrides)
    torch.manual_seed(0)
    return Transformer(ModelConfig(**params)).eval()


@pytest.fixture(scope="session")
def hostile_bundle(hostile_tokenizer) -> Bundle:
    model = tiny_model(hostile_tokenizer)
    return Bundle(model=model, tokenizer=hostile_tokenizer, config=model.config, card={},
                  name="tiny")


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory, hostile_tokenizer):
    """ATTN_CHECKPOINTS_DIR -> a folder with one good tiny checkpoint, "paper"."""
    root = tmp_path_factory.mktemp("hostile_checkpoints")
    save_checkpoint(tiny_model(hostile_tokenizer), hostile_tokenizer, root / "paper",
                    card={"variant": "paper"})
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ATTN_CHECKPOINTS_DIR", str(root))
        mp.delenv("ATTN_MODELS", raising=False)
        yield root


@pytest.fixture(scope="session")
def hf_families(tmp_path_factory) -> dict:
    """Tiny random GPT-2, BERT and Marian folders (and GPT-2 without a pad token), built once
    (tests/hostile/families.py); {name: folder}, their parent is a valid ATTN_MODELS entry."""
    from tests.hostile.families import build_all

    return build_all(tmp_path_factory.mktemp("hf_families"))
