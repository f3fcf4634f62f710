"""The figures show exactly what the model did: figure data is compared with the Trace."""

from __future__ import annotations

import html
import re

import numpy as np
import pytest

from model import capture, translate
from model.analysis.inspect import head_weights
from model.capture import GROUPS
from model.masks import MASK_FILL
from viz import attention, common, masks, steps, tiles, tokens, translation

SOURCES = ["겨울은 추워요.", "The big dog eats the fish in the park."]
TARGETS = ["Winter is cold.", "큰 개가 공원에서 생선을 먹어요."]
EMBED = ["encoder.hook_tok", "encoder.hook_pos", "decoder.hook_tok", "decoder.hook_pos"]


@pytest.fixture(scope="module")
def trace(bundle):
    names = list(GROUPS) + EMBED + steps.act_names({k: bundle.n_layers(k) for k in bundle.kinds})
    return capture(bundle, SOURCES, TARGETS, target_lang="auto", names=names,
                   ablate={("enc_self", 1, 2)})


def unpadded(trace, kind, b):
    nq = trace.length("src" if kind == "enc_self" else "tgt", b)
    nk = trace.length("tgt" if kind == "dec_self" else "src", b)
    return nq, nk


def assert_labelled(fig):
    assert fig.layout.title.text, "every figure has a title"
    xs = [a for a in fig.layout if a.startswith("xaxis")]
    assert any(fig.layout[a].title.text for a in xs), "some x axis is labelled"


def test_token_labels_keep_pieces_and_make_repeats_unique():
    pieces = ["<2en>", "▁겨울", "은", "▁the", "▁the", "<s>", "a&b", "▁the"]
    labels = common.token_labels(pieces)
    assert len(set(labels)) == len(labels)
    assert labels[:4] == ["&lt;2en&gt;", "▁겨울", "은", "▁the"]
    assert labels[4] == "▁the (2)" and labels[7] == "▁the (3)"
    # plotly decodes the entities, so what is shown is the piece itself, ▁ included
    assert [html.unescape(x) for x in labels[:4]] == pieces[:4]
    assert html.unescape(labels[5]) == "<s>" and html.unescape(labels[6]) == "a&b"
    assert common.token_labels(["", ""]) == ["∅", "∅ (2)"]


def test_token_labels_numbered_and_invisible_characters_spelled_out():
    pieces = ["<2ko>", "▁the", "a\x1b[31m", "\u202eevil", "zero\u200bwidth", "nb\xa0sp", "▁the"]
    want = ["1:&lt;2ko&gt;", "2:▁the", "3:a\\x1b[31m", "4:\\u202eevil", "5:zero\\u200bwidth",
            "6:nb\\xa0sp", "7:▁the"]
    assert common.token_labels(pieces, numbered=True) == want
    plain = common.token_labels(pieces)
    assert plain[2:6] == [w.split(":", 1)[1] for w in want[2:6]] and plain[6] == "▁the (2)"
    for label in plain + common.token_labels(pieces, numbered=True):
        assert label.isprintable(), repr(label)
    assert common.plotly_text("<b>\n</b>") == "&lt;b&gt;\\n&lt;/b&gt;"


def test_block_mean_keeps_shape_bounds_and_averages():
    rng = np.random.default_rng(0)
    z = rng.random((100, 37)).astype(np.float32)
    small, rows, cols = common.block_mean(z, 16)
    assert small.shape[0] <= 16 and small.shape[1] <= 16
    assert small.shape == (len(rows), len(cols))
    assert np.isclose(small[0, 0], z[: rows[1], : cols[1]].mean(), atol=1e-6)
    same, r, c = common.block_mean(z[:5, :7], 16)
    assert np.array_equal(same, z[:5, :7]) and r == list(range(5)) and c == list(range(7))
    labels = common.block_labels([f"t{i}" for i in range(100)], rows)
    assert len(labels) == len(rows) and len(set(labels)) == len(labels)


