"""The lab's own encoder–decoder Transformer (checkpoints/, save_checkpoint) as a backend."""

from .backend import LabBackend

__all__ = ["LabBackend"]
