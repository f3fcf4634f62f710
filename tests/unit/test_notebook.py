"""docs/notebook.ipynb runs top to bottom in a local kernel, offline, with no error output."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "docs" / "notebook.ipynb"

nbformat = pytest.importorskip("nbformat", reason="dev requirement (requirements-dev.txt)")
nbclient = pytest.importorskip("nbclient", reason="dev requirement (requirements-dev.txt)")
pytest.importorskip("ipykernel", reason="dev requirement (requirements-dev.txt)")


def _problems(nb) -> list[str]:
    """Error outputs and tracebacks printed to stderr, cell by cell."""
    found = []
    for i, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                found.append(f"cell {i}: {out.get('ename')}: {out.get('evalue')}")
            elif out.get("name") == "stderr" and ("Traceback" in out.get("text", "")
                                                 or "Error" in out.get("text", "")):
                found.append(f"cell {i}: stderr: {out['text'][:300]}")
    return found


def test_notebook_runs_offline_without_errors(monkeypatch):
    if not (ROOT / "checkpoints" / "paper" / "model.safetensors").is_file():
        pytest.skip("the shipped paper checkpoint is not here")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(nb)
    # the kernel inherits this environment: no hub, no network, one thread for the shared CPU
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("OMP_NUM_THREADS", os.environ.get("OMP_NUM_THREADS", "1"))
    client = nbclient.NotebookClient(
        nb, timeout=180, kernel_name="python3", allow_errors=False,
        resources={"metadata": {"path": str(NOTEBOOK.parent)}})
    client.execute()
    assert not _problems(nb), _problems(nb)
    kinds = {o.get("output_type") for c in nb.cells for o in c.get("outputs", [])}
    assert "display_data" in kinds  # the views were drawn inline
    shown = [c for c in nb.cells if c.cell_type == "code" and "show(" in c.source]
    assert len(shown) >= 4 and all(c.outputs for c in shown)


def test_show_builds_every_view_from_a_trace(bundle):
    from model import capture
    from viz import all_names, figures, show
    from viz.notebook import VIEWS, HtmlPage, Shown

    trace = capture(bundle, ["the cat eats fish .", "winter is cold ."], names=all_names(bundle))
    for view in VIEWS:
        figs = figures(trace, view, bundle=bundle, kind="enc_self", layer=1, head=2, b=1)
        assert figs, view
    # the one-head figure is exactly the recorded probabilities of that head (pad rows hidden)
    head = figures(trace, "attention", kind="enc_self", layer=1, head=2, b=1)[0]
    n = trace.length("src", 1)
    np.testing.assert_array_equal(np.asarray(head.data[0].z, dtype=np.float32),
                                  trace.attn["enc_self"][1, 1, 2, :n, :n])
    shown = show(trace, "bertviz")
    assert isinstance(shown, Shown) and isinstance(shown[0], HtmlPage)
    assert 'sandbox="allow-scripts"' in shown[0]._repr_html_()
    with pytest.raises(ValueError, match="unknown view"):
        figures(trace, "nope")
    with pytest.raises(ValueError, match="head 9"):
        figures(trace, "attention", head=9)
    with pytest.raises(ValueError, match="needs bundle"):
        figures(trace, "steps")


def test_shown_draws_each_figure_once_in_ipython(bundle):
    from IPython.core.interactiveshell import InteractiveShell

    from model import capture
    from viz import show

    trace = capture(bundle, ["the cat eats fish ."])
    shell = InteractiveShell.instance()
    drawn = []
    shell.display_pub.publish = lambda data, **kw: drawn.append(data)
    shown = show(trace, "attention", kind="dec_self", layer=0, head=0)
    shell.displayhook(shown)
    plots = [d for d in drawn if "application/vnd.plotly.v1+json" in d
             or "Plotly.newPlot" in d.get("text/html", "")]
    assert len(plots) == len(shown) == 3  # (plotly may publish its loader once before)
