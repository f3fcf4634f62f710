"""Checkpoint folders: config.json, model.safetensors, tokenizer.model, card.json.

Loading reads only JSON, safetensors and the SentencePiece protobuf: nothing is unpickled.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from torch import nn

from .hooks import KINDS

MAX_HEADER = 100_000_000  # safetensors' own limit on the JSON header


class CheckpointError(Exception):
    """A checkpoint that cannot be used; the message names the file and the reason."""

    def __init__(self, file: str | Path, reason: str) -> None:
        super().__init__(f"{file}: {reason}")
        self.file = str(file)
        self.reason = reason


@dataclass
class Bundle:
    """A loaded model with everything needed to run it."""

    model: nn.Module
    tokenizer: Any
    config: Any
    card: dict[str, Any] = field(default_factory=dict)
    name: str = ""
    kind: str = "native"  # "native" (our Transformer) or "hf" (a Hugging Face model)
    # the training corpus's words (corpus_words.txt) of a lab checkpoint, None elsewhere: the
    # confidence's coverage term (model/confidence.py) reads them
    known_words: frozenset[str] | None = None
    # how a sentence-transformers folder pools and normalises (model.backends.hf.sentence
    # SentenceConfig: pooling, normalize, max_seq_length), None elsewhere
    sentence: Any = None

    @property
    def kinds(self) -> tuple[str, ...]:
        """Attention kinds this model has, e.g. ('enc_self', 'dec_self', 'cross')."""
        cfg = self.config
        has_enc, has_dec = cfg.n_enc_layers > 0, cfg.n_dec_layers > 0
        present = {"enc_self": has_enc, "dec_self": has_dec, "cross": has_enc and has_dec}
        return tuple(k for k in KINDS if present[k])

    def n_layers(self, kind: str) -> int:
        """Layers holding attention of this kind."""
        return self.config.n_enc_layers if kind == "enc_self" else self.config.n_dec_layers


def read_json(path: Path) -> Any:
    if not path.is_file():
        raise CheckpointError(path, "file is missing")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise CheckpointError(path, "not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise CheckpointError(path, f"invalid JSON ({exc.msg} at line {exc.lineno})") from None


def check_safetensors(path: Path) -> dict[str, Any]:
    """Validate the safetensors header against the file size before any tensor is read."""
    if not path.is_file():
        raise CheckpointError(path, "file is missing")
    size = path.stat().st_size
    with path.open("rb") as fh:
        head = fh.read(8)
        if len(head) < 8:
            raise CheckpointError(path, f"truncated: {size} bytes, no safetensors header")
        (n,) = struct.unpack("<Q", head)
        if n > MAX_HEADER or n + 8 > size:
            raise CheckpointError(path, "not a safetensors file (header length does not fit; "
                                  "a pickle or a truncated file?)")
        raw = fh.read(n)
    try:
        header = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise CheckpointError(path, "not a safetensors file (header is not JSON)") from None
    if not isinstance(header, dict):
        raise CheckpointError(path, "not a safetensors file (header is not a JSON object)")
    data_len = size - 8 - n
    for name, info in header.items():
        if name == "__metadata__":
            continue
        try:
            end = int(info["data_offsets"][1])
        except (KeyError, TypeError, ValueError, IndexError):
            raise CheckpointError(path, f"malformed entry for tensor {name!r}") from None
        if end > data_len:
            raise CheckpointError(path, f"truncated: tensor {name!r} ends at byte {end} "
                                  f"but only {data_len} data bytes are present")
    return header
