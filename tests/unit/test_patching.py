"""Activation patching against an oracle written here with plain torch forward hooks.

The oracle patches one head by hooking the input of the block's output projection (W_O: the
heads' contexts side by side, (B, Q, H·Dh)) and copying that head's slice from the clean run;
it computes the metric from the model's own logits. It shares no code with model.patching
(which patches at the lab's hook_context points). Models: the shipped `paper` and `seed001`
checkpoints, and tiny random GPT-2, Llama (grouped KV heads) and T5 folders built here.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing in this file may reach the network

from model import load_checkpoint, translate  # noqa: E402
from model.backends.lab.langs import target_langs  # noqa: E402
from model.patching import effect, patch  # noqa: E402
from tests.hf_folders import save_families  # noqa: E402
from tests.unit.test_hf_recorder import build  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
CLEAN, CORRUPT = "The cat eats fish.", "The dog eats fish."
HF_CLEAN, HF_CORRUPT = "the cat eats fish every day .", "the dog eats fish every day ."
T5_TARGET = "고양이는 생선을 먹어요"


pytestmark = pytest.mark.usefixtures("one_thread")  # tests/conftest.py


@pytest.fixture(scope="module")
def hf_root(tmp_path_factory) -> Path:
    return save_families(tmp_path_factory.mktemp("patching"), ("gpt2", "llama", "t5"), build)


def _w_o(bundle, kind: str, layer: int) -> torch.nn.Module:
    """The output projection of one attention block, found by the family's own names."""
    m = bundle.model
    if bundle.kind == "native":
        stack = m.encoder if kind == "enc_self" else m.decoder
        block = stack.layers[layer]
        return (block.cross_attn if kind == "cross" else block.self_attn).w_o
    if hasattr(m, "transformer"):  # GPT-2
        return m.transformer.h[layer].attn.c_proj
    if hasattr(m, "model"):  # Llama
        return m.model.layers[layer].self_attn.o_proj
    stack = m.encoder if kind == "enc_self" else m.decoder  # T5
    part = m.decoder.block[layer].layer[1].EncDecAttention if kind == "cross" else \
        stack.block[layer].layer[0].SelfAttention
    return part.o


def _oracle(bundle, run, kind: str, layer: int, head: int, a: int, w: int) -> float:
    """(m_patched − m_corrupted) / (m_clean − m_corrupted) for one head, by forward hooks.

    run(which) -> logits (V,) at the metric's position."""
    module = _w_o(bundle, kind, layer)
    d_head = bundle.config.d_model // bundle.config.n_heads
    if bundle.kind != "native" and hasattr(bundle.config.hf, "d_kv"):
        d_head = bundle.config.hf.d_kv  # T5: heads × d_kv need not be d_model
    cut = slice(head * d_head, (head + 1) * d_head)
    saved = {}

    def keep(mod, args):
        saved["x"] = args[0].detach().clone()

    def put(mod, args):
        x = args[0].clone()
        x[..., cut] = saved["x"][..., cut]
        return (x, *args[1:])

    def metric(logits):
        return float(logits[a].double() - logits[w].double())

    handle = module.register_forward_pre_hook(keep)
    try:
        m_clean = metric(run("clean"))
    finally:
        handle.remove()
    m_corr = metric(run("corrupted"))
    handle = module.register_forward_pre_hook(put)
    try:
        m_patched = metric(run("corrupted"))
    finally:
        handle.remove()
    return (m_patched - m_corr) / (m_clean - m_corr)


def _lab_runner(bundle, p, clean: str, corrupted: str):
    """Logits at decoder step p.position, teacher-forced on the clean greedy translation."""
    tok = bundle.tokenizer
    lang = target_langs(bundle, [clean], None)[0]
    limit = bundle.config.max_len - 1
    src = {w: tok.source_ids(t, lang, limit)[0] for w, t in (("clean", clean),
                                                              ("corrupted", corrupted))}
    assert p.clean_ids == src["clean"] and p.corrupted_ids == src["corrupted"]
    dec = [tok.bos_id, *translate(bundle, [clean], lang)[0].ids][: p.position + 1]

    def run(which):
        with torch.no_grad():
            out = bundle.model(torch.tensor([src[which]]), torch.tensor([dec]))
        return out[0, p.position]

    return run


def _hf_runner(bundle, p, clean: str, corrupted: str, target: str | None = None):
    tok = bundle.tokenizer
    ids = {"clean": tok(clean)["input_ids"], "corrupted": tok(corrupted)["input_ids"]}
    assert p.clean_ids == ids["clean"] and p.corrupted_ids == ids["corrupted"]
    dec = None
    if target is not None:
        start = bundle.config.decoder_start_id
        body = [t for t in tok(text_target=target)["input_ids"] if t != tok.eos_token_id]
        dec = torch.tensor([[start, *body][: p.position + 1]])

    def run(which):
        x = torch.tensor([ids[which]])
        with torch.no_grad():
            if dec is None:
                return bundle.model(input_ids=x, use_cache=False).logits[0, -1]
            return bundle.model(input_ids=x, decoder_input_ids=dec, use_cache=False).logits[0, -1]

    return run


