"""Chart text of viz/heads, contributions, flow, qkmap and embeddings goes through viz.i18n._:
inside `translated(fn)` every title, axis title, colour-bar title, subplot title and word
legend name is fn's; outside one the English is as before; the Korean catalogue has a
Korean entry, same placeholders, for every message these files mark."""

from __future__ import annotations

import re
import string
from types import SimpleNamespace

import numpy as np
import plotly.graph_objects as go
import pytest

from model.analysis.contributions import Contributions
from model.analysis.flow import Edge, FlowGraph
from model.analysis.heads import CROSS_NOTES, METRICS
from model.analysis.qkmap import QKPoints
from tests.conftest import ROOT
from tests.unit.test_i18n import korean
from viz import contributions as vc
from viz import embeddings, flow, heads, qkmap
from viz.i18n import translated

FILES = ("heads", "contributions", "flow", "qkmap", "embeddings")
HANGUL = re.compile(r"[\uac00-\ud7a3]")


def mark(message: str) -> str:
    return "⟦" + message + "⟧"


def _contributions() -> Contributions:
    rng = np.random.default_rng(1)
    top = {("cross", 1, 2): {"promotes": [("▁a", 0.5), ("▁c", 0.2)],
                             "suppresses": [("▁b", -0.3)]}}
    tables = {"dec_self": rng.normal(size=(2, 3)), "cross": rng.normal(size=(2, 3))}
    return Contributions(step=1, token_id=5, token="▁x", logit=2.5, knockout=tables,
                         knockout_top=top, dla={k: v / 2 for k, v in tables.items()},
                         other={"embeddings": 0.3}, dla_top=top)


def _graph() -> FlowGraph:
    edges = [Edge(("dec", 0, 1), ("dec", 1, 1), 0.5, "residual"),
             Edge(("dec", 0, 0), ("dec", 1, 1), 0.2, "dec_self", head=0),
             Edge(("enc", 1, 0), ("dec", 1, 1), 0.3, "cross", head=1),
             Edge(("enc", 0, 1), ("enc", 1, 0), 0.6, "enc_self", head=0)]
    nodes = {n for e in edges for n in (e.src, e.dst)}
    return FlowGraph(target=("dec", 1, 1), threshold=0.15, edges=edges,
                     nodes=nodes, tokens={"enc": ["▁a", "</s>"], "dec": ["<s>", "▁b"]},
                     depths={"enc": 1, "dec": 1})


def _points(method: str = "pca") -> QKPoints:
    rng = np.random.default_rng(2)
    return QKPoints(xy=rng.normal(size=(8, 2)).astype(np.float32),
                    is_query=np.array([1, 1, 1, 1, 0, 0, 0, 0], bool),
                    token=["a", "b", "a", "c"] * 2, position=np.array([1, 2, 3, 1] * 2),
                    sentence=np.array([0, 0, 0, 1] * 2), lang=["en", "en", "en", "ko"] * 2,
                    texts=["one", "two"], method=method,
                    explained=(0.3, 0.2) if method == "pca" else ())


def _trace() -> SimpleNamespace:
    rng = np.random.default_rng(3)
    tokens = ["▁the", "<b>", "▁cat"]
    return SimpleNamespace(src_tokens=[tokens], tgt_tokens=[tokens],
                           hidden={"enc": rng.normal(size=(3, 1, 4, 8)),
                                   "dec": rng.normal(size=(3, 1, 4, 8))})


