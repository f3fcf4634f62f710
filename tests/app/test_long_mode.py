"""The attention view's long mode in AppTest (issue 38), English and Korean, and hostile inputs.

A tiny rotary model (2 layers × 2 heads, 16 wide, 40,000 positions, word-level pieces: one
word is one piece) built once for the module; the long text goes in the view's own box.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from streamlit import config
from streamlit.testing.v1 import AppTest

from benchmarks.big_models import WORDS, build
from model import LONG_CAP
from tests.app.conftest import APP
from tests.app.test_hf_views import no_errors
from tests.app.test_views import charts, texts
from tests.chartdata import array
from ui.admission import server_gate
from ui.views.long_attention import read_upload

N = 1500  # pieces of the long text (with <s>): above LONG_FROM, quick on one thread


def words(n: int) -> str:
    return " ".join(WORDS[(i * 7 + i // 11) % len(WORDS)] for i in range(n))


@pytest.fixture(scope="module", autouse=True)
def long_model(tmp_path_factory):
    root = tmp_path_factory.mktemp("long_models")
    build(root / "tinylong", "llama", layers=2, heads=2, kv=1, hidden=16, positions=40_000,
          ffn=16)
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ATTN_MODELS", str(root))
        mp.setenv("HF_HUB_OFFLINE", "1")
        yield root
    torch.set_num_threads(before)


def with_long_text(text: str, lang: str = "en"):
    """The attention view opened with the long text already in its box (one run: AppTest
    cannot rerun a page whose view bar is in Korean)."""
    at = AppTest.from_file(str(APP), default_timeout=180)
    for key, value in {"ckpt": "tinylong", "view": "attention", "text": "the cat eats fish",
                       "lang_ui": lang}.items():
        at.query_params[key] = value
    at.session_state["long_text"] = text
    config.set_option("client.showErrorDetails", "full")
    return at.run(timeout=180)


def pooled_by_hand(folder, text: str, layer: int, head: int, pixels: int) -> np.ndarray:
    """(P, P) mean attention per pixel of one head, from plain transformers' dense eager
    attention (1,500² cells: 9 MB) pooled with numpy; pixel i starts at ⌈i·n/P⌉."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    ids = AutoTokenizer.from_pretrained(folder)(text)["input_ids"]
    lm = AutoModelForCausalLM.from_pretrained(folder, attn_implementation="eager")
    with torch.no_grad():
        att = lm(torch.tensor([ids]), output_attentions=True).attentions[layer][0, head]
    a = att.double().numpy()  # (n, n), zeros above the diagonal
    n = len(ids)
    starts = -(-np.arange(pixels) * n // pixels)
    sums = np.add.reduceat(np.add.reduceat(a, starts, axis=0), starts, axis=1)
    size = np.diff(np.append(starts, n))
    return sums / np.outer(size, size)


def test_long_mode_draws_pooled_maps_exact_cells_and_detectors(long_model):
    text = words(N - 1)
    at = with_long_text(text)
    no_errors(at)
    shown = texts(at.info)
    assert "Long mode: 1,500 pieces" in shown, shown
    specs = charts(at)
    assert len(specs) == 5  # one head, exact block, grid, distance bands, head distances
    head, block = specs[0]["data"][0], specs[1]["data"][0]
    z = array(head["z"])
    assert z.shape == (512, 512)
    np.testing.assert_allclose(z, pooled_by_hand(long_model / "tinylong", text, 0, 0, 512),
                               atol=2e-6)  # every pixel, the last row and column included
    assert "queries 988–1499, keys 988–1499" in specs[1]["layout"]["title"]["text"]
    assert block["type"] == "heatmap"
    assert at.dataframe, "the detectors' table"
    assert server_gate().held > 0, "the kept LongTrace counts against the gate's budget"
    # another head and a smaller region: redrawn from the same LongTrace
    at.number_input(key="long_head").set_value(1).run(timeout=120)
    at.number_input(key="long_size").set_value(64).run(timeout=120)
    no_errors(at)
    assert "queries 988–1051, keys 988–1051" in charts(at)[1]["layout"]["title"]["text"]


def test_long_mode_in_korean():
    at = with_long_text(words(N - 1), lang="ko")
    assert not at.exception and not at.error, texts(at.error)
    assert len(charts(at)) == 5
    assert "긴 텍스트 모드" in texts(at.info), texts(at.info)


def test_a_short_text_stays_in_the_ordinary_view():
    at = with_long_text(words(40))
    no_errors(at)
    assert "short enough for the ordinary view" in texts(at.info)
    assert len(charts(at)) == 3  # the ordinary attention view's three figures


def test_one_piece_over_the_cap_is_told_the_count_and_the_cap():
    at = with_long_text(words(LONG_CAP))  # + <s>: 32,769 pieces
    no_errors(at)
    shown = texts(at.warning)
    assert "32,769 pieces" in shown and "32,768" in shown, shown


def test_one_enormous_line_without_spaces():
    at = with_long_text("x" * 1_000_000)  # one unknown word: one piece, no crash
    no_errors(at)
    assert "short enough" in texts(at.info)


def test_a_file_that_is_not_text_is_refused():
    assert read_upload(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR") is None
    assert read_upload("긴 글".encode("euc-kr")) is None
    assert read_upload("the cat\n고양이".encode()) == "the cat\n고양이"
