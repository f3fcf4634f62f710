"""viz.steps and viz.positional write their chart text through viz.i18n._: inside a
`translated` block every title, axis and colour-bar title, subplot title, word legend entry and
hover label is translated; outside one it is the original English; the Korean catalogue
covers every message they send."""

from __future__ import annotations

import json
import re
import string

import numpy as np
import plotly.graph_objects as go
import pytest

from model import capture
from model.analysis.inspect import head_weights
from model.backends.lab.positional import sinusoid_table
from model.capture import GROUPS
from tests.unit.test_i18n import korean
from viz import common, positional, steps
from viz.i18n import translated

KO = korean()
EMBED = ["encoder.hook_tok", "encoder.hook_pos", "decoder.hook_tok", "decoder.hook_pos"]
HANGUL = re.compile(r"[\uac00-\ud7a3]")
KINDS = ("enc_self", "dec_self", "cross")
THETA = 10000.0 ** (-np.arange(0, 16, 2) / 16)


def brackets(message: str) -> str:
    return "⟦" + message + "⟧"


@pytest.fixture(scope="module")
def trace(bundle):
    names = list(GROUPS) + EMBED + steps.act_names({k: bundle.n_layers(k) for k in bundle.kinds})
    return capture(bundle, ["Winter is cold.", "The big dog eats fish."],
                   ["겨울은 추워요.", "큰 개가 생선을 먹어요."], target_lang="ko", names=names)


@pytest.fixture(scope="module")
def walks(bundle, trace):
    return {kind: steps.walkthrough(trace, head_weights(bundle, kind, 1), kind, 1, 0, 1)
            for kind in KINDS}


def figures(trace, walks) -> dict[str, go.Figure]:
    """Every figure-building public function of viz.steps and viz.positional, built now."""
    table = sinusoid_table(50, 16).numpy()
    learned = np.random.default_rng(0).normal(size=(50, 16))
    bias = learned[:40].reshape(2, 4, 5, 16)[..., 0]  # (heads, query, key)
    out: dict[str, go.Figure] = {}
    for kind, walk in walks.items():
        for step in steps.steps(walk, trace, hide_pad=False):
            out[f"steps {kind} {step.name}"] = step.figure
        for i, fig in enumerate(steps.query_key_figures(walk, trace, 1)):
            out[f"query_key {kind} {i}"] = fig
    out.update({
        "table_heatmap": positional.table_heatmap(table, 20),
        "dimension_curves": positional.dimension_curves(table, [2, 3], 30),
        "dimension_curves learned": positional.dimension_curves(learned, [2], 30),
        "position_similarity": positional.position_similarity(table, 20),
        "position_similarity cosine": positional.position_similarity(table, 20, "cosine"),
        "term_sizes enc": positional.term_sizes(trace, 1, "enc"),
        "term_sizes dec": positional.term_sizes(trace, 0, "dec"),
        "compare_tables": positional.compare_tables(table, learned, ("a", "b"), 20),
        "rotary_frequencies": positional.rotary_frequencies(THETA),
        "rotary_distance": positional.rotary_distance(
            THETA, 4, (np.array([-1, 0]), np.array([0.5, 2.0])), "layer 0 head 1"),
        "t5_bias_heatmap": positional.t5_bias_heatmap(bias, 1, "decoder"),
    })
    return out


def chart_texts(fig: go.Figure) -> list[str]:
    """The text we write into a figure: title, axis / colour-bar / legend titles, annotations
    (subplot titles), shown trace names and hover templates (common's shared default aside)."""
    spec = fig.to_plotly_json()
    layout = spec["layout"]

    def text(title) -> str:
        return (title.get("text") or "") if isinstance(title, dict) else (title or "")

    out = [text(layout.get("title"))]
    for name, part in layout.items():
        if isinstance(part, dict) and name.startswith(("xaxis", "yaxis", "coloraxis", "legend")):
            out.append(text(part.get("title")))
    out += [a.get("text") or "" for a in layout.get("annotations", [])]
    for tr in spec["data"]:
        out.append(text(tr.get("colorbar", {}).get("title")))
        if tr.get("showlegend") is not False and layout.get("showlegend") is not False:
            out.append(str(tr.get("name") or ""))
        if tr.get("hovertemplate") not in (None, common.HOVER):
            out.append(tr["hovertemplate"])
    return [t for t in out if t]


