"""Checkpoint folders: config.json, model.safetensors, tokenizer.model, card.json.

Loading reads only JSON, safetensors and the SentencePiece protobuf: nothing is unpickled.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file, save_file
from torch import nn

from .config import ModelConfig
from .hooks import KINDS
from .tokenizer import Tokenizer, TokenizerError
from .transformer import Transformer

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


def save_checkpoint(model: Transformer, tokenizer: Tokenizer, folder: str | Path,
                    card: dict[str, Any] | None = None) -> Path:
    """Write the four files of a checkpoint folder and return its path."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    if tokenizer.vocab_size != model.config.vocab_size:
        raise ValueError(f"tokenizer has {tokenizer.vocab_size} pieces, "
                         f"config says vocab_size={model.config.vocab_size}")
    model.config.save(folder / "config.json")
    state = {k: v.detach().contiguous().cpu() for k, v in model.state_dict().items()}
    save_file(state, str(folder / "model.safetensors"), metadata={"format": "pt"})
    tokenizer.save(folder / "tokenizer.model")
    text = json.dumps(card or {}, indent=2, ensure_ascii=False) + "\n"
    (folder / "card.json").write_text(text, encoding="utf-8")
    return folder


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


def load_native(folder: Path, raw_cfg: Any) -> Bundle:
    """Load one of the lab's checkpoint folders, given its parsed config.json."""
    try:
        cfg = ModelConfig.from_dict(raw_cfg)
    except (TypeError, ValueError) as exc:
        raise CheckpointError(folder / "config.json", str(exc)) from None
    weights = folder / "model.safetensors"
    check_safetensors(weights)
    try:
        state = load_file(str(weights))
    except Exception as exc:  # the safetensors reader's own errors vary by version
        raise CheckpointError(weights, f"unreadable safetensors ({exc})") from None
    with torch.device("meta"):  # shapes only: a config that disagrees allocates nothing
        expected = Transformer(cfg).state_dict()
    missing = sorted(set(expected) - set(state))
    extra = sorted(set(state) - set(expected))
    if missing or extra:
        raise CheckpointError(weights, "weights disagree with config.json: "
                              f"missing {missing[:3]}{'…' if len(missing) > 3 else ''}, "
                              f"unexpected {extra[:3]}{'…' if len(extra) > 3 else ''}")
    for key, tensor in expected.items():
        if tuple(state[key].shape) != tuple(tensor.shape):
            raise CheckpointError(weights, f"weights disagree with config.json: {key} has "
                                  f"shape {tuple(state[key].shape)}, config implies "
                                  f"{tuple(tensor.shape)}")
    model = Transformer(cfg)
    model.load_state_dict(state)
    model.eval()
    tok_path = folder / "tokenizer.model"
    if not tok_path.is_file():
        raise CheckpointError(tok_path, "file is missing")
    try:
        tokenizer = Tokenizer(tok_path)
    except TokenizerError as exc:
        raise CheckpointError(tok_path, str(exc).split(": ", 1)[-1]) from None
    if tokenizer.vocab_size != cfg.vocab_size:
        raise CheckpointError(tok_path, f"tokenizer has {tokenizer.vocab_size} pieces but "
                              f"config.json says vocab_size={cfg.vocab_size}")
    card_path = folder / "card.json"
    card = read_json(card_path) if card_path.exists() else {}
    if not isinstance(card, dict):
        raise CheckpointError(card_path, "must be a JSON object")
    words = folder / "corpus_words.txt"
    known = frozenset(words.read_text(encoding="utf-8").split()) if words.is_file() else None
    return Bundle(model=model, tokenizer=tokenizer, config=cfg, card=card, name=folder.name,
                  known_words=known)

