"""Hugging Face folders: loading (load.py) and recording into a Trace (record.py)."""

from .load import HFConfig, listed_models, load_hf, resolve_model_ref
from .record import capture_hf
from .recorder import instrumented

__all__ = ["HFConfig", "capture_hf", "instrumented", "listed_models", "load_hf",
           "resolve_model_ref"]
