"""Heads › Detectors on the shipped 'paper' checkpoint (issue 39, item 4): a chance level beside
every score, a sentence where a chart would be empty, the head picker starting again with each
detector, and detector= in the link (a hostile value is a note, never a traceback)."""

from __future__ import annotations

from model import capture, load_checkpoint
from model.analysis.detectors import chance_levels
from tests.app.conftest import run_app
from tests.app.test_views import charts, ok, texts
from tests.conftest import ROOT

TEXT = "The cat eats fish."  # no word repeats: the encoder's duplicate-token map has no row
CHANCE = "chance (uniform head)"


def _open(**query):
    return run_app({"ckpt": "paper", "view": "heads", "text": TEXT, **query}, timeout=120)


def _maps(at) -> dict[str, dict]:
    return {f["layout"]["meta"]["kind"]: f for f in charts(at)
            if "detector" in f["layout"].get("meta", {})}


def test_the_link_opens_a_detector_with_its_chance_level_beside_every_score():
    at = _open(detector="previous_token")
    ok(at)
    assert not at.warning, texts(at.warning)
    assert at.radio(key="det_detector").value == "previous_token"
    bundle = load_checkpoint(ROOT / "checkpoints" / "paper")
    want = chance_levels(bundle, capture(bundle, [TEXT]))["previous_token"]
    table = at.dataframe[0].value
    assert CHANCE in table.columns
    for name, level in zip(table["attention"], table[CHANCE]):
        kind = {"encoder self-attention": "enc_self", "decoder self-attention": "dec_self"}[name]
        assert abs(level - round(want[kind], 3)) < 1e-9
    maps = _maps(at)
    assert set(maps) == {"enc_self", "dec_self"}
    for kind, fig in maps.items():
        assert abs(fig["layout"]["meta"]["chance"] - want[kind]) < 1e-9
        assert f"{want[kind]:.3f}" in fig["layout"]["title"]["text"]
    # a uniform head over n keys puts 1/n on the previous one: well above zero
    assert 0.1 < want["enc_self"] < 0.5
    assert at.query_params["detector"] == "previous_token"
    at.radio(key="det_detector").set_value("sink").run(timeout=120)
    ok(at)
    assert at.query_params["detector"] == "sink"


def test_induction_chance_is_what_a_random_head_scores():
    at = _open(detector="induction")
    ok(at)
    table = at.dataframe[0].value
    assert (table[CHANCE] > 0).all() and (table[CHANCE] < 0.1).all()  # about 1/(2n + prefix)


def test_an_empty_map_is_a_sentence():
    at = _open(detector="duplicate_token")
    ok(at)
    assert "no query of this input has another copy of its own token" in texts(at.info)
    assert "enc_self" not in _maps(at)


def test_the_picker_starts_again_with_each_detector():
    at = _open()
    at.radio(key="_w_heads_part").set_value("detectors").run(timeout=120)
    ok(at)
    at.selectbox(key="det_open_head").select_index(3).run(timeout=120)
    assert at.selectbox(key="det_open_head").index == 3
    at.radio(key="det_detector").set_value("sink").run(timeout=120)
    ok(at)
    assert at.selectbox(key="det_open_head").index == 0  # the sink's strongest head


def test_hostile_detector_values_are_a_note():
    for value in ("<script>alert(1)</script>", "induction\n", "x" * 5000, "１"):
        at = _open(detector=value)
        ok(at)
        assert not at.error, texts(at.error)
        assert "Unknown detector" in texts(at.warning)
        assert at.radio(key="det_detector").value == "previous_token"
