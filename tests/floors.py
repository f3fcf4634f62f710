"""The shipped models' floors, read from tests/data/floors.toml (one place; see its header).

    from tests.floors import floor, holds
    assert holds("translator_en_ko_exact", card_value)
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass

from tests.conftest import ROOT

FILE = ROOT / "tests" / "data" / "floors.toml"


@dataclass(frozen=True)
class Floor:
    name: str
    bound: str  # "min" or "max"
    value: float
    original: float
    source: str
    unit: str
    read_by: str
    applies: tuple[str, ...]
    why: tuple[str, ...] = ()
    strict: bool = False

    def holds(self, figure: float) -> bool:
        """Whether a measured figure meets this floor."""
        if self.bound == "min":
            return figure > self.value if self.strict else figure >= self.value
        return figure < self.value if self.strict else figure <= self.value

    def loosened(self) -> bool:
        """Whether the value lets through more than the original did."""
        return self.value < self.original if self.bound == "min" else self.value > self.original


def floors() -> dict[str, Floor]:
    """Every floor of the file, by name."""
    raw = tomllib.loads(FILE.read_text(encoding="utf-8"))
    return {name: Floor(name=name, bound=e["bound"], value=float(e["value"]),
                        original=float(e["original"]), source=e["source"], unit=e["unit"],
                        read_by=e["read_by"], applies=tuple(e["applies"]),
                        why=tuple(e.get("why", ())), strict=bool(e.get("strict", False)))
            for name, e in raw.items()}


def floor(name: str) -> float:
    """One floor's value."""
    return floors()[name].value


def holds(name: str, figure: float) -> bool:
    """Whether `figure` meets the floor `name` (its bound and strictness)."""
    return floors()[name].holds(figure)
