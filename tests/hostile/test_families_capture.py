"""Every hostile input through the app's cleaning and capture() on three Hugging Face model
families (tests/hostile/families.py): decoder-only GPT-2 (12 x 12, and a copy whose tokenizer
has no pad token), encoder-only BERT and encoder-decoder Marian, each with 32 positions.

The oracle is the model's own tokenizer (transformers): the pieces shown must be exactly the
tokenizer's pieces, cut to the position table, with the cut counted; a sentence the tokenizer
turns into no tokens at all must be refused with a clear ValueError, never crash the model.
"""

from __future__ import annotations

import numpy as np
import pytest

from model import capture, load_checkpoint
from model.inputs import clean_lines
from tests.hostile.families import ALL_FOLDERS, POSITIONS
from tests.hostile.inputs import CASES, OVER_POSITIONS, ZERO_TOKEN_NAMES, Hostile

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


@pytest.fixture(scope="module")
def bundles(hf_families) -> dict:
    return {name: load_checkpoint(folder) for name, folder in hf_families.items()}


def oracle(tok, line: str) -> tuple[list[str], int]:
    """The tokenizer's own pieces for one line, cut to the positions; and how many were cut."""
    full = tok(line)["input_ids"]
    kept = tok(line, truncation=True, max_length=POSITIONS)["input_ids"]
    return tok.convert_ids_to_tokens(kept), len(full) - len(kept)


def input_side(bundle) -> str:
    return "tgt" if bundle.config.family == "decoder" else "src"


def check_trace(bundle, trace, lines: list[str]) -> None:
    """Tokens are the tokenizer's; every attention kind is well formed for every sentence."""
    tok = bundle.tokenizer
    side = input_side(bundle)
    shown = trace.tgt_tokens if side == "tgt" else trace.src_tokens
    assert len(shown) == len(lines)
    for b, line in enumerate(lines):
        pieces, cut = oracle(tok, line)
        assert shown[b] == pieces, (line[:40], shown[b], pieces)
        assert trace.src_cut[b] == cut, (line[:40], trace.src_cut[b], cut)
        assert len(shown[b]) <= POSITIONS
    for kind, attn in trace.attn.items():
        mask = trace.masks[kind]
        assert attn.ndim == 5 and attn.shape[1] == len(lines) and mask.shape == (
            attn.shape[1], attn.shape[3], attn.shape[4])
        assert attn.shape[3] <= POSITIONS and attn.shape[4] <= POSITIONS
        assert np.isfinite(attn).all(), kind
        blocked = np.broadcast_to(mask[None, :, None], attn.shape)
        assert (attn[blocked] == 0).all(), kind
        open_rows = ~mask.all(-1)  # (B, Q) rows with at least one key
        sums = attn.sum(-1).transpose(0, 2, 1, 3)  # (L, H, B, Q)
        np.testing.assert_allclose(sums[:, :, open_rows], 1.0, atol=1e-4)
    if trace.logits is not None:
        assert np.isfinite(trace.logits).all()


@pytest.mark.parametrize("case", CASES, ids=str)
@pytest.mark.parametrize("name", ALL_FOLDERS)
def test_capture_on_each_family(bundles, name, case: Hostile):
    bundle = bundles[name]
    lines, _ = clean_lines(case.source)
    if not lines:  # nothing left: the app shows its prompt
        return
    empty = [line for line in lines if not bundle.tokenizer(line)["input_ids"]]
    if empty:
        with pytest.raises(ValueError, match="no tokens"):
            capture(bundle, lines)
        return
    check_trace(bundle, capture(bundle, lines), lines)


@pytest.mark.parametrize("name", ALL_FOLDERS)
def test_zero_token_inputs_really_are_zero_somewhere(bundles, name):
    """The new cases do what they claim: BERT's normalizer leaves nothing of them, so the
    decoder-only model (no special tokens) sees zero tokens and must refuse cleanly."""
    tok = bundles[name].tokenizer
    for case_name in ("only_zero_width", "only_combining", "format_only"):
        text = next(c for c in CASES if c.name == case_name).text
        ids = tok(text, add_special_tokens=False)["input_ids"]
        assert ids == [], (name, case_name, ids)
    assert ZERO_TOKEN_NAMES[0] == "only_zero_width"


@pytest.mark.parametrize("name", ALL_FOLDERS)
def test_longer_than_the_position_table(bundles, name):
    """~1,000 pieces into 32 positions, batched with a short sentence: cut, counted, padded."""
    bundle = bundles[name]
    lines = [OVER_POSITIONS, "Winter is cold."]
    trace = capture(bundle, lines)
    check_trace(bundle, trace, lines)
    assert trace.src_cut[0] > 500 and trace.src_cut[1] == 0


def test_a_tokenizer_without_pad_token_still_batches(bundles):
    """GPT-2 ships with no pad token: sentences of different lengths must still batch, and each
    sentence's attention must equal that sentence run alone (padding changes nothing)."""
    nopad = bundles["gpt2_nopad"]
    assert nopad.tokenizer.pad_token is None
    lines = ["The big dog eats the fish in the park.", "Winter is cold.", "감기 조심하세요."]
    batched = capture(nopad, lines)
    check_trace(nopad, batched, lines)
    for b, line in enumerate(lines):
        alone = capture(nopad, [line])
        n = len(alone.tgt_tokens[0])
        np.testing.assert_allclose(batched.attn["dec_self"][:, b, :, :n, :n],
                                   alone.attn["dec_self"][:, 0], atol=1e-5)
    padded = capture(bundles["gpt2"], lines)  # same weights, a real pad token
    np.testing.assert_allclose(padded.attn["dec_self"][:, 1, :, :4, :4],
                               batched.attn["dec_self"][:, 1, :, :4, :4], atol=1e-5)
