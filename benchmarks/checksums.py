"""Checksums of the shipped checkpoints' Traces and translations, to prove a refactor changed
nothing: `python -m benchmarks.checksums > before.txt`, edit, run again, `diff` the two.

Every array of every Trace (and every token list, source, target, cut count) is hashed, for
fixed sentences in both directions, with and without knocked-out heads and teacher forcing.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import numpy as np

from model import capture, load_checkpoint, translate

ROOT = Path(__file__).resolve().parents[1]
SENTENCES = ["The cat eats fish.", "Winter is cold.", "겨울은 추워요.",
             "고양이는 생선을 먹어요. 큰 개가 공원에서 책을 읽어요."]
CASES = [  # (sentences, targets, target_lang, ablate)
    (SENTENCES[:2], None, None, ""),
    (SENTENCES[2:], None, "auto", ""),
    (SENTENCES, None, "auto", "enc_self:0:1,cross:1:0"),
    (SENTENCES[:1], ["고양이는 생선을 먹어요."], "ko", ""),
    (SENTENCES[2:3], None, "en", ""),
]


def _digest(value) -> str:
    """A stable hash of an array (dtype, shape, bytes) or of anything JSON can write."""
    h = hashlib.sha256()
    if isinstance(value, np.ndarray):
        h.update(f"{value.dtype}{value.shape}".encode())
        h.update(np.ascontiguousarray(value).tobytes())
    else:
        h.update(json.dumps(value, sort_keys=True, default=str, ensure_ascii=False).encode())
    return h.hexdigest()[:16]


def trace_lines(trace) -> list[str]:
    """One `field[key]: hash` line per array or value of a Trace."""
    out = []
    for name, value in sorted(vars(trace).items()):
        if isinstance(value, dict):
            for key in sorted(value):
                out.append(f"{name}[{key}]: {_digest(value[key])}")
        elif isinstance(value, frozenset):
            out.append(f"{name}: {_digest(sorted(value))}")
        else:
            out.append(f"{name}: {_digest(value)}")
    return out


def main() -> None:
    """Print the checksums of paper and seed001 on CASES."""
    for ckpt in ("paper", "seed001"):
        bundle = load_checkpoint(ROOT / "checkpoints" / ckpt)
        for i, (src, tgt, lang, ablate) in enumerate(CASES):
            trace = capture(bundle, src, tgt, target_lang=lang, ablate=ablate)
            for line in trace_lines(trace):
                print(f"{ckpt} case{i} {line}")
            for t in translate(bundle, src, lang, ablate=ablate):
                print(f"{ckpt} case{i} translate: {_digest(vars(t))}")
        for names in (["attn"], ["attn", "hidden", "norms"], ["q", "k", "logits"]):
            trace = capture(bundle, SENTENCES, target_lang="auto", names=names)
            for line in trace_lines(trace):
                print(f"{ckpt} names={'+'.join(names)} {line}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
