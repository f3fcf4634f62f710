"""What a checkpoint's card (card.json, Bundle.card) says about where the model came from.

The lab's translators and its language model are different kinds (the lm is a plain Hugging
Face folder), so "one of this project's own models" is not a kind: it is what the card
records. Both write the command this project ran to train them: a translator's card under
"command" (one command, or the list of its legs), the language model's under
training.command.
"""

from __future__ import annotations

import re
from typing import Any

# `python -m model.training.train …`, `python -m model.training.lm.train …`; `training.…`
# once the training room sits beside model/
OUR_TRAINING = re.compile(r"(?:^|\s)python3? -m (?:model\.)?training\.")


def training_commands(card: dict[str, Any] | None) -> list[str]:
    """The training commands a card records (empty when it records none)."""
    card = card if isinstance(card, dict) else {}
    found = [card.get("command")]
    training = card.get("training")
    if isinstance(training, dict):
        found.append(training.get("command"))
    commands: list[str] = []
    for value in found:
        commands += [value] if isinstance(value, str) else \
            [v for v in value if isinstance(v, str)] if isinstance(value, list) else []
    return commands


def trained_here(bundle: Any) -> bool:
    """Whether this project trained the model: its card records a command of the project's
    training room (the shipped translators and lm do; a downloaded folder, or a checkpoint
    saved without such a card, does not). A bundle without a card is not."""
    return any(OUR_TRAINING.search(c) for c in training_commands(getattr(bundle, "card", None)))
