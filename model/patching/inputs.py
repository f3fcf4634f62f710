"""Checks and choices shared by the lab and Hugging Face setups: equal piece counts, the step."""

from __future__ import annotations

from collections.abc import Callable, Sequence


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
