"""Hugging Face folders as a backend: loading (load.py), recording into a Trace (record.py,
recorder.py), and HFBackend (backend.py), the one face the rest of the code sees."""

from .backend import HFBackend
from .load import HFConfig, listed_models, load_hf, resolve_model_ref
from .record import capture_hf
from .recorder import instrumented

__all__ = ["HFBackend", "HFConfig", "capture_hf", "instrumented", "listed_models", "load_hf",
           "resolve_model_ref"]
