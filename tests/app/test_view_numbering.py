"""The positional and embeddings views number sentences as the sidebar does ("1:" is sentence
1, never "sentence 0"), and the positional view says "row 0 = pad position" only for a model
whose row 0 is the pad's (issue 39, items 1 and 6)."""

from __future__ import annotations

import json

import pytest

from tests.app.conftest import run_app
from tests.conftest import ROOT, needs

TEXT = "the cat eats fish every day .\nwinter is cold"
PAPER = (ROOT / "checkpoints" / "paper" / "config.json").is_file()


@pytest.fixture(scope="module")
def gpt2(tmp_path_factory):
    from tests.hostile.families import build_folder

    root = tmp_path_factory.mktemp("numbering")
    build_folder(root, "gpt2")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ATTN_MODELS", str(root))
        mp.setenv("HF_HUB_OFFLINE", "1")
        yield root


def titles(at) -> list[str]:
    return [str(json.loads(c.proto.spec)["layout"].get("title", {}).get("text", ""))
            for c in at.get("plotly_chart")]


@needs(PAPER, reason="the shipped paper checkpoint is not here")
@pytest.mark.parametrize("view", ["positional", "embeddings"])
def test_charts_number_sentences_from_one(view):
    at = run_app({"view": view, "ckpt": "paper", "text": TEXT}, timeout=300)
    assert not at.exception
    shown = titles(at)
    assert not [x for x in shown if "sentence 0" in x], shown
    assert [x for x in shown if "sentence 1" in x], shown  # sentence 1 is the one picked


def test_pad_row_note_only_where_row_0_is_the_pads(gpt2):
    at = run_app({"view": "positional", "ckpt": "gpt2", "text": TEXT}, timeout=300)
    assert not at.exception and not at.error
    shown = titles(at)
    assert len(shown) >= 3 and not [x for x in shown if "row 0 = pad position" in x], shown
    if PAPER:
        at = run_app({"view": "positional", "ckpt": "paper", "text": TEXT}, timeout=300)
        assert sum("row 0 = pad position" in x for x in titles(at)) == 3
