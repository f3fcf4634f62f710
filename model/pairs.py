"""A clean/corrupted pair made ready to run (Setup), and the checks every backend's
`patch_setup` shares: equal piece counts, nothing differing, the decoder step.

model/patching runs a Setup; each backend (model/backends/*/patching.py) builds one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import torch

from .batch import Batch


@dataclass
class Setup:
    """One clean/corrupted pair made ready to run by a backend's patch_setup."""

    run: Callable[[Sequence[str], bool], torch.Tensor]  # (which input per row, grad) ->
    # (R, X) readout; a row is "clean" or "corrupted"
    kinds: dict[str, int]  # attention kind -> layers
    sides: dict[str, int]  # "enc"/"dec" -> blocks L
    lengths: dict[str, int]  # side -> positions n
    n_heads: int
    clean_ids: list[int]
    corrupted_ids: list[int]
    position: int  # decoder position of the metric; -1 for an encoder-only model
    pieces: dict[str, list[str]] = field(default_factory=dict)  # side -> pieces on the axis
    outputs: tuple[str, str] = ("", "")  # what the model writes for clean and corrupted
    step: int | None = None
    corrupted_pieces: dict[str, list[str]] = field(default_factory=dict)
    lm: bool = True  # readout is logits (metric: answer − wrong); else a pooled state
    cosine: bool = False  # not lm: the readout is the model's sentence embedding, and the
    #                       metric its cosine to the clean run's (a sentence-embedding model)
    id_to_piece: Callable[[int], str] = str
    token_id: Callable[[str], int] | None = None  # a typed answer/wrong piece -> its id
    never: tuple[int, ...] = ()  # ids the model never writes (pad, bos, language tags)
    prefix: bool = False  # blocks before a chunk's first patched one may run on one row


def check_same_length(clean: Sequence[int], corrupted: Sequence[int],
                      pieces: Callable[[Sequence[int]], list[str]], what: str) -> None:
    """Clean and corrupted must line up piece by piece; say which pieces differ if not."""
    if len(clean) == len(corrupted):
        return
    a, b = pieces(clean), pieces(corrupted)
    first = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    raise ValueError(
        f"the clean and corrupted {what} must have the same number of pieces: clean has "
        f"{len(a)} ({' '.join(a)}), corrupted has {len(b)} ({' '.join(b)}); they first differ "
        f"at piece {first + 1}: clean {' '.join(a[first:first + 3]) or '(end)'} vs corrupted "
        f"{' '.join(b[first:first + 3]) or '(end)'}. Change one word for one word of as many "
        "pieces")


def pair_batch(encoded: Batch | None, clean: str, corrupted: str,
               langs: tuple[str | None, ...] | None = None) -> Batch | None:
    """`encoded` when it is these two sentences tokenized already (the page's own Batch,
    encode(bundle, [clean, corrupted])) with no targets, and with `langs` where given, so a
    backend reads its ids instead of tokenizing them again; else None."""
    if encoded is None or encoded.targets is not None \
            or tuple(encoded.sources) != (clean, corrupted):
        return None
    return encoded if langs is None or tuple(encoded.langs) == tuple(langs) else None


def pair_decoded(decoded: Sequence | None, clean: str, corrupted: str,
                 langs: tuple[str | None, ...]) -> list | None:
    """`decoded` when it is a translation of exactly these two sentences, in order, into
    `langs` (the page's cached greedy decode of the pair); else None."""
    if decoded is None or [getattr(t, "source", None) for t in decoded] != [clean, corrupted] \
            or tuple(getattr(t, "target_lang", None) for t in decoded) != tuple(langs):
        return None
    return list(decoded)


def nothing_differs(pieces: list[str]) -> ValueError:
    return ValueError(f"nothing differs: the clean and corrupted inputs are the same pieces "
                      f"({' '.join(pieces)}); change a word in the corrupted one")


def first_difference(a: Sequence[int], b: Sequence[int]) -> int:
    """First index where two outputs differ (the end of the shorter one if one is a prefix of
    the other); 0 when they are the same."""
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return min(len(a), len(b)) if len(a) != len(b) else 0


def checked_step(step: int | None, default: int, length: int) -> int:
    """The decoder step of the metric: 0..length (step `length` predicts end of sentence)."""
    step = default if step is None else int(step)
    if not 0 <= step <= length:
        raise ValueError(f"step must be between 0 and {length} (the target has {length} "
                         f"pieces), not {step}")
    return step
