"""The Hugging Face shapes bench_capture measures at N_TOKENS tokens, and their random-weight
folders (build): a GPT-2 small and a small Llama with grouped key/value heads, each with a
word-level tokenizer, built offline.
"""

from __future__ import annotations

from pathlib import Path

import torch

from benchmarks.bench_hf import build as build_gpt2
from benchmarks.bench_hf import save_word_tokenizer

N_TOKENS = 512

SHAPES = {
    "gpt2": "GPT-2 small shape: 12 layers x 12 heads, 768 wide, vocabulary 50,257",
    "llama": "Llama shape: 8 layers, 8 query heads on 2 key/value heads, 512 wide, "
             "vocabulary 32,000",
}


def build(shape: str, folder: Path) -> Path:
    """Save a random model of this shape and the word-level tokenizer into folder."""
    from transformers import LlamaConfig, LlamaForCausalLM

    if shape == "gpt2":
        return build_gpt2(folder)
    torch.manual_seed(0)
    LlamaForCausalLM(LlamaConfig(
        vocab_size=32000, hidden_size=512, intermediate_size=1408, num_hidden_layers=8,
        num_attention_heads=8, num_key_value_heads=2, max_position_embeddings=1024)
    ).save_pretrained(folder, safe_serialization=True)
    return save_word_tokenizer(folder)
