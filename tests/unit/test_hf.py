"""model.hf: tiny random BERT, GPT-2 and Marian folders built here, loaded and captured offline."""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing in this file may reach the network

from model import CheckpointError, capture, load_checkpoint  # noqa: E402
from model.backends.hf import listed_models, resolve_model_ref  # noqa: E402
from tests.hf_folders import SPECIALS, WORDS, save_families  # noqa: E402
from viz.bertviz_embed import bertviz_html  # noqa: E402

SENTENCES = ["the cat eats fish every day .", "winter is cold"]
FAMILIES = ("bert", "gpt2", "marian")


def make_model(family: str):
    from transformers import (
        BertConfig,
        BertModel,
        GPT2Config,
        GPT2LMHeadModel,
        MarianConfig,
        MarianMTModel,
    )

    torch.manual_seed(0)
    n = len(SPECIALS) + len(WORDS)
    if family == "bert":
        cfg = BertConfig(vocab_size=n, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                         intermediate_size=32, max_position_embeddings=32, pad_token_id=0)
        return BertModel(cfg), "[CLS] $A [SEP]"
    if family == "gpt2":
        cfg = GPT2Config(vocab_size=n, n_embd=16, n_layer=3, n_head=4, n_positions=32,
                         bos_token_id=2, eos_token_id=3, pad_token_id=0)
        return GPT2LMHeadModel(cfg), None
    cfg = MarianConfig(vocab_size=n, d_model=16, encoder_layers=2, decoder_layers=2,
                       encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=32,
                       decoder_ffn_dim=32, max_position_embeddings=32, pad_token_id=0,
                       eos_token_id=3, decoder_start_token_id=0, forced_eos_token_id=3)
    return MarianMTModel(cfg), "$A </s>"


@pytest.fixture(scope="module")
def model_root(tmp_path_factory) -> Path:
    return save_families(tmp_path_factory.mktemp("hf_models"), FAMILIES, make_model)


@pytest.fixture(scope="module")
def bundles(model_root) -> dict:
    return {f: load_checkpoint(model_root / f) for f in FAMILIES}


def _valid(lengths, n):
    return torch.tensor([[1] * m + [0] * (n - m) for m in lengths])


def eager_twin(folder: Path):
    """A second, independent load of the same folder with transformers' own eager attention:
    not the instance the lab's recorder runs in, so its attentions are an outside oracle."""
    import json

    import transformers

    arch = json.loads((folder / "config.json").read_text("utf-8"))["architectures"][0]
    model = getattr(transformers, arch).from_pretrained(folder, attn_implementation="eager")
    assert model.config._attn_implementation == "eager"
    return model.eval()


@pytest.fixture(scope="module")
def eager(model_root) -> dict:
    return {f: eager_twin(model_root / f) for f in FAMILIES}


def reference(model, family: str, trace):
    """transformers' eager output_attentions for the trace's ids, from a separately loaded
    model (`eager_twin`), never from the bundle that recorded the trace."""
    run = dict(output_attentions=True, return_dict=True)
    with torch.inference_mode():
        if family == "marian":
            src, tgt = torch.from_numpy(trace.src_ids), torch.from_numpy(trace.tgt_ids)
            out = model(input_ids=src,
                        attention_mask=_valid(map(len, trace.src_tokens), src.size(1)),
                        decoder_input_ids=tgt,
                        decoder_attention_mask=_valid(map(len, trace.tgt_tokens), tgt.size(1)),
                        **run)
            return {"enc_self": out.encoder_attentions, "dec_self": out.decoder_attentions,
                    "cross": out.cross_attentions}
        encoder = family == "bert"
        side = trace.src_tokens if encoder else trace.tgt_tokens
        ids = torch.from_numpy(trace.src_ids if encoder else trace.tgt_ids)
        out = model(input_ids=ids, attention_mask=_valid(map(len, side), ids.size(1)), **run)
        return {"enc_self" if encoder else "dec_self": out.attentions}


def assert_same_attention(ours: np.ndarray, theirs, kind: str) -> None:
    """The recorded weights equal the eager twin's (float32 rounding apart)."""
    ref = torch.stack(theirs).numpy()
    assert ours.shape == ref.shape, kind
    np.testing.assert_allclose(ours, ref, rtol=0, atol=2e-6, err_msg=kind)


EXPECTED = {  # kinds, (n_enc_layers, n_dec_layers, n_heads, d_model, max_len), has logits
    "bert": (("enc_self",), (2, 0, 2, 16, 32), False),
    "gpt2": (("dec_self",), (0, 3, 4, 16, 32), True),
    "marian": (("enc_self", "dec_self", "cross"), (2, 2, 2, 16, 32), True),
}


