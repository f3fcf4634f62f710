"""Sentence embeddings (model.embed), the cosine's token-pair terms and each head's effect on
it, against an independent computation: a second load of the folder with plain transformers
(AutoModel, eager attention) and the pooling written again here in numpy.

A tiny random BERT folder with sentence-transformers' files written in the test, and
checkpoints/minilm where `make` installed it.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from model import CheckpointError, capture, embed, load_checkpoint  # noqa: E402
from model.analysis import head_similarity, similarity_terms  # noqa: E402
from model.backends import MINILM_FOLDER, capabilities  # noqa: E402
from model.backends.hf.sentence import SentenceConfig, sentence_config  # noqa: E402
from tests.conftest import ROOT, installed_minilm  # noqa: E402
from tests.hf_folders import save_folder  # noqa: E402
from tests.unit.test_hf import make_model  # noqa: E402

LINES = ["the cat eats fish every day .", "a dog runs", "winter is cold .",
         "the cat eats fish every day . the dog runs . winter is cold . a cat"]
MAX_SEQ = 12  # shorter than the last line: embed must cut as sentence-transformers does
MINILM = ROOT / "checkpoints" / MINILM_FOLDER


def write_sentence_files(folder: Path, pooling: str, normalize: bool, max_seq: int | None):
    modules = [{"idx": 0, "name": "0", "path": "",
                "type": "sentence_transformers.models.Transformer"},
               {"idx": 1, "name": "1", "path": "1_Pooling",
                "type": "sentence_transformers.models.Pooling"}]
    if normalize:
        modules.append({"idx": 2, "name": "2", "path": "2_Normalize",
                        "type": "sentence_transformers.models.Normalize"})
    (folder / "modules.json").write_text(json.dumps(modules))
    (folder / "1_Pooling").mkdir(exist_ok=True)
    (folder / "1_Pooling" / "config.json").write_text(json.dumps({
        "word_embedding_dimension": 16, "pooling_mode_cls_token": pooling == "cls",
        "pooling_mode_mean_tokens": pooling == "mean", "pooling_mode_max_tokens": pooling == "max",
        "pooling_mode_mean_sqrt_len_tokens": False}))
    if max_seq is not None:
        (folder / "sentence_bert_config.json").write_text(json.dumps(
            {"max_seq_length": max_seq, "do_lower_case": False}))


@pytest.fixture(scope="module")
def base_folder(tmp_path_factory) -> Path:
    return save_folder(tmp_path_factory.mktemp("sentence") / "plain", *make_model("bert"))


def variant(base: Path, pooling: str, normalize: bool, max_seq: int | None = MAX_SEQ) -> Path:
    folder = base.parent / f"{pooling}-{int(normalize)}-{max_seq}"
    if not folder.exists():
        shutil.copytree(base, folder)
        write_sentence_files(folder, pooling, normalize, max_seq)
    return folder


def oracle(folder: Path, lines: list[str]) -> np.ndarray:
    """What sentence-transformers computes, from a second, eager load and numpy pooling."""
    from transformers import AutoModel, AutoTokenizer

    cfg = json.loads((folder / "1_Pooling" / "config.json").read_text())
    modules = json.loads((folder / "modules.json").read_text())
    limit = json.loads((folder / "sentence_bert_config.json").read_text())["max_seq_length"]
    tok = AutoTokenizer.from_pretrained(folder)
    model = AutoModel.from_pretrained(folder, attn_implementation="eager").eval()
    enc = tok(lines, padding=True, truncation=True, max_length=limit, return_tensors="pt")
    with torch.no_grad():
        h = model(**enc).last_hidden_state.double().numpy()  # (B, n, D)
    m = enc["attention_mask"].numpy().astype(np.float64)[:, :, None]  # (B, n, 1)
    if cfg["pooling_mode_mean_tokens"]:
        out = (h * m).sum(1) / m.sum(1)
    elif cfg["pooling_mode_cls_token"]:
        out = h[:, 0]
    else:
        out = np.where(m > 0, h, -np.inf).max(1)
    if any(x["type"].endswith("Normalize") for x in modules):
        out = out / np.linalg.norm(out, axis=1, keepdims=True)
    return out


def test_sentence_config_reads_the_three_files(base_folder):
    assert sentence_config(base_folder) is None  # no modules.json: not a sentence model
    got = sentence_config(variant(base_folder, "mean", True))
    assert got == SentenceConfig(pooling="mean", normalize=True, max_seq_length=MAX_SEQ)
    assert sentence_config(variant(base_folder, "cls", False, None)) == SentenceConfig(
        pooling="cls", normalize=False, max_seq_length=None)


def test_a_malformed_pooling_config_names_its_file(base_folder, tmp_path):
    folder = tmp_path / "bad"
    shutil.copytree(variant(base_folder, "mean", True), folder)
    (folder / "1_Pooling" / "config.json").write_text("{not json")
    with pytest.raises(CheckpointError, match="1_Pooling/config.json"):
        load_checkpoint(folder)


def test_a_pooling_path_outside_the_folder_is_refused(base_folder, tmp_path):
    folder = tmp_path / "escape"
    shutil.copytree(variant(base_folder, "mean", True), folder)
    modules = json.loads((folder / "modules.json").read_text())
    modules[1]["path"] = "../../1_Pooling"
    (folder / "modules.json").write_text(json.dumps(modules))
    with pytest.raises(CheckpointError, match="inside the model folder"):
        sentence_config(folder)


@pytest.mark.parametrize("pooling,normalize", [("mean", True), ("cls", False), ("max", True)])
def test_embed_equals_sentence_transformers_pooling(base_folder, pooling, normalize):
    folder = variant(base_folder, pooling, normalize)
    bundle = load_checkpoint(folder)
    assert capabilities(bundle).embeds
    got = embed(bundle, LINES)
    assert got.dtype == np.float32 and got.shape == (len(LINES), 16)
    want = oracle(folder, LINES)
    np.testing.assert_allclose(got, want, atol=1e-5, rtol=0)
    # the long line was cut: embedding it alone uncut would differ
    assert len(bundle.tokenizer(LINES[-1])["input_ids"]) > MAX_SEQ


def test_a_plain_encoder_does_not_embed(base_folder):
    bundle = load_checkpoint(base_folder)
    assert not capabilities(bundle).embeds
    with pytest.raises(ValueError, match="sentence-transformers"):
        embed(bundle, LINES)


@pytest.mark.parametrize("pooling", ["mean", "cls"])
def test_similarity_terms_add_up_to_the_cosine(base_folder, pooling):
    folder = variant(base_folder, pooling, True)
    bundle = load_checkpoint(folder)
    lines = LINES[:3]  # within the trained length: the Trace and embed read the same pieces
    trace = capture(bundle, lines, names={"hidden"})
    want = oracle(folder, lines)
    for a, b in [(0, 1), (0, 2), (1, 2), (1, 1)]:
        st = similarity_terms(bundle, trace, a, b)
        assert st.terms.shape == (len(st.tokens_a), len(st.tokens_b))
        assert st.tokens_a == trace.src_tokens[a]
        cos = want[a] @ want[b] / (np.linalg.norm(want[a]) * np.linalg.norm(want[b]))
        assert abs(st.terms.sum() - cos) < 1e-5, (a, b, st.terms.sum(), cos)
        if pooling == "cls":  # one vector per line: every other pair adds nothing
            assert np.count_nonzero(st.terms) == 1


def test_head_similarity_exact_is_embed_with_that_head_out(base_folder):
    folder = variant(base_folder, "mean", True)
    bundle = load_checkpoint(folder)
    a, b = LINES[0], LINES[2]
    out = {("enc_self", 1, 0)}
    hs = head_similarity(bundle, a, b, ablate=out)
    assert hs.exact.shape == (2, 2) and np.isnan(hs.exact[1, 0]) and np.isnan(hs.attribution[1, 0])
    base = embed(bundle, [a, b], ablate=out)
    assert abs(hs.base - float(base[0] @ base[1])) < 1e-5
    for layer, head in [(0, 0), (0, 1), (1, 1)]:
        v = embed(bundle, [a, b], ablate=out | {("enc_self", layer, head)})
        assert abs(hs.exact[layer, head] - (float(v[0] @ v[1]) - hs.base)) < 1e-5
    assert np.isfinite(hs.attribution[[0, 0, 1], [0, 1, 1]]).all()


def test_head_similarity_in_several_forwards_is_the_same(base_folder, monkeypatch):
    """Long lines split the knocked-out copies over forwards (memory): same numbers."""
    from model.analysis import similarity as sim

    bundle = load_checkpoint(variant(base_folder, "mean", True))
    whole = head_similarity(bundle, LINES[0], LINES[1])
    monkeypatch.setattr(sim, "CELLS_PER_FORWARD", 2 * 2 * 10 * 10)  # one copy per forward
    parts = head_similarity(bundle, LINES[0], LINES[1])
    np.testing.assert_allclose(parts.exact, whole.exact, atol=1e-6)


def test_head_similarity_attribution_is_the_first_order_change(base_folder):
    """Scaling a head's output by (1 − ε) changes the cosine by ε × attribution to first
    order: an independent finite difference through a hook of the test's own."""
    from model.hooks import hooks

    folder = variant(base_folder, "mean", True)
    bundle = load_checkpoint(folder)
    a, b = LINES[0], LINES[1]
    hs = head_similarity(bundle, a, b)
    eps = 1e-3
    for layer, head in [(0, 1), (1, 0)]:
        def shrink(x, name, head=head):
            x = x.clone()
            x[:, head] *= 1 - eps
            return x

        with hooks({f"encoder.layers.{layer}.self_attn.hook_context": shrink}):
            v = embed(bundle, [a, b])
        slope = (float(v[0] @ v[1]) - hs.base) / eps
        assert abs(slope - hs.attribution[layer, head]) < 1e-2 * max(1.0, abs(slope)), (
            layer, head, slope, hs.attribution[layer, head])


@pytest.fixture(scope="module")
def minilm():
    installed_minilm()
    return load_checkpoint(MINILM)


def test_minilm_embed_equals_sentence_transformers_pooling(minilm):
    lines = ["A cat sits on the mat.", "A kitten rests on a rug.", "Stocks fell sharply.",
             "Winter is cold."]
    got = embed(minilm, lines)
    assert got.shape == (4, 384)
    np.testing.assert_allclose(got, oracle(MINILM, lines), atol=1e-5, rtol=0)
    trace = capture(minilm, lines, names={"hidden"})
    st = similarity_terms(minilm, trace, 0, 1)
    assert abs(st.terms.sum() - float(got[0] @ got[1])) < 1e-5
    assert float(got[0] @ got[1]) > float(got[0] @ got[2]) + 0.3  # a trained model, not noise
