"""The models the checkpoint picker offers: the shipped checkpoints folder plus ATTN_MODELS."""

from __future__ import annotations

from pathlib import Path

from model import Bundle
from model.backends import MINILM_FOLDER, listed_models, minilm_status
from model.settings import settings
from ui.context import folder_key
from ui.runtime import load_bundle

ROOT = Path(__file__).resolve().parents[1]


def model_folders() -> dict[str, Path]:
    """Every folder with a config.json in ATTN_CHECKPOINTS_DIR, then those ATTN_MODELS lists
    (model.backends.listed_models: the one reading of that variable); "paper" first, then by name.
    The first folder of a name wins."""
    root = settings().checkpoints_dir
    root = root if root.is_absolute() else ROOT / root
    found: dict[str, Path] = {}
    if root.is_dir():  # MiniLM only as `make` verified it (an unverified one: the similarity
        # view says how to get it)
        found.update((p.name, p) for p in sorted(root.iterdir()) if (p / "config.json").is_file()
                     and not (p.name == MINILM_FOLDER and minilm_status(p) is not None))
    for name, folder in listed_models().items():
        found.setdefault(name, folder)
    order = sorted(found, key=lambda n: (n != "paper", n))
    return {name: found[name] for name in order}


def folder_stamp(folder: Path) -> float:
    """Changes when a checkpoint is rewritten, so the cached model is reloaded."""
    times = [p.stat().st_mtime for p in folder.iterdir() if p.is_file()]
    return max(times, default=0.0)


def open_folder(folder: Path) -> tuple[Bundle, str]:
    """The model of a checkpoint folder (cached for every session) and its cache key."""
    stamp = folder_stamp(folder)
    return load_bundle(str(folder), stamp), folder_key(folder, stamp)