@pytest.mark.parametrize("family", FAMILIES)
def test_load_checkpoint_returns_an_hf_bundle(bundles, family):
    bundle = bundles[family]
    kinds, sizes, _ = EXPECTED[family]
    cfg = bundle.config
    assert bundle.kind == "hf" and bundle.name == family and not bundle.model.training
    assert bundle.kinds == kinds
    assert (cfg.n_enc_layers, cfg.n_dec_layers, cfg.n_heads, cfg.d_model, cfg.max_len) == sizes
    assert cfg.pad_id == 0
    assert bundle.model.config._attn_implementation == "lab_record"
    assert bundle.card["device"] == "cpu" and bundle.card["dtype"] == "float32"


@pytest.mark.parametrize("family", FAMILIES)
def test_captured_attention_is_the_models_own(bundles, eager, family):
    bundle = bundles[family]
    assert eager[family] is not bundle.model
    kinds, (n_enc, n_dec, n_heads, d, _), has_logits = EXPECTED[family]
    targets = ["겨울은 추워요", "고양이는"] if family == "marian" else None
    trace = capture(bundle, SENTENCES, targets)
    assert trace.kinds == kinds and set(trace.attn) == set(kinds)
    ref = reference(eager[family], family, trace)
    for kind in kinds:
        assert_same_attention(trace.attn[kind], ref[kind], kind)
    b = len(SENTENCES)
    s, t = trace.src_ids.shape[1], trace.tgt_ids.shape[1]
    shapes = {"enc_self": (s, s), "dec_self": (t, t), "cross": (t, s)}
    for kind in kinds:
        n_layers = n_enc if kind == "enc_self" else n_dec
        assert trace.attn[kind].shape == (n_layers, b, n_heads, *shapes[kind])
        assert trace.attn[kind].dtype == np.float32
        assert trace.masks[kind].shape == (b, *shapes[kind]) and trace.masks[kind].dtype == bool
        blocked = np.broadcast_to(trace.masks[kind][None, :, None], trace.attn[kind].shape)
        assert np.all(trace.attn[kind][blocked] == 0)
    for kind in kinds:  # the recorder fills these too (tests/unit/test_hf_recorder.py)
        assert trace.scores[kind].shape == trace.attn[kind].shape
        n_q, n_k = trace.attn[kind].shape[3:]
        assert trace.q[kind].shape[:4] == trace.attn[kind].shape[:4]
        assert trace.k[kind].shape[3] == trace.v[kind].shape[3] == n_k
    assert trace.kv_groups.tolist() == list(range(n_heads))
    if "enc_self" in kinds:
        assert trace.hidden["enc"].shape == (n_enc + 1, b, s, d)
        real = (~trace.masks["enc_self"][:, 0]).sum(1)  # keys not blocked = real tokens
        assert [len(x) for x in trace.src_tokens] == real.tolist()
    if "dec_self" in kinds:
        assert trace.hidden["dec"].shape == (n_dec + 1, b, t, d)
        assert trace.masks["dec_self"][0, 0, 1]  # causal: position 0 cannot see position 1
    assert (trace.logits is not None) == has_logits
    if has_logits:
        assert trace.logits.shape == (b, t, bundle.config.vocab_size)
    assert trace.pos_table.ndim == 2 and trace.pos_table.shape[1] == d
    assert trace.src_ids.dtype == trace.tgt_ids.dtype == np.int64


def test_tokens_come_from_the_models_tokenizer(bundles):
    bert = capture(bundles["bert"], SENTENCES)
    assert bert.src_tokens[1] == ["[CLS]", "winter", "is", "cold", "[SEP]"]
    assert bert.tgt_tokens == [[], []] and bert.tgt_ids.shape == (2, 0)
    gpt = capture(bundles["gpt2"], SENTENCES)
    assert gpt.tgt_tokens[1] == ["winter", "is", "cold"] and gpt.src_tokens == [[], []]
    marian = capture(bundles["marian"], SENTENCES, ["겨울은 추워요", "고양이는"])
    assert marian.src_tokens[1] == ["winter", "is", "cold", "</s>"]
    assert marian.tgt_tokens[0] == ["<pad>", "겨울은", "추워요"]  # Marian starts with pad
    # the model's own numbering: Marian's sinusoidal table numbers pad slots on (issue 54)
    np.testing.assert_array_equal(marian.positions["enc"][1], [0, 1, 2, 3, 4, 5, 6, 7])


def test_encoder_decoder_translates_itself_when_no_targets(bundles):
    trace = capture(bundles["marian"], SENTENCES, target_lang="ko")  # target_lang is ignored
    assert all(t and t[0] == "<pad>" for t in trace.tgt_tokens)
    assert "</s>" not in sum(trace.tgt_tokens, [])
    assert trace.attn["cross"].shape[3:] == (trace.tgt_ids.shape[1], trace.src_ids.shape[1])
    assert len(trace.targets) == 2 and trace.target_langs == [None, None]


