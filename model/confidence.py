"""How sure a greedy translation is, and the threshold below which the lab says so.

confidence = geometric mean of the chosen pieces' probabilities (eos step included):
exp(mean(log p_t)). One wrong guess anywhere pulls it down, while its length does not.

Coverage term (issue 42): the models were often sure of fluent inventions for words they never
saw. So a lab checkpoint's confidence is multiplied by COVERAGE for each source word outside its
training corpus (corpus_words.txt, the same rule as the out-of-lexicon notice) that the output
does not copy through: such a word was translated by guessing, or dropped. A copied-through
unknown noun (I like blorvit. -> 저는 blorvit을 좋아해요.) costs nothing: the model said less.
The threshold is calibrated per checkpoint on sentences written for that purpose outside the
training grammar (tests/data/confidence_calibration.tsv) by `python -m
training.calibrate`, which stores it in the checkpoint's card.json under "confidence".

Issue 58 adds a second alarm beside this one: a combination of six signals (round trip,
agreement with the partner checkpoint, …) in model/confidence_signals.py, whose notice names
the signal that fired. This measure stays as it is: the notice still rings when it is low.
"""

from __future__ import annotations

import math
from collections.abc import Sequence, Set

# One uncovered word halves the confidence: set before measuring, not fitted to any test set
COVERAGE = 0.5
# Used when a checkpoint's card has no calibrated threshold (a model trained elsewhere).
DEFAULT_THRESHOLD = 0.85
# Calibration rule: the highest threshold that flags at most this share of the calibration
# set's exactly right outputs. A lecturer should rarely see a notice on a correct translation.
MAX_FALSE_ALARM = 0.05


def geometric_mean(probs: Sequence[float]) -> float:
    """exp(mean(log p)) of the chosen pieces' probabilities; 0.0 for no steps."""
    if not probs:
        return 0.0
    return math.exp(sum(math.log(max(float(p), 1e-12)) for p in probs) / len(probs))


# the core reads no training code: the particles and the word rule of the out-of-lexicon notice
# (training/knowledge.py) are restated here, a little more lenient (any known stem)
_PARTICLES = ("이었어요", "였어요", "이에요", "예요", "에서", "으로", "은", "는", "이", "가", "을",
              "를", "와", "과", "에", "로", "의", "들", "만", "도")
_PUNCT = ".,?!\"'()[]{}:;"


def _is_known(word: str, known: Set[str]) -> bool:
    if word in known or not any(ch.isalpha() for ch in word):
        return True
    if "-" in word and all(part in known for part in word.split("-") if part):
        return True
    return any(word.endswith(p) and word[: -len(p)] in known for p in _PARTICLES)


def uncovered_words(source: str, output: str, known: Set[str] | None) -> list[str]:
    """Words of source the corpus word set lacks and output does not contain (a Korean word
    counts as copied when it is there without its particle); [] when known is None."""
    if not known:
        return []
    have = output.lower()
    out: list[str] = []
    for raw in source.split():
        word = raw.strip(_PUNCT).lower()
        if not word or word in out or _is_known(word, known):
            continue
        cores = [word] + [word[: -len(p)] for p in _PARTICLES
                          if word.endswith(p) and len(word) - len(p) >= 2]
        if not any(core in have for core in cores):
            out.append(word)
    return out


def threshold(card: dict) -> float:
    """The checkpoint's calibrated threshold (card.json "confidence"), else the default."""
    entry = card.get("confidence") if isinstance(card, dict) else None
    value = entry.get("threshold") if isinstance(entry, dict) else None
    return float(value) if isinstance(value, int | float) and 0 < value < 1 else DEFAULT_THRESHOLD


def calibrate(scores: Sequence[float], exact: Sequence[bool],
              max_false_alarm: float = MAX_FALSE_ALARM) -> float:
    """Highest threshold t such that at most max_false_alarm of the exact outputs score < t."""
    right = sorted(s for s, e in zip(scores, exact, strict=True) if e)
    if not right:
        raise ValueError("calibration needs at least one exactly right output")
    allowed = math.floor(max_false_alarm * len(right))  # exact outputs that may fall below
    return right[allowed]


def auroc(scores: Sequence[float], exact: Sequence[bool]) -> float:
    """Chance that an exact output scores above a wrong one (ties count half)."""
    pos = [s for s, e in zip(scores, exact, strict=True) if e]
    neg = [s for s, e in zip(scores, exact, strict=True) if not e]
    if not pos or not neg:
        raise ValueError("AUROC needs both exact and wrong outputs")
    wins = sum(1.0 if p > n else 0.5 if p == n else 0.0 for p in pos for n in neg)
    return wins / (len(pos) * len(neg))
