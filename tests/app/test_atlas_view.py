"""view=atlas through AppTest on the shipped `paper` translator (issue 56): the drawn points are
each head's mean entropy and previous-token weight over the validation pairs, computed here
from one capture per pair (not through model.analysis); the groups cover every head; the link
keeps the choices; the head's spread and an input open in the attention view."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from model import capture, load_checkpoint
from tests.app.conftest import run_app
from tests.chartdata import array, charts
from tests.conftest import ROOT, skip_or_fail
from training.corpus import read_pairs_file

PAPER = ROOT / "checkpoints" / "paper"
N = 50  # the view's smallest corpus size


def _ready(at):
    """The atlas drawn: its build button pressed when the estimate asked for one."""
    if any(b.key == "atlas_go" for b in at.button):
        at.button(key="atlas_go").click().run(timeout=240)
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


def means_by_hand(folder: Path) -> dict:
    """{kind: (entropy (L, H), prev_token (L, H))} over the first N validation pairs of the
    paper checkpoint, half of them each way, teacher-forced: one capture per pair, each row by
    plain numpy."""
    bundle = load_checkpoint(folder)
    pairs = read_pairs_file(Path(PAPER) / "val_pairs.tsv")[:N]
    sums: dict[str, list] = {}
    for i, p in enumerate(pairs):
        src, tgt, lang = (p.en, p.ko, "ko") if i % 2 == 0 else (p.ko, p.en, "en")
        tr = capture(bundle, [src], [tgt], target_lang=lang, names=["attn"])
        for kind in ("enc_self", "dec_self"):
            a = tr.attn[kind][:, 0].astype(np.float64)  # (L, H, n, n)
            n = a.shape[-1]
            ent = -(np.where(a > 0, a * np.log(np.where(a > 0, a, 1)), 0)).sum(-1).mean(-1)
            prev = np.stack([a[..., q, q - 1] for q in range(1, n)], -1).mean(-1)
            sums.setdefault(kind, []).append((ent, prev))
    return {k: tuple(np.mean([v[j] for v in rows], axis=0) for j in range(2))
            for k, rows in sums.items()}


@pytest.fixture(scope="module")
def by_hand():
    if not (PAPER / "model.safetensors").is_file():
        skip_or_fail("checkpoints/paper is not shipped here")
    return means_by_hand(PAPER)


def test_atlas_points_are_each_heads_mean_over_the_validation_pairs(by_hand):
    at = _ready(run_app({"ckpt": "paper", "view": "atlas", "n": str(N), "place": "metrics",
                         "x": "entropy", "y": "prev_token", "colour": "layer"}, timeout=240))
    figs = [f for f in charts(at) if f["data"] and f["data"][0].get("type") == "scatter"]
    assert figs, "the scatter is drawn"
    points = {}
    for trace in figs[0]["data"]:
        for (layer, head, _x, kind), x, y in zip(trace["customdata"], array(trace["x"]),
                                                  array(trace["y"])):
            points[(kind, layer, head)] = (x, y)
    kind = at.session_state["atlas_kind"]
    ent, prev = by_hand[kind]
    assert len(points) == ent.size == 12
    for (k, layer, head), (x, y) in points.items():
        assert k == kind
        assert abs(x - ent[layer, head]) < 1e-4, (layer, head, x, ent[layer, head])
        assert abs(y - prev[layer, head]) < 1e-4, (layer, head, y, prev[layer, head])
    # colour by layer: one legend entry per layer
    assert [t["name"] for t in figs[0]["data"]] == ["layer 0", "layer 1", "layer 2"]
    # the groups (one expander each) hold every head once
    members = []
    for e in at.expander:
        if not e.label[:1].isdigit():  # the sidebar's own expanders
            continue
        members += [m.strip() for m in e.label.split(": ")[-1].split(",")]
    assert sorted(members) == sorted(f"{la}.{h}" for la in range(3) for h in range(4))
    # the link keeps the choices
    assert at.query_params["view"] == ["atlas"] or at.query_params["view"] == "atlas"
    for key, value in (("place", "metrics"), ("x", "entropy"), ("colour", "layer"),
                       ("n", str(N))):
        got = at.query_params[key]
        assert (got[0] if isinstance(got, list) else got) == value, key
    # one head's spread: its title gives the mean over the N inputs
    spread = [f for f in charts(at) if f["data"] and f["data"][0].get("type") == "box"]
    assert len(spread) == 1 and f"over {N} inputs" in spread[0]["layout"]["title"]["text"]


def test_mds_placement_and_opening_an_input(by_hand):
    at = _ready(run_app({"ckpt": "paper", "view": "atlas", "n": str(N)}, timeout=240))
    figs = [f for f in charts(at) if f["data"] and f["data"][0].get("type") == "scatter"]
    names = [t["name"] for t in figs[0]["data"]]
    assert names and all("(z = " in n or n == "all heads" for n in names), names
    at.button(key="atlas_open_0").click().run(timeout=240)
    assert at.session_state["view"] == "attention"
    assert at.session_state["text"] and "\n" not in at.session_state["text"]


BUILTIN = ROOT / "model" / "data" / "sentences_en.txt"


@pytest.mark.parametrize("name", ["lm", "minilm"])
def test_atlas_on_the_other_shipped_models(name):
    """The language model and the sentence encoder read the built-in English sentences: the
    drawn first-position weight and entropy per head against captures made here."""
    folder = ROOT / "checkpoints" / name
    if not (folder / "model.safetensors").is_file() or not BUILTIN.is_file():
        skip_or_fail(f"checkpoints/{name} or the built-in sentences are not here")
    bundle = load_checkpoint(folder)
    lines = [s.strip() for s in BUILTIN.read_text(encoding="utf-8").splitlines()
             if s.strip() and not s.startswith("#")][:N]
    first, ent = [], []
    for line in lines:
        tr = capture(bundle, [line], names=["attn"])
        kind = next(iter(tr.attn))
        a = tr.attn[kind][:, 0].astype(np.float64)  # (L, H, n, n)
        seen = (~tr.masks[kind][0]).sum(-1)  # keys each query sees
        first.append(a[..., seen >= 2, 0].mean(-1))
        ent.append(-(np.where(a > 0, a * np.log(np.where(a > 0, a, 1)), 0)).sum(-1).mean(-1))
    first, ent = np.mean(first, 0), np.mean(ent, 0)
    at = _ready(run_app({"ckpt": name, "view": "atlas", "n": str(N), "place": "metrics",
                         "x": "sink_first", "y": "entropy"}, timeout=240))
    figs = [f for f in charts(at) if f["data"] and f["data"][0].get("type") == "scatter"]
    got = {}
    for trace in figs[0]["data"]:
        for (layer, head, _x, _k), x, y in zip(trace["customdata"], array(trace["x"]),
                                               array(trace["y"])):
            got[(layer, head)] = (x, y)
    assert len(got) == first.size
    for (layer, head), (x, y) in got.items():
        assert abs(x - first[layer, head]) < 1e-4 and abs(y - ent[layer, head]) < 1e-4


def test_bad_link_values_fall_back_to_the_defaults():
    if not (PAPER / "model.safetensors").is_file():
        skip_or_fail("checkpoints/paper is not shipped here")
    at = _ready(run_app({"ckpt": "paper", "view": "atlas", "n": "7", "place": "<b>x</b>",
                         "colour": "99", "x": "no_such_metric", "y": "__class__"},
                        timeout=240))
    state = at.session_state
    assert (state["atlas_n"], state["atlas_place"], state["atlas_colour"]) == (50, "mds",
                                                                             "group")
    assert state["atlas_x"] == "entropy" and state["atlas_y"] == "prev_token"


def test_beside_another_checkpoint_each_head_moves_between_their_means(by_hand):
    """paper beside seed001 over paper's validation pairs: the hollow points are paper's
    means, the filled ones seed001's, both computed here."""
    other = ROOT / "checkpoints" / "seed001"
    if not (other / "model.safetensors").is_file():
        skip_or_fail("checkpoints/seed001 is not shipped here")
    theirs = means_by_hand(other)
    at = _ready(run_app({"ckpt": "paper", "view": "atlas", "n": str(N), "place": "metrics",
                         "x": "entropy", "y": "prev_token"}, timeout=240))
    label = next(o for o in at.selectbox(key="atlas_vs").options if "seed001" in o)
    at.selectbox(key="atlas_vs").set_value(label).run(timeout=240)
    if any(b.key == "atlas_vs_go" for b in at.button):
        at.button(key="atlas_vs_go").click().run(timeout=240)
    assert not at.exception and not at.error, [e.value for e in (*at.exception, *at.error)]
    kind = at.session_state["atlas_kind"]
    fig = next(f for f in charts(at) if len(f["data"]) == 3 and f["data"][0].get("mode") ==
               "lines")
    for trace, want in ((fig["data"][1], by_hand[kind]), (fig["data"][2], theirs[kind])):
        xs, ys = array(trace["x"]), array(trace["y"])
        for (layer, head, _x, _k), x, y in zip(trace["customdata"], xs, ys):
            assert abs(x - want[0][layer, head]) < 1e-4 and abs(y - want[1][layer, head]) < 1e-4


