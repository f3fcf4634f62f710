"""Issue 55 item 3: "trained here" is a fact of the checkpoint's card (model/cards.py), not of
its kind: the shipped lm (a Hugging Face folder) is the project's own, the same folder without
our card is not, and a lab checkpoint saved without a training command is not either."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from model import Bundle, load_checkpoint
from model.backends import capabilities, trained_here
from model.cards import training_commands

ROOT = Path(__file__).resolve().parents[2]


def card(value: dict) -> Bundle:
    return Bundle(model=None, tokenizer=None, config=None, card=value)


@pytest.fixture(scope="module")
def lm() -> Bundle:
    return load_checkpoint(ROOT / "checkpoints" / "lm")


def test_the_shipped_models_of_both_kinds_are_ours(lm):
    paper = load_checkpoint(ROOT / "checkpoints" / "paper")
    assert trained_here(paper) and trained_here(lm)
    # two kinds: the class flag this replaces said the lm was foreign
    assert capabilities(paper).translates and not capabilities(lm).translates
    # what the card records, read another way: the lm's recipe runs the project's lm trainer
    assert lm.card["training"]["command"].startswith("python -m model.training.lm.train")
    assert training_commands(lm.card)[0] == lm.card["training"]["command"]


def test_the_same_folder_without_our_card_is_not(lm, tmp_path):
    plain = shutil.copytree(ROOT / "checkpoints" / "lm", tmp_path / "plain",
                            ignore=shutil.ignore_patterns("card.json", "snapshots", "training"))
    bundle = load_checkpoint(plain)
    assert not training_commands(bundle.card) and not trained_here(bundle)
    # same weights: only the card differs
    first = next(iter(lm.model.state_dict()))
    assert (bundle.model.state_dict()[first] == lm.model.state_dict()[first]).all()


@pytest.mark.parametrize(("value", "ours"), [
    ({"command": "python -m model.training.train --variant paper"}, True),
    ({"command": ["python -m model.training.train --steps 1", "python -m model.training."
                  "train --resume"]}, True),
    ({"training": {"command": "python -m training.lm.train --out x"}}, True),  # the new room
    ({"variant": "paper"}, False),  # a hand-saved lab checkpoint: no training recorded
    ({"command": "python -m sentence_transformers.train"}, False),
    ({"command": "python -m model.training_other"}, False),
    ({"training": "python -m model.training.train"}, False),  # not the card's shape
    ({}, False),
])
def test_the_fact_is_the_recorded_training_command(value, ours):
    assert trained_here(card(value)) is ours
