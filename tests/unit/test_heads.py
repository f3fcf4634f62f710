"""Head statistics, ablation, the importance scan, rollout and their figures on tiny models."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import plotly.graph_objects as go
import pytest

from model import Trace, capture, translate
from model.analysis.ablation import ablation_effect, all_heads, importance_scan
from model.analysis.alignment import alignment_agreement
from model.analysis.heads import (
    METRICS,
    alignment_for_input,
    alignment_stats,
    diff_where_tokens_agree,
    gold_alignment_for,
    head_stats,
    is_punct,
    validation_stats,
)
from model.analysis.rollout import cross_rollout, rollout
from model.specials import is_special
from training.corpus import generate
from viz.common import token_labels
from viz.heads import (
    ablation_figure,
    compare_figure,
    importance_figure,
    rollout_bars,
    rollout_figure,
    stats_heatmaps,
)

SENTS = ["Winter is cold.", "The big dog eats the fish in the park today."]
REFS = ["겨울은 추워요.", "큰 개가 오늘 공원에서 생선을 먹어요."]
KO = REFS[0]
LAST_CROSS = "cross:1:0,cross:1:1,cross:1:2,cross:1:3"  # every head of the last cross layer


# tiny models decode ~20x slower with 2 intra-op threads when the cores are busy
pytestmark = pytest.mark.usefixtures("one_thread")  # tests/conftest.py


def enc_trace(rows: np.ndarray, tokens: list[str] | None = None, width: int | None = None
              ) -> Trace:
    """A one-sentence, one-layer, one-head encoder trace holding a hand-made (n, n) matrix,
    right-padded to `width` (pad keys blocked, pad query rows spread over the real keys)."""
    n = rows.shape[0]
    width = width or n
    tokens = tokens or [f"▁w{i}" for i in range(n)]
    attn = np.zeros((1, 1, 1, width, width), np.float32)
    attn[0, 0, 0, :n, :n] = rows
    attn[0, 0, 0, n:, :n] = 1.0 / n  # pad queries: must not count
    ids = np.zeros((1, width), np.int64)
    ids[0, :n] = np.arange(4, 4 + n)
    mask = np.zeros((1, width, width), bool)
    mask[:, :, n:] = True
    return Trace(src_tokens=[tokens], tgt_tokens=[], src_ids=ids,
                 tgt_ids=np.zeros((1, 0), np.int64), masks={"enc_self": mask}, scores={},
                 attn={"enc_self": attn}, q={}, k={}, v={}, hidden={},
                 pos_table=np.zeros((8, 2), np.float32), logits=None)


def one(stats: dict[str, np.ndarray], metric: str) -> float:
    return float(stats[metric][0, 0])


# ---- statistics on hand-made matrices --------------------------------------------------------


def test_identity_has_zero_entropy_and_distance():
    s = head_stats(enc_trace(np.eye(5)), "enc_self")
    assert set(s) == {m for m in METRICS if m != "alignment"}
    assert all(v.shape == (1, 1) for v in s.values())
    assert one(s, "entropy") == pytest.approx(0.0, abs=1e-12)
    assert one(s, "distance") == pytest.approx(0.0, abs=1e-12)
    assert one(s, "diagonal") == pytest.approx(1.0)
    assert one(s, "max_weight") == pytest.approx(1.0)
    assert one(s, "prev_token") == pytest.approx(0.0)


@pytest.mark.parametrize("n", [1, 4, 7])
def test_uniform_over_n_has_entropy_log_n(n):
    s = head_stats(enc_trace(np.full((n, n), 1.0 / n)), "enc_self")
    assert one(s, "entropy") == pytest.approx(math.log(n), abs=1e-6)
    assert one(s, "max_weight") == pytest.approx(1.0 / n, abs=1e-6)
    mean_gap = np.abs(np.arange(n)[:, None] - np.arange(n)[None, :]).mean()
    assert one(s, "distance") == pytest.approx(mean_gap, abs=1e-5)


def test_one_below_diagonal_is_previous_token_one():
    n = 6
    rows = np.eye(n, k=-1)
    rows[0, 0] = 1.0  # the first query has no previous token; it is not counted for prev_token
    s = head_stats(enc_trace(rows), "enc_self")
    assert one(s, "prev_token") == pytest.approx(1.0)
    assert one(s, "distance") == pytest.approx((n - 1) / n)
    assert one(s, "diagonal") == pytest.approx(1.0 / n)


def test_padding_rows_do_not_count_and_shares_follow_the_pieces():
    tokens = ["<2ko>", "▁cat", "▁."]
    s = head_stats(enc_trace(np.full((3, 3), 1 / 3), tokens, width=6), "enc_self")
    assert one(s, "entropy") == pytest.approx(math.log(3), abs=1e-6)  # pad rows left out
    assert one(s, "pad_share") == 0.0
    assert one(s, "special_share") == pytest.approx(1 / 3, abs=1e-6)
    assert one(s, "punct_share") == pytest.approx(1 / 3, abs=1e-6)


def test_piece_classes():
    assert all(map(is_punct, [".", "▁.", "?!", "▁,"]))
    assert not any(map(is_punct, ["▁", "▁a.", "요", "<s>"]))


def test_is_special_by_hand():
    """Markers are special; byte-fallback pieces (<0x41> = "A") are text, so not special."""
    markers = ["<s>", "</s>", "<pad>", "<unk>", "<2ko>", "<2en>", "<|endoftext|>",
               "<extra_id_0>", "<mask>", "[CLS]", "[SEP]", "[PAD]", "[MASK]", "[UNK]"]
    text = ["<0x41>", "<0x0A>", "<0xEC>", "<0xff>", "▁<", "▁the", "<>", "<", "[]", "[cls]",
            "▁[CLS]", "[CLS", "", "▁"]
    assert [p for p in markers if not is_special(p)] == []
    assert [p for p in text if is_special(p)] == []


def test_is_special_agrees_with_sentencepiece(tokenizer):
    """Over the whole vocabulary, is_special (which sees only the piece) says what
    SentencePiece's own piece types say: control, unknown and user-defined pieces are markers,
    byte pieces and ordinary pieces are text."""
    from sentencepiece import sentencepiece_model_pb2

    proto = sentencepiece_model_pb2.ModelProto.FromString(tokenizer.proto)
    kinds = proto.SentencePiece.Type
    marker = {kinds.Value(k) for k in ("CONTROL", "UNKNOWN", "USER_DEFINED")}
    pieces = [(p.piece, p.type) for p in proto.pieces]
    assert sum(t == kinds.Value("BYTE") for _, t in pieces) == 256  # byte fallback is on
    assert sum(t in marker for _, t in pieces) == 6  # pad unk bos eos <2en> <2ko>
    assert [p for p, t in pieces if is_special(p) != (t in marker)] == []


# ---- statistics, ablation and rollout on a real (random) model --------------------------------


@pytest.fixture(scope="module")
def trace(bundle):
    return capture(bundle, SENTS, REFS, target_lang="ko")  # teacher-forced: no greedy decoding


@pytest.fixture(scope="module")
def effect(bundle):
    return ablation_effect(bundle, SENTS[0], LAST_CROSS, "ko")


def test_real_trace_statistics(trace):
    assert trace.src_ids.min() == 0  # the short sentence is padded
    for kind in trace.kinds:
        for b in (None, 0, 1):
            s = head_stats(trace, kind, b)
            assert np.all(s["pad_share"] == 0.0), kind
            assert all(np.isfinite(v).all() and v.shape == (2, 4) for v in s.values())
            assert np.all(s["entropy"] >= 0) and np.all(s["max_weight"] <= 1 + 1e-6)
            assert ("prev_token" in s) == (kind != "cross")
    with pytest.raises(ValueError, match="no 'nope'"):
        head_stats(trace, "nope")


def _arrays(tr: Trace) -> dict[str, np.ndarray]:
    out = {"logits": tr.logits, "src_ids": tr.src_ids, "tgt_ids": tr.tgt_ids}
    for group in ("attn", "scores", "q", "k", "v", "hidden"):
        out.update({f"{group}.{k}": v for k, v in getattr(tr, group).items()})
    return out


def test_ablating_nothing_leaves_the_trace_bitwise_unchanged(bundle, trace):
    for nothing in ((), set(), ""):
        again = _arrays(capture(bundle, SENTS, REFS, target_lang="ko", ablate=nothing))
        for name, value in _arrays(trace).items():
            assert np.array_equal(value, again[name]), name
    own = capture(bundle, SENTS[0], target_lang="ko")  # the model's own translation, too
    again = capture(bundle, SENTS[0], target_lang="ko", ablate=())
    assert own.targets == again.targets
    for name, value in _arrays(own).items():
        assert np.array_equal(value, _arrays(again)[name]), name


def test_ablating_the_last_cross_layer_changes_the_logits(bundle, trace):
    last = bundle.n_layers("cross") - 1
    heads = {("cross", last, h) for h in range(bundle.config.n_heads)}
    cut = capture(bundle, SENTS, trace.targets, target_lang="ko", ablate=heads)
    assert cut.ablate == frozenset(heads)
    assert np.array_equal(cut.attn["enc_self"], trace.attn["enc_self"])  # upstream: untouched
    assert not np.allclose(cut.logits, trace.logits, atol=1e-4)


def test_rollout_rows_sum_to_one(trace):
    for b in (0, 1):
        n_s, n_t = trace.length("src", b), trace.length("tgt", b)
        for residual in (True, False):
            enc = rollout(trace, b, "enc_self", residual)
            dec = rollout(trace, b, "dec_self", residual)
            cross = cross_rollout(trace, b, residual)
            assert enc.shape == (n_s, n_s) and dec.shape == (n_t, n_t)
            assert cross.shape == (n_t, n_s)
            for r in (enc, dec, cross):
                assert np.allclose(r.sum(-1), 1.0) and r.min() >= 0
            assert np.allclose(np.triu(dec, 1), 0.0)  # the decoder never sees the future
    with pytest.raises(ValueError, match="cross_rollout"):
        rollout(trace, 0, "cross")


def test_rollout_of_identity_attention_is_identity():
    assert np.allclose(rollout(enc_trace(np.eye(4)), 0), np.eye(4))


def _loss(tr: Trace) -> float:
    """Mean NLL of the decoder outputs: position t predicts input t + 1, the last one </s>."""
    logits = tr.logits[0].astype(np.float64)  # (T, V)
    top = logits.max(-1, keepdims=True)
    logp = logits - top - np.log(np.exp(logits - top).sum(-1, keepdims=True))
    out = [*tr.tgt_ids[0, 1:].tolist(), 3]  # 3 = eos in the test tokenizer
    return float(-np.mean(logp[np.arange(len(out)), out]))


def test_importance_scan_batched_equals_one_head_at_a_time(bundle):
    src = SENTS[0]
    seen: list[float] = []
    scan = importance_scan(bundle, src, "ko", progress=seen.append, target=KO)
    assert seen[0] == 0.0 and seen[-1] == pytest.approx(1.0) and seen == sorted(seen)
    assert set(scan) == set(bundle.kinds)
    base = _loss(capture(bundle, [src], [KO], target_lang="ko", names=["logits"]))
    for kind, layer, h in all_heads(bundle):
        cut = capture(bundle, [src], [KO], target_lang="ko", ablate={(kind, layer, h)},
                      names=["logits"])
        assert scan[kind][layer, h] == pytest.approx(_loss(cut) - base, abs=1e-5), (kind, layer, h)
    small = importance_scan(bundle, src, "ko", target=KO, chunk=5)  # several forwards
    for kind in scan:
        assert np.allclose(small[kind], scan[kind], atol=1e-5)


def test_importance_scan_on_the_models_own_translation(bundle):
    scan = importance_scan(bundle, SENTS[0], "ko")
    assert {k: v.shape for k, v in scan.items()} == {k: (2, 4) for k in bundle.kinds}
    assert all(np.isfinite(v).all() for v in scan.values())


def _forced_logp(bundle, source: str, decoded, ablate=()) -> np.ndarray:
    """Oracle for ablation_effect: log p of each output piece (translation + </s>), from
    capture()'s logits teacher-forced on the given greedy decode's ids, log-softmax in numpy.

    capture(decoded=...) feeds exactly those ids; with `ablate` the heads are knocked out in
    that forward while the ids stay the un-ablated translation's.
    """
    tr = capture(bundle, [source], target_lang="ko", decoded=decoded, ablate=ablate,
                 names=["logits"])
    n = tr.length("tgt", 0)
    out = [*tr.tgt_ids[0, 1:n].tolist(), bundle.tokenizer.eos_id]  # position t predicts t + 1
    logits = tr.logits[0, :n].astype(np.float64)  # (T, V)
    shifted = logits - logits.max(-1, keepdims=True)
    logp = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))
    return logp[np.arange(n), out]


def test_ablation_effect(bundle, effect):
    same = ablation_effect(bundle, [SENTS[0]], ())
    assert same["loss_change"] == 0.0 and not any(same["changed"])
    assert all(np.array_equal(a, b) for a, b in zip(same["logp_before"], same["logp_after"]))
    eff = effect
    keys = {"sources", "ablate", "ablate_spec", "before", "after", "changed", "tokens",
            "logp_before", "logp_after", "logp_change", "sentence_loss_before",
            "sentence_loss_after", "loss_before", "loss_after", "loss_change"}
    assert keys <= set(eff)
    assert eff["ablate_spec"] == LAST_CROSS and eff["sources"] == [SENTS[0]]
    heads = {("cross", 1, h) for h in range(4)}
    before = _forced_logp(bundle, SENTS[0], eff["before"])
    after = _forced_logp(bundle, SENTS[0], eff["before"], ablate=heads)
    assert eff["tokens"][0] == [*eff["before"][0].pieces, "</s>"]
    assert len(eff["tokens"][0]) == len(before)
    np.testing.assert_allclose(eff["logp_before"][0], before, atol=1e-5)
    np.testing.assert_allclose(eff["logp_after"][0], after, atol=1e-5)
    np.testing.assert_allclose(eff["logp_change"][0], after - before, atol=1e-5)
    assert eff["sentence_loss_before"][0] == pytest.approx(-before.mean(), abs=1e-5)
    assert eff["sentence_loss_after"][0] == pytest.approx(-after.mean(), abs=1e-5)
    assert eff["loss_before"] == pytest.approx(-before.mean(), abs=1e-5)
    assert eff["loss_after"] == pytest.approx(-after.mean(), abs=1e-5)
    assert eff["loss_change"] == pytest.approx(before.mean() - after.mean(), abs=1e-5)
    assert eff["loss_change"] != 0.0
    again = translate(bundle, SENTS[0], "ko", ablate=heads)
    assert [t.text for t in eff["after"]] == [t.text for t in again]
    assert eff["changed"] == [eff["after"][0].text != eff["before"][0].text]
    with pytest.raises(ValueError, match="heads are numbered"):
        ablation_effect(bundle, SENTS[0], "cross:0:9")


def test_ablation_effect_on_a_batch(bundle):
    """Two sentences ablated at once: each sentence's changes and the loss over all tokens."""
    eff = ablation_effect(bundle, SENTS, "enc_self:0:0,cross:0:2", "ko")
    heads = {("enc_self", 0, 0), ("cross", 0, 2)}
    per = [(_forced_logp(bundle, s, [t]), _forced_logp(bundle, s, [t], ablate=heads))
           for s, t in zip(SENTS, eff["before"])]
    for b, (before, after) in enumerate(per):
        np.testing.assert_allclose(eff["logp_change"][b], after - before, atol=1e-5)
    pooled = [np.concatenate([p[i] for p in per]) for i in (0, 1)]
    assert eff["loss_before"] == pytest.approx(-pooled[0].mean(), abs=1e-5)
    assert eff["loss_change"] == pytest.approx(pooled[0].mean() - pooled[1].mean(), abs=1e-5)


