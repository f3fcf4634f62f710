"""Every view on the shipped language model (checkpoints/lm, a Hugging Face Llama-class folder
with trained weights), and the training and generation views in detail, in English and
Korean. No exception, no error box."""

from __future__ import annotations

import json

import numpy as np
import pytest

from model import load_checkpoint
from tests.app.conftest import run_app
from tests.app.test_views import charts, ok, texts
from tests.chartdata import array, find
from tests.conftest import ROOT
from ui.views import VIEWS
from ui.views.heads import HEADS_PARTS

TEXT = "Ravonel: The cat eats fish. Ravonel: The cat eats fish."
CARD = json.loads((ROOT / "checkpoints" / "lm" / "card.json").read_text())


def no_errors(at) -> None:
    ok(at)
    assert not at.error, texts(at.error)


@pytest.mark.parametrize("view", list(VIEWS))
def test_every_view_opens_on_the_language_model(view):
    at = run_app({"ckpt": "lm", "view": view, "text": TEXT}, timeout=120)
    no_errors(at)
    reason = VIEWS[view].applies(load_checkpoint(str(ROOT / "checkpoints" / "lm")))
    # only the translators' greedy translation and the sentence-embedding models' similarity
    # view say why not; the lexicon (knows) is the lm's too: its card says it was trained here
    assert (reason is not None) == (view in ("translation", "similarity")), (view, reason)


@pytest.mark.parametrize("part", list(HEADS_PARTS))
def test_every_heads_part_opens_on_the_language_model(part):
    at = run_app({"ckpt": "lm", "view": "heads", "text": TEXT}, timeout=120)
    no_errors(at)
    at.radio(key="_w_heads_part").set_value(part).run(timeout=120)
    no_errors(at)


def test_training_view_draws_the_history_and_a_snapshot():
    at = run_app({"ckpt": "lm", "view": "training", "text": TEXT}, timeout=120)
    no_errors(at)
    figs = charts(at)
    titles = [str(f["layout"].get("title", {}).get("text", "")) for f in figs]
    assert "Loss and in-context learning over training" in titles
    assert "induction score of every head over training" in titles
    phase = CARD["training"]["phase_change_step"]
    assert f"Phase change at step {phase}" in texts(at.markdown)
    heads = next(f for f in figs if "every head over training" in f["layout"]["title"]["text"])
    assert len(heads["data"][0]["y"]) == 12  # 2 layers × 6 heads
    # a category axis: the mark sits at the phase change's column index (plotly.js reads a
    # numeric-looking string there as a number: issue 59's collapsed chart)
    column = [str(x) for x in heads["data"][0]["x"]].index(str(phase))
    assert any(s.get("x0") == column for s in heads["layout"].get("shapes", []))
    first = min(CARD["training"]["snapshots"])
    at.select_slider(key="trn_step").set_value(first).run(timeout=120)
    no_errors(at)
    assert f"At step {first} this head scores" in texts(at.caption)
    at.radio(key="trn_det").set_value("previous_token").run(timeout=120)
    no_errors(at)
    assert "previous token score of every head over training" in \
        " ".join(str(f["layout"].get("title", {}).get("text", "")) for f in charts(at))


def _log() -> list[dict]:
    """checkpoints/lm's probe log read with json alone, in step order."""
    lines = (ROOT / "checkpoints" / "lm" / "training" / "log.jsonl").read_text().splitlines()
    return sorted((json.loads(x) for x in lines if x.strip()), key=lambda r: r["step"])


def test_training_view_curves_are_the_log():
    """Every drawn curve point against training/log.jsonl read here: the held-out loss and
    ICL lines, and the induction heat map (rows L0 H0 … L1 H5, one column per probe)."""
    log = _log()
    at = run_app({"ckpt": "lm", "view": "training", "text": TEXT}, timeout=120)
    no_errors(at)
    figs = charts(at)
    loss = find(figs, "Loss and in-context learning over training")
    lines = {t["name"]: t for t in loss["data"]}
    steps = np.array([r["step"] for r in log])
    for name, key in (("held-out loss (probe row)", "val_loss"),
                      ("in-context learning (probe row)", "icl")):
        want = np.array([r.get(key, np.nan) for r in log], dtype=float)
        keep = np.isfinite(want)
        np.testing.assert_array_equal(array(lines[name]["x"]), steps[keep], err_msg=name)
        got = array(lines[name]["y"])
        np.testing.assert_allclose(got[np.isfinite(got)], want[keep], rtol=1e-6, err_msg=name)
    heads = find(figs, "induction score of every head over training")
    z = array(heads["data"][0]["z"])  # (L·H, S)
    want = np.array([np.ravel(r["induction"]) for r in log]).T
    assert [int(x) for x in heads["data"][0]["x"]] == steps.tolist()
    np.testing.assert_allclose(z, want, atol=1e-6)


def test_training_view_in_korean():
    at = run_app({"ckpt": "lm", "view": "training", "text": TEXT, "lang_ui": "ko"}, timeout=120)
    assert not at.exception and not at.error, (at.exception, at.error)
    titles = " ".join(str(f["layout"].get("title", {}).get("text", "")) for f in charts(at))
    assert "훈련 중 손실과 문맥 내 학습" in titles
    assert "상전이" in texts(at.markdown)


def test_training_view_says_why_on_a_translator():
    at = run_app({"ckpt": "paper", "view": "training", "text": "The cat eats fish."})
    no_errors(at)
    assert "keeps none" in texts(at.info)


def test_generation_continues_a_repeated_name():
    at = run_app({"ckpt": "lm", "view": "generate", "text": "Ravonel: I eat fish. Ravonel:"},
                 timeout=120)
    no_errors(at)
    shown = [c.value for c in at.code if "⟶" in c.value]
    assert shown and shown[0].startswith("Ravonel: I eat fish. Ravonel: ⟶")
    assert len(charts(at)) == 2  # the step's top-k bar and top-k over steps
