"""The training and generation views on a hostile copy of the shipped language model (issue
41, AppTest): its training log mixes good probes with broken, huge and markup-laden lines; its
snapshots folder holds a good snapshot, a truncated one, a text file named like one and a link
to a system file. Each gets a clear message, no traceback, and nothing is executed or shown as
markup; hostile prompts typed into the generation view get the same.
"""

from __future__ import annotations

import json
import shutil

import pytest

from tests.conftest import ROOT, needs
from tests.hostile.inputs import EVERY_VIEW, NORMAL
from tests.hostile.test_app_hostile import TRACEBACK_SIGNS, check_page, fresh, messages

LM = ROOT / "checkpoints" / "lm"
pytestmark = needs((LM / "training" / "log.jsonl").is_file(),
                                reason="needs the shipped language model's training log")
NAME = "lmcopy"
BAD_LINES = ['{"step": "<script>alert(1)</script>", "induction": [[1]]}', "not json at all",
             '{"step": 1e400}', "[" * 5_000, '{"step": 5, "induction": "**bold**"}',
             json.dumps({"step": 7, "induction": [[0.5] * 6] * 3}),  # another shape: skipped
             "\x00\x01\x1b[31m", "{" + '"a":' * 100 + "1"]


@pytest.fixture(scope="module")
def lm_env(checkpoints, tmp_path_factory):
    """ATTN_MODELS -> a copy of checkpoints/lm with a hostile log and snapshots folder."""
    parent = tmp_path_factory.mktemp("lm_hostile")
    folder = parent / NAME
    shutil.copytree(LM, folder, ignore=shutil.ignore_patterns("snapshots"))
    good = sorted((LM / "snapshots").glob("step_*.safetensors"))
    rows = (LM / "training" / "log.jsonl").read_text("utf-8").splitlines()
    steps = [json.loads(r)["step"] for r in rows]
    snaps = folder / "snapshots"
    snaps.mkdir()
    shutil.copy(good[0], snaps / good[0].name)
    truncated = snaps / f"step_{steps[1]:06d}.safetensors"
    truncated.write_bytes(good[1].read_bytes()[:1_000])
    (snaps / f"step_{steps[2]:06d}.safetensors").write_text("<b>not weights</b>\n")
    (snaps / f"step_{steps[3]:06d}.safetensors").symlink_to("/etc/passwd")
    (snaps / "step_<script>.safetensors").write_text("x")
    log = folder / "training" / "log.jsonl"
    log.write_text("\n".join(BAD_LINES[:4] + rows + BAD_LINES[4:]) + "\n", encoding="utf-8")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ATTN_MODELS", str(parent))
        yield {"bad": [steps[1], steps[2], steps[3]], "good": good[0]}


def no_traceback(at) -> None:
    assert not at.exception, [e.value for e in at.exception]
    for node in at:
        proto = getattr(node, "proto", None)
        if proto is not None and node.type != "plotly_chart":
            assert not any(sign in str(proto) for sign in TRACEBACK_SIGNS), str(proto)[:300]


def test_the_training_view_reads_past_a_hostile_log(lm_env):
    at = fresh("training", {"ckpt": NAME, "text": NORMAL})
    no_traceback(at)
    assert not at.error, messages(at)
    assert at.get("plotly_chart"), "the good probes are still drawn"


def test_each_bad_snapshot_is_a_message(lm_env):
    at = fresh("training", {"ckpt": NAME, "text": NORMAL})
    for step in lm_env["bad"]:
        at.select_slider(key="trn_step").set_value(step).run()
        no_traceback(at)
        shown = messages(at)
        assert "This snapshot cannot be opened" in shown, shown
        assert "<b>" not in shown and "root:" not in shown  # no file content echoed
    at.select_slider(key="trn_step").set_value(int(lm_env["good"].stem[5:])).run()
    no_traceback(at)
    assert not at.error, messages(at)


@pytest.mark.parametrize("case", EVERY_VIEW, ids=str)
def test_hostile_prompts_on_the_generation_view(lm_env, case):
    at = fresh("generate", {"ckpt": NAME})
    at.text_area(key="text").input(case.wire_text).run()
    check_page(at, case, "generate")
    at.radio(key="view").set_value("training").run()
    no_traceback(at)
    assert not at.error, messages(at)
    at.text_area(key="text").input(NORMAL).run()
    assert not at.exception and not at.error, messages(at)
