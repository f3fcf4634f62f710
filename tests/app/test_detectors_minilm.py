"""Heads › Detectors on checkpoints/minilm through AppTest (issue 54, item 5): the next-token
map drawn for the typed lines, then over the typed lines and the built-in English sentences
after the button, each against transformers' own eager attention averaged here with numpy;
the sink's table names its place; the positional detector's chance level is 0."""

from __future__ import annotations

import numpy as np
import pytest

from model.analysis.builtin_sentences import sentences
from model.backends import MINILM_FOLDER
from tests.app.conftest import run_app
from tests.app.test_views import texts
from tests.chartdata import array, charts
from tests.conftest import ROOT, installed_minilm

MINILM = ROOT / "checkpoints" / MINILM_FOLDER
LINES = ["The quick brown fox jumps over the lazy dog.", "Where did you put my keys, Sam?"]
TEXT = "\n".join(LINES)


@pytest.fixture(scope="module")
def reference():
    """lines -> (Σ weight on the next piece (L, H), queries with one, Σ weight on [CLS], rows),
    from transformers (eager attention, output_attentions=True), one line at a time."""
    installed_minilm()
    import torch
    from transformers import AutoModel, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(MINILM)
    model = AutoModel.from_pretrained(MINILM, attn_implementation="eager").eval()

    def sums(lines: list[str]) -> tuple:
        nxt = cls = 0.0
        n_next = n_all = 0
        for i in range(0, len(lines), 64):
            ids = tok(lines[i:i + 64], return_tensors="pt", padding=True)
            with torch.inference_mode():
                out = model(**ids, output_attentions=True)
            a = np.stack([x.numpy() for x in out.attentions]).astype(np.float64)  # (L,B,H,n,n)
            for b, n in enumerate(ids["attention_mask"].sum(-1).tolist()):
                q = np.arange(n - 1)
                nxt = nxt + a[:, b][:, :, q, q + 1].sum(-1)
                cls = cls + a[:, b][:, :, :n, 0].sum(-1)
                n_next, n_all = n_next + n - 1, n_all + n
        return nxt, n_next, cls, n_all

    return sums


def _map(at) -> np.ndarray:
    (fig,) = [f for f in charts(at) if f["layout"].get("meta", {}).get("kind") == "enc_self"]
    return array(fig["data"][0]["z"]).astype(np.float64)


def test_detectors_on_minilm_match_transformers(reference):
    at = run_app({"ckpt": "minilm", "view": "heads", "detector": "next_token", "text": TEXT},
                 timeout=240)
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, texts(at.error)
    assert at.radio(key="det_detector").value == "next_token"
    typed = reference(LINES)
    np.testing.assert_allclose(_map(at), typed[0] / typed[1], atol=1e-5)
    assert "Over the typed input only so far" in texts(at.caption)

    at.button(key="det_builtin_go").click().run(timeout=600)
    assert not at.exception, [e.value for e in at.exception]
    built = reference(list(sentences("en")))
    want = (typed[0] + built[0]) / (typed[1] + built[1])
    drawn = _map(at)
    np.testing.assert_allclose(drawn, want, atol=1e-4)
    assert np.abs(drawn - typed[0] / typed[1]).max() > 1e-3  # the built-in set moved it
    assert f"{len(sentences('en'))} built-in English sentences" in texts(at.caption)
    table = at.dataframe[0].value
    assert (table.iloc[0]["layer"], table.iloc[0]["head"]) == np.unravel_index(
        np.argmax(want), want.shape)

    at.radio(key="det_detector").set_value("sink").run(timeout=240)
    table = at.dataframe[0].value
    assert set(table["place"]) <= {"first position ([CLS])", "[SEP]", "punctuation"}
    cls = (typed[2] + built[2]) / (typed[3] + built[3])
    first = table[table["place"] == "first position ([CLS])"].iloc[0]
    assert abs(first["score"] - round(cls[first["layer"], first["head"]], 3)) < 2e-3

    at.radio(key="det_detector").set_value("positional").run(timeout=240)
    assert not at.exception, [e.value for e in at.exception]
    assert (at.dataframe[0].value["chance (uniform head)"] == 0).all()
