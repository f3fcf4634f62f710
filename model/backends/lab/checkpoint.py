"""The lab's checkpoint folders: config.json, model.safetensors, tokenizer.model, card.json.

Loading reads only JSON, safetensors and the SentencePiece protobuf: nothing is unpickled.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file, save_file

from ...checkpoint import Bundle, CheckpointError, check_safetensors, read_json
from .config import ModelConfig
from .tokenizer import Tokenizer, TokenizerError
from .transformer import Transformer


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
