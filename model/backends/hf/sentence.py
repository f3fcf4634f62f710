"""A sentence-transformers folder's own description of how it makes one vector per sentence.

sentence-transformers writes `modules.json` (the pipeline: Transformer, Pooling, Normalize…),
the pooling module's `config.json` (which pooling) and `sentence_bert_config.json` (the length
it was trained for). The lab reads them, never imports sentence-transformers, and pools the
last hidden states itself (model/backends/hf/embed.py). A folder without modules.json is a
plain Hugging Face model: no SentenceConfig.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ...checkpoint import CheckpointError, read_json

POOLINGS = ("mean", "cls", "max", "none")
# pooling config key -> the lab's name; "mean_sqrt_len" and others are not computed here
_MODES = (("pooling_mode_mean_tokens", "mean"), ("pooling_mode_cls_token", "cls"),
          ("pooling_mode_max_tokens", "max"))


@dataclass(frozen=True)
class SentenceConfig:
    """How a sentence-transformers model turns its last hidden states into one vector."""

    pooling: str  # "mean" | "cls" | "max" | "none" (no pooling module, or one the lab lacks)
    normalize: bool  # a Normalize module follows: the vector is scaled to length 1
    max_seq_length: int | None  # the longest input (pieces) it was trained for, if it says


def _modules(path: Path) -> list[dict]:
    raw = read_json(path)
    if not isinstance(raw, list) or not all(isinstance(m, dict) for m in raw):
        raise CheckpointError(path, "must be a JSON list of modules")
    return raw


def _pooling(folder: Path, modules: list[dict]) -> str:
    """The one pooling mode the Pooling module's config switches on ("none" otherwise)."""
    module = next((m for m in modules if str(m.get("type", "")).endswith(".Pooling")), None)
    if module is None:
        return "none"
    path = folder / str(module.get("path", "")) / "config.json"
    if folder.resolve() not in path.resolve().parents:  # "../…" or an absolute path
        raise CheckpointError(folder / "modules.json", "the Pooling module's path must be a "
                              "folder inside the model folder")
    raw = read_json(path)
    if not isinstance(raw, dict):
        raise CheckpointError(path, "must be a JSON object")
    on = [name for key, name in _MODES if raw.get(key) is True]
    others = [k for k, v in raw.items() if k.startswith("pooling_mode_") and v is True
              and k not in dict(_MODES)]
    # several modes at once are concatenated by sentence-transformers: not one of ours
    return on[0] if len(on) == 1 and not others else "none"


def _max_seq_length(folder: Path) -> int | None:
    path = folder / "sentence_bert_config.json"
    if not path.is_file():
        return None
    raw = read_json(path)
    value = raw.get("max_seq_length") if isinstance(raw, dict) else None
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise CheckpointError(path, f"max_seq_length must be a positive integer, not {value!r}")
    return value


def sentence_config(folder: str | Path) -> SentenceConfig | None:
    """The folder's SentenceConfig, or None where it has no modules.json (not a
    sentence-transformers model). Malformed files raise CheckpointError naming the file."""
    folder = Path(folder)
    path = folder / "modules.json"
    if not path.is_file():
        return None
    modules = _modules(path)
    normalize = any(str(m.get("type", "")).endswith(".Normalize") for m in modules)
    return SentenceConfig(pooling=_pooling(folder, modules), normalize=normalize,
                          max_seq_length=_max_seq_length(folder))
