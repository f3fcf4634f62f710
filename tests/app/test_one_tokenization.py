"""One batch per input: a rerun with new text tokenizes each line once (AppTest, tiny model).

Every tokenizer entry point is wrapped to count the texts it is given; the memory
estimate, the greedy decode and the capture all read the one Batch the backend made.
"""

from __future__ import annotations

from collections import Counter

import pytest

from tests.app.conftest import run_app
from tests.tiny_model import save_tiny_checkpoint
from tests.tokenizer_calls import count_encodes

FIRST = "Winter is cold."
NEW = ["The big dog eats the fish.", "겨울은 추워요."]


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("checkpoints")
    save_tiny_checkpoint(root / "paper", max_len=40, card={"variant": "paper"})
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ATTN_CHECKPOINTS_DIR", str(root))
        mp.delenv("ATTN_MODELS", raising=False)
        yield root


@pytest.fixture
def encoded(monkeypatch) -> Counter:
    """Texts given to a tokenizer, one count per text (tests/tokenizer_calls.py)."""
    return count_encodes(monkeypatch)


@pytest.mark.parametrize("view", ["tokens", "attention", "translation"])
def test_a_new_two_line_input_is_tokenized_once_per_line(models, encoded, view):
    at = run_app({"view": view, "text": FIRST})  # model loaded, first input done
    assert not at.exception
    encoded.clear()
    at.text_area(key="text").input("\n".join(NEW)).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert encoded == Counter(NEW), encoded  # the estimate, decode and capture: one Batch


def test_the_count_sees_a_second_tokenization(models, encoded):
    """The counter is not blind: model.capture on text (not a Batch) tokenizes again."""
    from model import capture, load_checkpoint

    bundle = load_checkpoint(models / "paper")
    capture(bundle, NEW, target_lang="auto", names=["attn"])
    assert encoded == Counter(NEW)  # text -> one Batch -> decode and capture read it
    encoded.clear()
    from model.backends.lab.decode import source_batch
    from model.backends.lab.langs import target_langs

    source_batch(bundle, NEW, target_langs(bundle, NEW, "auto"))  # the old way, once more
    assert sum(encoded.values()) == 2
