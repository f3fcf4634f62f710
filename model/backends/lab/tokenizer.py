"""SentencePiece tokenizer with padding, BOS/EOS and target-language tags (<2en>, <2ko>)."""

from __future__ import annotations

import io
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
import sentencepiece as spm

LANG_TAGS = {"en": "<2en>", "ko": "<2ko>"}


def _utf8(text: str) -> str:
    """Text SentencePiece can take: lone surrogates (not encodable as UTF-8) become U+FFFD."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    return text


# SentencePiece options every tokenizer of this project is trained with: the special ids
# and pieces the model relies on, the language tags as user symbols, byte fallback.
SPM_TRAIN_OPTIONS: dict = dict(
    character_coverage=1.0,
    byte_fallback=True,
    pad_id=0, unk_id=1, bos_id=2, eos_id=3,
    pad_piece="<pad>", unk_piece="<unk>", bos_piece="<s>", eos_piece="</s>",
    user_defined_symbols=list(LANG_TAGS.values()),
    shuffle_input_sentence=True,
    hard_vocab_limit=False,
    minloglevel=2,
)


class TokenizerError(ValueError):
    """The .model file is missing, unreadable or lacks the special pieces we need."""


class Tokenizer:
    """Text <-> pieces <-> ids over one SentencePiece model shared by both languages."""

    def __init__(self, model: str | Path | bytes) -> None:
        self.sp = spm.SentencePieceProcessor()
        if isinstance(model, bytes):
            proto, where = model, "<in-memory model>"
        else:
            where = str(model)
            try:
                proto = Path(model).read_bytes()
            except OSError as exc:
                raise TokenizerError(f"{where}: cannot read tokenizer ({exc.strerror})") from None
        try:
            self.sp.LoadFromSerializedProto(proto)
        except Exception as exc:  # sentencepiece raises RuntimeError/OSError variants
            raise TokenizerError(f"{where}: not a SentencePiece model ({exc})") from None
        self.proto = proto
        self.pad_id = self.sp.pad_id()
        self.unk_id = self.sp.unk_id()
        self.bos_id = self.sp.bos_id()
        self.eos_id = self.sp.eos_id()
        self.lang_ids = {lang: self.sp.piece_to_id(tag) for lang, tag in LANG_TAGS.items()}
        if min(self.pad_id, self.bos_id, self.eos_id) < 0:
            raise TokenizerError(f"{where}: the model lacks pad, bos or eos pieces")

    @property
    def vocab_size(self) -> int:
        return self.sp.get_piece_size()

    def pieces(self, text: str) -> list[str]:
        """Text -> SentencePiece pieces, e.g. ['▁겨울', '은', ...]."""
        return self.sp.encode(_utf8(text), out_type=str)

    def encode(self, text: str) -> list[int]:
        """Text -> ids, no specials."""
        return self.sp.encode(_utf8(text), out_type=int)

    def decode(self, ids: Iterable[int]) -> str:
        """Ids -> text; specials and pad are dropped."""
        skip = {self.pad_id, self.bos_id, self.eos_id, *self.lang_ids.values()}
        return self.sp.decode([int(i) for i in ids if int(i) not in skip])

    def id_to_piece(self, i: int) -> str:
        return self.sp.id_to_piece(int(i))

    def ids_to_pieces(self, ids: Iterable[int]) -> list[str]:
        ids = [int(i) for i in ids]
        return list(self.sp.id_to_piece(ids)) if ids else []  # one batched call into C++

    def source_ids(self, text: str, target_lang: str | None, max_len: int,
                   body: list[int] | None = None) -> tuple[list[int], int]:
        """[<2xx>] + pieces + [eos], cut to max_len; returns (ids, pieces cut). `body`: the
        text's ids when already encoded (model.batch tokenizes each line once)."""
        body = self.encode(text) if body is None else body
        head = [self.lang_ids[target_lang]] if target_lang in self.lang_ids else []
        room = max(0, max_len - len(head) - 1)
        cut = max(0, len(body) - room)
        return head + body[:room] + [self.eos_id], cut

    def target_ids(self, text: str, max_len: int, body: list[int] | None = None
                   ) -> tuple[list[int], list[int]]:
        """Decoder input [bos] + pieces and output pieces + [eos], each at most max_len long."""
        body = (self.encode(text) if body is None else body)[: max(0, max_len - 1)]
        return [self.bos_id, *body], [*body, self.eos_id]

    def pad(self, seqs: Sequence[Sequence[int]]) -> np.ndarray:
        """Right-pad id lists with pad_id: (B, n_max) int64."""
        width = max((len(s) for s in seqs), default=0)
        out = np.full((len(seqs), width), self.pad_id, dtype=np.int64)
        for row, seq in enumerate(seqs):
            out[row, : len(seq)] = seq
        return out

    def save(self, path: str | Path) -> None:
        Path(path).write_bytes(self.proto)

    @classmethod
    def train(cls, sentences: Iterable[str], vocab_size: int, *, model_type: str = "unigram",
              seed_sentences: int = 1_000_000) -> Tokenizer:
        """Train in memory: pad 0, unk 1, bos 2, eos 3, tags as user symbols, byte fallback."""
        buf = io.BytesIO()
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter(sentences),
            model_writer=buf,
            vocab_size=vocab_size,
            model_type=model_type,
            input_sentence_size=seed_sentences,
            **SPM_TRAIN_OPTIONS,
        )
        return cls(buf.getvalue())
