"""Model hyper-parameters: a flat dataclass saved as config.json, rebuilt by ModelConfig(**d)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

POS_KINDS = ("sinusoidal", "learned")
NORMS = ("post", "pre")
ACTIVATIONS = ("relu", "gelu")


@dataclass
class ModelConfig:
    """Everything needed to rebuild a Transformer; defaults follow the seeds' small model."""

    vocab_size: int = 4000  # one SentencePiece vocabulary shared by source and target
    d_model: int = 128  # seed 000 uses d_hidn = 128
    n_heads: int = 4  # the seeds use 2; 4 gives the head views more to show
    d_ff: int = 512  # 4 × d_model, as in seed 000
    n_enc_layers: int = 3  # small enough to train on two CPU cores
    n_dec_layers: int = 3  # 0 makes an encoder-only model
    max_len: int = 520  # rows of the position table; row 0 is the pad position (seed 000)
    dropout: float = 0.1  # the paper's value
    pos_encoding: str = "sinusoidal"  # "sinusoidal" (paper, seed 000) | "learned" (seed 001)
    norm: str = "post"  # "post" (paper, seeds 000/004) | "pre" (seed 001, adds a final LayerNorm)
    activation: str = "relu"  # "relu" (paper) | "gelu" (seeds 000/001)
    tie_output: bool = True  # output projection shares the embedding matrix
    pad_id: int = 0  # the seeds pad with 0
    unk_id: int = 1
    bos_id: int = 2
    eos_id: int = 3
    layer_norm_eps: float = 1e-6  # seed 001's value

    def __post_init__(self) -> None:
        self.validate()

    @property
    def d_head(self) -> int:
        """Size of one head (Dh = D / H)."""
        return self.d_model // self.n_heads

    def validate(self) -> None:
        """Raise ValueError naming the first inconsistent value."""
        ints = ("vocab_size", "d_model", "n_heads", "d_ff", "max_len")
        for name in ints:
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        for name in ("n_enc_layers", "n_dec_layers"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
        if self.n_enc_layers == 0 and self.n_dec_layers == 0:
            raise ValueError("a model needs at least one encoder or decoder layer")
        if self.d_model % self.n_heads:
            raise ValueError(
                f"d_model ({self.d_model}) must be divisible by n_heads ({self.n_heads})"
            )
        if self.pos_encoding not in POS_KINDS:
            raise ValueError(f"pos_encoding must be one of {POS_KINDS}, got {self.pos_encoding!r}")
        if self.norm not in NORMS:
            raise ValueError(f"norm must be one of {NORMS}, got {self.norm!r}")
        if self.activation not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {ACTIVATIONS}, got {self.activation!r}")
        if not 0.0 <= float(self.dropout) < 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {self.dropout!r}")
        if self.pos_encoding == "sinusoidal" and self.d_model % 2:
            raise ValueError("the sinusoidal table needs an even d_model")
        specials = {"pad_id": self.pad_id, "unk_id": self.unk_id,
                    "bos_id": self.bos_id, "eos_id": self.eos_id}
        for name, value in specials.items():
            if not isinstance(value, int) or not 0 <= value < self.vocab_size:
                raise ValueError(f"{name} must be an id below vocab_size, got {value!r}")
        if len(set(specials.values())) != len(specials):
            raise ValueError(f"special ids must differ, got {specials}")

    def to_dict(self) -> dict[str, Any]:
        """Plain dict for config.json."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ModelConfig:
        """Rebuild from config.json, refusing keys this version does not know."""
        if not isinstance(data, dict):
            raise ValueError(f"config must be a JSON object, got {type(data).__name__}")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown config keys: {', '.join(unknown)}")
        return cls(**data)

    def save(self, path: str | Path) -> None:
        """Write config.json."""
        Path(path).write_text(json.dumps(self.to_dict(), indent=2) + "\n", encoding="utf-8")