def test_lm_beside_its_first_snapshot_shows_the_induction_heads_forming():
    """The phase change as motion: from the language model's step-0 snapshot to its shipped
    weights, the layer-1 heads the card names induction heads move up the induction axis."""
    folder = ROOT / "checkpoints" / "lm"
    if not (folder / "snapshots" / "step_000000.safetensors").is_file():
        skip_or_fail("checkpoints/lm and its snapshots are not here")
    card = load_checkpoint(folder).card["figures"]
    named = [tuple(int(x) for x in h[1:].split(" H")) for h in card["induction_heads"]]
    at = _ready(run_app({"ckpt": "lm", "view": "atlas", "n": str(N), "place": "metrics",
                         "x": "induction", "y": "prev_token"}, timeout=240))
    label = next(o for o in at.selectbox(key="atlas_vs").options if o.endswith(" 0"))
    at.selectbox(key="atlas_vs").set_value(label).run(timeout=240)
    if any(b.key == "atlas_vs_go" for b in at.button):
        at.button(key="atlas_vs_go").click().run(timeout=240)
    assert not at.exception and not at.error, [e.value for e in (*at.exception, *at.error)]
    fig = next(f for f in charts(at) if len(f["data"]) == 3 and f["data"][0].get("mode") ==
               "lines")
    now = {tuple(c[:2]): x for c, x in zip(fig["data"][1]["customdata"],
                                            array(fig["data"][1]["x"]))}
    then = {tuple(c[:2]): x for c, x in zip(fig["data"][2]["customdata"],
                                             array(fig["data"][2]["x"]))}
    assert len(now) == len(then) == 12
    rose = [h for h in named if now[h] - then[h] > 0.3]
    assert len(rose) >= len(named) - 1, (named, now, then)
