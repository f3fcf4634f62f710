"""Words inside the figures of viz/attention, masks, common, tokens, translation and tour go
through viz.i18n's _(): inside `with translated(fn):` every title, axis title, trace name and
hover word is fn's, outside it the English is exactly as before; the Korean catalogue
(locales/ko) turns them into Korean."""

from __future__ import annotations

import re
import string

import numpy as np
import pytest

from model import capture
from tests.conftest import ROOT
from tests.unit.test_i18n import korean
from viz import attention, common, masks, tokens, tour, translation
from viz.i18n import translated

FILES = ("attention", "masks", "common", "tokens", "translation", "tour")
HANGUL = re.compile(r"[\uac00-\ud7a3]")
# the long sentence pads every source side past MASK_TEXT_MAX (24) and past 40 pieces
SOURCES = ["겨울은 추워요.", "The big dog eats the fish in the park. " * 5]
TARGETS = ["Winter is cold.", "큰 개가 공원에서 생선을 먹어요."]
KEPT = {"True", "False"}  # the mask's values, as PyTorch prints them


def bracket(message: str) -> str:
    return "⟦" + message + "⟧"


@pytest.fixture(scope="module")
def trace(bundle):
    return capture(bundle, SOURCES, TARGETS, target_lang="auto")


@pytest.fixture(scope="module")
def vocab(bundle):
    return [bundle.tokenizer.id_to_piece(i) for i in range(bundle.tokenizer.vocab_size)]


def figures(trace, vocab) -> dict[str, object]:
    """Every figure the six files build, for each attention kind and both sentence lengths."""
    figs: dict[str, object] = {}
    for kind in ("enc_self", "dec_self", "cross"):
        figs[f"head {kind}"] = attention.head_figure(trace, kind, 1, 1, 2)
        figs[f"layer {kind}"] = attention.layer_figure(trace, kind, 0, 0)
        figs[f"grid {kind}"] = attention.grid_figure(trace, kind, 1, selected=(1, 1), max_size=3)
        for b in (0, 1):
            for i, fig in enumerate(masks.mask_effect_figures(trace, kind, 1, b, 0)):
                figs[f"effect {kind} {b} {i}"] = fig
    for b in (0, 1):
        for name, fig in masks.mask_figures(trace, b).items():
            figs[f"mask {b} {name}"] = fig
    for side in ("src", "tgt"):
        figs[f"ids {side}"] = tokens.id_matrix_figure(trace, side)
        figs[f"positions {side}"] = tokens.positions_figure(trace, side)
    steps = translation.steps_from_logits(trace, 1, vocab, k=3)
    figs["topk"] = translation.topk_figure(steps)
    figs["bar"] = translation.step_bar_figure(steps[1], 1)
    figs["row mean"] = translation.cross_row_figure(trace, 1, 0, None, 2)
    figs["row head"] = translation.cross_row_figure(trace, 1, 1, 3, 2)
    figs["steps"] = translation.cross_steps_figure(trace, 1, 0, 1, steps)
    figs["matrix"] = tour.matrix_figure(np.ones((3, 4)), ["a", "b", "c"], "T", "d")
    figs["norms"] = tour.norms_figure({"x": np.ones((3, 4)), "y": np.zeros((3, 4))},
                                      ["a", "b", "c"], "T")
    return figs


def texts(fig) -> list[str]:
    """Title, axis titles, colour bar titles, annotations, trace names and hover templates
    (not the data: token labels and hover pieces are the model's)."""
    layout = fig.to_plotly_json()["layout"]
    out = [layout.get("title", {}).get("text") or ""]
    for key, part in layout.items():
        if key.startswith(("xaxis", "yaxis", "coloraxis", "legend")) and isinstance(part, dict):
            out.append((part.get("title") or {}).get("text") or "")
    out += [a.get("text") or "" for a in layout.get("annotations", [])]
    for tr in fig.data:
        out += [tr.name or "", tr.hovertemplate or ""]
        colorbar = getattr(tr, "colorbar", None)
        if colorbar is not None:
            out.append(colorbar.title.text or "")
    return [t for t in out if t]


def english_left(text: str) -> set[str]:
    """English words of ours outside every ⟦…⟧ (hover fields, markup and pieces set aside)."""
    prev = None
    while prev != text:
        prev, text = text, re.sub(r"⟦[^⟦⟧]*⟧", " ", text)
    text = re.sub(r"%\{[^}]*\}|<[^>]*>", " ", text)
    return set(re.findall(r"[A-Za-z]{3,}", text)) - KEPT


