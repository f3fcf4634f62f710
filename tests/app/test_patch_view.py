"""view=patch through its link (AppTest on the shipped `paper` checkpoint): heatmaps of the
patched effects, the outputs, a clear message for inputs that do not line up, Korean UI."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import numpy as np

from model import load_checkpoint
from model.patching import patch
from tests.app.conftest import run_app
from tests.app.test_views import array, charts, texts

ROOT = Path(__file__).resolve().parents[2]
CLEAN, CORRUPT = "The cat eats fish.", "The dog eats fish."


def _open(**query):
    return run_app({"ckpt": "paper", "view": "patch", "text": CLEAN, **query}, timeout=120)


def test_opens_from_link_with_heatmaps_outputs_and_link_kept():
    at = _open(corrupt=CORRUPT)
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error and not at.warning, texts(at.error) + texts(at.warning)
    assert at.text_input(key="patch_corrupt").value == CORRUPT
    shown = texts(at.markdown)
    assert "고양이" in shown and "개가" in shown  # both outputs
    figs = charts(at)
    heads = figs[0]
    assert [t["name"] for t in heads["data"] if t["type"] == "heatmap"] == [
        "enc_self", "dec_self", "cross"]  # then a click target layer per map (viz/click.py)
    want = patch(load_checkpoint(ROOT / "checkpoints" / "paper"), CLEAN, CORRUPT)
    np.testing.assert_allclose(array(heads["data"][2]["z"]), want.heads["cross"], atol=1e-6)
    resid = [f for f in figs if "Residual" in f["layout"]["title"]["text"]]
    assert len(resid) == 2  # encoder and decoder sides
    assert any("▁cat→▁dog" in x for x in resid[0]["data"][0]["x"])  # the pieces on the axis
    assert at.query_params["corrupt"] == CORRUPT and at.query_params["view"] == "patch"
    # attribution: the same charts from the gradient estimate
    at.radio(key="patch_method").set_value("attribution").run(timeout=120)
    assert not at.exception and "attribution" in texts(at.caption)


def test_mismatched_pieces_and_equal_inputs_are_messages():
    at = _open(corrupt="The big dog eats fish.")
    assert not at.exception and not at.error
    assert "same number of pieces" in texts(at.warning) and not charts(at)
    at = _open(corrupt=CLEAN)
    assert not at.exception and "nothing differs" in texts(at.warning)


def test_korean_page():
    at = _open(corrupt=CORRUPT, lang_ui="ko")
    assert not at.exception, [e.value for e in at.exception]
    heads = charts(at)[0]
    assert heads["layout"]["xaxis"]["title"]["text"] == "헤드"
    # every message of the view and its figures has Korean: in the catalogue or pending
    po = (ROOT / "locales" / "ko" / "LC_MESSAGES" / "attention_lab.po").read_text("utf-8")
    pending_file = ROOT / "locales" / "pending" / "H3.json"
    pending = json.loads(pending_file.read_text("utf-8")) if pending_file.exists() else {}
    missing = [m for m in _messages() if m not in pending and f'msgid "{m}"' not in po]
    assert not missing, missing


def _messages() -> list[str]:
    """String literals passed to _() or N_() in the view and its figures."""
    found = []
    for rel in ("ui/views/patch.py", "viz/patch.py"):
        tree = ast.parse((ROOT / rel).read_text("utf-8"))
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id in ("_", "N_") and node.args
                    and isinstance(node.args[0], ast.Constant)):
                found.append(node.args[0].value)
    return found


def test_hugging_face_decoder_only(tmp_path, monkeypatch):
    """A 12 × 12 GPT-2-shaped model listed through ATTN_MODELS: the next token each run
    predicts, one 12 × 12 heat map of dec_self heads, the residual stream of the decoder."""
    from tests.app.test_hf_views import build
    from tests.unit.test_hf import make_tokenizer

    model, template = build("gpt2-12")
    model.save_pretrained(tmp_path / "gpt2-12", safe_serialization=True)
    make_tokenizer(template).save_pretrained(tmp_path / "gpt2-12")
    monkeypatch.setenv("ATTN_MODELS", str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    at = run_app({"ckpt": "gpt2-12", "view": "patch", "text": "the cat eats fish every day .",
                  "corrupt": "the dog eats fish every day ."}, timeout=120)
    assert not at.exception and not at.error, texts(at.error)
    # a random model's two runs differ by a few thousandths: the page says the effects mean
    # little (issue 39), and says nothing else
    assert [w for w in at.warning if "differ by only" not in str(w.value)] == []
    assert "the next token after the text" in texts(at.markdown)
    figs = charts(at)
    assert [t["name"] for t in figs[0]["data"] if t["type"] == "heatmap"] == ["dec_self"]
    assert array(figs[0]["data"][0]["z"]).shape == (12, 12)
    assert sum("Residual" in f["layout"]["title"]["text"] for f in figs) == 1
