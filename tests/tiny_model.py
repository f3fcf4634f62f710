"""The tiny random translation checkpoint that the app and browser tests open: a SentencePiece
model trained on twenty English sentences and a few Korean ones, and a 2 + 2-layer, 32-wide,
4-head transformer with seeded random weights."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from model import ModelConfig, Tokenizer, Transformer, save_checkpoint

WORDS = ["The cat", "The big dog", "My friend", "A child", "Winter"]
VERBS = ["eats the fish", "reads a book in the park", "is cold", "drinks water"]
SENTENCES = [f"{w} {v}." for w in WORDS for v in VERBS]  # 20 different sentences
KOREAN = ["고양이는 생선을 먹어요.", "큰 개가 생선을 먹어요.", "겨울은 추워요.", "감기 조심하세요."]


def tiny_tokenizer(extra: Sequence[str] = ()) -> Tokenizer:
    """A 420-piece tokenizer over SENTENCES, KOREAN and any extra lines (each seen 30 times)."""
    return Tokenizer.train((SENTENCES + KOREAN + list(extra)) * 30, vocab_size=420)


def save_tiny_checkpoint(folder: Path, *, extra: Sequence[str] = (), max_len: int = 24,
                         card: dict[str, Any] | None = None) -> Path:
    """Write a random (seed 0) 2 + 2-layer d_model 32 checkpoint with tiny_tokenizer(extra)."""
    tok = tiny_tokenizer(extra)
    cfg = ModelConfig(vocab_size=tok.vocab_size, d_model=32, n_heads=4, d_ff=64, n_enc_layers=2,
                      n_dec_layers=2, max_len=max_len)
    torch.manual_seed(0)
    return save_checkpoint(Transformer(cfg).eval(), tok, folder, card=card)
