"""view=patch opened with no corrupt= on a tiny GPT-2-shaped folder: the sidebar's default line
("The cat sat on the mat.") has no preset partner, and the corrupted box used to open equal to
it ("nothing differs", no chart). It now opens on the clean line with one word swapped where
the model's own tokenizer reads as many, different pieces (model.patching.minimal_swap), says
which pieces differ, and draws the patching; where no swap lines up, it says why and what to
type. Checked against the model's tokenization and patch() run here."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from model import load_checkpoint
from model.dispatch import encode
from model.patching import patch
from tests.app.conftest import run_app
from tests.app.test_views import array, charts, texts
from tests.hf_folders import save_families
from tests.hostile.families import build_folder
from tests.unit.test_hf import make_model

UNKNOWN = "Zebras graze quietly."  # no word of it in the folder's word-level vocabulary


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    root = save_families(tmp_path_factory.mktemp("patch_default"), ("gpt2",), make_model)
    # 12 layers x 12 heads with a trained byte-level BPE: "cat" is one piece, "dog" two
    shutil.move(build_folder(tmp_path_factory.mktemp("bpe"), "gpt2"), root / "gpt2_bpe")
    # the same model, with a card whose example line and minimal pair are all unknown words:
    # every swap reads as the same <unk> pieces
    shutil.copytree(root / "gpt2", root / "gpt2_unknown")
    (root / "gpt2_unknown" / "card.json").write_text(json.dumps({
        "examples": {"Zebras": UNKNOWN}, "patch_presets": [["Zebras graze.", "Horses graze."]]}))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ATTN_MODELS", str(root))
        mp.setenv("HF_HUB_OFFLINE", "1")
        yield root


def _said_and_true(at, bundle) -> tuple[str, str]:
    """The page's (clean, corrupted): one word apart, and the caption's pieces and count are
    the ones this bundle's tokenizer gives the two sentences."""
    clean = at.text_area(key="text").value.splitlines()[0]
    corrupted = at.text_input(key="patch_corrupt").value
    assert corrupted != clean
    changed = [(x, y) for x, y in zip(clean.split(), corrupted.split()) if x != y]
    assert len(clean.split()) == len(corrupted.split()) and len(changed) == 1, changed
    a, b = encode(bundle, [clean, corrupted]).pieces
    assert len(a) == len(b), (a, b)
    where = [j for j in range(len(a)) if a[j] != b[j]]
    assert where
    old, new = " ".join(a[j] for j in where), " ".join(b[j] for j in where)
    word, replacement = (w.strip(".,") for w in changed[0])
    said = texts(at.caption)
    assert (f"changing “{word}” to “{replacement}”: in this model's pieces, {old} becomes "
            f"{new}, and each sentence is {len(a)} pieces") in said, said
    return clean, corrupted


@pytest.mark.parametrize("name", ["gpt2", "gpt2_bpe"])
def test_opens_on_a_pair_that_differs_and_draws_the_patching(root, name):
    at = run_app({"ckpt": name, "view": "patch"}, timeout=120)
    assert not at.exception and not at.error, [e.value for e in at.exception] + texts(at.error)
    bundle = load_checkpoint(root / name)
    clean, corrupted = _said_and_true(at, bundle)
    assert "cannot be patched" not in texts(at.warning)
    # the page's metric and heads map are patch()'s on that pair
    want = patch(bundle, clean, corrupted)
    shown = texts(at.markdown)
    assert f"clean {want.clean_metric:+.3f}, corrupted {want.corrupted_metric:+.3f}" in shown
    heads = charts(at)[0]
    (kind,) = want.heads
    z = next(t["z"] for t in heads["data"] if t["type"] == "heatmap" and t["name"] == kind)
    # effects of about ±0.05..1.3 here; the random model's gap is ~0.001 logits, so another
    # chunking of the same sweep moves them by ~2e-5 (float32 noise divided by the gap)
    np.testing.assert_allclose(array(z), want.heads[kind], atol=1e-3)
    if name != "gpt2":
        return
    # a new clean sentence carries a made-up default along, until the box is typed in
    at.text_area(key="text").set_value("the cat eats fish every day .").run(timeout=120)
    assert not at.exception
    assert at.text_input(key="patch_corrupt").value == "the dog eats fish every day ."
    at.text_input(key="patch_corrupt").set_value("the fish eats fish every day .")
    at.text_area(key="text").set_value("the cat runs .").run(timeout=120)
    assert at.text_input(key="patch_corrupt").value == "the fish eats fish every day ."


def test_another_model_remakes_the_pair_in_its_own_pieces(root):
    """The word-level folder reads "The cat sat on the mat." as 7 pieces, the BPE one as 13:
    a made-up pair, untouched, is made again for the model switched to."""
    at = run_app({"ckpt": "gpt2", "view": "patch"}, timeout=120)
    _said_and_true(at, load_checkpoint(root / "gpt2"))
    at.selectbox(key="ckpt").set_value("gpt2_bpe").run(timeout=120)
    assert not at.exception and not at.error, [e.value for e in at.exception] + texts(at.error)
    _said_and_true(at, load_checkpoint(root / "gpt2_bpe"))


def test_no_swap_lines_up_says_why_and_what_to_type(root):
    at = run_app({"ckpt": "gpt2_unknown", "view": "patch"}, timeout=120)
    assert not at.exception and not at.error, [e.value for e in at.exception] + texts(at.error)
    assert at.text_area(key="text").value == UNKNOWN
    assert at.text_input(key="patch_corrupt").value == UNKNOWN
    bundle = load_checkpoint(root / "gpt2_unknown")
    assert set(encode(bundle, [UNKNOWN]).pieces[0]) == {"<unk>", "."}  # why nothing lines up
    said = texts(at.info)
    assert "No corrupted sentence could be made" in said and "Type a corrupted sentence" in said
    assert not charts(at) and "Metric" not in texts(at.markdown)
    # typing one word the model knows, as the message asks, patches
    at.text_input(key="patch_corrupt").set_value("dog graze quietly.").run(timeout=120)
    assert not at.exception and not texts(at.info)
    assert "Metric" in texts(at.markdown) and charts(at)
