"""Random models of real shapes, built offline: a GPT-2-shaped one (12 × 12 heads) and
Llama-shaped ones (32 × 32 and 80 × 64 query heads sharing 8 key/value heads), narrow and with a
small word-level vocabulary so they build in seconds; and sentences of their words.

Used by bench_browser, bench_long (`build`, with the feed-forward width), shots, and by
tests/app/test_big_models.py and tests/browser/test_big_grid.py.
"""

from __future__ import annotations

from pathlib import Path

# name -> (family, layers, query heads, kv heads, hidden, positions)
SHAPES = {
    "gpt2-12": ("gpt2", 12, 12, 12, 96, 520),
    "llama-32": ("llama", 32, 32, 8, 256, 300),
    "llama-80": ("llama", 80, 64, 8, 256, 300),  # head_dim 4: 55 MB of weights, not 200
}
WORDS = ("the cat eats fish every day winter is cold . a dog runs in park big small red blue "
         "house tree sun moon star sky water fire earth wind rain snow bird sings song").split()
SPECIALS = ["<pad>", "<unk>", "<s>", "</s>"]


def make_tokenizer(template: str | None):
    """A word-level fast tokenizer over WORDS (offline: nothing is downloaded)."""
    from tokenizers import Tokenizer, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    vocab = {w: i for i, w in enumerate(SPECIALS + WORDS)}
    tk = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tk.pre_tokenizer = pre_tokenizers.Whitespace()
    if template:
        tk.post_processor = processors.TemplateProcessing(
            single=template, special_tokens=[("<s>", vocab["<s>"])])
    return PreTrainedTokenizerFast(tokenizer_object=tk, pad_token="<pad>", unk_token="<unk>",
                                   bos_token="<s>", eos_token="</s>")


def build_folder(root: Path, name: str) -> Path:
    """root/name: a random model of one of SHAPES (narrow, small vocabulary) and tokenizer."""
    return build(root / name, *SHAPES[name])


def build(folder: Path, family: str, layers: int, heads: int, kv: int, hidden: int,
          positions: int, ffn: int | None = None) -> Path:
    """folder: a random GPT-2 ("gpt2") or Llama model of that shape with the word-level
    tokenizer, built once (kept when folder/config.json exists). ffn: the feed-forward width
    (None: GPT-2's own 4 × hidden, and 32 for Llama, which keeps the big shapes small)."""
    import torch
    import transformers as tf

    if (folder / "config.json").is_file():
        return folder
    torch.manual_seed(0)
    common = dict(vocab_size=len(SPECIALS) + len(WORDS), pad_token_id=0, bos_token_id=2,
                  eos_token_id=3)
    if family == "gpt2":
        model = tf.GPT2LMHeadModel(tf.GPT2Config(n_embd=hidden, n_layer=layers, n_head=heads,
                                                 n_inner=ffn, n_positions=positions, **common))
        template = None
    else:
        model = tf.LlamaForCausalLM(tf.LlamaConfig(
            hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=heads,
            num_key_value_heads=kv, intermediate_size=32 if ffn is None else ffn,
            max_position_embeddings=positions, **common))
        template = "<s> $A"
    model.save_pretrained(folder, safe_serialization=True)
    make_tokenizer(template).save_pretrained(folder)
    return folder


def text_of(n_words: int) -> str:
    """One sentence of n_words words from the tokenizer's vocabulary (one piece each)."""
    return " ".join(WORDS[(i * 7) % len(WORDS)] for i in range(n_words))
