"""What main() hands to a view (Ctx) and the messages it collects on the way (Notes).

Defined here, in a module imported once per server process, the dataclasses are built once;
app.py itself is executed afresh on every rerun.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import streamlit as st

from model import Bundle, Trace


@dataclass
class Notes:
    """Messages collected while reading the URL and the inputs, shown above the view."""

    warnings: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def show(self) -> None:
        for text in self.errors:
            st.error(text)
        for text in self.warnings:
            st.warning(text)


@dataclass
class Ctx:
    """Everything a view needs: the model, its Trace and the display options."""

    bundle: Bundle
    key: str  # cache key of the checkpoint
    trace: Trace
    lines: tuple[str, ...]
    targets: tuple[str, ...] | None
    lang: str
    ablate: str
    b: int
    hide_pad: bool
    numbers: bool
    colorscale: str
    fmt: str
    needs: frozenset[str] = frozenset()  # the hook groups recorded for this view (its needs)


def folder_key(folder: object, stamp: float) -> str:
    """The cache key of a checkpoint folder at one version: 'folder@stamp'."""
    return f"{folder}@{stamp}"


def key_folder(key: str) -> tuple[str, float] | None:
    """(folder, stamp) back from folder_key's key; None for a key not made by it."""
    folder, _sep, stamp = key.rpartition("@")
    try:
        return folder, float(stamp)
    except ValueError:
        return None


def trace_key(ctx: Ctx) -> tuple:
    """What identifies ctx.trace in a cache: checkpoint, input, language, ablation."""
    return ctx.key, ctx.lines, ctx.targets, ctx.lang, ctx.ablate
