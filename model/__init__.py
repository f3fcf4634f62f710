"""The attention lab's model package: the public API for the app, notebooks and tests."""

from .capture import Trace
from .checkpoint import Bundle, CheckpointError, save_checkpoint
from .config import ModelConfig
from .decode import Translation
from .dispatch import capture, load_checkpoint, translate
from .hooks import KINDS, HookPoint, format_ablate, hooks, parse_ablate
from .tokenizer import Tokenizer, TokenizerError
from .transformer import Transformer

__all__ = [
    "KINDS", "Bundle", "CheckpointError", "HookPoint", "ModelConfig", "Tokenizer",
    "TokenizerError", "Trace", "Transformer", "Translation", "capture", "format_ablate",
    "hooks", "load_checkpoint", "parse_ablate", "save_checkpoint", "translate",
]
