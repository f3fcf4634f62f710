"""Training smoke test: a tiny model for a few dozen steps; loss falls and resume continues."""

from __future__ import annotations

import json

from model import load_checkpoint, translate
from model.training.train import main as train_main


def test_tiny_training_run_and_resume(tmp_path):
    out = tmp_path / "tiny"
    common = ["--variant", "paper", "--out", str(out), "--tiny", "--n-train", "300",
              "--n-val", "20", "--n-test", "20", "--max-tokens", "800", "--vocab", "800",
              "--tokenizer", str(tmp_path / "tok.model"), "--eval-every", "1000",
              "--save-every", "20", "--lr", "3e-3", "--warmup", "10", "--no-eval"]
    card = train_main([*common, "--steps", "40"])
    state = json.loads((tmp_path / "tiny.state" / "state.json").read_text())
    assert state["step"] == 40
    losses = state["losses"]
    assert sum(losses[-5:]) / 5 < sum(losses[:5]) / 5 - 0.5  # it learns something
    card2 = train_main([*common, "--steps", "50", "--resume"])
    assert card2["steps"] == 50
    state2 = json.loads((tmp_path / "tiny.state" / "state.json").read_text())
    assert state2["losses"][:40][-20:] == losses[-20:]  # same history, continued
    assert card["variant"] == "paper" and card["train_wall_time_s"] > 0
    bundle = load_checkpoint(out)
    assert bundle.card["steps"] == 50
    assert isinstance(translate(bundle, ["Winter is cold."], "ko")[0].text, str)