def test_every_word_in_the_figures_goes_through_the_translator(trace, vocab):
    with translated(bracket):
        figs = figures(trace, vocab)
    assert len(figs) >= 40
    for name, fig in figs.items():
        title = fig.layout.title.text
        axes = [fig.layout[a].title.text for a in fig.layout if a.startswith(("xaxis", "yaxis"))]
        if name == "matrix":  # the caller's title and x axis ("T", "d") stay as given
            title, axes = "⟦⟧", [fig.layout.yaxis.title.text]
        elif name == "norms":
            title = "⟦⟧"
        assert title and "⟦" in title, (name, title)
        assert any(axes) and all("⟦" in t for t in axes if t), (name, axes)
        left = {t: english_left(t) for t in texts(fig)}
        assert not {t: w for t, w in left.items() if w}, (name, left)


def test_the_kind_names_and_nested_words_are_translated_once_each(trace, vocab):
    with translated(bracket):
        head = attention.head_figure(trace, "cross", 1, 1, 2)
        grid = attention.grid_figure(trace, "enc_self", 0)
        mask = masks.mask_figures(trace, 0)["decoder subsequent mask"]
        after = masks.mask_effect_figures(trace, "dec_self", 0, 0, 1)[1]
        bar = translation.cross_row_figure(trace, 1, 0, None, 2)
    assert head.layout.title.text.startswith(
        "⟦⟦encoder–decoder (cross) attention⟧ · layer 1 · head 2 · attention weights (")
    assert grid.layout.yaxis.title.text == "⟦layer⟧"  # one heatmap: panels named by ticks
    assert grid.layout.yaxis.ticktext[1] == "⟦layer 1⟧"
    assert grid.layout.xaxis.ticktext[3] == "⟦head 3⟧"
    assert "⟦layer 1⟧ · ⟦query⟧ " in grid.data[0].y[-1]  # hover: %{y} names layer and query
    assert any(x.startswith("⟦head 1⟧ · ⟦key⟧ ")
               for x in grid.data[0].x)
    assert grid.data[0].hovertemplate.startswith("%{y}<br>%{x}<br>⟦weight⟧: %{z:.4f}")
    assert mask.layout.title.text.startswith("⟦⟦Decoder subsequent mask⟧ (")
    assert mask.data[0].hovertemplate == ("⟦query⟧: %{y}<br>⟦key⟧: %{x}<br>⟦blocked⟧: "
                                          "%{text}<extra></extra>")
    assert "-1e9 (⟦blocked⟧)" in set(np.asarray(after.data[0].customdata).ravel())
    assert bar.layout.title.text == ("⟦Step 2: cross-attention over the source "
                                     "(layer 0, ⟦mean of heads⟧)⟧")