def figures() -> dict[str, go.Figure]:
    """One figure per public figure function (and per variant that draws other words)."""
    rng = np.random.default_rng(0)
    r = rng.random((3, 4))
    effect = {"tokens": [["▁a", "▁b"]], "logp_change": [[0.1, -0.2]],
              "logp_before": [[-1.0, -2.0]], "logp_after": [[-0.9, -2.2]],
              "ablate_spec": "cross:1:2", "sentence_loss_before": [1.25],
              "sentence_loss_after": [1.5]}
    c, tr = _contributions(), _trace()
    lens = {"layers": [0, 1], "tokens": ["<s>", "▁은"],
            "top": [[[("은", 0.5), ("는", 0.2)], [("a", 0.9)]]] * 2}
    out = {
        "stats": heads.stats_heatmaps({"entropy": rng.random((2, 3))}, "enc_self")[0],
        "importance": heads.importance_figure({"enc_self": r[:2], "cross": r[1:]}),
        "ablation": heads.ablation_figure(effect),
        "ablation_nothing": heads.ablation_figure({**effect, "ablate_spec": ""}),
        "rollout": heads.rollout_figure(r, list("abc"), list("wxyz"), "Caller's title"),
        "rollout_bars": heads.rollout_bars(r, list("wxyz"), 1, list("abc")),
        "compare": heads.compare_figure(r, r / 2, list("abc"), list("wxyz"), list("abc"),
                                        list("wxyz"), ("L", "R")),
        "compare_no_diff": heads.compare_figure(r, r[:2], list("abc"), list("wxyz"),
                                                list("ab"), list("wxyz"), ("L", "R")),
        "contrib_dla": vc.heads_figure(c, "dla"),
        "contrib_knockout": vc.heads_figure(c, "knockout"),
        "contrib_terms": vc.terms_figure(c),
        "contrib_top": vc.top_tokens_figure(c, ("cross", 1, 2)),
        "flow": flow.flow_figure(_graph()),
        "qk_tsne": qkmap.qkmap_figure(_points("tsne"), "cross", 1, 0, "role"),
        "pca": embeddings.pca_trajectories(tr, "enc", 0),
        "cosine": embeddings.cosine_by_layer(tr, "dec", 0, 1),
        "norms": embeddings.norms_by_layer(tr, "enc", 0),
        "change": embeddings.layer_change(tr, "enc", 0),
        "change_relative": embeddings.layer_change(tr, "dec", 0, "relative"),
        "lens": embeddings.logit_lens_figure(lens),
    }
    for colour_by in qkmap.COLOUR_BY:
        out[f"qk_{colour_by}"] = qkmap.qkmap_figure(_points(), "enc_self", 0, 1, colour_by)
    return out


def shown_text(fig: go.Figure) -> list[str]:
    """Title, axis titles, legend title, subplot titles, colour-bar titles, trace names."""
    layout = fig.layout
    texts = [layout.title.text, layout.legend.title.text]
    texts += [ax.title.text for ax in (*fig.select_xaxes(), *fig.select_yaxes())]
    texts += [a.text for a in layout.annotations or ()]
    for name in ("coloraxis", "coloraxis2"):
        if name in layout:
            texts.append(layout[name].colorbar.title.text)
    for t in fig.data:
        texts.append(t.name)
        if "colorbar" in t:
            texts.append(t.colorbar.title.text)
        if "marker" in t and "colorbar" in t.marker:
            texts.append(t.marker.colorbar.title.text)
    return [x for x in texts if x]


# text left as it is, by design: math and symbols, attention-kind keys on traces, metric
# identifiers, method names, and titles the caller passes in (the caller translates those)
NOT_WORDS = {"PC 1", "PC 2", "Δ log p", "Δ", "logit", "−Δ logit", "‖h‖", "enc_self", "dec_self",
             "cross", "Caller's title", "L", "R"}


@pytest.fixture(scope="module")
def english() -> dict[str, go.Figure]:
    return figures()


@pytest.fixture(scope="module")
def marked() -> dict[str, go.Figure]:
    with translated(mark):
        return figures()


def test_every_chart_word_goes_through_the_translator(marked):
    missed = {name: [t for t in shown_text(fig) if "⟦" not in t and t not in NOT_WORDS]
              for name, fig in marked.items()}
    missed = {name: texts for name, texts in missed.items() if texts}
    assert not missed, missed
    for name, fig in marked.items():
        go.Figure(fig.to_dict())  # still a valid figure (plotly validates every property)
        if name != "rollout":
            assert "⟦" in fig.layout.title.text, name


