"""`make run`'s server: Streamlit's own command line, with a warm-up started first (issue 40).

Streamlit imports app.py's modules and loads a model only when the first page asks for them:
on the GPT-2 shape that is about 6 s of imports (torch, Streamlit, plotly, transformers' model
code) and loading, paid by whoever opens the first page. `python -m ui.serve run app.py ...`
takes the same arguments as `python -m streamlit run app.py ...`, but first starts a thread
that does that work while the server starts and nobody waits: it imports the app's modules and
loads the default model and the ones ATTN_MODELS lists (at most WARM_MODELS), into the same
process-wide cache the pages read (ui/runtime.load_bundle). A page opened meanwhile waits on
that cache's lock for the model it needs, as it would have without the warm-up.

`warm_up()` is the thread's work, callable on its own (bench_hf.cold_open times it).
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from pathlib import Path

LOG = logging.getLogger("attention_lab")

WARM_MODELS = 3  # models loaded ahead, the default first: each stays in memory like a page's


def warm_folders() -> list[Path]:
    """The default model (the picker's first) and the ones ATTN_MODELS lists, at most
    WARM_MODELS, in the picker's order."""
    from model.backends import listed_models
    from ui.catalog import model_folders

    folders = model_folders()
    listed = set(listed_models())
    names = [n for i, n in enumerate(folders) if i == 0 or n in listed]
    return [folders[n] for n in names[:WARM_MODELS]]


def warm_up() -> dict[str, float]:
    """Import what a page imports, then load the warm folders; seconds per stage.

    A folder that fails to load is logged and skipped: the page that opens it says why.
    """
    marks, t = {}, time.perf_counter()
    # what app.py imports (ui must not import app; tests/unit/test_serve.py keeps this true)
    import ui.download
    import ui.sidebar
    import ui.state
    import ui.views  # noqa: F401  every view's module, and through them viz/ and plotly
    from ui import runtime
    from ui.catalog import folder_stamp

    marks["imports"] = time.perf_counter() - t
    for folder in warm_folders():
        t = time.perf_counter()
        try:
            # beneath ui.spinning's wrapper: no page to show a spinner on
            runtime.load_bundle.__wrapped__(str(folder), folder_stamp(folder))
        except Exception:  # a bad folder must not stop the server; its page reports it
            LOG.exception("warm-up: %s did not load", folder)
            continue
        marks[f"load {folder.name}"] = time.perf_counter() - t
    return {k: round(v, 2) for k, v in marks.items()}


def _warm_in_background() -> None:
    """warm_up(), its stages printed beside Streamlit's own start-up lines; never raises."""
    try:
        stages = warm_up()
    except Exception:  # e.g. a settings error: app.py shows it on the page
        LOG.exception("warm-up failed")
        return
    print("  Warm-up done: " + ", ".join(f"{k} {v:.1f} s" for k, v in stages.items()),
          flush=True)


def main() -> None:
    """Start the warm-up thread, then hand the command line to Streamlit's."""
    # Streamlit is imported before the thread starts: both threads importing it at once once
    # stopped a cluster replica at start (importlib's _DeadlockError on streamlit.web, CI)
    from streamlit.web import cli

    threading.Thread(target=_warm_in_background, name="warm-up", daemon=True).start()

    sys.argv[0] = "streamlit"
    cli.main()


if __name__ == "__main__":
    main()
