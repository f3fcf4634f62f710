"""Built-in sentence sets (model/data/sentences_<language>.txt), and which one fits a model.

A model without a validation split (a Hugging Face folder) gets its detector averages over the
set in its own language. The language is read off the model's vocabulary, never its kind:
the share of a set's distinct words that are whole pieces of the vocabulary (with or without a
word mark: ▁ SentencePiece, Ġ byte-level BPE, bare WordPiece), lower-cased too for an uncased
tokenizer. The set with the largest share wins if at least MIN_COVERAGE of its words are
there; otherwise none fits (typed lines only).
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from ..backends import backend_for

DATA = Path(__file__).resolve().parents[1] / "data"
MIN_COVERAGE = 0.5
LANGUAGE_NAMES = {"en": "English", "ko": "Korean"}  # the file suffix's language, in words
WORD = re.compile(r"[^\W\d_]+")  # letters only: numbers and punctuation say nothing of a language


def available() -> list[str]:
    """Languages with a built-in set, by file name (sentences_en.txt -> 'en')."""
    return sorted(p.stem.split("_", 1)[1] for p in DATA.glob("sentences_*.txt"))


@lru_cache(maxsize=8)
def sentences(language: str) -> tuple[str, ...]:
    """One built-in set's lines (comments and blank lines left out)."""
    path = DATA / f"sentences_{language}.txt"
    if not path.is_file():
        raise ValueError(f"no built-in sentence set for {language!r} (have {available()})")
    lines = path.read_text(encoding="utf-8").splitlines()
    return tuple(s.strip() for s in lines if s.strip() and not s.lstrip().startswith("#"))


def coverage(vocabulary: set[str], language: str) -> float:
    """Share of the set's distinct words found whole in the vocabulary (0..1)."""
    words = {w for line in sentences(language) for w in WORD.findall(line)}
    if not words:
        return 0.0
    found = sum(1 for w in words
                if any(f"{mark}{form}" in vocabulary for form in (w, w.lower())
                       for mark in ("", "▁", "Ġ")))
    return found / len(words)


def builtin_language(bundle) -> str | None:
    """The built-in set's language that the model's vocabulary covers best, or None."""
    vocabulary = set(backend_for(bundle).vocabulary())
    best, share = None, MIN_COVERAGE
    for language in available():
        c = coverage(vocabulary, language)
        if c >= share:
            best, share = language, c
    return best


def builtin_lines(bundle) -> list[str]:
    """The built-in set in the model's language ([] when none fits its vocabulary)."""
    language = builtin_language(bundle)
    return list(sentences(language)) if language else []