def test_without_a_translator_the_english_is_unchanged(trace, vocab):
    figs = figures(trace, vocab)
    assert not [t for fig in figs.values() for t in texts(fig) if "⟦" in t or "⟧" in t]
    n_src = trace.src_ids.shape[1]
    nq, nk = trace.length("tgt", 1), trace.length("src", 1)
    head = attention.head_figure(trace, "cross", 1, 1, 2)
    assert head.layout.title.text == ("encoder–decoder (cross) attention · layer 1 · head 2 · "
                                      f"attention weights ({nq}, {nk})")
    assert head.layout.xaxis.title.text == "key (attended to)"
    assert head.layout.yaxis.title.text == "query (attending)"
    assert head.data[0].hovertemplate == common.HOVER
    layer = figs["layer enc_self"]
    assert layer.layout.title.text == ("encoder self-attention · layer 0: all 4 heads "
                                       "(shared 0–1 scale)")
    assert layer.layout.yaxis.title.text == "query (attending)"
    assert [a.text for a in layer.layout.annotations] == [f"head {h}" for h in range(4)]
    assert layer.data[0].hovertemplate == ("head %{customdata[0]}<br>%{y}<br>%{x}<br>"
                                           "weight: %{z:.4f}<extra></extra>")
    grid = figs["grid dec_self"]
    assert grid.layout.title.text == ("decoder self-attention: every layer (rows) × head "
                                      "(columns), shared 0–1 scale")
    assert grid.data[0].y[-1].startswith("layer 1 · query ")
    enc, dec = figs["mask 0 encoder pad mask"], figs["mask 0 decoder subsequent mask"]
    assert enc.layout.title.text == f"Encoder pad mask ({n_src}, {n_src}): True = blocked"
    assert enc.data[0].hovertemplate == masks.MASK_HOVER_LONG
    assert dec.data[0].hovertemplate == masks.MASK_HOVER
    before, after, soft = (figs[f"effect enc_self 1 {i}"] for i in range(3))
    shape = f"(n_q_seq={n_src}, n_k_seq={n_src})"
    assert before.layout.title.text == (f"1. Scores QKᵀ/√d_k before masking {shape} · encoder "
                                        "self-attention, layer 1, head 0")
    assert after.layout.title.text == f"2. After masking: blocked cells set to -1e9 {shape}"
    assert soft.layout.title.text == f"3. After softmax: blocked cells exactly 0 {shape}"
    assert after.data[0].hovertemplate == common.HOVER  # > 40 pieces: no customdata
    short = figs["effect dec_self 0 1"].data[0]
    assert short.hovertemplate == ("query: %{y}<br>key: %{x}<br>value: %{customdata}"
                                   "<extra></extra>")
    assert "-1e9 (blocked)" in set(np.asarray(short.customdata).ravel())
    ids = figs["ids src"]
    assert ids.layout.title.text == (
        f"Padded encoder input (source) ids, shape (bs=2, n_enc_seq={n_src}); dark cells are "
        f"padding (id {trace.pad_id})")
    assert list(ids.data[0].y) == ["sentence 1", "sentence 2"]
    assert ids.data[0].hovertemplate == ("%{y}, position %{x}<br>piece: %{customdata[0]}<br>"
                                         "id: %{customdata[1]}<extra></extra>")
    pos = figs["positions tgt"]
    assert pos.layout.title.text.startswith("Position ids for the decoder input (target), shape")
    assert pos.data[0].hovertemplate == ("%{y}, slot %{x}<br>position id: %{z:.0f}"
                                         "<extra></extra>")
    assert figs["topk"].layout.title.text == "Top candidates at each decoding step"
    assert figs["topk"].data[0].hovertemplate == ("step %{y}<br>rank %{x}<br>%{text}"
                                                  "<extra></extra>")
    assert figs["bar"].layout.title.text.startswith("Step 1: top 3 next pieces (chosen: ")
    assert figs["row head"].layout.title.text == ("Step 2: cross-attention over the source "
                                                  "(layer 1, head 3)")
    assert figs["row mean"].data[0].hovertemplate == ("source %{x}<br>weight %{y:.4f}"
                                                      "<extra></extra>")
    assert figs["steps"].layout.title.text == "Cross-attention at each step (layer 0, head 1)"
    assert figs["matrix"].layout.yaxis.title.text == "piece"
    assert figs["norms"].layout.yaxis.title.text == "vector length ‖·‖₂"


def fields(text: str) -> set[str]:
    return {name for _lit, name, _spec, _conv in string.Formatter().parse(text)
            if name is not None}


def marked() -> set[str]:
    babel = pytest.importorskip("babel.messages.extract")
    return {msg for f in FILES for _line, msg, *_rest in babel.extract_from_file(
        "python", ROOT / "viz" / f"{f}.py", keywords={"_": None, "N_": None})}


def test_the_korean_file_covers_every_message_with_its_placeholders():
    ko, here = korean(), marked()
    assert here <= set(ko), here - set(ko)
    assert not [m for m in here if fields(m) != fields(ko[m])]
    assert not [m for m in here if not HANGUL.search(ko[m])]


def test_korean_figures(trace, vocab):
    ko = korean()
    with translated(lambda m: ko.get(m, m)):
        figs = figures(trace, vocab)
    for name, fig in figs.items():
        shown = [fig.layout.title.text] + [fig.layout[a].title.text for a in fig.layout
                                           if a.startswith(("xaxis", "yaxis"))]
        if name in ("matrix", "norms"):  # the caller's own title (and x axis): "T", "d"
            shown = [fig.layout.yaxis.title.text] + shown[2:] * (name == "norms")
        assert all(HANGUL.search(t) for t in shown if t), (name, shown)
    assert figs["head enc_self"].layout.title.text.startswith("인코더 셀프 어텐션 · 층 1 · 헤드 2")
    assert figs["layer dec_self"].data[0].hovertemplate.startswith(
        "헤드 %{customdata[0]}<br>%{y}<br>%{x}<br>가중치: ")
    layer = figs["layer dec_self"].data[0]  # the hover's query and key: cell categories
    rows = figs["layer dec_self"].layout.meta["tiles"]["rows"]
    assert sum(y.startswith("쿼리 ") for y in layer.y) == len(trace.tgt_tokens[0]) * rows
    assert layer.x[0].startswith("키 ")
