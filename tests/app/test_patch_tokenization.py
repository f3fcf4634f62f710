"""One tokenization per input on a patch run (issue 55): the patch view tokenizes the clean and
the corrupted sentence once, into one Batch that the mismatch hint, the time and memory
estimates and the patching itself read (before: the clean sentence six times on the lab's
model, twice more on a Hugging Face one where each encode tokenized twice to count cuts).

Counted inside the view (the page's own capture of the clean sentence is the app's run, counted
by test_one_tokenization) by wrapping the tokenizers' encode entry points: SentencePiece's for
the lab's model, transformers' for tiny Hugging Face GPT-2 and Marian folders built here.
"""

from __future__ import annotations

import dataclasses
import threading
from collections import Counter

import pytest

from tests.app.conftest import run_app
from tests.app.test_views import texts
from tests.hf_folders import save_families
from tests.tiny_model import save_tiny_checkpoint
from tests.tokenizer_calls import count_encodes
from tests.unit.test_hf import make_model
from ui.views import VIEWS

CASES = {"paper": ("the cat eats fish .", "the dog eats fish ."),
         "gpt2": ("the cat eats fish every day .", "the dog eats fish every day ."),
         "marian": ("the cat eats fish every day .", "the dog eats fish every day .")}


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("patch_tok")
    save_tiny_checkpoint(root / "paper", extra=["cat", "dog", "eats", "fish"], max_len=40,
                         card={"variant": "paper"})
    save_families(root, ("gpt2", "marian"), make_model)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ATTN_CHECKPOINTS_DIR", str(root))
        mp.setenv("ATTN_MODELS", str(root))
        mp.setenv("HF_HUB_OFFLINE", "1")
        yield root


@pytest.fixture
def tokenized(monkeypatch) -> Counter:
    """Texts given to a tokenizer while the patch view draws (tests/tokenizer_calls.py)."""
    state = threading.local()
    seen = count_encodes(monkeypatch, when=lambda: getattr(state, "view", False))
    real_render = VIEWS["patch"].render

    def render(ctx):
        state.view = True
        try:
            return real_render(ctx)
        finally:
            state.view = False

    monkeypatch.setitem(VIEWS, "patch", dataclasses.replace(VIEWS["patch"], render=render))
    return seen


@pytest.mark.parametrize("name", list(CASES))
def test_a_patch_run_tokenizes_each_input_once(models, tokenized, name):
    clean, corrupted = CASES[name]
    at = run_app({"ckpt": name, "view": "patch", "text": clean, "corrupt": corrupted},
                 timeout=120)
    assert not at.exception and not at.error, [e.value for e in at.exception] + texts(at.error)
    assert "cannot be patched" not in texts(at.warning), texts(at.warning)
    assert "Metric" in texts(at.markdown), "the patching did not run"
    assert tokenized == Counter({clean: 1, corrupted: 1})


def test_the_count_sees_a_second_tokenization(models, monkeypatch):
    """The counter is not blind: patch() on text alone tokenizes the pair itself."""
    from model import load_checkpoint
    from model.dispatch import encode
    from model.patching import patch

    clean, corrupted = CASES["gpt2"]
    bundle = load_checkpoint(models / "gpt2")
    pair = encode(bundle, [clean, corrupted])
    counted = count_encodes(monkeypatch)  # everywhere here, not only inside the view
    patch(bundle, clean, corrupted, parts=("heads",), encoded=pair)
    assert counted == Counter()  # the given Batch is read
    patch(bundle, clean, corrupted, parts=("heads",))
    assert counted == Counter({clean: 1, corrupted: 1})


def test_the_pair_is_decoded_once_for_both_methods(models, monkeypatch):
    """The lab translator's greedy decode of the pair is kept with the page's translations
    (ui/runtime.cached_translate): exact, then attribution on the same pair, decode it once
    (before, every patch() decoded it in its setup)."""
    from model.backends import LabBackend
    from ui.runtime import shared_results, translations

    translations.clear()  # the tests above kept this pair's decode and its patching
    shared_results.clear()
    clean, corrupted = CASES["paper"]
    pairs: list[tuple] = []
    real = LabBackend.translate

    def counted(self, batch, **kwargs):
        pairs.append(tuple(batch.sources))
        return real(self, batch, **kwargs)

    monkeypatch.setattr(LabBackend, "translate", counted)
    at = run_app({"ckpt": "paper", "view": "patch", "text": clean, "corrupt": corrupted},
                 timeout=120)
    assert not at.exception and "Metric" in texts(at.markdown)
    at.radio(key="patch_method").set_value("attribution").run(timeout=120)
    assert not at.exception and "attribution" in texts(at.caption)
    assert pairs.count((clean, corrupted)) == 1, pairs
