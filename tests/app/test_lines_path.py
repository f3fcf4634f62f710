"""Issue 23, and issue 55's one `run`: the typed lines go from app.run_model through
model.dispatch.run to the capture; they come back only to the backend's own methods, each
called in turn by that one run (encode, estimate, translate, capture), and are tokenized once
(benchmarks/lines_path.py follows them with a profiler)."""

from __future__ import annotations

import pytest

from benchmarks.lines_path import follow, returns, summary

BACKEND = "model/backends/lab/backend.py"


@pytest.mark.parametrize("view", ["attention", "translation"])
def test_the_typed_lines_return_only_to_the_backends_steps(view):
    stops = follow(view)
    told = "\n".join(summary(stops))
    assert stops[0] == "app.py:run_model" and stops[-2:] == [
        "model/backends/lab/capture.py:capture_native",
        "model/backends/lab/capture.py:_target_batch"], told
    # the one run: the dispatcher hands the lines to the backend's encode, nothing else first
    run = stops.index("model/dispatch.py:run")
    assert stops[run + 1] == f"{BACKEND}:encode", told
    assert stops.count("model/dispatch.py:run") == 1, told
    # back only to the backend's steps the run calls, in its order; translate (the greedy
    # decode) only where no earlier run of these lines in this process made one to reuse
    back = returns(stops)
    assert back in ([f"{BACKEND}:estimate", f"{BACKEND}:translate", f"{BACKEND}:capture"],
                    [f"{BACKEND}:estimate", f"{BACKEND}:capture"]), told
    # tokenized once: SentencePiece's encode runs once per line, in one place
    assert sum(s == "model/backends/lab/tokenizer.py:encode" for s in stops) == 2, stops
