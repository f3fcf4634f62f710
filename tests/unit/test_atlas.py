"""The head atlas (issue 56): each per-input metric against a loop written here, the
Jensen–Shannon distance against scipy's, the grouping on planted heads, the atlas on a tiny
random model against captures made here, and on the shipped language model its induction
heads apart from its previous-token head."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.distance import jensenshannon

from model import capture, load_checkpoint
from model.analysis.atlas import head_atlas
from model.analysis.atlas_groups import choose_groups, group_heads, mds_xy, name_group, silhouette
from model.analysis.atlas_metrics import JS_MAX, input_metrics, js_rows
from tests.conftest import skip_or_fail
from training.corpus import generate

LM = Path(__file__).resolve().parents[2] / "checkpoints" / "lm"


def _rows(n_q: int, n_k: int, causal: bool, rng) -> tuple[np.ndarray, np.ndarray]:
    """(attn (3, Q, K) random rows over the seen keys, blocked (Q, K))."""
    blocked = np.triu(np.ones((n_q, n_k), dtype=bool), 1) if causal \
        else np.zeros((n_q, n_k), dtype=bool)
    x = rng.gamma(0.3, size=(3, n_q, n_k)) * ~blocked
    return x / x.sum(-1, keepdims=True), blocked


def _loop_metrics(attn, blocked, pieces, marker) -> dict[str, list[float]]:
    """The metrics one row and one key at a time (the definitions in atlas_metrics)."""
    n, n_q, n_k = attn.shape
    out = {m: [] for m in ("entropy", "distance", "prev_token", "self", "duplicate",
                           "punctuation", "sink_first", "sink_special")}
    for h in range(n):
        acc = {m: [] for m in out}
        for q in range(n_q):
            row = attn[h, q]
            seen = [k for k in range(n_k) if not blocked[q, k]]
            acc["entropy"].append(-sum(row[k] * np.log(row[k]) for k in seen if row[k] > 0))
            acc["distance"].append(sum(row[k] * abs(q - k) for k in seen))
            if q - 1 in seen:
                acc["prev_token"].append(row[q - 1])
            acc["self"].append(row[q])
            copies = [k for k in seen if k != q and pieces[k] == pieces[q]]
            if copies:
                acc["duplicate"].append(sum(row[k] for k in copies))
            acc["punctuation"].append(sum(row[k] for k in seen if pieces[k] in ".,"))
            if len(seen) >= 2:
                acc["sink_first"].append(row[0])
                acc["sink_special"].append(sum(row[k] for k in seen if k > 0 and marker[k]))
        for m in out:
            out[m].append(np.mean(acc[m]) if acc[m] else np.nan)
    return out


@pytest.mark.parametrize("causal", [False, True])
def test_each_metric_matches_a_loop(causal):
    rng = np.random.default_rng(3)
    pieces = ["<s>", "▁the", "▁cat", ",", "▁the", "▁dog", "<2ko>", "."]
    marker = [True, False, False, False, False, False, True, False]
    attn, blocked = _rows(len(pieces), len(pieces), causal, rng)
    got = input_metrics(attn, blocked, pieces, pieces, cross=False)
    want = _loop_metrics(attn, blocked, pieces, marker)
    for m, values in want.items():
        np.testing.assert_allclose(got[m], values, rtol=1e-9, atol=1e-12, err_msg=m)
    # causal: no query sees its next key, so the metric has no row (NaN), not a zero
    assert np.isnan(got["next_token"]).all() == causal


def test_hand_built_heads_score_what_they_do():
    n = 6
    pieces = ["<s>", "▁a", "▁b", "▁a", "▁b", "."]
    blocked = np.zeros((n, n), dtype=bool)
    prev = np.eye(n, k=-1)
    prev[0, 0] = 1.0
    first = np.zeros((n, n))
    first[:, 0] = 1.0
    nxt = np.eye(n, k=1)
    nxt[-1, -1] = 1.0
    got = input_metrics(np.stack([prev, first, nxt]), blocked, pieces, pieces, cross=False)
    # the first-key head reads key q − 1 from query 1 only: 1 of 5 queries with a previous key
    np.testing.assert_allclose(got["prev_token"], [1.0, 0.2, 0.0])
    np.testing.assert_allclose(got["next_token"], [0.0, 0.0, 1.0])
    np.testing.assert_allclose(got["sink_first"], [2 / 6, 1.0, 0.0])
    np.testing.assert_allclose(got["entropy"], [0.0, 0.0, 0.0], atol=1e-12)
    # the copies: queries 1..4 each have one; prev reads none of them, next reads none either
    np.testing.assert_allclose(got["duplicate"], [0.0, 0.0, 0.0])
    np.testing.assert_allclose(got["punctuation"], [0.0, 0.0, 2 / 6])


def test_js_distance_against_scipy_and_its_properties():
    rng = np.random.default_rng(0)
    attn, blocked = _rows(7, 7, True, rng)
    attn = np.concatenate([attn, attn[:1]])  # head 3 is head 0 again
    rows = (~blocked).sum(-1) >= 2
    total, counted = js_rows(attn, rows)
    d = total / counted
    assert counted == int(rows.sum()) == 6
    np.testing.assert_allclose(d, d.T)
    assert np.all(np.diag(d) == 0)
    assert d[0, 3] < 1e-3 and d[3, 0] < 1e-3  # identical heads (float32 rounding only)
    for i, j in ((0, 1), (1, 2), (2, 3)):
        want = np.mean([jensenshannon(attn[i, q], attn[j, q]) for q in np.flatnonzero(rows)])
        assert abs(d[i, j] - want) < 1e-4, (i, j, d[i, j], want)
    # two heads on different keys: the bound sqrt(ln 2) of the natural-log distance
    apart = np.zeros((2, 2, 4))
    apart[0, :, 0] = 1.0
    apart[1, :, 1] = 1.0
    far, r = js_rows(apart, np.ones(2, dtype=bool))
    assert abs(far[0, 1] / r - JS_MAX) < 1e-4 and abs(JS_MAX - np.sqrt(np.log(2))) < 1e-12


def test_groups_find_planted_heads_and_name_them():
    # eight heads: 0-3 attend alike (distance 0.1 apart), 4-7 alike, 0.7 between the two
    labels = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    dist = np.where(labels[:, None] == labels[None, :], 0.1, 0.7)
    np.fill_diagonal(dist, 0.0)
    found, score = choose_groups(dist)
    assert list(found) == list(labels) and score > 0.8
    means = np.stack([np.r_[[0.9] * 4, [0.1] * 4] + np.arange(8) * 1e-3,  # prev_token
                      np.full(8, 0.5) + np.arange(8) * 1e-3], axis=1)  # entropy: no signal
    groups = group_heads(dist, means, ["prev_token", "entropy"], n_heads=4)
    assert [g.members for g in groups] == [((0, 0), (0, 1), (0, 2), (0, 3)),
                                           ((1, 0), (1, 1), (1, 2), (1, 3))]
    assert (groups[0].metric, groups[0].direction) == ("prev_token", "high")
    assert (groups[1].metric, groups[1].direction) == ("prev_token", "low")
    assert name_group(np.ones(8, dtype=bool), means, ["prev_token"])[0] == ""


def test_alike_heads_are_one_group():
    found, score = choose_groups(np.zeros((5, 5)))
    assert list(found) == [0] * 5 and np.isnan(score)


def test_silhouette_against_scikit_learn():
    # the app computes it in numpy (importing scikit-learn costs a server ~80 MB); the test
    # may import it: random distances, groups with a singleton, and a zero-distance pair
    from sklearn.metrics import silhouette_score

    rng = np.random.default_rng(5)
    pts = rng.normal(size=(12, 3))
    dist = np.sqrt(((pts[:, None] - pts[None]) ** 2).sum(-1))
    for labels in (np.array([0] * 5 + [1] * 6 + [2]), rng.integers(0, 4, 12),
                   np.array([3, 3, 1, 1, 1, 7, 7, 7, 7, 1, 3, 9])):
        if len(np.unique(labels)) < 2:
            continue
        want = silhouette_score(dist, labels, metric="precomputed")
        assert abs(silhouette(dist, labels) - want) < 1e-12, labels
    dist[0, 1] = dist[1, 0] = 0.0
    labels = np.array([0, 0] + [1] * 10)
    assert abs(silhouette(dist, labels)
               - silhouette_score(dist, labels, metric="precomputed")) < 1e-12


def test_tied_distances_that_fcluster_cannot_split_are_one_group():
    # every pair 0.5 apart: average linkage merges all at one height, so fcluster gives one
    # cluster for every k; that is one group without a silhouette, not an error
    dist = np.full((6, 6), 0.5)
    np.fill_diagonal(dist, 0.0)
    found, score = choose_groups(dist)
    assert list(found) == [0] * 6 and np.isnan(score)


def test_classical_mds_recovers_planted_distances():
    from scipy.stats import spearmanr

    rng = np.random.default_rng(2)
    # planar points: their distances are exactly Euclidean in 2-D, so MDS must reproduce them
    pts = rng.normal(size=(9, 2)) * [3.0, 1.0]
    dist = np.sqrt(((pts[:, None] - pts[None]) ** 2).sum(-1))
    xy = mds_xy(dist)
    got = np.sqrt(((xy[:, None] - xy[None]) ** 2).sum(-1))
    assert np.abs(got - dist).max() < 1e-9
    # deterministic, and each axis's largest |coordinate| is positive
    assert np.array_equal(xy, mds_xy(dist.copy()))
    assert all(xy[np.argmax(np.abs(xy[:, j])), j] > 0 for j in range(2))
    # points in 5-D: the 2-D picture keeps the order of the distances and a small stress
    pts = rng.normal(size=(15, 5)) * [4.0, 2.5, 0.3, 0.2, 0.1]
    dist = np.sqrt(((pts[:, None] - pts[None]) ** 2).sum(-1))
    xy = mds_xy(dist)
    got = np.sqrt(((xy[:, None] - xy[None]) ** 2).sum(-1))
    upper = np.triu_indices(15, 1)
    assert spearmanr(got[upper], dist[upper])[0] > 0.95
    stress = np.sqrt(((got - dist)[upper] ** 2).sum() / (dist[upper] ** 2).sum())
    assert stress < 0.1, stress


@pytest.fixture(scope="module")
def tiny_atlas(bundle):
    # teacher-forced pairs, both ways (a random translator's greedy decode runs to max_len)
    return head_atlas(bundle, pairs=generate(6, seed=3), n=5, batch=2)


def test_atlas_on_a_tiny_model_matches_captures_made_here(bundle, tiny_atlas):
    atlas = tiny_atlas
    pairs = generate(6, seed=3)[:5]
    assert atlas.lines == [p.en if i % 2 == 0 else p.ko for i, p in enumerate(pairs)]
    assert atlas.source == "validation" and len(atlas.inputs) == 5
    assert set(atlas.kinds) == {"enc_self", "dec_self", "cross"}
    kind, (i, j) = "enc_self", (1, 6)  # layer 0 head 1 and layer 1 head 2, layer-major
    per_row, entropy = [], []
    for inp in atlas.inputs:  # one capture per input, not the atlas's batches
        trace = capture(bundle, [inp.source], [inp.target], target_lang=inp.target_lang,
                        names=["attn"])
        a = trace.attn[kind]  # (L, 1, H, Q, K)
        hi, hj = a[i // 4, 0, i % 4], a[j // 4, 0, j % 4]
        per_row += [jensenshannon(hi[q], hj[q]) for q in range(hi.shape[0])]
        row = a[0, 0, 1].astype(np.float64)
        entropy.append(np.mean([-(r[r > 0] * np.log(r[r > 0])).sum() for r in row]))
    d = atlas.distance(kind)
    assert d.shape == (8, 8)
    np.testing.assert_allclose(d, d.T)
    assert np.all(np.diag(d) == 0)
    assert abs(d[i, j] - np.mean(per_row)) < 1e-4
    mean, std, n = atlas.summary(kind, "entropy")
    assert n[0, 1] == len(pairs)
    assert abs(mean[0, 1] - np.mean(entropy)) < 1e-5 and abs(std[0, 1] - np.std(entropy)) < 1e-5
    rows = [r for r in atlas.table if r["kind"] == kind and r["metric"] == "entropy"]
    assert len(rows) == 8 and rows[1]["layer"] == 0 and rows[1]["head"] == 1
    assert abs(rows[1]["mean"] - mean[0, 1]) < 1e-12
    # every head is in exactly one group of its kind
    for k, groups in atlas.groups.items():
        heads = sorted(m for g in groups for m in g.members)
        assert heads == [(la, h) for la in range(2) for h in range(4)], k
    # the induction score comes from its own repeated sequences (8 rows)
    assert atlas.values["enc_self"]["induction"].shape == (8, 2, 4)
    csv_text = atlas.to_csv()
    assert csv_text.count("\n") == len(atlas.table) + 1
    assert atlas.to_json()["distance"]["cross"][0][0] == 0.0
    # the translators' gold alignments are measured on every input's cross attention
    assert atlas.summary("cross", "alignment")[2].min() == len(pairs)


def test_departures_name_the_input_furthest_from_the_mean(tiny_atlas):
    v = tiny_atlas.values["enc_self"]["entropy"][:, 1, 2]
    found = tiny_atlas.departures("enc_self", "entropy", 1, 2, top=2)
    assert found[0][0] == int(np.argmax(np.abs(v - v.mean())))
    assert found[0][1] == pytest.approx(v[found[0][0]])


@pytest.mark.parametrize("lines, message", [
    (["", "   "], "at least one non-empty line"),
    (["x"] * 2_001, "at most 2,000 lines"),
])
def test_bad_corpora_are_refused_with_a_message(bundle, lines, message):
    with pytest.raises(ValueError, match=message):
        head_atlas(bundle, lines)


@pytest.fixture(scope="module")
def lm():
    if not (LM / "model.safetensors").is_file():
        skip_or_fail("checkpoints/lm is not shipped here")
    return load_checkpoint(LM)


def test_hostile_lines_give_an_atlas_not_a_traceback(lm):
    lines = ["a", "", "<script>alert(1)</script>", "😀" * 40, "  \t ", "[CLS] </s> <pad>",
             "x" * 3000]
    atlas = head_atlas(lm, lines, induction=False)
    assert atlas.lines == [s for s in lines if s.strip()]
    d = atlas.distance("dec_self")
    assert d.shape == (12, 12) and np.isfinite(d).all() and np.all(np.diag(d) == 0)
    assert sorted(m for g in atlas.groups["dec_self"] for m in g.members) == \
        [(la, h) for la in range(2) for h in range(6)]
    assert atlas.embedding("dec_self").shape == (12, 2)
    assert "induction" not in atlas.metrics("dec_self")


def test_on_lm_the_induction_heads_group_without_the_previous_token_head(lm):
    bundle = lm
    card = bundle.card["figures"]["detectors"]
    induction = np.array(card["induction"])
    previous = np.array(card["previous_token"])
    atlas = head_atlas(bundle, n=40)
    groups = atlas.groups["dec_self"]
    where = {m: gi for gi, g in enumerate(groups) for m in g.members}
    strong = [(1, h) for h in range(induction.shape[1]) if induction[1, h] >= 0.85]
    prev_head = tuple(int(x) for x in np.unravel_index(np.argmax(previous), previous.shape))
    assert len(strong) >= 3, induction
    assert len({where[h] for h in strong}) == 1, (groups, strong)
    assert where[prev_head] != where[strong[0]], (groups, prev_head)
    # and the atlas's own induction score agrees with the card on which heads those are
    mean = atlas.summary("dec_self", "induction")[0]
    assert all(mean[h] > 0.5 for h in strong) and mean[prev_head] < 0.2, mean


def test_the_distance_reads_at_most_js_rows_spread_over_the_inputs(bundle, monkeypatch):
    import model.analysis.atlas as atlas_module

    pairs = generate(6, seed=3)
    full = head_atlas(bundle, pairs=pairs, n=4, induction=False)
    monkeypatch.setattr(atlas_module, "JS_ROWS", 8)  # two rows per input
    capped = head_atlas(bundle, pairs=pairs, n=4, induction=False)
    assert capped.rows["enc_self"] == 8 < full.rows["enc_self"]
    # the metrics are not capped, and the capped distance stays near the full one
    np.testing.assert_array_equal(capped.values["enc_self"]["entropy"],
                                  full.values["enc_self"]["entropy"])
    assert np.abs(capped.distance("enc_self") - full.distance("enc_self")).max() < 0.3


def test_grouping_and_placement_do_not_import_scikit_learn():
    # its first import costs a server ~80 MB, over the soak's memory bound
    import subprocess
    import sys

    code = ("import sys, numpy as np\n"
            "from model.analysis.atlas_groups import choose_groups, mds_xy\n"
            "d = np.abs(np.subtract.outer(np.arange(8.0), np.arange(8.0)))\n"
            "choose_groups(d); mds_xy(d)\n"
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'sklearn'}))\n")
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]", out.stdout