def test_hover_words_are_translated_and_plotly_fields_kept(marked):
    def hovers(fig):
        return " ".join(str(t.hovertemplate or "") + " ".join(map(str, np.ravel(t.text)))
                        if t.text is not None else str(t.hovertemplate or "")
                        for t in fig.data)

    expect = {"stats": ["⟦layer⟧ %{y} ⟦head⟧ %{x}<br>⟦entropy⟧ %{z:.4f}"],
              "importance": ["⟦layer⟧ %{y} ⟦head⟧ %{x}", "⟦Δ loss⟧ %{z:+.4f}"],
              "ablation": ["⟦log p before⟧ %{customdata[0]:.3f}", "⟦change⟧ %{y:+.3f}"],
              "rollout": ["⟦share⟧ %{z:.3f}"], "compare": ["⟦right − left⟧ %{z:+.3f}"],
              "contrib_dla": ["⟦layer⟧ %{y} ⟦head⟧ %{x}<br>logit %{z:+.4f}"],
              "flow": ["⟦from ⟦⟦decoder⟧ depth 0⟧ · 2:▁b⟧", "⟦residual⟧: 0.500"],
              "qk_role": ["⟦query⟧ 1:a"], "norms": ["⟦layer⟧ %{y}<br>‖h‖"],
              "change": ["⟦1 − cosine⟧ %{z:.3f}<br>⟦relative change⟧ %{customdata:.3f}"]}
    for name, parts in expect.items():
        text = hovers(marked[name])
        for part in parts:
            assert part in text, (name, part)
    lens = marked["lens"].data[0].customdata
    assert lens[0][1].startswith("⟦layer 0 · after 2:▁은⟧<br>a  0.900")
    assert marked["flow"].layout.xaxis.ticktext[:2] == ("⟦encoder⟧<br>⟦emb⟧", "⟦encoder⟧<br>L0")


def test_without_a_translator_the_english_is_unchanged(english):
    titles = {name: fig.layout.title.text for name, fig in english.items()}
    assert not any("⟦" in "".join(shown_text(f)) for f in english.values())
    assert titles["importance"] == (
        "Importance scan: loss increase when one head is ablated<br><sup>mean NLL per target "
        "token, teacher-forced on the un-ablated translation; red = the model needs the "
        "head</sup>")
    assert titles["ablation"] == (
        "Ablating cross:1:2: change in log-probability of each target token<br><sup>"
        "teacher-forced on the un-ablated translation; loss 1.250 → 1.500 nats/token</sup>")
    assert titles["ablation_nothing"].startswith("Ablating nothing: ")
    assert titles["rollout"] == "Caller's title"
    assert titles["rollout_bars"] == "Rollout for query 2:b: where its information comes from"
    assert titles["compare"] == ("Attention compared<br><sup>difference shown because both "
                                 "inputs have the same tokens</sup>")
    assert titles["contrib_dla"] == (
        "direct logit attribution: ▁x at step 2 (logit 2.50)<br><sup>head output through "
        "the frozen final LayerNorm and the unembedding</sup>")
    assert titles["contrib_top"] == (
        "encoder–decoder (cross) attention layer 1 head 2: tokens promoted (red) and "
        "suppressed (blue)<br><sup>direct logit attribution over the whole vocabulary</sup>")
    assert titles["contrib_terms"].startswith("Every term of the logit of ▁x: Σ = ")
    assert english["contrib_terms"].data[0].y[0] == "decoder self-attention layer 0 heads"
    assert titles["flow"] == ("Information flow into decoder depth 1 · 2:▁b (edges ≥ 0.15 "
                              "of a node's input)")
    assert titles["qk_position"] == (
        "encoder self-attention · layer 0 · head 1: 4 queries and 4 keys from 2 sentences"
        "<br><sup>joint PCA (30 %, 20 % of variance); keys shifted and scaled so a query "
        "lies near the keys it attends to</sup>")
    assert titles["pca"].startswith("Encoder hidden states, sentence 1: PCA over all layers "
                                    "(explained variance ")
    assert titles["cosine"] == "Decoder layer 1: token–token cosine similarity, sentence 1"
    assert titles["norms"] == "Encoder hidden-state norm per layer, sentence 1"
    assert titles["change_relative"] == ("Decoder: how much each layer changed each token "
                                         "(relative change), sentence 1")
    assert titles["lens"] == "Logit lens: the next piece read out from every decoder layer"
    assert titles["stats"] == (
        "encoder self-attention: entropy<br><sup>mean entropy (nats) of a query's attention "
        "over its unblocked keys; 0 = all on one key, log n = spread evenly over n keys</sup>")
    assert english["stats"].layout.xaxis.title.text == "head"
    assert english["change"].data[0].hovertemplate == (
        "%{x}<br>layer %{y}<br>1 − cosine %{z:.3f}<br>relative change %{customdata:.3f}"
        "<extra></extra>")
    assert [t.name for t in english["pca"].data][:3] == ["paths", "layer 0 (embeddings)",
                                                         "layer 1"]


