"""Figures for the attention lab: pure functions from a Trace to plotly figures (or HTML).

One module per view family (tokens, masks, attention, steps, positional, embeddings,
translation, …), with shared helpers in common. Nothing here imports streamlit or runs the
model; app.py lays the figures out.
"""

__all__ = ["all_names", "figures", "show"]


def __getattr__(name: str):
    """`from viz import show` (notebooks) without importing every view for other callers."""
    if name in __all__:
        from . import notebook

        return getattr(notebook, name)
    raise AttributeError(f"module 'viz' has no attribute {name!r}")