# ---- corpus alignments ---------------------------------------------------------------------


def test_alignment_agreement_on_a_hand_made_cross_map():
    """Head 0 looks at the gold source word of each target word, head 1 at the wrong one."""
    src = ["<2ko>", "▁cat", "▁eats", "</s>"]  # source words: cat = 0, eats = 1
    tgt = ["<s>", "▁A", "▁B"]  # outputs ▁A ▁B </s>: rows 0 and 1 predict words 0 and 1
    attn = np.zeros((2, 1, 2, 3, 4), np.float32)  # (L, B, H, T, S), both layers alike
    attn[:, 0, 0, 0, 1] = attn[:, 0, 0, 1, 2] = 1.0
    attn[:, 0, 1, 0, 2] = attn[:, 0, 1, 1, 1] = 1.0
    attn[:, 0, :, 2, 3] = 1.0
    tr = Trace(src_tokens=[src], tgt_tokens=[tgt], src_ids=np.arange(4, 8)[None],
               tgt_ids=np.arange(4, 7)[None], masks={"cross": np.zeros((1, 3, 4), bool)},
               scores={}, attn={"cross": attn}, q={}, k={}, v={}, hidden={},
               pos_table=np.zeros((8, 2), np.float32), logits=None)
    agree = alignment_agreement(tr, [[(0, 0), (1, 1)]], [True])
    assert np.array_equal(agree, [[1.0, 0.0], [1.0, 0.0]])