@pytest.mark.parametrize("kind", ["enc_self", "dec_self", "cross"])
def test_head_heatmap_is_the_traced_attention(trace, kind):
    layer, b, head = 1, 0, 3
    fig = attention.head_figure(trace, kind, layer, b, head, hide_pad=True)
    nq, nk = unpadded(trace, kind, b)
    z = np.asarray(fig.data[0].z)
    np.testing.assert_array_equal(z, trace.attn[kind][layer, b, head, :nq, :nk])
    q_tok, k_tok = masks.axis_tokens(trace, kind, b)
    assert list(fig.data[0].y) == common.token_labels(q_tok[:nq])
    assert list(fig.data[0].x) == common.token_labels(k_tok[:nk])
    assert (fig.data[0].zmin, fig.data[0].zmax) == (0, 1)
    assert "query" in fig.data[0].hovertemplate and "key" in fig.data[0].hovertemplate
    assert_labelled(fig)
    padded = attention.head_figure(trace, kind, layer, b, head, hide_pad=False)
    np.testing.assert_array_equal(np.asarray(padded.data[0].z), trace.attn[kind][layer, b, head])


def test_layer_view_and_grid_cover_every_head(trace):
    """One heatmap trace each (viz.tiles); every head's panel is its traced attention (the
    grid's pooled by block_mean), and the gaps between panels stay empty."""
    n_layers, _, n_heads = trace.attn["cross"].shape[:3]
    layer_fig = attention.layer_figure(trace, "cross", 0, 1)
    assert len(layer_fig.data) == 1
    meta = layer_fig.layout.meta["tiles"]
    assert meta["rows"] * meta["cols"] >= n_heads and meta["cols"] <= 8
    nq, nk = unpadded(trace, "cross", 1)
    np.testing.assert_allclose(tiles.panel(layer_fig, 0, 2),
                               trace.attn["cross"][0, 1, 2, :nq, :nk])
    drawn = np.isfinite(np.asarray(layer_fig.data[0].z, dtype=float)).sum()
    assert drawn == n_heads * nq * nk  # every head once, nothing in the gaps
    grid = attention.grid_figure(trace, "cross", 1, max_size=3)
    assert len(grid.data) == 1
    assert grid.layout.meta["tiles"]["rows"] == n_layers
    assert grid.layout.meta["tiles"]["cols"] == n_heads
    for layer in range(n_layers):
        for h in range(n_heads):
            small, _, _ = common.block_mean(trace.attn["cross"][layer, 1, h, :nq, :nk], 3)
            assert max(small.shape) <= 3
            np.testing.assert_allclose(tiles.panel(grid, layer, h), small, rtol=1e-6)
    z = np.asarray(grid.data[0].z, dtype=float)
    assert np.isfinite(z).sum() == n_layers * n_heads * small.size
    assert "pooled" in grid.data[0].hovertemplate  # 3 × 3 cells stand for 20 × 31 weights
    assert_labelled(layer_fig)
    assert grid.layout.title.text


def test_mask_views_equal_trace_masks(trace):
    for b in range(2):
        mats = masks.mask_matrices(trace, b)
        np.testing.assert_array_equal(mats["encoder pad mask"], trace.masks["enc_self"][b])
        np.testing.assert_array_equal(mats["combined decoder mask"], trace.masks["dec_self"][b])
        np.testing.assert_array_equal(
            mats["decoder subsequent mask"] | mats["decoder pad mask"], trace.masks["dec_self"][b])
        np.testing.assert_array_equal(mats["cross (encoder–decoder) mask"],
                                      trace.masks["cross"][b])
        figs = masks.mask_figures(trace, b)
        for name, fig in figs.items():
            np.testing.assert_array_equal(np.asarray(fig.data[0].z), mats[name].astype(np.float32))
            if max(mats[name].shape) <= masks.MASK_TEXT_MAX:
                assert set(np.asarray(fig.data[0].text).ravel()) <= {"True", "False"}
            else:  # long inputs: no per-cell text, hover explains the 0/1
                assert fig.data[0].text is None and "1 = True" in fig.data[0].hovertemplate
            assert_labelled(fig)
    assert trace.masks["enc_self"][0].any(), "sentence 1 is the shorter one: it has pad keys"


