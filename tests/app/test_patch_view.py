"""view=patch through its link (AppTest on the shipped `paper` checkpoint): heatmaps of the
patched effects, the outputs, a clear message for inputs that do not line up, Korean UI."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import numpy as np
import torch

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


def patched_heads_by_hand(folder, clean: str, corrupt: str) -> np.ndarray:
    """(L, H) activation patching of a GPT-2 folder with plain transformers and this test's
    own hooks: in the corrupted run, one head's context (its slice of the input to the
    block's c_proj, every position) is taken from the clean run; the metric is the logit of
    the clean run's top token minus the corrupted run's top token (its runner-up when they
    agree) after the text, normalised to 0 = corrupted, 1 = clean. float64; the L·H patched
    runs go as one batch, row r patching head r % H of block r // H."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(folder)
    lm = AutoModelForCausalLM.from_pretrained(folder, attn_implementation="eager",
                                              dtype=torch.float64).eval()
    blocks, n_h = lm.transformer.h, lm.config.n_head
    dh = lm.config.n_embd // n_h
    ctx: dict[int, torch.Tensor] = {}  # block -> the clean run's contexts (1, T, H·Dh)

    def run(text: str, rows: int, mode: str) -> torch.Tensor:
        def pre(_mod, args, i):
            x = args[0]  # (rows, T, H·Dh): the heads' contexts side by side
            if mode == "record":
                ctx[i] = x.clone()
                return None
            x = x.clone()
            for h in range(n_h):  # row i·H + h takes head h's context from the clean run
                cut = slice(h * dh, (h + 1) * dh)
                x[i * n_h + h, :, cut] = ctx[i][0, :, cut]
            return (x,)
        hooks = [blk.attn.c_proj.register_forward_pre_hook(
            lambda m, a, i=i: pre(m, a, i)) for i, blk in enumerate(blocks)
            if mode != "plain"]
        try:
            with torch.no_grad():
                ids = torch.tensor([tok(text)["input_ids"]] * rows)
                hidden = lm.transformer(ids).last_hidden_state[:, -1]  # (rows, D)
                return lm.lm_head(hidden)  # (rows, V)
        finally:
            for hk in hooks:
                hk.remove()

    clean_out = run(clean, 1, "record")[0]
    corr_out = run(corrupt, 1, "plain")[0]
    a = int(clean_out.argmax())
    runner = corr_out.clone()
    if int(runner.argmax()) == a:
        runner[a] = -torch.inf
    w = int(runner.argmax())
    m_c, m_r = float(clean_out[a] - clean_out[w]), float(corr_out[a] - corr_out[w])
    x = run(corrupt, len(blocks) * n_h, "patch")
    return ((x[:, a] - x[:, w]).numpy() - m_r).reshape(len(blocks), n_h) / (m_c - m_r)


def test_hugging_face_decoder_only(tmp_path, monkeypatch):
    """A 12 × 12 GPT-2-shaped model listed through ATTN_MODELS: the next token each run
    predicts, one 12 × 12 heat map of dec_self heads, the residual stream of the decoder."""
    from tests.app.test_hf_views import build
    from tests.hf_folders import make_tokenizer

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
    z = array(figs[0]["data"][0]["z"])
    assert z.shape == (12, 12)
    want = patched_heads_by_hand(tmp_path / "gpt2-12", "the cat eats fish every day .",
                                 "the dog eats fish every day .")
    # the two runs differ by a few thousandths of a logit, so float32 noise in the lab's run
    # is a few thousandths of the normalised effect; a wrong head or layer moves it far more
    np.testing.assert_allclose(z, want, atol=5e-3)  # measured: 1.5e-4
    assert np.abs(want).max() > 0.2  # some head matters: the comparison is not all zeros
    assert sum("Residual" in f["layout"]["title"]["text"] for f in figs) == 1
