"""Random decoder models over tests/unit/test_hf.py's word-level vocabulary, built in-process.

Shared by tests/app/test_hf_views.py (12 × 12 shapes) and tests/unit/test_long.py (small
shapes at ~1,100 positions): the seed, the vocabulary and the special ids live here once.
"""

from __future__ import annotations

import torch

from tests.hf_folders import SPECIALS, WORDS


def vocab_args() -> dict:
    """Seed torch (so weights repeat) and return the config arguments every family shares."""
    torch.manual_seed(0)
    return dict(vocab_size=len(SPECIALS) + len(WORDS), pad_token_id=0, bos_token_id=2,
                eos_token_id=3)


def gpt2(width: int, layers: int, heads: int, positions: int):
    """A random GPT2LMHeadModel of that shape, and its tokenizer template (None: no BOS)."""
    import transformers as tf

    return tf.GPT2LMHeadModel(tf.GPT2Config(n_embd=width, n_layer=layers, n_head=heads,
                                            n_positions=positions, **vocab_args())), None