def test_a_model_without_the_recorder_falls_back_to_output_attentions(model_root, eager):
    bundle = load_checkpoint(model_root / "bert")  # a fresh model: its sites are not known yet
    bundle.model.set_attn_implementation("eager")
    trace = capture(bundle, SENTENCES)
    assert_same_attention(trace.attn["enc_self"],
                          reference(eager["bert"], "bert", trace)["enc_self"], "enc_self")
    assert trace.scores == trace.q == trace.k == trace.v == {}
    with pytest.raises(ValueError, match="head ablation is not supported for this model"):
        capture(bundle, SENTENCES, ablate={("enc_self", 0, 1)})
    with pytest.raises(ValueError, match="no attention kind"):
        capture(bundle, SENTENCES, ablate="cross:0:0")


def test_targets_for_a_model_without_decoder_inputs_are_refused(bundles):
    with pytest.raises(ValueError, match="targets=None"):
        capture(bundles["gpt2"], SENTENCES, ["a", "b"])


@pytest.mark.parametrize("family", FAMILIES)
def test_bertviz_pages_for_each_family(bundles, family):
    targets = ["겨울은 추워요", "고양이는"] if family == "marian" else None
    trace = capture(bundles[family], SENTENCES, targets)
    for view in ("head", "model"):
        html = bertviz_html(trace, 1, view)
        assert "winter" in html and (">Cross</option>" in html) == (family == "marian")


def _copy(src: Path, dst: Path, skip: tuple[str, ...] = ()) -> Path:
    dst.mkdir()
    for p in src.iterdir():
        if p.name not in skip:
            (dst / p.name).write_bytes(p.read_bytes())
    return dst


def test_pickled_weights_are_refused_without_being_opened(model_root, tmp_path):
    folder = _copy(model_root / "bert", tmp_path / "pickled", skip=("model.safetensors",))
    (folder / "pytorch_model.bin").write_bytes(b"\x80\x04 not really a pickle")
    with pytest.raises(CheckpointError) as info:
        load_checkpoint(folder)
    assert info.value.file.endswith("model.safetensors")
    assert "pytorch_model.bin is a pickle" in info.value.reason


def test_broken_folders_name_the_file(model_root, tmp_path):
    truncated = _copy(model_root / "bert", tmp_path / "truncated")
    data = (truncated / "model.safetensors").read_bytes()
    (truncated / "model.safetensors").write_bytes(data[: len(data) // 2])
    with pytest.raises(CheckpointError, match="truncated"):
        load_checkpoint(truncated)
    no_tok = _copy(model_root / "bert", tmp_path / "no_tok",
                   skip=("tokenizer.json", "tokenizer_config.json"))
    with pytest.raises(CheckpointError, match="tokenizer"):
        load_checkpoint(no_tok)
    unknown = _copy(model_root / "bert", tmp_path / "unknown")
    (unknown / "config.json").write_text('{"model_type": "no-such-model"}')
    with pytest.raises(CheckpointError) as info:
        load_checkpoint(unknown)
    assert info.value.file.endswith("config.json")


def test_listed_models(model_root):
    assert set(listed_models(str(model_root))) == set(FAMILIES)
    one = listed_models(f"{model_root / 'gpt2'}{os.pathsep}/no/such/folder")
    assert one == {"gpt2": (model_root / "gpt2").resolve()}


@pytest.mark.parametrize("ref", ["../../etc", "/etc/passwd", "~/models", "a/../b", "./bert",
                                 "C:\\models", "bert\x00", "file:///etc/passwd", ".."])
def test_paths_are_refused(ref, model_root, monkeypatch):
    monkeypatch.setenv("ATTN_ALLOW_HUB", "1")
    with pytest.raises(CheckpointError, match="paths are not accepted"):
        resolve_model_ref(ref, {"bert": model_root / "bert"})


def test_only_allowed_names_and_no_hub_by_default(model_root, monkeypatch):
    allowed = {"bert": model_root / "bert"}
    assert resolve_model_ref("bert", allowed) == model_root / "bert"
    monkeypatch.delenv("ATTN_ALLOW_HUB", raising=False)
    with pytest.raises(CheckpointError, match="ATTN_ALLOW_HUB=1"):
        resolve_model_ref("Helsinki-NLP/opus-mt-en-de", allowed)
    with pytest.raises(CheckpointError, match="unknown model"):
        resolve_model_ref("not a name!", allowed)


def test_hub_ids_fail_fast_offline(monkeypatch):
    monkeypatch.setenv("ATTN_ALLOW_HUB", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    start = time.monotonic()
    with pytest.raises(CheckpointError, match="cannot get this model from the local cache"):
        resolve_model_ref("attention-lab-test/no-such-model", {})
    assert time.monotonic() - start < 10


def test_a_hub_that_does_not_answer_times_out(monkeypatch):
    import model.backends.hf.load as hf

    monkeypatch.setenv("ATTN_ALLOW_HUB", "1")
    monkeypatch.setattr(hf, "_download", lambda ref, offline: time.sleep(5))
    start = time.monotonic()
    with pytest.raises(CheckpointError, match="did not answer within 0.5 s"):
        resolve_model_ref("someone/slow-model", {}, timeout=0.5)
    assert time.monotonic() - start < 5
