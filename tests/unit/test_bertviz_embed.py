"""viz.bertviz_embed: offline, injection-safe, small bertviz pages."""

from __future__ import annotations

import dataclasses
import json
import re

import numpy as np
import pytest

from model import Trace, capture
from viz.bertviz_embed import (
    BertvizTooLarge,
    bertviz_height,
    bertviz_html,
    d3_js,
    display_token,
    jquery_js,
    script_json,
)

INJECTIONS = [
    "</script><img src=x onerror=alert(1)>",
    "<!--",
    "<script>alert(2)</script>",
    "\"'`",
    "back\\slash\\",
    "line\u2028sep\u2029para",
    "nul\x00byte",
    "lone\ud800surrogate",
    "&amp;<b>",
]
N_SCRIPTS = 4  # d3, jQuery, the requirejs shim, bertviz's view


def synthetic_trace(n_src: int, n_tgt: int, n_layers: int = 2, n_heads: int = 4,
                    kinds=("enc_self", "dec_self", "cross"), seed: int = 0) -> Trace:
    """One sentence with random softmax attention of the given shape; no model involved."""
    rng = np.random.default_rng(seed)
    sides = {"enc_self": (n_src, n_src), "dec_self": (n_tgt, n_tgt), "cross": (n_tgt, n_src)}
    attn = {}
    for kind in kinds:
        logits = rng.normal(size=(n_layers, 1, n_heads, *sides[kind])).astype(np.float32)
        e = np.exp(logits - logits.max(-1, keepdims=True))
        attn[kind] = (e / e.sum(-1, keepdims=True)).astype(np.float32)
    src = [f"▁s{i}" for i in range(n_src)] if n_src else []
    tgt = [f"▁t{i}" for i in range(n_tgt)] if n_tgt else []
    return Trace(src_tokens=[src], tgt_tokens=[tgt], src_ids=np.ones((1, n_src), np.int64),
                 tgt_ids=np.ones((1, n_tgt), np.int64),
                 masks={k: np.zeros((1, *sides[k]), bool) for k in kinds}, scores={},
                 attn=attn, q={}, k={}, v={}, hidden={}, pos_table=np.zeros((1, 4), np.float32),
                 logits=None)


def params_of(html: str) -> dict:
    """The params object as sent in the page (attention in integer thousandths)."""
    marker = "const params = window.attentionFromThousandths("
    value, _ = json.JSONDecoder().raw_decode(html, html.index(marker) + len(marker))
    return value


def scripts_of(html: str) -> list[str]:
    return re.findall(r"<script>(.*?)</script>", html, flags=re.DOTALL)


def without_libraries(html: str) -> str:
    """The page with the inlined d3 and jQuery code cut out (their own strings hold '<link')."""
    return html.replace(d3_js(), "").replace(jquery_js(), "")


@pytest.fixture(scope="module")
def trace(bundle) -> Trace:
    return capture(bundle, ["The cat eats fish every day.", "Winter."],
                   targets=["고양이는 매일 생선을 먹어요.", "겨울."], target_lang="ko")


@pytest.mark.parametrize("view", ["head", "model"])
def test_page_is_self_contained(trace, view):
    html = bertviz_html(trace, 0, view)
    assert html.startswith("<!DOCTYPE html>")
    assert d3_js() in html and "d3js.org v5" in html
    assert jquery_js() in html and "jQuery v3" in html
    own = without_libraries(html)
    assert not re.search(r"<script[^>]*\bsrc\s*=", own, re.IGNORECASE)
    assert not re.search(r"<link\b|<iframe\b|<img\b|@import|https?://", own, re.IGNORECASE)
    assert "cdnjs" not in html and "require.config(" not in html
    assert "PYTHON_PARAMS" not in html
    assert own.count("<script>") == own.count("</script>") == N_SCRIPTS


def test_encoder_decoder_has_the_three_kinds_padding_excluded(trace):
    b = 1  # the shorter sentence of the batch: its rows are padded in the trace
    n_src, n_tgt = trace.length("src", b), trace.length("tgt", b)
    assert n_src < trace.src_ids.shape[1]
    params = params_of(bertviz_html(trace, b, "head"))
    entries = params["attention"]
    assert [e["name"] for e in entries] == ["Encoder", "Decoder", "Cross"]
    expect = {"Encoder": (n_src, n_src), "Decoder": (n_tgt, n_tgt), "Cross": (n_tgt, n_src)}
    for entry in entries:
        attn = np.array(entry["attn"])
        n_layers = trace.attn["enc_self"].shape[0]
        assert attn.shape == (n_layers, trace.attn["enc_self"].shape[2], *expect[entry["name"]])
        assert len(entry["left_text"]) == attn.shape[2]
        assert len(entry["right_text"]) == attn.shape[3]
    assert entries[0]["left_text"] == [display_token(t) for t in trace.src_tokens[b]]
    assert entries[1]["left_text"] == [display_token(t) for t in trace.tgt_tokens[b]]


def test_values_are_rounded_to_three_decimals_and_sent_once(trace):
    html = bertviz_html(trace, 0, "head", layers=[1])
    entry = params_of(html)["attention"][0]
    sent = np.array(entry["attn"])
    n = trace.length("src", 0)
    assert sent.shape[0] == 1  # only the chosen layer
    assert sent.dtype.kind == "i" and sent.min() >= 0 and sent.max() <= 1000  # thousandths
    expected = trace.attn["enc_self"][1, 0, :, :n, :n]
    assert np.abs(sent[0] / 1000 - expected).max() <= 0.0005 + 1e-7
    row = json.dumps(entry["attn"][0][0][0], separators=(",", ":"))
    assert html.count(row) == 1
    assert params_of(html)["include_layers"] == [1]


