"""The language model's training text and recipe: the story mode's rows are stationary (a
model that ignores context scores an in-context learning score of about 0 on them), its cast
recurs, and the schedule of legs parses and resumes as train.py runs it."""

from __future__ import annotations

import re

import numpy as np
import pytest

from tests.conftest import ROOT
from training.lm import probes, schedule, text

LM = ROOT / "checkpoints" / "lm"


@pytest.fixture(scope="module")
def tokenizer():
    from transformers import PreTrainedTokenizerFast

    return PreTrainedTokenizerFast.from_pretrained(str(LM))


def _rows(tokenizer, seed: int, n: int) -> np.ndarray:
    """(n, 129) ids packed as train.Rows.natural packs story rows."""
    stream, out = text.paragraphs(seed, "story"), []
    while len(out) < n:
        ids = [0]
        while len(ids) < 129:
            ids += tokenizer(next(stream), add_special_tokens=False)["input_ids"] + [1]
        out.append(ids[:129])
    return np.array(out)


def test_a_model_blind_to_context_scores_no_in_context_learning(tokenizer):
    """Unigram frequencies from one seed, scored on another: late and early pieces are
    equally hard, so only reading the row can make the score negative."""
    train, held = _rows(tokenizer, 1, 400), _rows(tokenizer, 2, 120)
    counts = np.bincount(train[:, 1:].ravel(), minlength=tokenizer.vocab_size) + 0.5
    losses = -np.log(counts / counts.sum())[held[:, 1:]]
    assert abs(probes.icl_score(losses, 128)) < 0.15


def test_story_rows_fill_the_context_and_their_cast_recurs(tokenizer):
    stream = text.paragraphs(7, "story")
    rows = [next(stream) for _ in range(60)]
    assert rows == [x for x, _ in zip(text.paragraphs(7, "story"), range(60))]
    long = [len(tokenizer(x)["input_ids"]) > 129 for x in rows]
    assert np.mean(long) > 0.9
    english = [x for x in rows if re.search(r"[A-Za-z]{3}", x) and not re.search("[가-힣]", x)]
    assert english
    recurs = []
    for x in english:  # someone of the cast speaks more than once (nearly every row)
        tags = re.findall(r"([A-Z][a-z]+(?: [A-Z][a-z]+)?):", x)
        recurs.append(len(tags) > len(set(tags)))
    assert np.mean(recurs) > 0.8


def test_the_recipe_parses_and_resumes_leg_by_leg():
    legs = schedule.parse(schedule.RECIPE)
    assert [str(x) for x in legs] == schedule.RECIPE.split()
    assert [x.text for x in legs] == ["packed"] * 3 + ["story"]
    starts = [s for s, _ in schedule.remaining(legs, 0)]
    assert starts == [0, 1500, 2100, 2800]
    assert [(s, x.end) for s, x in schedule.remaining(legs, 1700)] == [
        (1700, 2100), (2100, 2800), (2800, legs[-1].end)]
    assert schedule.remaining(legs, 2800) == [(2800, legs[-1])]
    for bad in ("", "100:0.5", "100:1.5:packed", "100:0.5:poems", "200:0.5:packed 100:0.5:packed"):
        with pytest.raises(ValueError):
            schedule.parse(bad)
    with pytest.raises(ValueError, match="every leg ends"):
        schedule.remaining(legs, legs[-1].end)
