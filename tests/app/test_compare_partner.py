"""The compare view opens on two lines whose pieces line up, on every model it serves.

Its second input used to be the input's other line, written for the translators: on
all-MiniLM-L6-v2's WordPiece "The cat sat on the mat." is 9 pieces and "A cat was sitting on
the rug." 10, so `?ckpt=minilm&view=compare` opened on "the query tokens differ in number
(9 vs 10)". Now the second line is chosen by the model's own tokenizer (ui/line_partner.py).
Checked on the shipped 'paper' and 'lm', the installed MiniLM and a tiny GPT-2 folder made
here: both maps are the heads of a capture() of each line on its own, and they have as many
query and key pieces. A line typed with another number of pieces still gets the message.
"""

from __future__ import annotations

import numpy as np
import pytest

from model import capture, load_checkpoint
from model.backends import capabilities
from model.capture import key_side, query_side
from tests.app.conftest import run_app
from tests.app.test_views import array, charts, ok, texts
from tests.conftest import ROOT, installed_minilm
from tests.hf_folders import save_families
from tests.unit.test_hf import make_model

LAYER, HEAD = 1, 1


@pytest.fixture(scope="module")
def hf_root(tmp_path_factory):
    """A tiny random GPT-2 folder listed with ATTN_MODELS, beside the shipped checkpoints."""
    root = save_families(tmp_path_factory.mktemp("compare_gpt2"), ("gpt2",), make_model)
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("ATTN_CHECKPOINTS_DIR", raising=False)
        mp.setenv("ATTN_MODELS", str(root))
        mp.setenv("HF_HUB_OFFLINE", "1")
        yield root


def folder(name: str, hf_root) -> object:
    if name == "minilm":
        return installed_minilm()
    return hf_root / name if name == "gpt2" else ROOT / "checkpoints" / name


def head_map(bundle, line: str, lang: str | None, kind: str) -> np.ndarray:
    """One head's attention for one line alone, from model.capture (not the app's cache)."""
    tr = capture(bundle, [line], target_lang=lang, names=["attn"])
    q, k = len(tr.tokens(query_side(kind))[0]), len(tr.tokens(key_side(kind))[0])
    return tr.attn[kind][LAYER, 0, HEAD, :q, :k]


@pytest.mark.parametrize("name", ["minilm", "paper", "lm", "gpt2"])
def test_compare_opens_on_two_lines_that_line_up(hf_root, name):
    bundle = load_checkpoint(folder(name, hf_root))
    lang = "auto" if capabilities(bundle).translates else None
    kind = capture(bundle, ["a"], target_lang=lang, names=["attn"]).kinds[0]
    at = run_app({"ckpt": name, "view": "compare", "kind": kind, "layer": str(LAYER),
                  "head": str(HEAD)}, timeout=120)
    ok(at)
    first = at.text_area(key="text").value.splitlines()[0]
    second = at.text_input(key="cmp_text").value
    [fig, *_] = charts(at)
    title = fig["layout"]["title"]["text"]
    assert "differ in number" not in title, title
    left, right = head_map(bundle, first, lang, kind), head_map(bundle, second, lang, kind)
    assert left.shape == right.shape, (first, second, left.shape, right.shape)
    np.testing.assert_allclose(array(fig["data"][0]["z"]), left, atol=2e-5)
    np.testing.assert_allclose(array(fig["data"][1]["z"]), right, atol=2e-5)
    if second == first:  # nothing at hand lined up: the same sentence, and the view says so
        assert "starts as the same sentence" in texts(at.caption)
        assert len(fig["data"]) == 3
    elif second not in at.text_area(key="text").value.splitlines():
        n = left.shape[0]  # query pieces of the first line, from its own capture
        changed = [(a, b) for a, b in zip(first.split(), second.split()) if a != b]
        if len(changed) == 1 and len(first.split()) == len(second.split()):  # one word swapped
            a, b = (w.strip(".,!?:") for w in changed[0])
            said = f"with “{a}” changed to “{b}”: both are {n} pieces on this model's tokenizer"
        else:
            said = f"as many pieces as sentence 1 on this model's tokenizer ({n})"
        assert said in texts(at.caption), (said, texts(at.caption))

    longer = second + " " + second  # typed by hand: another number of pieces
    at.text_input(key="cmp_text").input(longer).run()
    ok(at)
    [fig, *_] = charts(at)
    assert "differ in number" in fig["layout"]["title"]["text"]
    assert "on this model's tokenizer" not in texts(at.caption)  # the note was for the default
    np.testing.assert_allclose(array(fig["data"][1]["z"]),
                               head_map(bundle, longer, lang, kind), atol=2e-5)


def test_a_line_nothing_lines_up_with_is_compared_with_itself():
    """On the shipped 'paper', a line of many pieces has no partner among the input, the
    minimal pairs and the examples: it is compared with itself, difference zero."""
    line = "Zebras quietly juggle seventeen purple umbrellas beside a lighthouse."
    at = run_app({"ckpt": "paper", "view": "compare", "text": line, "kind": "enc_self",
                  "layer": str(LAYER), "head": str(HEAD)}, timeout=120)
    ok(at)
    assert at.text_input(key="cmp_text").value == line
    assert "starts as the same sentence" in texts(at.caption)
    [fig, *_] = charts(at)
    assert len(fig["data"]) == 3 and "same tokens" in fig["layout"]["title"]["text"]
    np.testing.assert_allclose(array(fig["data"][2]["z"]), 0, atol=1e-5)


def test_the_chosen_line_follows_a_new_sentence_until_one_is_typed():
    """On the shipped 'paper': a new sidebar sentence gets a new partner of as many pieces
    while the box still holds the chosen line; a line the user typed is kept."""
    paper = load_checkpoint(ROOT / "checkpoints" / "paper")
    at = run_app({"ckpt": "paper", "view": "compare", "text": "Winter is cold."}, timeout=120)
    ok(at)
    first = at.text_input(key="cmp_text").value
    new = "The big dog eats the fish."
    at.text_area(key="text").input(new).run()
    ok(at)
    second = at.text_input(key="cmp_text").value
    assert second not in (first, new)
    assert head_map(paper, second, "auto", "enc_self").shape == head_map(
        paper, new, "auto", "enc_self").shape
    at.text_input(key="cmp_text").input("Summer is warm.").run()
    at.text_area(key="text").input("Winter is cold.").run()
    ok(at)
    assert at.text_input(key="cmp_text").value == "Summer is warm."