def test_single_kind_traces_have_no_selector():
    enc_only = synthetic_trace(5, 0, kinds=("enc_self",))
    dec_only = synthetic_trace(0, 6, kinds=("dec_self",))
    for tr, n in ((enc_only, 5), (dec_only, 6)):
        for view in ("head", "model"):
            html = bertviz_html(tr, 0, view)
            entries = params_of(html)["attention"]
            assert len(entries) == 1 and entries[0]["name"] is None
            assert np.array(entries[0]["attn"]).shape == (2, 4, n, n)
            assert 'id="filter"' not in html


@pytest.mark.parametrize("view", ["head", "model"])
def test_injection_strings_never_reach_the_script_raw(trace, view):
    n = trace.length("src", 0)
    tokens = (INJECTIONS * n)[:n]
    evil = dataclasses.replace(trace, src_tokens=[tokens, trace.src_tokens[1]])
    html = bertviz_html(evil, 0, view)
    assert html.count("</script>") == N_SCRIPTS
    assert html.lower().count("</script") == N_SCRIPTS
    assert without_libraries(html).lower().count("<script") == N_SCRIPTS
    assert "<!--" not in html
    data = scripts_of(html)[-1]
    for bad in ("<", ">", "&", "\u2028", "\u2029", "\x00"):
        assert bad not in data.split("const params = ", 1)[1].split(";\n", 1)[0]
    for raw in ("onerror=alert(1)>", "<img", "<!--", "\x00", "\u2028", "\u2029"):
        assert raw not in html
    html.encode("utf-8")  # lone surrogates were escaped, not left in the text
    shown = params_of(html)["attention"][0]["left_text"]
    assert shown == [display_token(t) for t in tokens]
    assert display_token(INJECTIONS[0]) in shown  # the text itself still reaches the page


def test_script_json_escapes_what_could_end_a_script():
    text = script_json(INJECTIONS)
    assert text.isascii()
    assert not re.search(r"[<>&\u2028\u2029\x00]", text)
    assert json.loads(text) == INJECTIONS


def test_tokens_are_drawn_with_text_not_html():
    """bertviz's scripts put tokens into the page only through d3's .text()."""
    from viz.bertviz_embed import view_js

    for view in ("head", "model"):
        js = view_js(view)
        assert ".html(" not in js and "innerHTML" not in js
        assert ".text(d => d)" in js or ".text(function (d) {" in js


def test_page_is_at_most_a_fifth_of_bertvizs_own():
    """The README target, like for like: 128 tokens, 6 layers × 8 heads of encoder, decoder and
    cross attention, and bertviz given exactly the values our page carries (3 decimals)."""
    import torch
    from bertviz import head_view

    tr = synthetic_trace(128, 128, n_layers=6, n_heads=8)
    ours = bertviz_html(tr, 0, "head")  # within the app's own limits
    rounded = {}
    for entry, kind in zip(params_of(ours)["attention"], ("enc_self", "dec_self", "cross")):
        sent = np.asarray(entry["attn"])  # (L, H, Q, K) in thousandths
        assert np.abs(sent - tr.attn[kind][:, 0] * 1000).max() <= 0.5 + 1e-3  # 3 decimals
        rounded[kind] = (sent / 1000)[:, None]  # (L, 1, H, Q, K): what our page carries

    def layers(kind):
        return [torch.from_numpy(a) for a in rounded[kind]]  # each (1, H, Q, K), float64

    theirs = head_view(encoder_attention=layers("enc_self"),
                       decoder_attention=layers("dec_self"),
                       cross_attention=layers("cross"),
                       encoder_tokens=tr.src_tokens[0], decoder_tokens=tr.tgt_tokens[0],
                       html_action="return").data
    assert re.search(r"0\.\d{3}[,\]]", theirs)
    assert not re.search(r"\d\.\d{4}", theirs)  # bertviz too sends 3 decimals, no more
    assert len(ours.encode()) * 5 <= len(theirs.encode())


def test_over_budget_raises_with_the_input_length():
    tr = synthetic_trace(128, 128)
    with pytest.raises(BertvizTooLarge) as info:
        bertviz_html(tr, 0, "head", budget_bytes=500_000)
    assert info.value.n_tokens == 128 and info.value.size > 500_000
    assert "128-token" in str(info.value) and "attention view" in str(info.value)
    assert "MB" in str(info.value) and info.value.lines is None
    with pytest.raises(BertvizTooLarge):  # refused before anything is built
        bertviz_html(synthetic_trace(512, 512, 6, 8), 0, "model")


def test_too_many_lines_to_draw_raises():
    tr = synthetic_trace(100, 100, 6, 8)  # model view: 6 x 8 x 100 x 100 = 480k lines
    with pytest.raises(BertvizTooLarge) as info:
        bertviz_html(tr, 0, "model")
    assert info.value.lines == 480_000 and "100-token" in str(info.value)
    assert "fewer layers" in str(info.value)
    bertviz_html(tr, 0, "model", layers=[0, 1, 2])  # 240k: drawn
    bertviz_html(tr, 0, "head")  # one layer at a time: 80k


def test_bad_arguments(trace):
    with pytest.raises(ValueError, match="view"):
        bertviz_html(trace, 0, "neuron")
    with pytest.raises(IndexError):
        bertviz_html(trace, 5)
    with pytest.raises(ValueError, match="layers"):
        bertviz_html(trace, 0, layers=[7])
    with pytest.raises(ValueError, match="layer 1"):
        bertviz_html(trace, 0, layers=[0], layer=1)


def test_height_grows_with_the_input():
    short, long = synthetic_trace(8, 8), synthetic_trace(40, 40)
    for view in ("head", "model"):
        assert 100 < bertviz_height(short, 0, view) < bertviz_height(long, 0, view)
