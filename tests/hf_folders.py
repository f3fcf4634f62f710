"""The one tiny Hugging Face folder builder of the test suite: a word-level tokenizer over a
fixed word list (make_tokenizer) and folders written from a module's own model builder
(save_folder, save_families: build(name) -> (model, tokenizer template)), so the tests' tiny
GPT-2 / Llama / BERT / T5 / Marian folders are made one way."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

WORDS = ("the cat eats fish every day winter is cold . a dog runs "
         "겨울은 추워요 고양이는 생선을 먹어요").split()
SPECIALS = ["<pad>", "<unk>", "<s>", "</s>", "[CLS]", "[SEP]"]


def make_tokenizer(template: str | None):
    """A word-level fast tokenizer; `template` like '[CLS] $A [SEP]' adds special tokens."""
    from tokenizers import Tokenizer, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    vocab = {w: i for i, w in enumerate(SPECIALS + WORDS)}
    tk = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tk.pre_tokenizer = pre_tokenizers.Whitespace()
    if template:
        names = [t for t in template.split() if t != "$A"]
        tk.post_processor = processors.TemplateProcessing(
            single=template, special_tokens=[(t, vocab[t]) for t in names])
    return PreTrainedTokenizerFast(tokenizer_object=tk, pad_token="<pad>", unk_token="<unk>",
                                   bos_token="<s>", eos_token="</s>", cls_token="[CLS]",
                                   sep_token="[SEP]")


def save_folder(folder: Path, model: Any, template: str | None) -> Path:
    """A loadable folder: the model's weights (safetensors) and make_tokenizer(template)."""
    model.save_pretrained(folder, safe_serialization=True)
    make_tokenizer(template).save_pretrained(folder)
    return folder


def save_families(root: Path, families: Iterable[str],
                  build: Callable[[str], tuple[Any, str | None]],
                  *tweaks: Callable[[Any], None]) -> Path:
    """One folder per family under root: build(family) -> (model, tokenizer template), each
    tweak(model) applied before it is saved."""
    for family in families:
        model, template = build(family)
        for tweak in tweaks:
            tweak(model)
        save_folder(root / family, model, template)
    return root


def wide_gpt2(extra: int = 40, positions: int = 32):
    """A tiny random GPT-2 whose output is `extra` rows wider than make_tokenizer's vocabulary
    (as a padded vocabulary, or the 50,257-row GPT-2-small shape over this word list, is), for
    save_families: rows past the tokenizer have no piece to name them."""
    import torch
    import transformers as tf

    torch.manual_seed(0)
    return tf.GPT2LMHeadModel(tf.GPT2Config(
        vocab_size=len(SPECIALS) + len(WORDS) + extra, n_embd=16, n_layer=2, n_head=4,
        n_positions=positions, bos_token_id=2, eos_token_id=3, pad_token_id=0)), None
