"""Figures for the attention lab: pure functions from a Trace to plotly figures (or HTML).

One module per view family (tokens, masks, attention, steps, positional, embeddings,
translation, …), with shared helpers in common. Nothing here imports streamlit or runs the
model; app.py lays the figures out.
"""
