"""The training recipe as legs: each leg trains to its last step on its own data mix.

A leg is written END:RANDOM_SHARE:TEXT, e.g. "1500:0.5:packed" (train until step 1,500 with
half the rows repeated random runs and the rest packed short paragraphs; text modes are in
text.MODES). A schedule is legs separated by spaces or commas; every leg after the first goes
on from the last one's fp16 snapshot with a fresh optimizer, as the shipped run did.
"""

from __future__ import annotations

from dataclasses import dataclass

from .text import MODES

# checkpoints/lm's recipe. Legs 1-3 were run as three commands (see its training/train.log);
# leg 4 (story text, for in-context learning on long paragraphs) resumed from step 2,800.
RECIPE = "1500:0.5:packed 2100:0.8:packed 2800:0.3:packed 3400:0.3:story"


@dataclass(frozen=True)
class Leg:
    """Train until step `end` on this mix."""

    end: int
    random_share: float
    text: str

    def __str__(self) -> str:
        return f"{self.end}:{self.random_share:g}:{self.text}"


def parse(schedule: str) -> list[Leg]:
    """Legs from "END:SHARE:TEXT ..."; ends must rise, shares lie in [0, 1]."""
    legs = []
    for part in schedule.replace(",", " ").split():
        try:
            end, share, mode = part.split(":")
            leg = Leg(int(end), float(share), mode)
        except ValueError:
            raise ValueError(f"leg {part!r} is not END:RANDOM_SHARE:TEXT") from None
        if mode not in MODES or not 0 <= leg.random_share <= 1:
            raise ValueError(f"leg {part!r}: text is one of {MODES}, the share in [0, 1]")
        if legs and leg.end <= legs[-1].end:
            raise ValueError(f"leg {part!r} ends no later than the leg before it")
        legs.append(leg)
    if not legs:
        raise ValueError("the schedule holds no leg")
    return legs


def remaining(legs: list[Leg], resume_from: int) -> list[tuple[int, Leg]]:
    """(start step, leg) for each leg still to train when going on from resume_from."""
    starts = [0, *(leg.end for leg in legs[:-1])]
    todo = [(max(s, resume_from), leg) for s, leg in zip(starts, legs) if leg.end > resume_from]
    if not todo:
        raise ValueError(f"every leg ends by step {resume_from}")
    return todo
