"""The shipped language model's demonstrations demonstrate (issue 59): each patch preset of
its card separates the clean and corrupted runs by at least a logit (the patch view's own
MIN_GAP; the pairs they replaced moved it by 0.07-0.29), the answer is the word the corrupted
copy changed, the sidebar opens on a text that has a preset partner, and the default head is
the card's best induction head."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from model import load_checkpoint
from model.patching import patch
from tests.conftest import skip_or_fail

LM = Path(__file__).resolve().parents[2] / "checkpoints" / "lm"


@pytest.fixture(scope="module")
def lm():
    if not (LM / "model.safetensors").is_file():
        skip_or_fail("checkpoints/lm is not shipped here")
    return load_checkpoint(LM)


def test_every_preset_moves_the_answer_by_a_logit(lm):
    from ui.views.patch import MIN_GAP, presets

    pairs = presets(lm)
    assert len(pairs) >= 2 and pairs == tuple(map(tuple, lm.card["patch_presets"]))
    for clean, corrupted in pairs:
        p = patch(lm, clean, corrupted, method="attribution", parts=("heads",))
        gap = p.clean_metric - p.corrupted_metric
        assert gap >= MIN_GAP, (clean, corrupted, gap)
        # induction: the clean answer is the first piece of the word the first copy had
        changed = [w for w, v in zip(clean.split(), corrupted.split()) if w != v]
        assert len(changed) == 1, changed
        assert changed[0].startswith(p.answer.lstrip("▁")), (p.answer, changed)


def test_the_default_text_and_head_come_from_the_card(lm):
    from ui.sidebar import presets_for
    from ui.views.patch import presets

    first = next(iter(presets_for(lm).values()))
    assert first in [c for c, _r in presets(lm)]  # the bare patch link has its partner
    words = first.split()
    assert len(words) > len(set(words))  # a repeated text, for the induction head
    pick = lm.card["default_head"]
    induction = np.asarray(lm.card["figures"]["detectors"]["induction"])
    assert (pick["layer"], pick["head"]) == np.unravel_index(induction.argmax(),
                                                             induction.shape)
    assert pick["kind"] in lm.kinds


def test_long_mode_is_capped_at_the_models_own_positions(lm):
    import json

    from model import LONG_FROM
    from ui.views.long_attention import long_cap

    positions = json.loads((LM / "config.json").read_text())["max_position_embeddings"]
    assert long_cap(lm) == positions  # what the page says before the paste
    assert long_cap(lm) <= LONG_FROM  # so the LM offers no long mode at all
