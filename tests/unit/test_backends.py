"""The backend contract: only model/backends/ knows a model's kind; everyone else asks
capabilities. The one boundary checker (tests/unit/boundaries.py, rule `kind`) names any file
that compares a bundle's kind; capability and registry tests on the shipped checkpoints and
tiny Hugging Face models built here."""

from __future__ import annotations

from pathlib import Path

import pytest

from model import load_checkpoint
from model.backends import (
    REGISTRY,
    Backend,
    Capabilities,
    HFBackend,
    LabBackend,
    backend_for,
    capabilities,
    is_translator,
    trained_here,
)
from model.batch import Batch
from tests.unit.boundaries import check_code  # the repository-wide walk: test_backend_boundary

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("code", [
    'if bundle.kind == "native": pass',
    'x = ctx.bundle.kind != "hf"',
    'x = _bundle.kind in ("native", "other")',
    'x = "native" == model.kind',
    'x = getattr(bundle, "kind", "") == "hf"',
    'x = self.bundle.kind == some_name',
])
def test_the_check_finds_kind_comparisons(code):
    assert check_code(code, "kind"), code


@pytest.mark.parametrize("code", [
    'x = walk.kind == "enc_self"',  # an attention kind
    'x = self.kind == "sinusoidal"',  # a positional scheme
    'x = e.kind == kind',
    'x = site.kind in ("cross", "dec_self")',
    'x = caps.family == "decoder"',
])
def test_the_check_leaves_other_kinds_alone(code):
    assert not check_code(code, "kind"), code


# ---- capabilities -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def shipped() -> dict:
    return {name: load_checkpoint(ROOT / "checkpoints" / name) for name in ("paper", "seed001")}


def test_shipped_checkpoints_capabilities(shipped):
    paper, seed = capabilities(shipped["paper"]), capabilities(shipped["seed001"])
    for caps in (paper, seed):
        assert caps.lab and caps.translates and caps.ablates and caps.head_outputs
        assert caps.raw_hooks and caps.weighted_norms and not caps.grouped_kv
        assert caps.kinds == ("enc_self", "dec_self", "cross") and caps.family == "seq2seq"
        assert caps.d_ff == 512
    assert (paper.positional, paper.norm, paper.activation) == ("sinusoidal", "post", "relu")
    assert (seed.positional, seed.norm, seed.activation) == ("learned", "pre", "gelu")
    assert not paper.logit_attribution and seed.logit_attribution  # exact only with pre-LN
    assert all(is_translator(b) for b in shipped.values())


def test_the_registry_picks_the_backend_and_each_keeps_the_contract(shipped):
    backend = backend_for(shipped["paper"])
    assert isinstance(backend, LabBackend) and isinstance(backend, Backend)
    assert backend_for(shipped["paper"]) is backend  # one per model
    assert capabilities(shipped["paper"]) is capabilities(shipped["paper"])  # computed once
    assert set(REGISTRY) == {LabBackend.kind, HFBackend.kind}
    from model import Bundle

    # from the card (model/cards.py), even for a model-less description:
    assert trained_here(shipped["paper"])
    assert not trained_here(Bundle(model=None, tokenizer=None, config=None, kind="hf"))
    for cls in REGISTRY.values():  # every method of the protocol, on every backend
        missing = [m for m in ("claims", "load", "caps", "encode", "dims", "estimate", "names",
                               "capture", "translate", "hook_names", "vocabulary",
                               "position_kind", "rotary_frequencies", "relative_bias")
                   if not hasattr(cls, m)]
        assert not missing, (cls.__name__, missing)


def test_a_lab_batch_is_what_capture_and_translate_read(shipped):
    bundle = shipped["paper"]
    backend = backend_for(bundle)
    batch = backend.encode(["The cat eats fish.", "겨울은 추워요."], None, "auto")
    assert isinstance(batch, Batch) and batch.langs == ("ko", "en")
    assert batch.src_ids.shape == (2, max(batch.lengths)) and batch.pad_mask.sum() == \
        max(batch.lengths) * 2 - sum(batch.lengths)
    trace = backend.capture(batch, {"attn"})
    assert trace.src_tokens == [list(p) for p in batch.pieces]
    assert set(trace.attn) == {"enc_self", "dec_self", "cross"} and not trace.q
    again = backend.translate(batch)
    assert [t.source for t in again] == list(batch.sources)
    assert backend.estimate(batch, {"attn"}).bytes < backend.estimate(batch, None).bytes


def test_needs_name_the_raw_hooks_of_the_lab_model(shipped):
    backend = backend_for(shipped["paper"])
    assert backend.names({"attn"}) == ["attn"]
    steps = backend.names({"steps"})
    assert "encoder.layers.0.self_attn.hook_in" in steps and "encoder.hook_out" in steps
    assert backend.names({"embed"}) == ["encoder.hook_tok", "encoder.hook_pos",
                                        "decoder.hook_tok", "decoder.hook_pos"]
    assert backend.names({"tour"}) == ["encoder.layers.0.hook_resid_mid",
                                       "encoder.layers.0.ffn.hook_hidden",
                                       "decoder.layers.0.hook_resid_mid",
                                       "decoder.layers.0.ffn.hook_hidden"]
    known = set(backend.hook_names())
    assert all(n in known for n in backend.names(None) if "." in n)


