"""A one-line input keeps the numbers on the tokens view's id, position and token-type
heatmaps (viz.common.fit_cell_numbers guessed 10 px rows where Chromium draws 64 px and
dropped them). The numbers a page sends are compared with ids from the tokenizer itself
(SentencePiece on paper, Hugging Face's tokenizer on the real BERT); AppTest, no browser."""

from __future__ import annotations

import numpy as np
import sentencepiece as spm

from tests.app.conftest import run_app
from tests.chartdata import charts, find, traces
from tests.conftest import ROOT, installed_minilm
from ui.presenter import MIN_PX
from viz.common import CELL_FONT_PX

KOREAN = "겨울은 추워요."
ENGLISH = "The cat sat."


def numbers(fig: dict, size: float) -> list[str]:
    """The numbers written on a one-row heatmap's cells; fails when they are dropped or not
    at the fixed size (cells without text: pad slots of the token types)."""
    (trace,) = traces(fig, "heatmap")
    assert trace.get("texttemplate") == "%{text}", trace.get("texttemplate")
    assert trace.get("textfont", {}).get("size") == size, trace.get("textfont")
    text = np.asarray(trace["text"], dtype=object)
    assert text.shape[0] == 1, text.shape  # one line: one row
    return [str(t) for t in text[0]]


def test_paper_one_line_ids_and_positions_carry_their_numbers():
    sp = spm.SentencePieceProcessor(model_file=str(ROOT / "checkpoints/paper/tokenizer.model"))
    body = [str(i) for i in sp.encode(KOREAN)]
    for present, size in (("0", CELL_FONT_PX), ("1", MIN_PX)):
        at = run_app({"ckpt": "paper", "text": KOREAN, "view": "tokens", "present": present},
                     timeout=240)
        assert not at.exception, [e.value for e in at.exception]
        figs = charts(at)
        ids = numbers(find(figs, "encoder input ids, shape (bs=1"), size)
        # [<2en>] + the sentence's pieces + [</s>], no pad in a batch of one
        assert ids[1:-1] == body and ids[-1] == str(sp.eos_id()), (ids, body)
        assert sp.id_to_piece(int(ids[0])).startswith("<2"), ids[0]
        positions = numbers(find(figs, "Position ids for the encoder"), size)
        assert positions == [str(p) for p in range(1, len(ids) + 1)]  # the lab's 1 … n
        # the decoder's input is the model's own translation: its numbers are there too
        out = numbers(find(figs, "decoder input ids, shape (bs=1"), size)
        assert out[0] == str(sp.bos_id()) and all(i.isdigit() for i in out), out
        assert numbers(find(figs, "Position ids for the decoder"), size) == [
            str(p) for p in range(1, len(out) + 1)]


def test_minilm_one_line_ids_positions_and_types_carry_their_numbers():
    from transformers import AutoTokenizer

    folder = installed_minilm()
    expected = [str(i) for i in AutoTokenizer.from_pretrained(str(folder))(ENGLISH)["input_ids"]]
    assert expected[0] != expected[-1] and len(expected) > 3  # [CLS] … [SEP]
    at = run_app({"ckpt": "minilm", "text": ENGLISH, "view": "tokens"}, timeout=240)
    assert not at.exception, [e.value for e in at.exception]
    figs = charts(at)
    assert numbers(find(figs, "ids, shape (bs=1"), CELL_FONT_PX) == expected
    positions = numbers(find(figs, "Position ids"), CELL_FONT_PX)
    assert positions == [str(p) for p in range(len(expected))]  # BERT's 0 … n−1
    assert numbers(find(figs, "Token-type"), CELL_FONT_PX) == ["0"] * len(expected)