def _check_heads(bundle, p, run):
    """One strong and one first head of every kind agree with the oracle within 1e-5."""
    for kind, grid in p.heads.items():
        strongest = np.unravel_index(np.abs(grid).argmax(), grid.shape)
        for layer, head in {(0, 0), tuple(int(i) for i in strongest)}:
            want = _oracle(bundle, run, kind, layer, head, p.answer_id, p.wrong_id)
            assert abs(grid[layer, head] - want) < 1e-5, (kind, layer, head, grid[layer, head],
                                                          want)


@pytest.mark.parametrize("name", ["paper", "seed001"])
def test_lab_heads_match_the_oracle(name):
    bundle = load_checkpoint(ROOT / "checkpoints" / name)
    p = patch(bundle, CLEAN, CORRUPT, parts=("heads",))
    run = _lab_runner(bundle, p, CLEAN, CORRUPT)
    assert set(p.heads) == {"enc_self", "dec_self", "cross"}
    assert p.answer_id == int(run("clean").argmax())  # default answer: the clean top token
    assert abs(float(run("clean")[p.answer_id] - run("clean")[p.wrong_id]) - p.clean_metric) < 1e-4
    _check_heads(bundle, p, run)


def test_lab_residual_first_block_everywhere_is_one_and_shapes():
    bundle = load_checkpoint(ROOT / "checkpoints" / "paper")
    assert effect(bundle, CLEAN, CORRUPT, [("resid", "enc", 0, None)]) == pytest.approx(1, abs=1e-9)
    p = patch(bundle, CLEAN, CORRUPT, method="attribution")
    n_src, n_dec = len(p.clean_ids), p.position + 1
    assert p.resid["enc"].shape == (4, n_src) and p.resid["dec"].shape == (4, n_dec)
    assert p.attn_out["cross"].shape == (3, n_dec) and p.attn_out["enc_self"].shape == (3, n_src)
    assert p.method == "attribution" and np.isfinite(p.resid["enc"]).all()


@pytest.mark.parametrize("family", ["gpt2", "llama"])
def test_decoder_only_heads_and_last_position(hf_root, family):
    bundle = load_checkpoint(hf_root / family)
    p = patch(bundle, HF_CLEAN, HF_CORRUPT)
    _check_heads(bundle, p, _hf_runner(bundle, p, HF_CLEAN, HF_CORRUPT))
    n_heads = bundle.config.n_heads  # Llama: 6 query heads over 2 key/value heads
    assert p.heads["dec_self"].shape == (2, n_heads)
    last = p.resid["dec"][-1]
    assert p.position == len(p.clean_ids) - 1
    assert last[-1] == pytest.approx(1, abs=1e-9) and np.all(last[:-1] == 0)
    assert effect(bundle, HF_CLEAN, HF_CORRUPT, [("resid", "dec", 0, None)]) == \
        pytest.approx(1, abs=1e-9)


def test_t5_every_kind_matches_the_oracle(hf_root):
    bundle = load_checkpoint(hf_root / "t5")
    p = patch(bundle, HF_CLEAN, HF_CORRUPT, target=T5_TARGET, step=1, parts=("heads",))
    assert set(p.heads) == {"enc_self", "dec_self", "cross"} and p.position == 1
    _check_heads(bundle, p, _hf_runner(bundle, p, HF_CLEAN, HF_CORRUPT, T5_TARGET))


def test_attribution_is_exact_where_the_metric_is_linear(hf_root):
    """GPT-2 without its final norm and with the last MLP silenced: the logits are linear in
    the last layer's head contexts and in the last residual stream. In float64, so that the
    comparison is not float32 rounding of a small logit difference."""
    bundle = load_checkpoint(hf_root / "gpt2")
    bundle.model.double()
    tf = bundle.model.transformer
    tf.ln_f = torch.nn.Identity()
    with torch.no_grad():
        tf.h[-1].mlp.c_proj.weight.zero_()
        tf.h[-1].mlp.c_proj.bias.zero_()
    exact = patch(bundle, HF_CLEAN, HF_CORRUPT)
    approx = patch(bundle, HF_CLEAN, HF_CORRUPT, method="attribution")
    np.testing.assert_allclose(approx.heads["dec_self"][-1], exact.heads["dec_self"][-1],
                               atol=1e-9)
    np.testing.assert_allclose(approx.attn_out["dec_self"][-1], exact.attn_out["dec_self"][-1],
                               atol=1e-9)
    np.testing.assert_allclose(approx.resid["dec"][-1], exact.resid["dec"][-1], atol=1e-9)
    # earlier layers go through the last block's attention: no longer linear, so they differ
    assert np.abs(approx.heads["dec_self"][0] - exact.heads["dec_self"][0]).max() > 1e-4


