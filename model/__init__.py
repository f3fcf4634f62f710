"""The attention lab's model package: the public API for the app, notebooks and tests."""

import os

# Before torch loads its OpenMP runtime (which reads this once): idle worker threads sleep
# instead of spinning. With the default spinning, two torch threads on a busy 2-core machine
# made the query-key map's first build 31.6 s instead of 1.8 s and the validation statistics
# 27.8 s instead of 1.7 s (bench_app first_builds). An operator's own setting wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from .backends.lab.checkpoint import save_checkpoint  # noqa: E402
from .backends.lab.config import ModelConfig  # noqa: E402
from .backends.lab.tokenizer import Tokenizer, TokenizerError  # noqa: E402
from .backends.lab.transformer import Transformer  # noqa: E402
from .capture import Trace  # noqa: E402
from .checkpoint import Bundle, CheckpointError  # noqa: E402
from .decode import Translation  # noqa: E402
from .dispatch import (  # noqa: E402
    capture,
    capture_long,
    embed,
    generate,
    load_checkpoint,
    translate,
)
from .hooks import KINDS, HookPoint, format_ablate, hooks, parse_ablate  # noqa: E402
from .long import LONG_CAP, LONG_FROM, LongTrace  # noqa: E402

__all__ = [
    "KINDS", "LONG_CAP", "LONG_FROM", "Bundle", "CheckpointError", "HookPoint", "LongTrace",
    "ModelConfig", "Tokenizer", "TokenizerError", "Trace", "Transformer", "Translation", "capture",
    "capture_long", "embed", "format_ablate", "generate",
    "hooks", "load_checkpoint", "parse_ablate", "save_checkpoint", "translate",
]
