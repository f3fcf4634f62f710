"""The hand-written test sets in tests/data, read in one place.

textbook_<area>.tsv: direction (en-ko | ko-en), source, reference, construction; scored by
textbook_eval. newcomer_<set>.tsv (issue 42): the same columns; scored by newcomer_eval.
confidence_calibration.tsv and confidence_eval.tsv: source, reference; used by calibrate.
corpus.splits counts every sentence of them as taken (held_out), so no split holds one. Pure
standard library, like the corpus.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "tests" / "data"
CALIBRATION = DATA / "confidence_calibration.tsv"
EVALUATION = DATA / "confidence_eval.tsv"
DIRECTIONS = {"en-ko": "ko", "ko-en": "en"}  # file direction -> target language


@dataclass(frozen=True)
class Row:
    """One textbook sentence: its area (file), direction, source, reference, construction."""

    area: str
    direction: str
    source: str
    reference: str
    construction: str


def _lines(path: Path):
    """(line number, line) of a TSV's rows; blank and '#' lines are skipped."""
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip() and not line.startswith("#"):
            yield n, line


def read_sets(folder: str | Path = DATA, prefix: str = "textbook_") -> list[Row]:
    """Every <prefix>*.tsv row (textbook_ or newcomer_); malformed rows raise ValueError
    naming the line."""
    rows = []
    for path in sorted(Path(folder).glob(f"{prefix}*.tsv")):
        area = path.stem.removeprefix(prefix)
        for n, line in _lines(path):
            cells = line.split("\t")
            if len(cells) != 4 or cells[0] not in DIRECTIONS or not all(c.strip() for c in cells):
                raise ValueError(f"{path.name}:{n}: want direction, source, reference, "
                                 f"construction, tab-separated")
            rows.append(Row(area, *(c.strip() for c in cells)))
    return rows


def read_set(path: Path) -> list[tuple[str, str]]:
    """(source, reference) rows of a confidence set."""
    rows = []
    for _, line in _lines(path):
        source, reference = line.split("\t")
        rows.append((source.strip(), reference.strip()))
    return rows


def held_out(folder: Path = DATA) -> frozenset[str]:
    """Every source and reference of the test sets (empty where they are absent: an installed
    app reads its checkpoint's val_pairs.tsv and never draws the corpus)."""
    pairs = [(r.source, r.reference) for prefix in ("textbook_", "newcomer_")
             for r in read_sets(folder, prefix)]
    for path in sorted(folder.glob("confidence_*.tsv")):
        pairs += read_set(path)
    return frozenset(s for pair in pairs for s in pair)