def has_words(text: str) -> bool:
    """English words of ours: 3+ letters outside markup and hover placeholders."""
    bare = re.sub(r"%\{[^}]*\}|<[^>]+>", " ", text)
    return bool(set(re.findall(r"[A-Za-z]{3,}", bare)) - {"cos", "sin", "rad"})


def test_every_chart_text_goes_through_the_translator(trace, walks):
    with translated(brackets):
        figs = figures(trace, walks)
        formulas = [s.formula for w in walks.values() for s in steps.steps(w, trace)]
    assert len(figs) == 3 * (11 + 3) + 11
    missed = {name: t for name, fig in figs.items() for t in chart_texts(fig)
              if has_words(t) and "⟦" not in t}
    assert not missed, missed
    for name, fig in figs.items():
        title = fig.layout.title.text
        if name.split()[-1] not in ("QKᵀ", "÷√d_k"):  # those two titles are pure maths
            assert title.startswith("⟦"), (name, title)
    assert all("⟦" in f for f in formulas), formulas
    assert not [f for f in figures(trace, walks).values()
                if "⟦" in json.dumps(chart_texts(f))], "nothing leaks out of the block"


def test_english_without_a_translator(trace, walks):
    figs = figures(trace, walks)
    assert figs["steps enc_self X"].layout.title.text == (
        "X: attention input · encoder self-attention · layer 1 · head 1")
    assert figs["steps cross K"].layout.xaxis.title.text == "head dimension"
    k = steps.steps(walks["cross"], trace)[2]
    assert k.formula == "K = encoder output (memory)·W_K + b_K, this head's columns"
    assert figs["steps dec_self softmax"].layout.title.text == "attention probabilities"
    bars = figs["query_key enc_self 2"]
    assert bars.layout.title.text.startswith("Scores and weights for query ")
    assert bars.data[0].hovertemplate == "key %{x}<br>score %{y:.4f}<extra></extra>"
    assert [a.text for a in bars.layout.annotations] == [
        "score q·k/√d_k (blocked keys hatched)", "softmax probability"]
    assert figs["table_heatmap"].layout.title.text == (
        "Positional table<br><sup>20 positions × 16 dimensions; row 0 = pad position; tokens "
        "use positions 1..n</sup>")
    assert figs["table_heatmap"].data[0].hovertemplate == (
        "position %{y}<br>dimension %{x}<br>value %{z:.4f}<extra></extra>")
    assert figs["dimension_curves"].layout.title.text.startswith(
        "Positional table (sinusoidal): chosen dimensions over position")
    assert figs["position_similarity cosine"].data[0].colorbar.title.text == "cosine similarity"
    assert figs["term_sizes dec"].layout.title.text == (
        "Token term vs positional term, decoder input, sentence 1")
    assert figs["rotary_distance"].data[1].name == "layer 0 head 1 mean score"
    assert figs["t5_bias_heatmap"].layout.title.text.startswith(
        "T5 relative position bias, decoder, head 1<br>")
    for fig in figs.values():
        assert not HANGUL.search(json.dumps(chart_texts(fig), ensure_ascii=False))


def test_a_callers_title_is_not_translated_again():
    table = sinusoid_table(10, 4).numpy()
    with translated(brackets):
        own = positional.table_heatmap(table, title="제목 <b>").layout.title.text
        default = positional.table_heatmap(table).layout.title.text
    assert own.startswith("제목 &lt;b&gt;<br>") and default.startswith("⟦Positional table⟧")


def test_korean_catalogue_covers_every_message(trace, walks):
    sent: set[str] = set()

    def record(message: str) -> str:
        sent.add(message)
        return message

    with translated(record):
        figures(trace, walks)
        for w in walks.values():
            steps.steps(w, trace)
    assert sent <= set(KO), sent - set(KO)  # nothing missing

    def fields(text: str) -> list[str]:
        return sorted(f for _, f, _, _ in string.Formatter().parse(text) if f)

    assert all(fields(m) == fields(KO[m]) and HANGUL.search(KO[m]) for m in sent)


def test_korean_charts_have_hangul(trace, walks):
    with translated(lambda m: KO.get(m, m)):
        figs = figures(trace, walks)
    english = {name: t for name, fig in figs.items() for t in chart_texts(fig)
               if has_words(t) and not HANGUL.search(t)}
    assert not english, english
    assert figs["table_heatmap"].layout.xaxis.title.text == "깊이 (차원)"
    assert figs["steps enc_self Q"].layout.title.text == "헤드 1의 Q"
