"""Tiny random Hugging Face models of three families, built offline in a test's folder.

Each has its own kind of trained tokenizer, so hostile text meets a realistic pipeline:
- "gpt2": decoder-only, 12 layers x 12 heads (the grid size of GPT-2 small), byte-level BPE
  with a BERT-style normalizer (controls and format characters such as U+200B removed);
- "bert": encoder-only, WordPiece with BERT's normalizer and [CLS]/[SEP];
- "marian": encoder-decoder, a Metaspace unigram tokenizer with `</s>` appended;
- "gpt2_nopad": the gpt2 weights with a tokenizer that has no pad token (as GPT-2 ships).
Every model's position table is POSITIONS long, so long inputs must be cut. Widths are tiny
(16-24): these tests are about what reaches the model, not about its numbers.
"""

from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing here may reach the network

POSITIONS = 32
FAMILIES = ("gpt2", "bert", "marian")
ALL_FOLDERS = (*FAMILIES, "gpt2_nopad")
CORPUS = ["The cat eats the fish.", "The big dog eats the fish in the park.",
          "Winter is cold.", "My friend reads a book.", "A child drinks water.",
          "겨울은 추워요.", "감기 조심하세요.", "고양이는 생선을 먹어요."]
SPECIALS = {"gpt2": ["<|endoftext|>", "<pad>"], "bert": ["[PAD]", "[UNK]", "[CLS]", "[SEP]"],
            "marian": ["<pad>", "</s>", "<unk>"]}


def _bert_normalizer():
    from tokenizers import normalizers

    # clean_text drops control and format characters (U+200B, U+FEFF, ...), strip_accents
    # drops combining marks: text made only of those tokenizes to nothing.
    return normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=True,
                                      strip_accents=True, lowercase=False)


def make_tokenizer(family: str, pad: bool = True):
    """A small trained fast tokenizer of the family's kind, wrapped for save_pretrained."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    specials = SPECIALS[family]
    if family == "gpt2":
        tk = Tokenizer(models.BPE())
        tk.normalizer = _bert_normalizer()
        tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tk.decoder = decoders.ByteLevel()
        trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=specials,
                                      initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
        tk.train_from_iterator(CORPUS * 20, trainer)
        kw = dict(bos_token="<|endoftext|>", eos_token="<|endoftext|>",
                  unk_token="<|endoftext|>")
        if pad:
            kw["pad_token"] = "<pad>"
    elif family == "bert":
        tk = Tokenizer(models.WordPiece(unk_token="[UNK]"))
        tk.normalizer = _bert_normalizer()
        tk.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        tk.decoder = decoders.WordPiece()
        tk.train_from_iterator(CORPUS * 20, trainers.WordPieceTrainer(
            vocab_size=200, special_tokens=specials))
        tk.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]", special_tokens=[(t, tk.token_to_id(t))
                                                    for t in ("[CLS]", "[SEP]")])
        kw = dict(pad_token="[PAD]", unk_token="[UNK]", cls_token="[CLS]", sep_token="[SEP]")
    else:
        tk = Tokenizer(models.Unigram())
        tk.normalizer = _bert_normalizer()
        tk.pre_tokenizer = pre_tokenizers.Metaspace()
        tk.decoder = decoders.Metaspace()
        tk.train_from_iterator(CORPUS * 20, trainers.UnigramTrainer(
            vocab_size=150, special_tokens=specials, unk_token="<unk>"))
        tk.post_processor = processors.TemplateProcessing(
            single="$A </s>", special_tokens=[("</s>", tk.token_to_id("</s>"))])
        kw = dict(pad_token="<pad>", eos_token="</s>", unk_token="<unk>")
    return PreTrainedTokenizerFast(tokenizer_object=tk, model_max_length=POSITIONS, **kw)


def make_model(family: str, vocab_size: int, pad_id: int | None):
    """A random model of the family with POSITIONS positions."""
    import torch
    from transformers import (
        BertConfig,
        BertModel,
        GPT2Config,
        GPT2LMHeadModel,
        MarianConfig,
        MarianMTModel,
    )

    torch.manual_seed(0)
    if family == "gpt2":
        return GPT2LMHeadModel(GPT2Config(
            vocab_size=vocab_size, n_embd=24, n_layer=12, n_head=12, n_positions=POSITIONS,
            bos_token_id=0, eos_token_id=0, pad_token_id=pad_id))
    if family == "bert":
        return BertModel(BertConfig(
            vocab_size=vocab_size, hidden_size=16, num_hidden_layers=2, num_attention_heads=4,
            intermediate_size=32, max_position_embeddings=POSITIONS, pad_token_id=pad_id))
    return MarianMTModel(MarianConfig(
        vocab_size=vocab_size, d_model=16, encoder_layers=2, decoder_layers=2,
        encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=32,
        decoder_ffn_dim=32, max_position_embeddings=POSITIONS, pad_token_id=pad_id,
        eos_token_id=1, decoder_start_token_id=pad_id, forced_eos_token_id=1))


def build_folder(root: Path, name: str) -> Path:
    """root/name: a model and tokenizer saved as from_pretrained reads them (safetensors)."""
    family = name.removesuffix("_nopad")
    tok = make_tokenizer(family, pad=not name.endswith("_nopad"))
    model = make_model(family, len(tok), tok.pad_token_id)
    folder = root / name
    model.save_pretrained(folder, safe_serialization=True)
    tok.save_pretrained(folder)
    return folder


def build_all(root: Path) -> dict[str, Path]:
    """Every folder in ALL_FOLDERS under root."""
    return {name: build_folder(root, name) for name in ALL_FOLDERS}
