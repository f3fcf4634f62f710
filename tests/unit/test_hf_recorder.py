"""The lab's attention recorder inside transformers, on six families built here (no download).

Oracles: transformers' own attn_implementation="eager" (attention, logits), numpy (softmax of
the masked scores, q·kᵀ·scale), the families' mask rules written out by hand (causal, padding,
Mistral's sliding window), and zeroed W_O columns (what knocking a head out must equal).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing in this file may reach the network

from model import capture, load_checkpoint  # noqa: E402
from model.analysis.ablation import ablation_effect, importance_scan  # noqa: E402
from model.backends.hf.load import model_device  # noqa: E402
from model.backends.hf.recorder import NAME  # noqa: E402
from tests.hf_folders import SPECIALS, WORDS, make_tokenizer, save_families  # noqa: E402

FAMILIES = ("gpt2", "bert", "llama", "mistral", "t5", "marian")
SENTENCES = ["the cat eats fish every day .", "winter is cold", "a dog runs"]
TARGETS = ["겨울은 추워요", "고양이는", "생선을 먹어요 ."]
WINDOW = 3  # Mistral's sliding window, shorter than the sentences
N_VOCAB = len(SPECIALS) + len(WORDS)


def build(family: str):
    """(model, tokenizer template, transformers class) of a tiny random model."""
    import transformers as tf

    torch.manual_seed(0)
    common = dict(vocab_size=N_VOCAB, pad_token_id=0, bos_token_id=2, eos_token_id=3)
    if family == "gpt2":
        return tf.GPT2LMHeadModel(tf.GPT2Config(n_embd=16, n_layer=2, n_head=4, n_positions=32,
                                                **common)), None
    if family == "bert":
        return tf.BertModel(tf.BertConfig(hidden_size=16, num_hidden_layers=2,
                                          num_attention_heads=2, intermediate_size=32,
                                          max_position_embeddings=32, **common)), \
            "[CLS] $A [SEP]"
    if family in ("llama", "mistral"):
        cls = tf.LlamaForCausalLM if family == "llama" else tf.MistralForCausalLM
        cfg_cls = tf.LlamaConfig if family == "llama" else tf.MistralConfig
        extra = {"sliding_window": WINDOW} if family == "mistral" else {}
        return cls(cfg_cls(hidden_size=24, num_hidden_layers=2, num_attention_heads=6,
                           num_key_value_heads=2, intermediate_size=32,
                           max_position_embeddings=32, **common, **extra)), "<s> $A"
    if family == "t5":
        return tf.T5ForConditionalGeneration(tf.T5Config(
            d_model=16, d_kv=8, d_ff=32, num_layers=2, num_decoder_layers=2, num_heads=2,
            relative_attention_num_buckets=8, relative_attention_max_distance=16,
            decoder_start_token_id=0, **common)), "$A </s>"
    return tf.MarianMTModel(tf.MarianConfig(
        d_model=16, encoder_layers=2, decoder_layers=2, encoder_attention_heads=2,
        decoder_attention_heads=2, encoder_ffn_dim=32, decoder_ffn_dim=32,
        max_position_embeddings=32, decoder_start_token_id=0, forced_eos_token_id=3,
        **common)), "$A </s>"


pytestmark = pytest.mark.usefixtures("one_thread")  # tests/conftest.py


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    return save_families(tmp_path_factory.mktemp("hf_recorder"), FAMILIES, build)


@pytest.fixture(scope="module")
def bundles(root) -> dict:
    return {f: load_checkpoint(root / f) for f in FAMILIES}


@pytest.fixture(scope="module")
def eager(root, bundles) -> dict:
    """The same folders loaded by transformers itself with its eager attention."""
    return {f: type(bundles[f].model).from_pretrained(root / f, attn_implementation="eager")
            .eval() for f in FAMILIES}


def _targets(family):
    return TARGETS if family in ("t5", "marian") else None


def _valid(tokens, n):
    return torch.tensor([[1] * len(t) + [0] * (n - len(t)) for t in tokens])


def run_eager(model, trace, family, **kw):
    """transformers' own forward on the ids of a trace, with output_attentions."""
    with torch.inference_mode():
        if family in ("t5", "marian"):
            src, tgt = torch.from_numpy(trace.src_ids), torch.from_numpy(trace.tgt_ids)
            out = model(input_ids=src, attention_mask=_valid(trace.src_tokens, src.size(1)),
                        decoder_input_ids=tgt,
                        decoder_attention_mask=_valid(trace.tgt_tokens, tgt.size(1)),
                        output_attentions=True, **kw)
            return out, {"enc_self": out.encoder_attentions, "dec_self": out.decoder_attentions,
                         "cross": out.cross_attentions}
        side = trace.src_tokens if family == "bert" else trace.tgt_tokens
        ids = torch.from_numpy(trace.src_ids if family == "bert" else trace.tgt_ids)
        out = model(input_ids=ids, attention_mask=_valid(side, ids.size(1)),
                    output_attentions=True, **kw)
        return out, {"enc_self" if family == "bert" else "dec_self": out.attentions}