def test_stats_definitions_are_the_models_and_a_callers_stay_as_given():
    assert heads.METRIC_DEFINITIONS == METRICS and set(heads.METRIC_NAMES) == set(METRICS)
    assert heads.CROSS_NOTES == CROSS_NOTES
    stats = {"pad_share": np.zeros((1, 2)), "custom": np.ones((1, 2))}
    with translated(mark):
        pad, custom = heads.stats_heatmaps(stats, "cross", {"custom": "typed <def>"})
    assert pad.layout.title.text == (
        "⟦encoder–decoder (cross) attention⟧: ⟦pad_share⟧<br><sup>⟦share of attention on "
        "padding keys (must be 0: pad keys are masked)⟧</sup>")
    assert pad.data[0].colorbar.title.text == "⟦pad_share⟧"
    assert custom.layout.title.text.endswith(": custom<br><sup>typed &lt;def&gt;</sup>")


def test_korean_titles_from_the_catalogue():
    ko = korean()
    with translated(lambda m: ko.get(m, m)):
        figs = figures()
    for name, fig in figs.items():
        if name != "rollout":
            assert HANGUL.search(fig.layout.title.text), (name, fig.layout.title.text)
        for ax in (*fig.select_xaxes(), *fig.select_yaxes()):
            if ax.title.text and ax.title.text not in NOT_WORDS:
                assert HANGUL.search(ax.title.text), (name, ax.title.text)
    assert figs["norms"].layout.title.text == "인코더 층별 은닉 상태 노름, 문장 1"
    assert figs["stats"].layout.yaxis.title.text == "층"


def _fields(text: str) -> set[str]:
    return {name for _lit, name, _spec, _conv in string.Formatter().parse(text)
            if name is not None}


def test_every_marked_message_has_a_korean_entry_with_its_placeholders():
    extract = pytest.importorskip("babel.messages.extract")
    marked_here = {msg for f in FILES for _line, msg, _c, _ctx in extract.extract_from_file(
        "python", ROOT / "viz" / f"{f}.py", keywords={"_": None, "N_": None})}
    ko = korean()
    assert len(marked_here) >= 70
    assert marked_here <= set(ko), marked_here - set(ko)
    bad = {m: ko[m] for m in marked_here
           if _fields(m) != _fields(ko[m]) or not HANGUL.search(ko[m])}
    assert not bad, bad


def test_cross_attention_words_only_on_cross_attention():
    """A model without cross attention (MiniLM, GPT-2) is not told what a metric means on
    cross attention, nor shown another model's special pieces (<2ko>)."""
    stats = {m: np.zeros((1, 2)) for m in ("distance", "diagonal", "special_share")}
    for kind in ("enc_self", "dec_self"):
        for fig in heads.stats_heatmaps(stats, kind):
            assert "cross" not in fig.layout.title.text and "<2ko>" not in fig.layout.title.text
    titles = [f.layout.title.text for f in heads.stats_heatmaps(stats, "cross")]
    assert sum("cross attention: " in t for t in titles) == 2, titles