def test_mask_effect_shows_scores_minus_1e9_and_softmax(trace):
    kind, layer, b, head = "enc_self", 0, 0, 1
    before, after, soft = masks.mask_effect_figures(trace, kind, layer, b, head)
    np.testing.assert_array_equal(np.asarray(before.data[0].z), trace.scores[kind][layer, b, head])
    blocked = trace.masks[kind][b]
    text = np.asarray(after.data[0].text)
    assert (text[blocked] == "-1e9").all() and not (text[~blocked] == "-1e9").any()
    assert np.isnan(np.asarray(after.data[0].z, dtype=float)[blocked]).all()
    np.testing.assert_array_equal(np.asarray(soft.data[0].z), trace.attn[kind][layer, b, head])
    assert (np.asarray(soft.data[0].z)[blocked] == 0).all()


@pytest.mark.parametrize("kind", ["enc_self", "dec_self", "cross"])
def test_steps_recompute_the_model(bundle, trace, kind):
    layer, b = 1, 0
    weights = head_weights(bundle, kind, layer)
    d = bundle.config.d_model
    assert weights["W_Q"].shape == (d, d) and weights["b_O"].shape == (d,)
    prefix = {"enc_self": "encoder.layers.1.self_attn", "dec_self": "decoder.layers.1.self_attn",
              "cross": "decoder.layers.1.cross_attn"}[kind]
    for head in range(bundle.config.n_heads):
        walk = steps.walkthrough(trace, weights, kind, layer, b, head)
        tol = {"rtol": 1e-4, "atol": 1e-5}
        np.testing.assert_allclose(walk.q, trace.q[kind][layer, b, head], **tol)
        np.testing.assert_allclose(walk.k, trace.k[kind][layer, b, head], **tol)
        np.testing.assert_allclose(walk.v, trace.v[kind][layer, b, head], **tol)
        np.testing.assert_allclose(walk.scaled, trace.scores[kind][layer, b, head], **tol)
        np.testing.assert_allclose(walk.probs, trace.attn[kind][layer, b, head], **tol)
        recorded = trace.acts[f"{prefix}.hook_context"][b, head]
        if (kind, layer, head) in trace.ablate:
            assert not recorded.any()  # the knocked-out head's context was zeroed
        else:
            np.testing.assert_allclose(walk.context, recorded, **tol)
        assert (walk.masked[walk.blocked] == MASK_FILL).all()
    np.testing.assert_allclose(walk.out, trace.acts[f"{prefix}.hook_out"][b], **tol)
    shown = steps.steps(walk, trace, hide_pad=False)
    assert [s.name for s in shown] == ["X", "Q", "K", "V", "QKᵀ", "÷√d_k", "masked", "softmax",
                                       "·V", "concat", "·W_O"]
    assert "(bs, n_head, n_q_seq, n_k_seq)" in shown[4].shape
    for s in shown:
        assert_labelled(s.figure)
    np.testing.assert_allclose(np.asarray(shown[5].figure.data[0].z),
                               trace.scores[kind][layer, b, walk.head], **tol)


def test_ablated_head_reaches_w_o_as_zero(bundle, trace):
    weights = head_weights(bundle, "enc_self", 1)
    walk = steps.walkthrough(trace, weights, "enc_self", 1, 0, 2)
    dh = walk.d_head
    assert not walk.concat[:, 2 * dh: 3 * dh].any(), "knocked-out head adds nothing"
    assert walk.context.any(), "its own probs·V is still shown"
    np.testing.assert_allclose(walk.out, trace.acts["encoder.layers.1.self_attn.hook_out"][0],
                               rtol=1e-4, atol=1e-5)