def _agreement_by_hand(bundle, pair, lang: str) -> np.ndarray:
    """Oracle for one corpus pair, one direction: (L, H) share of its gold-aligned target words
    whose cross attention (mean over the decoder rows that predict the word's pieces, summed
    over each source word's pieces) peaks on one of the word's gold source words.

    Word numbers come from the ids and pieces alone: SentencePiece's markers (pad, bos, eos,
    language tags) belong to no word, and a piece starting with ▁ opens the next word.
    """
    src_is_en = lang == "ko"
    src_text, tgt_text = (pair.en, pair.ko) if src_is_en else (pair.ko, pair.en)
    tr = capture(bundle, [src_text], [tgt_text], target_lang=lang, names=["attn"])
    tok = bundle.tokenizer
    markers = {tok.pad_id, tok.bos_id, tok.eos_id, *tok.lang_ids.values()}

    def words(ids: list[int], pieces: list[str]) -> list[int | None]:
        out, word = [], -1
        for i, p in zip(ids, pieces):
            if i in markers:
                out.append(None)
                continue
            word += p.startswith("▁") or word < 0
            out.append(word)
        return out

    n_src = tr.length("src", 0)
    src_w = words(tr.src_ids[0, :n_src].tolist(), tr.src_tokens[0])
    n_tgt = tr.length("tgt", 0)
    out_ids = [*tr.tgt_ids[0, 1:n_tgt].tolist(), tok.eos_id]  # row t predicts input t + 1
    out_w = words(out_ids, [*tr.tgt_tokens[0][1:], "</s>"])
    gold: dict[int, set[int]] = {}
    for en_i, ko_i in pair.align:
        s_i, t_i = (en_i, ko_i) if src_is_en else (ko_i, en_i)
        gold.setdefault(t_i, set()).add(s_i)
    cross = tr.attn["cross"][:, 0].astype(np.float64)  # (L, H, T, S)
    n_words = max(w for w in src_w if w is not None) + 1
    hits, counted = np.zeros(cross.shape[:2]), 0
    for t_word, s_words in gold.items():
        rows = [t for t, w in enumerate(out_w) if w == t_word]
        if not rows:
            continue
        a = cross[:, :, rows, :].mean(axis=2)  # (L, H, S)
        per_word = np.stack([a[..., [j for j, w in enumerate(src_w) if w == word]].sum(-1)
                             for word in range(n_words)], axis=-1)  # (L, H, words)
        hits += np.isin(per_word.argmax(-1), sorted(s_words))
        counted += 1
    assert counted, "every pair has aligned words"
    return hits / counted


