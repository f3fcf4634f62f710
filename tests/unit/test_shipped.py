"""The shipped checkpoints load and translate the seed examples."""

from __future__ import annotations

import json

import pytest

from model import capture, load_checkpoint, translate
from tests.conftest import ROOT

SHIPPED = ["paper", "seed001"]


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_checkpoint_translates(name):
    folder = ROOT / "checkpoints" / name
    assert sum(f.stat().st_size for f in folder.iterdir()) < 25 * 2**20
    assert not list(folder.glob("*.pt")) and not list(folder.glob("*.bin"))
    bundle = load_checkpoint(folder)
    out = translate(bundle, ["Winter is cold.", "겨울은 추워요.", "The big dog eats fish."])
    assert out[0].text == "겨울은 추워요."
    assert out[1].text == "Winter is cold."
    assert out[2].text == "큰 개가 생선을 먹어요."
    card = json.loads((folder / "card.json").read_text(encoding="utf-8"))
    assert card["variant"] == name and card["train_wall_time_s"] <= 45 * 60 + 1
    for direction in ("en->ko", "ko->en"):
        assert card["metrics"][direction]["exact_match"] >= 90
        assert card["metrics"][direction]["chrf"] >= 95
    assert card["metrics"]["best_alignment_head"]["agreement"] >= 80
    seeds = card["metrics"]["seed_pairs"]  # the seed documents' sentences, both directions
    missed = [(p["source"], p["output"]) for p in seeds if not p["exact"]]
    # seed001 writes "sumer" in one of the 14 (Winter is cold but summer is hot.)
    assert len(seeds) == 14 and len(missed) <= (0 if name == "paper" else 1), missed
    seed_000 = translate(bundle, ["감기 조심하세요.", "Please be careful of colds."])
    assert [t.text for t in seed_000] == ["Please be careful of colds.", "감기 조심하세요."]
    cfg = bundle.config
    assert cfg.max_len >= 512
    expected = {"paper": ("post", "sinusoidal", "relu"), "seed001": ("pre", "learned", "gelu")}
    assert (cfg.norm, cfg.pos_encoding, cfg.activation) == expected[name]
    tr = capture(bundle, ["겨울은 추워요.", "감기 조심하세요."], target_lang="en")
    assert tr.src_ids[0, -1] == 0  # the shorter sentence is padded with id 0, as in seed 000
    assert tr.positions["enc"][0, -1] == 0
