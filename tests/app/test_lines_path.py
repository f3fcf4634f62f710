"""Issue 23: the typed lines go from app.run_model to the capture without coming back to a
file they left (benchmarks/lines_path.py follows them with a profiler)."""

from __future__ import annotations

import pytest

from benchmarks.lines_path import follow, summary


@pytest.mark.parametrize("view", ["attention", "translation"])
def test_the_typed_lines_never_return_to_a_file_they_left(view):
    stops = follow(view)
    assert stops[0] == "app.py:run_model" and stops[-2:] == [
        "model/backends/lab/capture.py:capture_native",
        "model/backends/lab/capture.py:_target_batch"], stops
    assert summary(stops)[-1].endswith(" 0 returns"), "\n".join(summary(stops))
    # tokenized once: SentencePiece's encode runs once per line, in one place
    assert sum(s == "model/backends/lab/tokenizer.py:encode" for s in stops) == 2, stops
