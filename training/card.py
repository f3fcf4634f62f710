"""The one card writer: the command-line tools that store a figure in a checkpoint's
card.json (evaluate, textbook_eval, newcomer_eval, calibrate, confidence_fit) read the card,
set one entry and write it back here, so the file keeps one format (2-space indent, UTF-8
text unescaped, a final newline)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

CARD = "card.json"


def store(folder: str | Path, keys: str | tuple[str, ...], value: Any) -> Path:
    """Set card[k1][k2]...[kn] = value in folder/card.json (a missing card or intermediate
    entry starts empty; other entries are kept as they are) and return the card's path."""
    path = Path(folder) / CARD
    card = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    *outer, last = (keys,) if isinstance(keys, str) else keys
    entry = card
    for key in outer:
        entry = entry.setdefault(key, {})
    entry[last] = value
    path.write_text(json.dumps(card, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path
