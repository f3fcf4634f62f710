"""Training smoke test: a tiny model for a few dozen steps; loss falls and resume continues."""

from __future__ import annotations

import json

from model import load_checkpoint, translate
from training.train import main as train_main


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


def test_warm_start_moves_rows_by_piece_and_keeps_the_chain(tmp_path):
    """--init-from: rows of pieces both tokenizers hold are copied, a new piece starts at the
    mean of the old rows that spell it, and the card names the legs it continues."""
    import torch
    from safetensors.torch import load_file

    from model.backends.lab.tokenizer import Tokenizer
    from training.warm import warm_start

    old = tmp_path / "old"
    common = ["--variant", "paper", "--tiny", "--n-train", "300", "--n-val", "20", "--n-test",
              "20", "--max-tokens", "800", "--eval-every", "1000", "--save-every", "20",
              "--lr", "3e-3", "--warmup", "10", "--no-eval"]
    train_main([*common, "--out", str(old), "--vocab", "800", "--tokenizer",
                str(tmp_path / "old.model"), "--steps", "5"])
    new = tmp_path / "new"
    card = train_main([*common, "--out", str(new), "--vocab", "1000", "--tokenizer",
                       str(tmp_path / "new.model"), "--steps", "3", "--init-from", str(old)])
    assert card["warm_start"]["from"] == str(old) and card["warm_start"]["steps"] == 5
    assert len(card["command"]) == 2 and "--init-from" in card["command"][1]
    # the remap itself, on a fresh model: no training step in between
    bundle = load_checkpoint(new)
    model, tok = bundle.model, bundle.tokenizer
    counts = warm_start(model, tok, old)
    old_tok = Tokenizer(old / "tokenizer.model")
    old_rows = load_file(str(old / "model.safetensors"))["tok_embed.weight"]
    rows = model.state_dict()["tok_embed.weight"]
    old_ids = {old_tok.id_to_piece(i): i for i in range(old_tok.vocab_size)}
    shared = [i for i in range(tok.vocab_size) if tok.id_to_piece(i) in old_ids]
    fresh = [i for i in range(tok.vocab_size) if tok.id_to_piece(i) not in old_ids]
    assert counts["kept"] == len(shared) > 0 and fresh
    for i in shared[:50]:
        assert torch.equal(rows[i], old_rows[old_ids[tok.id_to_piece(i)]])
    i = fresh[0]
    parts = [k for k in old_tok.encode(tok.id_to_piece(i).replace("▁", " "))
             if k != old_tok.unk_id]
    assert torch.allclose(rows[i], old_rows[parts].mean(0))