def test_alignment_stats_against_a_recomputation(bundle):
    pairs = generate(6, seed=3)
    by_hand = {lang: np.mean([_agreement_by_hand(bundle, p, lang) for p in pairs], axis=0)
               for lang in ("ko", "en")}
    both = (by_hand["ko"] + by_hand["en"]) / 2
    assert not np.allclose(by_hand["ko"], by_hand["en"])  # the directions really differ
    # one pair per batch: the mean over pairs (and over both directions when asked for both)
    np.testing.assert_allclose(alignment_stats(bundle, pairs, batch=1), both, atol=1e-12)
    for lang in ("ko", "en"):
        np.testing.assert_allclose(alignment_stats(bundle, pairs, target_lang=lang, batch=1),
                                   by_hand[lang], atol=1e-12)
    seen: list[float] = []
    stats = validation_stats(bundle, pairs, seen.append, batch=1)
    assert seen[0] == 0.0 and seen[-1] == pytest.approx(1.0) and seen == sorted(seen)
    np.testing.assert_allclose(stats["cross"]["alignment"], both, atol=1e-12)


def test_validation_stats_pool_query_rows_over_the_corpus(bundle):
    """validation_stats over chunks of 4 = head_stats of one capture holding every pair: both
    average over all real query rows, whatever the chunking."""
    pairs = generate(6, seed=3)
    stats = validation_stats(bundle, pairs, batch=4, target_lang="ko")
    assert set(stats) == set(bundle.kinds)
    whole = capture(bundle, [p.en for p in pairs], [p.ko for p in pairs], target_lang="ko",
                    names=["attn"])
    for kind in bundle.kinds:
        want = head_stats(whole, kind)
        for metric, value in want.items():
            np.testing.assert_allclose(stats[kind][metric], value, atol=1e-9,
                                       err_msg=f"{kind} {metric}")
        assert np.all(stats[kind]["pad_share"] == 0.0)