def test_query_key_products_sum_to_the_scores(bundle, trace):
    kind, layer, b, head, query = "dec_self", 0, 1, 2, 3
    walk = steps.walkthrough(trace, head_weights(bundle, kind, layer), kind, layer, b, head)
    vectors, products, bars = steps.query_key_figures(walk, trace, query, hide_pad=True)
    nk = trace.length("tgt", b)
    prod = np.asarray(products.data[0].z, dtype=np.float64)
    assert prod.shape == (nk, walk.d_head)
    np.testing.assert_allclose(prod.sum(axis=1) / np.sqrt(walk.d_head),
                               trace.scores[kind][layer, b, head, query, :nk],
                               rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(np.asarray(bars.data[1].y), trace.attn[kind][layer, b, head,
                                                                          query, :nk], atol=1e-6)
    assert np.asarray(vectors.data[0].z).shape == (nk + 1, walk.d_head)
    for fig in (vectors, products, bars):
        assert_labelled(fig)


def test_token_views(trace):
    fig = tokens.id_matrix_figure(trace, "src")
    np.testing.assert_array_equal(np.asarray(fig.data[0].z) == 1, trace.src_ids == trace.pad_id)
    assert np.asarray(fig.data[0].text)[0, 0] == str(trace.src_ids[0, 0])
    pos = tokens.positions_figure(trace, "tgt")
    np.testing.assert_array_equal(np.asarray(pos.data[0].z), trace.positions["dec"])
    chips = tokens.chips_html(["<2en>", "▁겨울", "<b>x</b>"], [4, 17, 99])
    assert "&lt;2en&gt;" in chips and "▁겨울" in chips and "<b>x" not in chips
    # markers are grey, text (byte-fallback pieces included) blue: the one is_special decides
    marked = tokens.chips_html(["<s>", "[CLS]", "<0x41>", "▁a"], [2, 5, 70, 9])
    colours = re.findall(r"background:(#[0-9a-f]{6})", marked)
    assert colours == ["#e8e8e8", "#e8e8e8", "#dbe9f6", "#dbe9f6"], colours
    rows = tokens.lengths_rows(trace)
    assert [r["source pieces"] for r in rows] == [len(t) for t in trace.src_tokens]
    dec = tokens.decoder_rows(trace, 0)
    assert dec[0]["decoder input"] == "<s>" and dec[-1]["predicts next"] == "</s>"
    for f in (fig, pos):
        assert_labelled(f)


def test_translation_steps(bundle, trace):
    vocab = [bundle.tokenizer.id_to_piece(i) for i in range(bundle.tokenizer.vocab_size)]
    got = translation.steps_from_logits(trace, 1, vocab, k=3)
    n = trace.length("tgt", 1)
    assert len(got) == n
    logits = trace.logits[1, :n].astype(np.float64)
    p = np.exp(logits - logits.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    assert got[0].top[0][1] == pytest.approx(p[0].max(), rel=1e-6)
    assert got[0].chosen == trace.tgt_tokens[1][1] and got[-1].chosen == "</s>"
    tr = translate(bundle, SOURCES[:1], max_len=4, top_k=3)[0]
    greedy = translation.steps_from_translation(tr)
    assert [s.prob for s in greedy] == pytest.approx(tr.probs)
    row = translation.cross_row_figure(trace, 1, 0, None, 2)
    np.testing.assert_allclose(np.asarray(row.data[0].y),
                               trace.attn["cross"][0, 1, :, 2, : trace.length("src", 1)].mean(0),
                               rtol=1e-6)
    for fig in (translation.topk_figure(got), translation.step_bar_figure(got[0], 0), row,
                translation.cross_steps_figure(trace, 1, 0, 1, got)):
        assert_labelled(fig)


def test_steps_match_both_variants(variant_bundle):
    """Pre-LN (seed001) feeds cross-attention the final-normed encoder output: still exact."""
    names = list(GROUPS) + steps.act_names({k: variant_bundle.n_layers(k)
                                            for k in variant_bundle.kinds})
    tr = capture(variant_bundle, SOURCES, TARGETS, names=names)
    for kind in ("enc_self", "cross"):
        walk = steps.walkthrough(tr, head_weights(variant_bundle, kind, 1), kind, 1, 1, 0)
        np.testing.assert_allclose(walk.scaled, tr.scores[kind][1, 1, 0], rtol=1e-4, atol=1e-5)
        prefix = {"enc_self": "encoder.layers.1.self_attn",
                  "cross": "decoder.layers.1.cross_attn"}[kind]
        np.testing.assert_allclose(walk.out, tr.acts[f"{prefix}.hook_out"][1], rtol=1e-4,
                                   atol=1e-5)


def test_lengths_rows_show_only_the_sides_the_model_has(trace):
    """An encoder-only model (BERT) has no decoder input or target language, a decoder-only
    one no source: their columns would read 0 or "—" on every row (seen on minilm)."""
    from dataclasses import replace

    both = tokens.lengths_rows(trace)  # the translator: both sides, a language per line
    assert {"source pieces", "decoder input pieces", "target language"} <= set(both[0])
    assert [r["decoder input pieces"] for r in both] == [len(t) for t in trace.tgt_tokens]
    n = len(trace.src_tokens)
    encoder = replace(trace, tgt_tokens=[[] for _ in range(n)], target_langs=[None] * n)
    rows = tokens.lengths_rows(encoder)
    # one stack: its input is neither a source nor a target, and the columns say neither
    assert [sorted(r) for r in rows] == [sorted(
        ["sentence", "pieces", "padded width", "pieces cut"])] * n
    assert [r["pieces"] for r in rows] == [len(t) for t in trace.src_tokens]
    decoder = replace(trace, src_tokens=[[] for _ in range(n)], target_langs=[None] * n)
    assert [r["pieces"] for r in tokens.lengths_rows(decoder)] == [
        len(t) for t in trace.tgt_tokens]


def test_one_stack_inputs_are_not_called_source_or_target(trace):
    """The id and position charts of a model without cross attention (BERT, GPT-2) name its
    input without the translators' "(source)"/"(target)"; a translator keeps them."""
    from dataclasses import replace

    assert "(source)" in tokens.id_matrix_figure(trace, "src").layout.title.text
    alone = replace(trace, attn={k: v for k, v in trace.attn.items() if k != "cross"})
    for fig in (tokens.id_matrix_figure(alone, "src"), tokens.positions_figure(alone, "src")):
        assert "(source)" not in fig.layout.title.text
        assert "encoder input" in fig.layout.title.text


def test_small_probabilities_are_written_so_they_can_be_read():
    """A random GPT-2-small-shaped model spreads 50,257 pieces thin: every top-5 candidate of
    the generation view's bar chart read "0.000" (and "0.00" in the top-k grid). Each label
    read back as a number is its probability within the rounding shown."""
    probs = [0.31, 0.0123, 0.0004, 2.3e-05, 0.0]
    step = translation.DecodeStep(chosen="a", prob=probs[0],
                                  top=[(f"p{i}", p) for i, p in enumerate(probs)])
    bars = translation.step_bar_figure(step, 0).data[0].text
    cells = translation.topk_figure([step]).data[0].text[0]
    for p, bar, cell in zip(probs, bars, cells, strict=True):
        assert float(bar) == pytest.approx(p, rel=0.05, abs=5e-4 if p >= 5e-4 else 0)
        assert float(cell.split()[-1]) == pytest.approx(p, rel=0.05, abs=5e-3 if p >= 5e-3 else 0)