def _output(out):
    return out.logits if getattr(out, "logits", None) is not None else out.last_hidden_state


@pytest.mark.parametrize("family", FAMILIES)
def test_recorded_attention_is_transformers_eager(bundles, eager, family):
    bundle = bundles[family]
    assert bundle.model.config._attn_implementation == NAME
    trace = capture(bundle, SENTENCES, _targets(family))
    out, ref = run_eager(eager[family], trace, family)
    assert set(trace.attn) == set(ref) == set(trace.scores) == set(trace.q)
    for kind, layers in ref.items():
        np.testing.assert_allclose(trace.attn[kind], torch.stack(layers).numpy(), atol=1e-5)
    if trace.logits is not None:  # logits with the recorder = logits without it
        np.testing.assert_allclose(trace.logits, out.logits.numpy(), atol=1e-4)
    else:
        np.testing.assert_allclose(trace.hidden["enc"][-1], out.last_hidden_state.numpy(),
                                   atol=1e-4)


@pytest.mark.parametrize("family", FAMILIES)
def test_probabilities_are_softmax_of_the_masked_scores(bundles, family):
    trace = capture(bundles[family], SENTENCES, _targets(family))
    for kind in trace.kinds:
        s = trace.scores[kind].astype(np.float64)  # (L, B, H, Q, K)
        blocked = np.broadcast_to(trace.masks[kind][None, :, None], s.shape)
        # a row with every key blocked (a padding query beyond Mistral's window) keeps what
        # the model computes there: softmax over equally huge negatives, i.e. uniform
        dead = blocked.all(-1)
        s = np.where(dead[..., None], 0.0, np.where(blocked, -np.inf, s))
        p = np.exp(s - s.max(-1, keepdims=True))
        np.testing.assert_allclose(trace.attn[kind], p / p.sum(-1, keepdims=True), atol=1e-6)
        assert np.all(trace.attn[kind][blocked & ~dead[..., None]] == 0)
        assert dead.any() == (family == "mistral")
        np.testing.assert_allclose(trace.attn[kind][dead], 1 / s.shape[-1], atol=1e-6)


@pytest.mark.parametrize("family", ["gpt2", "bert", "llama", "mistral", "marian"])
def test_scores_are_scaled_q_dot_k(bundles, family):
    trace = capture(bundles[family], SENTENCES, _targets(family))
    for kind in trace.kinds:
        q = trace.q[kind].astype(np.float64)
        k = trace.k[kind][:, :, trace.kv_groups].astype(np.float64)  # per query head
        want = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
        np.testing.assert_allclose(trace.scores[kind], want, atol=1e-5)


def test_t5_scores_are_unscaled_plus_relative_position_bias(bundles):
    bundle = bundles["t5"]
    trace = capture(bundle, SENTENCES, TARGETS)
    for kind, stack in (("enc_self", bundle.model.encoder), ("dec_self", bundle.model.decoder)):
        attn = stack.block[0].layer[0].SelfAttention
        q, k = trace.q[kind].astype(np.float64), trace.k[kind].astype(np.float64)
        n_q, n_k = q.shape[-2], k.shape[-2]
        # T5's buckets written out: bidirectional in the encoder, causal in the decoder
        pos = np.arange(n_k)[None, :] - np.arange(n_q)[:, None]
        with torch.no_grad():
            bucket = attn._relative_position_bucket(
                torch.from_numpy(pos), bidirectional=kind == "enc_self", num_buckets=8,
                max_distance=16)
            bias = attn.relative_attention_bias.weight[bucket].permute(2, 0, 1).numpy()
        want = q @ np.swapaxes(k, -1, -2) + bias  # no 1/√Dh: T5 folds it into the weights
        np.testing.assert_allclose(trace.scores[kind], want, atol=1e-5)


