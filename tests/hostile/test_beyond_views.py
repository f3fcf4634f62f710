"""Beyond weights in the app (AppTest): the α / ‖αf(x)‖ toggle in the attention and bertviz
views, head contributions (view=contrib), information flow (view=flow) and the global
query–key map (view=qkmap), each opened from a link and under the hostile input subset.

Lives with the hostile suite to run on its tiny random checkpoint (tests/hostile/conftest.py),
so it needs no shipped checkpoint; the query–key map reads 24 corpus sentences instead of 300.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.hostile.inputs import EVERY_VIEW, NORMAL
from tests.hostile.test_app_hostile import check_page, fresh, messages
from training.corpus import generate

NEW_VIEWS = ["contrib", "flow", "qkmap"]


@pytest.fixture(autouse=True)
def _small_map(monkeypatch):
    """The map's sentences from a small generated list, not the 200,000-pair split."""
    import ui.runtime as runtime
    import ui.views.qkmap as view

    monkeypatch.setattr(runtime, "val_split", lambda *a: generate(24, seed=3))
    monkeypatch.setattr(view, "N_SENTENCES", 24)
    runtime.qkmap_cache.clear()


def figures(at) -> list[dict]:
    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")]


def heatmap_z(fig: dict) -> np.ndarray:
    z = fig["data"][0]["z"]
    if isinstance(z, dict):  # plotly's binary array encoding
        import base64

        raw = np.frombuffer(base64.b64decode(z["bdata"]), dtype=z["dtype"])
        return raw.reshape([int(s) for s in str(z["shape"]).split(",")])
    return np.asarray(z, dtype=float)


@pytest.mark.parametrize("view", NEW_VIEWS)
def test_each_new_view_opens_from_a_link(checkpoints, view):
    at = fresh(view, {"text": NORMAL})
    assert not at.exception and not at.error, (view, messages(at))
    assert at.radio(key="view").value == view
    assert at.get("plotly_chart"), view


def test_the_toggle_opens_from_a_link_and_changes_the_heatmap(checkpoints):
    weights = fresh("attention", {"text": NORMAL, "kind": "cross", "layer": "1", "head": "2"})
    norms = fresh("attention", {"text": NORMAL, "kind": "cross", "layer": "1", "head": "2",
                                "measure": "norms"})
    for at in (weights, norms):
        assert not at.exception and not at.error, messages(at)
    assert norms.radio(key="_w_attn_measure").value == "norms"
    a, n = heatmap_z(figures(weights)[0]), heatmap_z(figures(norms)[0])
    assert a.shape == n.shape
    np.testing.assert_allclose(n.sum(-1), 1.0, atol=1e-5)  # each row's shares
    assert not np.allclose(a, n)
    norms.radio(key="_w_attn_measure").set_value("weights").run()
    np.testing.assert_allclose(heatmap_z(figures(norms)[0]), a)
    for view in ("bertviz", "heads"):
        at = fresh(view, {"text": NORMAL, "measure": "norms"})
        assert not at.exception and not at.error, messages(at)
        assert at.radio(key="_w_attn_measure").value == "norms"


def test_contributions_view_switches_step_and_measure(checkpoints):
    at = fresh("contrib", {"text": NORMAL})
    steps = at.selectbox(key="_w_contrib_step")
    steps.set_value(steps.options and 0).run()
    assert not at.exception and not at.error, messages(at)
    assert at.radio(key="_w_contrib_measure").value == "knockout"  # the tiny model is post-LN


def test_flow_threshold_slider(checkpoints):
    at = fresh("flow", {"text": NORMAL})
    at.slider(key="_w_flow_threshold").set_value(0.3).run()
    assert not at.exception and not at.error, messages(at)
    at.radio(key="_w_flow_side").set_value("enc").run()
    assert not at.exception and not at.error, messages(at)


@pytest.mark.parametrize("case", EVERY_VIEW, ids=str)
def test_hostile_input_on_the_new_views(checkpoints, hostile_tokenizer, case):
    """Typed into the box, then each new view and the norms toggle in turn."""
    at = fresh("tokens", {"measure": "norms"})
    at.text_area(key="text").input(case.wire_text).run()
    for view in [*NEW_VIEWS, "attention", "bertviz", "heads"]:
        at.radio(key="view").set_value(view).run()
        check_page(at, case, view, hostile_tokenizer)
    at.text_area(key="text").input(NORMAL).run()
    assert not at.exception and not at.error, messages(at)