# ---- tiny Hugging Face models ---------------------------------------------------------------


@pytest.fixture(scope="module")
def hf_bundles(tmp_path_factory) -> dict:
    """gpt2 (12 x 12, learned positions), bert, marian and a grouped-query Llama."""
    from transformers import LlamaConfig, LlamaForCausalLM

    from tests.hostile.families import build_folder, make_tokenizer

    root = tmp_path_factory.mktemp("hf_backends")
    folders = {name: build_folder(root, name) for name in ("gpt2", "bert", "marian")}
    tok = make_tokenizer("gpt2")
    llama = LlamaForCausalLM(LlamaConfig(
        vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
        pad_token_id=tok.pad_token_id))
    folders["llama"] = root / "llama"
    llama.save_pretrained(folders["llama"], safe_serialization=True)
    tok.save_pretrained(folders["llama"])
    return {name: load_checkpoint(folder) for name, folder in folders.items()}


def test_hugging_face_capabilities(hf_bundles):
    caps: dict[str, Capabilities] = {n: capabilities(b) for n, b in hf_bundles.items()}
    for name, c in caps.items():
        assert isinstance(backend_for(hf_bundles[name]), HFBackend)
        assert not c.lab and not c.translates and not c.raw_hooks, name
        assert c.ablates and c.head_outputs, name  # all four run through the recorder
    assert (caps["gpt2"].family, caps["gpt2"].kinds) == ("decoder", ("dec_self",))
    assert (caps["gpt2"].positional, caps["gpt2"].norm) == ("learned", "pre")
    assert caps["gpt2"].logit_attribution and caps["gpt2"].weighted_norms
    assert (caps["bert"].family, caps["bert"].kinds, caps["bert"].norm) == \
        ("encoder", ("enc_self",), "post")
    assert not caps["bert"].logit_attribution
    assert caps["marian"].family == "seq2seq" and len(caps["marian"].kinds) == 3
    assert caps["llama"].grouped_kv and caps["llama"].positional == "rotary"
    assert (caps["bert"].d_ff, caps["llama"].d_ff, caps["gpt2"].d_ff) == (32, 64, 0)  # 0: unsaid
    assert not any(caps[n].grouped_kv for n in ("gpt2", "bert", "marian"))
    assert not any(is_translator(b) for b in hf_bundles.values())


def test_hugging_face_batch_and_refusals(hf_bundles):
    backend = backend_for(hf_bundles["gpt2"])
    batch = backend.encode(["The cat eats the fish.", "Winter is cold."])
    assert batch.langs == (None, None) and batch.pieces[0][0] != "<pad>"
    trace = backend.capture(batch, {"attn"})
    assert set(trace.attn) == {"dec_self"} and not trace.hidden and trace.logits is None
    assert backend.names({"attn", "steps", "embed"}) == ["attn"]  # no raw hooks here
    assert backend.hook_names() == [] and backend.position_kind(trace.pos_table) == "learned"
    with pytest.raises(ValueError, match="translation needs"):
        backend.translate(batch)
    with pytest.raises(ValueError, match="reads one text per sentence"):
        backend.encode(["a"], ["b"])
    assert backend_for(hf_bundles["llama"]).rotary_frequencies() is not None


# ---- recording by needs: the pieces merged are the whole ------------------------------------


def _arrays(trace) -> dict[str, object]:
    out = {}
    for name, value in vars(trace).items():
        if isinstance(value, dict):
            out.update({f"{name}[{k}]": v for k, v in value.items()})
        elif hasattr(value, "shape"):
            out[name] = value
    return out


def test_captures_of_some_needs_merge_into_the_capture_of_all(variant_bundle):
    """What the app does as views open one by one: each records only what is missing, the
    cache merges; the result equals one capture of everything, array for array."""
    import numpy as np

    from model.backends import EVERYTHING
    from model.capture import freeze
    from ui.runtime import TraceCache

    backend = backend_for(variant_bundle)
    batch = backend.encode(["The cat eats fish.", "겨울은 추워요."], None, "auto")
    decoded = backend.translate(batch)
    whole = backend.capture(batch, EVERYTHING, decoded=decoded)
    cache, key = TraceCache(max_bytes=2**30), ("input",)
    held: set[str] = set()
    for needs in ({"attn"}, {"attn", "scores"}, {"hidden", "embed"}, {"steps", "q"},
                  {"norms", "logits"}, set(EVERYTHING)):
        missing = frozenset(needs) - held
        cache.put(key, freeze(backend.capture(batch, missing, decoded=decoded)), missing)
        held |= missing
        assert cache.get(key, needs) is not None and cache.get(key, EVERYTHING) is (
            cache.items[key][0] if held >= EVERYTHING else None)
    merged = cache.get(key, EVERYTHING)
    ours, theirs = _arrays(merged), _arrays(whole)
    assert ours.keys() == theirs.keys()
    for name, arr in theirs.items():
        np.testing.assert_array_equal(ours[name], arr, err_msg=name)
    assert merged.src_tokens == whole.src_tokens and merged.tgt_tokens == whole.tgt_tokens
    assert cache.bytes == sum(size for _t, size in cache.items.values())
