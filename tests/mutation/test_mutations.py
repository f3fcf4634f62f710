"""Planted wrong results must fail a view test (issue 60).

Each plant in tests/mutation/plant.py puts a plausible wrong result into a public library
function; the view test named beside it compares what the page draws with numbers computed
another way, so it must fail. Every plant runs in its own fresh pytest process (no Streamlit
cache or session state can hold an honest result), two at a time. The same view tests pass
unplanted in the ordinary suite.
"""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import Future, ThreadPoolExecutor

import pytest

from tests.conftest import ROOT
from tests.mutation.plant import ENV, PLANTS

CATCHES = {  # plant -> the view test that must fail under it
    "composition_qk_swapped":
        "tests/app/test_why_panel.py::test_language_model_composition_maps_are_the_weights",
    "previous_token_q_minus_2":
        "tests/app/test_detectors_view.py::"
        "test_previous_token_map_is_the_weight_on_the_key_before",
    "long_last_key_pixel_missing":
        "tests/app/test_long_mode.py::test_long_mode_draws_pooled_maps_exact_cells_and_detectors",
    "patch_layers_flipped": "tests/app/test_patch_view.py::test_hugging_face_decoder_only",
    "history_loss_one_probe_late":
        "tests/app/test_lm_views.py::test_training_view_curves_are_the_log",
    "dla_heads_reversed":
        "tests/app/test_detectors_view.py::test_contributions_view_on_a_hugging_face_gpt2",
}
TIMEOUT = 600  # seconds for one plant's process, on a loaded machine


AT_ONCE = 2  # processes at a time: the machine's two cores (more made AppTests time out)
# make test runs this in its `alone` phase, after the other workers are done: its processes
# take both cores, and beside the other worker their AppTests crept towards their limits
pytestmark = pytest.mark.alone


def _run(name: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:xdist", "-p", "no:cacheprovider",
         "-p", "tests.mutation.plant", "-q", "-x", CATCHES[name]],
        cwd=ROOT, env={**os.environ, ENV: name}, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True, timeout=TIMEOUT)


@pytest.fixture(scope="module")
def runs() -> dict[str, Future]:
    """Every plant's view test, each in a pytest process of its own, AT_ONCE at a time."""
    with ThreadPoolExecutor(AT_ONCE) as pool:
        yield {name: pool.submit(_run, name) for name in CATCHES}


def test_every_plant_is_named_with_its_catcher():
    assert set(CATCHES) == set(PLANTS)


@pytest.mark.parametrize("name", list(CATCHES))
def test_the_planted_error_fails_its_view_test(runs, name):
    done = runs[name].result()
    out, node = done.stdout, CATCHES[name]
    assert f"planted error: {name}" in out, out[-3000:]  # the plugin did plant it
    # pytest's exit code 1: tests ran and one failed (not 0, nor a crash or usage error)
    assert done.returncode == 1, f"{name} passed {node}:\n{out[-3000:]}"
    assert f"FAILED {node}" in out and "AssertionError" in out, out[-3000:]
