"""The language model's tokenizer: a small BPE over word pieces, saved as Hugging Face files.

Pieces start words with ▁ (like the translators' SentencePiece), so the token views read the
same on every lab model. 2,048 pieces keep the embedding and each snapshot small; characters
outside the training text become <unk>. `AutoTokenizer.from_pretrained` opens the folder with
no project code (PreTrainedTokenizerFast over tokenizer.json).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from tokenizers import (
    Tokenizer,
    decoders,
    models,
    normalizers,
    pre_tokenizers,
    processors,
    trainers,
)

BOS, EOS, UNK, PAD = "<s>", "</s>", "<unk>", "<pad>"
SPECIALS = [BOS, EOS, UNK, PAD]  # ids 0..3 in this order


def train_tokenizer(texts: Iterable[str], vocab_size: int = 2048):
    """A PreTrainedTokenizerFast trained on texts; it prepends <s> to every encoding."""
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token=UNK))
    tok.normalizer = normalizers.NFKC()
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=SPECIALS,
                                  limit_alphabet=1000, show_progress=False)
    tok.train_from_iterator(texts, trainer)
    tok.post_processor = processors.TemplateProcessing(
        single=f"{BOS} $A", pair=f"{BOS} $A {EOS} $B", special_tokens=[(BOS, 0), (EOS, 1)])
    return PreTrainedTokenizerFast(tokenizer_object=tok, bos_token=BOS, eos_token=EOS,
                                   unk_token=UNK, pad_token=PAD)


def save(tokenizer, folder: str | Path) -> None:
    """tokenizer.json, tokenizer_config.json and special_tokens_map.json into folder."""
    tokenizer.save_pretrained(str(folder))