def test_mismatched_and_equal_inputs_are_clear(hf_root):
    bundle = load_checkpoint(ROOT / "checkpoints" / "paper")
    with pytest.raises(ValueError, match=r"same number of pieces.*clean has \d+ \(.*cat"):
        patch(bundle, CLEAN, "The big dog eats fish.")
    with pytest.raises(ValueError, match="nothing differs"):
        patch(bundle, CLEAN, CLEAN)
    gpt2 = load_checkpoint(hf_root / "gpt2")
    with pytest.raises(ValueError, match="same number of pieces"):
        patch(gpt2, HF_CLEAN, "the dog eats fish .")
    with pytest.raises(ValueError, match="nothing differs"):
        patch(gpt2, HF_CLEAN, HF_CLEAN, method="attribution")


def test_threads_sharing_one_model_see_their_own_patches(hf_root):
    """Patch hooks live in a context variable: four threads on one model, two pairs, each
    gets what it gets alone (the residual block hooks installed on first use included)."""
    from concurrent.futures import ThreadPoolExecutor

    bundle = load_checkpoint(hf_root / "llama")
    pairs = [(HF_CLEAN, HF_CORRUPT), ("winter is cold .", "winter is cold every")] * 2
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda pr: patch(bundle, *pr), pairs))
    for (clean, corrupted), p in zip(pairs, got):
        alone = patch(bundle, clean, corrupted)
        np.testing.assert_array_equal(p.heads["dec_self"], alone.heads["dec_self"])
        np.testing.assert_array_equal(p.resid["dec"], alone.resid["dec"])


def test_a_given_batch_or_decode_is_read_only_for_that_pair(tmp_path):
    """patch(..., encoded=, decoded=) reads the caller's Batch and greedy decode only where
    they are this pair in the clean sentence's target language (model.pairs.pair_batch /
    pair_decoded); anything else is tokenized and decoded afresh, so the result is the same."""
    from model.dispatch import encode
    from model.pairs import pair_batch, pair_decoded
    from tests.tiny_model import save_tiny_checkpoint

    clean, corrupt = "The cat drinks water.", "A child drinks water."  # 18 pieces each
    bundle = load_checkpoint(save_tiny_checkpoint(tmp_path / "tiny", max_len=40))
    pair = encode(bundle, [clean, corrupt], target_lang="ko")
    assert pair_batch(pair, clean, corrupt, ("ko", "ko")) is pair
    assert pair_batch(pair, clean, corrupt, ("en", "en")) is None  # another language
    assert pair_batch(pair, corrupt, clean) is None  # another order
    decoded = translate(bundle, pair)
    assert pair_decoded(decoded, clean, corrupt, ("ko", "ko")) == decoded
    assert pair_decoded(decoded, clean, corrupt, ("en", "en")) is None
    assert pair_decoded(decoded[:1], clean, corrupt, ("ko",)) is None
    plain = patch(bundle, clean, corrupt, target_lang="ko", method="attribution")
    given = patch(bundle, clean, corrupt, target_lang="ko", method="attribution", encoded=pair,
                  decoded=decoded)
    wrong = patch(bundle, clean, corrupt, target_lang="ko", method="attribution",
                  encoded=encode(bundle, [clean, corrupt], target_lang="en"),
                  decoded=translate(bundle, [clean, corrupt], "en"))
    for got in (given, wrong):
        assert got.outputs == plain.outputs and got.clean_ids == plain.clean_ids
        for kind in plain.heads:
            np.testing.assert_array_equal(got.heads[kind], plain.heads[kind])


def test_a_made_up_corrupted_line_keeps_each_words_script():
    # the pool mixes the presets' Korean and English lines: a swap never puts a Korean word
    # into an English line, nor an English word into a Korean one (paper reads both scripts)
    from model import load_checkpoint
    from model.patching import minimal_swap
    from tests.conftest import ROOT

    paper = load_checkpoint(ROOT / "checkpoints" / "paper")
    pool = ["겨울은 추워요.", "The cat sat on the mat.", "rug"]
    hangul = lambda text: any("가" <= ch <= "힣" for ch in text)  # noqa: E731
    english = minimal_swap(paper, "The big dog eats the fish.", words=pool, target_lang="ko")
    assert english.found and not hangul(english.corrupted), english
    korean = minimal_swap(paper, "여름은 더워요.", words=pool, target_lang="en")
    assert korean.found and hangul(korean.replacement), korean
