"""Tiny randomly initialised models and a tokenizer trained here: no shipped checkpoint needed."""

from __future__ import annotations

import pytest
import torch

from model import Bundle, ModelConfig, Tokenizer, Transformer
from training.corpus import generate


@pytest.fixture(scope="session")
def tokenizer() -> Tokenizer:
    pairs = generate(400, seed=1)
    lines = [p.en for p in pairs] + [p.ko for p in pairs]
    return Tokenizer.train(lines, vocab_size=1000)  # the 400 pairs hold ~810 characters


def make_bundle(tokenizer: Tokenizer, **overrides) -> Bundle:
    """A 2-layer encoder–decoder with random weights in eval mode."""
    params = dict(vocab_size=tokenizer.vocab_size, d_model=32, n_heads=4, d_ff=64,
                  n_enc_layers=2, n_dec_layers=2, max_len=96, dropout=0.1)
    params.update(overrides)
    cfg = ModelConfig(**params)
    torch.manual_seed(0)
    model = Transformer(cfg).eval()
    return Bundle(model=model, tokenizer=tokenizer, config=cfg, card={}, name="tiny")


@pytest.fixture(scope="session")
def bundle(tokenizer: Tokenizer) -> Bundle:
    return make_bundle(tokenizer)


@pytest.fixture(scope="session", params=["paper", "seed001"])
def variant_bundle(request, tokenizer: Tokenizer) -> Bundle:
    if request.param == "paper":
        return make_bundle(tokenizer, norm="post", pos_encoding="sinusoidal", activation="relu")
    return make_bundle(tokenizer, norm="pre", pos_encoding="learned", activation="gelu")