def test_masks_are_the_models_own_including_the_sliding_window(bundles):
    for family in ("gpt2", "llama", "mistral"):
        trace = capture(bundles[family], SENTENCES)
        n = trace.tgt_ids.shape[1]
        lens = [len(t) for t in trace.tgt_tokens]
        qi, ki = np.arange(n)[:, None], np.arange(n)[None, :]
        for b, m in enumerate(lens):
            want = (ki > qi) | (ki >= m)
            if family == "mistral":
                want |= qi - ki >= WINDOW  # a query sees itself and the WINDOW-1 before it
            assert np.array_equal(trace.masks["dec_self"][b], want), (family, b)


def test_grouped_query_heads_share_their_keys_and_values(bundles):
    for family in ("llama", "mistral"):
        trace = capture(bundles[family], SENTENCES)
        assert trace.kv_groups.tolist() == [0, 0, 0, 1, 1, 1]
        k, v, q = trace.k["dec_self"], trace.v["dec_self"], trace.q["dec_self"]
        n = trace.tgt_ids.shape[1]
        assert q.shape == (2, 3, 6, n, 4) and k.shape == v.shape == (2, 3, 2, n, 4)
        # the model's own k_proj/v_proj of its layer-0 input, rows 0-3 and 4-7 = kv heads 0, 1
        attn = bundles[family].model.model.layers[0]
        ids = torch.from_numpy(trace.tgt_ids)
        with torch.no_grad():
            x = attn.input_layernorm(bundles[family].model.model.embed_tokens(ids))
            v0 = attn.self_attn.v_proj(x).view(3, n, 2, 4).transpose(1, 2).numpy()
        np.testing.assert_allclose(v[0], v0, atol=1e-6)
    assert capture(bundles["gpt2"], SENTENCES).kv_groups.tolist() == [0, 1, 2, 3]


def _zero_head_columns(model, family: str, kind: str, layer: int, head: int) -> None:
    """The oracle for ablation: a head whose context never reaches W_O = its W_O columns 0."""
    if family == "gpt2":
        proj, dh = model.transformer.h[layer].attn.c_proj, 4
        proj.weight.data[head * dh:(head + 1) * dh, :] = 0  # Conv1D: (in, out)
        return
    if family == "bert":
        proj, dh = model.encoder.layer[layer].attention.output.dense, 8
    elif family in ("llama", "mistral"):
        proj, dh = model.model.layers[layer].self_attn.o_proj, 4
    elif family == "t5":
        stack = model.encoder if kind == "enc_self" else model.decoder
        sub = stack.block[layer].layer[1 if kind == "cross" else 0]
        proj = sub.EncDecAttention.o if kind == "cross" else sub.SelfAttention.o
        dh = 8
    else:
        stack = model.model.encoder if kind == "enc_self" else model.model.decoder
        block = stack.layers[layer]
        attn = block.encoder_attn if kind == "cross" else block.self_attn
        proj, dh = attn.out_proj, 8
    proj.weight.data[:, head * dh:(head + 1) * dh] = 0


@pytest.mark.parametrize("family", FAMILIES)
def test_ablation_zeroes_the_heads_context(root, bundles, family):
    bundle = bundles[family]
    targets = _targets(family)
    kind = bundle.kinds[-1]
    plain = capture(bundle, SENTENCES, targets)
    same = capture(bundle, SENTENCES, targets, ablate=())
    assert np.array_equal(_out(same), _out(plain))
    knocked = capture(bundle, SENTENCES, targets, ablate={(kind, 1, 1)})
    assert np.abs(_out(knocked) - _out(plain)).max() > 1e-4
    oracle = type(bundle.model).from_pretrained(root / family, attn_implementation="eager").eval()
    _zero_head_columns(oracle, family, kind, 1, 1)
    out, _ = run_eager(oracle, knocked, family)
    np.testing.assert_allclose(_out(knocked), _output(out).numpy(), atol=1e-4)


def _out(trace):
    return trace.logits if trace.logits is not None else trace.hidden["enc"][-1]


def _job(bundle, family, i):
    heads = [None, *[(k, i % 2, i % 2) for k in bundle.kinds]]
    ablate = {heads[i % len(heads)]} - {None}
    text = SENTENCES[i % 3] + " the cat" * (i % 4)
    targets = [TARGETS[i % 3]] if family in ("t5", "marian") else None
    return capture(bundle, [text], targets, ablate=ablate)