def test_gold_alignment_lookup(bundle):
    pairs = [SimpleNamespace(en="The cat eats fish.", ko="고양이가 생선을 먹어요.",
                             align=[(0, 0), (1, 0), (2, 2), (3, 1)])]
    assert gold_alignment_for("  The cat  eats fish. ", pairs) == (pairs[0].align, True,
                                                                   pairs[0].ko)
    assert gold_alignment_for("고양이가 생선을 먹어요.", pairs)[1:] == (False, pairs[0].en)
    assert gold_alignment_for("The dog eats fish.", pairs) is None
    agree = alignment_for_input(bundle, "The cat eats fish.", pairs)
    assert agree.shape == (2, 4)
    assert alignment_for_input(bundle, "The cat eats fish.", pairs, target_lang="en") is None


# ---- compare and figures -------------------------------------------------------------------


def test_difference_only_where_tokens_agree():
    a, b = np.eye(2), np.full((2, 2), 0.5)
    diff, why = diff_where_tokens_agree(["▁a", "."], ["▁a", "."], a, b)
    assert why == "" and np.allclose(diff, b - a)
    diff, why = diff_where_tokens_agree(["▁a", "."], ["▁b", "."], a, b)
    assert diff is None and "position 1" in why
    diff, why = diff_where_tokens_agree((["<s>"], ["▁a", "."]), (["<s>"], ["▁a"]),
                                        np.ones((1, 2)), np.ones((1, 1)))
    assert diff is None and "key tokens differ in number" in why


