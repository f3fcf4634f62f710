"""The soak's long-mode inputs (issue 41): a random long-context model built for the soak, and
a long text pasted into its attention view the way a student does."""

from __future__ import annotations

from pathlib import Path

from benchmarks.big_models import build
from benchmarks.soak_common import LONG_MODEL


def long_model(folder: Path) -> Path:
    """folder/LONG_MODEL: a random rotary model (2 layers, 4 query heads on 2 key/value heads,
    64 wide, word-level pieces) reading up to 40,000 positions; long mode's inputs go to it."""
    return build(folder / LONG_MODEL, "llama", layers=2, heads=4, kv=2, hidden=64,
                 positions=40_000, ffn=128)


def long_input(at, text: str, words: str) -> bool:
    """A long text pasted into the attention view of LONG_MODEL: the view first (its long-text
    box exists only there), then the text, in a second rerun, as a student does. True when
    the page then says it is in long mode."""
    if at.selectbox(key="ckpt").value != LONG_MODEL:
        at.selectbox(key="ckpt").select(LONG_MODEL)
    at.text_area(key="text").input(text)
    at.text_input(key="ablate").input("")
    at.radio(key="view").set_value("attention")
    at.run()
    if at.exception:
        return False
    at.text_area(key="long_text").input(words).run()
    return any(str(box.value).startswith("Long mode:") for box in at.info)