def test_eight_threads_match_one_thread(bundles):
    jobs = [(f, i) for f in FAMILIES for i in range(8)]
    single = [_job(bundles[f], f, i) for f, i in jobs]
    with ThreadPoolExecutor(max_workers=8) as pool:
        multi = list(pool.map(lambda j: _job(bundles[j[0]], *j), jobs))
    for a, b in zip(single, multi, strict=True):
        assert a.ablate == b.ablate and a.src_tokens == b.src_tokens
        for group in ("attn", "scores", "q", "k", "v"):
            for kind in a.attn:
                assert np.array_equal(getattr(a, group)[kind], getattr(b, group)[kind])
        assert np.array_equal(_out(a), _out(b))


def test_names_record_only_what_is_asked(bundles):
    trace = capture(bundles["llama"], SENTENCES, names=["attn"])
    assert set(trace.attn) == {"dec_self"}
    assert trace.scores == trace.q == trace.k == trace.v == trace.hidden == {}
    assert trace.logits is None and trace.masks["dec_self"].shape[0] == 3


def test_text_with_no_tokens_is_a_clear_error(bundles):
    with pytest.raises(ValueError, match="sentence 2 .* turns into no tokens"):
        capture(bundles["gpt2"], ["the cat", "   "])
    trace = capture(bundles["bert"], ["   "])  # [CLS] [SEP]: something to run on
    assert trace.src_tokens == [["[CLS]", "[SEP]"]]


def test_long_text_is_cut_and_reported(bundles):
    trace = capture(bundles["gpt2"], ["the cat " * 20, "a dog"])
    assert trace.src_cut == [40 - 32, 0] and len(trace.tgt_tokens[0]) == 32


@pytest.mark.parametrize("family", FAMILIES)
def test_ablation_effect_and_scan_on_every_family(bundles, family):
    bundle = bundles[family]
    kind = bundle.kinds[-1]
    none = ablation_effect(bundle, SENTENCES[:2], ())
    assert none["loss_change"] == 0 and not any(none["changed"])
    effect = ablation_effect(bundle, SENTENCES[:2], {(kind, 1, 0), (kind, 0, 1)})
    assert effect["measure"] == ("hidden" if family == "bert" else "logp")
    assert effect["loss_change"] != 0
    assert [len(t) for t in effect["tokens"]] == [len(x) for x in effect["logp_change"]]
    scan = importance_scan(bundle, SENTENCES[0], chunk=5)
    assert set(scan) == set(bundle.kinds)
    for k, table in scan.items():
        assert table.shape == (bundle.n_layers(k), bundle.config.n_heads)
    # the scan's row for one head = ablation_effect of that head alone
    one = ablation_effect(bundle, SENTENCES[0], {(kind, 1, 0)})
    assert scan[kind][1, 0] == pytest.approx(one["loss_change"], abs=1e-6)


def test_device_setting(monkeypatch):
    assert model_device("cpu") == ("cpu", "")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    device, note = model_device("auto")
    assert device == "cpu" and "no GPU" in note
    assert model_device("cuda")[0] == "cpu"
    assert model_device("tpu")[0] == "cpu" and "not one of" in model_device("tpu")[1]
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert model_device("auto") == ("cuda", "")
    monkeypatch.setenv("ATTN_DEVICE", "auto")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert model_device()[0] == "cpu"


def test_bf16_weights_load_as_stored_and_trace_is_float32(root, tmp_path, monkeypatch):
    monkeypatch.setenv("ATTN_DEVICE", "auto")  # no GPU here: falls back to the CPU
    model, template = build("llama")
    model.to(torch.bfloat16).save_pretrained(tmp_path / "bf16", safe_serialization=True)
    make_tokenizer(template).save_pretrained(tmp_path / "bf16")
    bundle = load_checkpoint(tmp_path / "bf16")
    assert next(bundle.model.parameters()).dtype == torch.bfloat16
    assert bundle.card["dtype"] == "bfloat16" and bundle.card["device"] == "cpu"
    trace = capture(bundle, SENTENCES)
    for group in ("attn", "scores", "q", "k", "v"):
        assert getattr(trace, group)["dec_self"].dtype == np.float32
    assert trace.logits.dtype == np.float32 and trace.hidden["dec"].dtype == np.float32
    ref = type(bundle.model).from_pretrained(tmp_path / "bf16", attn_implementation="eager")
    _, attn = run_eager(ref.eval(), trace, "llama")
    np.testing.assert_allclose(trace.attn["dec_self"], torch.stack(attn["dec_self"]).float(),
                               atol=2e-2)