def _titled(fig: go.Figure) -> None:
    assert fig.layout.title.text
    for name in ("xaxis", "yaxis"):
        assert fig.layout[name].title.text, name


def test_figures(trace, bundle, effect):
    labels = token_labels(["<2ko>", "▁the", "▁the", "a&b"], numbered=True)
    assert labels == ["1:&lt;2ko&gt;", "2:▁the", "3:▁the", "4:a&amp;b"]
    figs = stats_heatmaps(head_stats(trace, "cross"), "cross")
    assert len(figs) == 7
    for fig in figs:
        _titled(fig)
        heat = fig.data[0]
        assert heat.colorscale[0][1] == go.Heatmap(colorscale="Viridis").colorscale[0][1]
        assert fig.layout.xaxis.title.text == "head" and fig.layout.yaxis.title.text == "layer"
        assert METRICS[fig.layout.meta["metric"]].split()[0] in fig.layout.title.text
    scan = {k: np.arange(8.0).reshape(2, 4) - 3 for k in bundle.kinds}
    fig = importance_figure(scan)
    _titled(fig)
    assert len(fig.data) == 3 and fig.data[0].zmin == -fig.data[0].zmax == -4
    fig = ablation_figure(effect)
    _titled(fig)
    assert list(fig.data[0].x) == token_labels(effect["tokens"][0], numbered=True)
    r = rollout(trace, 1)
    fig = rollout_figure(r, trace.src_tokens[1], trace.src_tokens[1], "Encoder rollout")
    _titled(fig)
    assert "&lt;2ko&gt;" in fig.data[0].x[0]
    fig = rollout_bars(cross_rollout(trace, 1), trace.src_tokens[1], 0, trace.tgt_tokens[1])
    _titled(fig)
    assert np.isclose(sum(fig.data[0].y), 1.0) and "&lt;s&gt;" in fig.layout.title.text
    a = trace.attn["enc_self"][0, 1, 0, :4, :4]
    b = trace.attn["enc_self"][1, 1, 0, :4, :4]
    toks = trace.src_tokens[1][:4]
    fig = compare_figure(a, b, toks, toks, toks, toks, ("layer 0", "layer 1"))
    _titled(fig)
    assert len(fig.data) == 3 and np.allclose(fig.data[2].z, b - a)
    assert fig.layout.coloraxis2.cmin == -fig.layout.coloraxis2.cmax
    other = [*toks[:3], "▁x"]
    fig = compare_figure(a, b, toks, toks, other, other, ("input A", "input B"))
    assert len(fig.data) == 2 and "no difference map" in fig.layout.title.text
