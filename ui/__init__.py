"""The Streamlit side of the lab: sidebar, URL state, shared widgets, runtime caches and
one module per view (ui/views). app.py is the entry point; viz/ draws, model/ computes."""
