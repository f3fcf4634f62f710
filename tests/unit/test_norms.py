"""Norm-based attention ‖α_ij · v_j W_O^h‖: against the attention blocks' real outputs.

The oracle for the decomposition is the module itself: a hook on the block's output (after
W_O and its bias) on the lab's model, a forward hook on the output projection for Hugging Face
models. ‖f(x_j)‖ is recomputed by running the real projection layer on v_j placed in head h's
slot with every other slot zero.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from model import capture  # noqa: E402
from model.backends.hf.projections import (  # noqa: E402
    hf_norms,
    output_projections,
    projection_modules,
    projection_weight,
)
from model.backends.lab.norms import native_projections  # noqa: E402
from model.hooks import attn_prefix  # noqa: E402
from model.norms import key_vectors, value_norms  # noqa: E402

SRC = ["the cat eats fish every day .", "winter is cold"]
TGT = ["고양이는 매일 생선을 먹어요.", "겨울은 추워요."]


def _out_hooks(bundle) -> list[str]:
    return [f"{attn_prefix(k, i)}.hook_out" for k in bundle.kinds
            for i in range(bundle.n_layers(k))]


def _f_norms_by_module(lin: torch.nn.Module, v: np.ndarray) -> np.ndarray:
    """‖f_h(v_j)‖ (B, H, K) by running the real Linear on v_j alone in head h's input slot."""
    b, n_h, n_k, d_h = v.shape
    out = np.zeros((b, n_h, n_k))
    with torch.no_grad():
        for h in range(n_h):
            x = torch.zeros(b, n_k, n_h * d_h)
            x[:, :, h * d_h:(h + 1) * d_h] = torch.from_numpy(v[:, h])
            y = lin(x) - (lin.bias if lin.bias is not None else 0.0)
            out[:, h] = y.norm(dim=-1).double().numpy()
    return out


def test_heads_and_keys_sum_to_the_block_output(variant_bundle):
    bundle = variant_bundle
    tr = capture(bundle, SRC, TGT, target_lang="ko",
                 names=["attn", "v", "norms", *_out_hooks(bundle)])
    assert set(tr.norms) == set(bundle.kinds)
    for kind in bundle.kinds:
        proj = native_projections(bundle.model, kind, bundle.n_layers(kind))
        assert tr.norms[kind].dtype == np.float32
        assert tr.norms[kind].shape == tr.attn[kind].shape
        for layer, (w_o, bias) in enumerate(proj):
            vec = key_vectors(tr.attn[kind][layer], tr.v[kind][layer], w_o)  # (B, H, Q, K, D)
            total = vec.sum(axis=(1, 3)) + bias  # (B, Q, D)
            real = tr.acts[f"{attn_prefix(kind, layer)}.hook_out"]
            assert np.abs(total - real).max() <= 1e-4, (kind, layer)
            assert np.allclose(tr.norms[kind][layer], np.linalg.norm(vec, axis=-1), atol=1e-5)


def test_norm_over_weight_is_the_keys_value_norm_for_every_query(variant_bundle):
    bundle = variant_bundle
    tr = capture(bundle, SRC, TGT, target_lang="ko", names=["attn", "v", "norms"])
    for kind in bundle.kinds:
        for layer in range(bundle.n_layers(kind)):
            attn, norms = tr.attn[kind][layer], tr.norms[kind][layer]  # (B, H, Q, K)
            lin = bundle.model.get_submodule(attn_prefix(kind, layer)).w_o
            f = _f_norms_by_module(lin, tr.v[kind][layer])  # (B, H, K)
            live = attn > 1e-4
            ratio = np.where(live, norms / np.where(live, attn, 1.0), np.nan)
            hi = np.where(live, ratio, -np.inf).max(axis=2)  # over queries, per key
            lo = np.where(live, ratio, np.inf).min(axis=2)
            seen = live.any(axis=2)
            assert seen.sum() > 10
            assert (hi - lo)[seen].max() <= 1e-3 * max(1.0, float(f.max()))
            expect = np.broadcast_to(f[:, :, None, :], ratio.shape)
            assert np.allclose(ratio[live], expect[live], rtol=1e-3, atol=1e-4)


def test_norms_alone_and_ablated_heads(bundle):
    only = capture(bundle, SRC, TGT, target_lang="ko", names=["norms"])
    assert only.attn == {} and only.v == {} and set(only.norms) == set(bundle.kinds)
    full = capture(bundle, SRC, TGT, target_lang="ko", names=["attn", "v", "norms"])
    for kind in bundle.kinds:
        np.testing.assert_array_equal(only.norms[kind], full.norms[kind])
    head = ("cross", 1, 2)
    hooks = [f"{attn_prefix('cross', 1)}.hook_out"]
    tr = capture(bundle, SRC, TGT, target_lang="ko", ablate={head},
                 names=["attn", "v", "norms", *hooks])
    assert not tr.norms["cross"][1, :, 2].any()
    assert tr.norms["cross"][1, :, 1].any()
    w_o, bias = native_projections(bundle.model, "cross", 2)[1]
    vec = key_vectors(tr.attn["cross"][1], tr.v["cross"][1], w_o)
    vec[:, 2] = 0.0  # the knocked-out head writes nothing
    assert np.abs(vec.sum(axis=(1, 3)) + bias - tr.acts[hooks[0]]).max() <= 1e-4


# ---- Hugging Face families: the projection finder and the same identity ------------------


def _gpt2(width: int = 768, heads: int = 12, layers: int = 2):
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    cfg = GPT2Config(vocab_size=64, n_embd=width, n_layer=layers, n_head=heads, n_positions=64,
                     bos_token_id=1, eos_token_id=2, pad_token_id=0, attn_implementation="eager")
    return GPT2LMHeadModel(cfg).eval()


def _llama():
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=64, hidden_size=72, intermediate_size=96, num_hidden_layers=2,
                      num_attention_heads=9, num_key_value_heads=3, bos_token_id=1,
                      eos_token_id=2, pad_token_id=0, attn_implementation="eager")
    return LlamaForCausalLM(cfg).eval()


def _run_recording(model, attn_mods, v_of, proj_mods, ids):
    """output_attentions plus the projection's real input and output, and each layer's v."""
    got: dict[str, list] = {"v": [], "out": []}
    handles = [m.register_forward_hook(lambda _m, _i, o: got["out"].append(o.detach()))
               for m in proj_mods]
    handles += [m.register_forward_hook(lambda _m, _i, o: got["v"].append(v_of(o.detach())))
                for m in attn_mods]
    try:
        with torch.no_grad():
            out = model(input_ids=ids, output_attentions=True, return_dict=True)
    finally:
        for h in handles:
            h.remove()
    attn = np.stack([a.float().numpy() for a in out.attentions])  # (L, B, H, Q, K)
    v = np.stack([x.float().numpy() for x in got["v"]])  # (L, B, G, K, Dh)
    return attn, v, [o.float().numpy() for o in got["out"]]


class _Fake:
    def __init__(self, model, family):
        self.model = model
        self.config = type("C", (), {"family": family})()


def test_gpt2_small_width_conv1d_is_transposed_and_sums_to_c_proj():
    model = _gpt2()
    mods = projection_modules(model, "decoder")
    assert list(mods) == ["dec_self"] and len(mods["dec_self"]) == 2
    assert type(mods["dec_self"][0]).__name__ == "Conv1D"
    n_h, d = 12, 768
    d_h = d // n_h

    def split_v(qkv: torch.Tensor) -> torch.Tensor:  # c_attn output (B, n, 3D) -> v (B,H,n,Dh)
        b, n, _ = qkv.shape
        return qkv[..., 2 * d:].reshape(b, n, n_h, d_h).transpose(1, 2)

    c_attn = [blk.attn.c_attn for blk in model.transformer.h]
    ids = torch.tensor([[5, 9, 11, 3, 7, 20, 31, 8, 4, 6]])
    attn, v, outs = _run_recording(model, c_attn, split_v, mods["dec_self"], ids)
    weights = output_projections(_Fake(model, "decoder"))["dec_self"]
    for layer, (w_o, bias) in enumerate(weights):
        assert w_o.shape == (d, d)
        vec = key_vectors(attn[layer], v[layer], w_o)
        assert np.abs(vec.sum(axis=(1, 3)) + bias - outs[layer]).max() <= 1e-4
    norms = hf_norms(_Fake(model, "decoder"), {"dec_self": attn}, {"dec_self": v})["dec_self"]
    # The oracle, by hand from the weights in float64 (no model.norms code): v = x W_V + b_V
    # from c_attn's own input x, then α_ij · ‖v_j W_O^h‖ with W_O^h head h's rows of c_proj.
    xs: list[torch.Tensor] = []
    hooks = [m.register_forward_hook(lambda _m, i, _o: xs.append(i[0].detach()))
             for m in c_attn]
    try:
        with torch.no_grad():
            model(input_ids=ids)
    finally:
        for hook in hooks:
            hook.remove()
    for layer, blk in enumerate(model.transformer.h):
        x = xs[layer][0].double()  # (n, D)
        w_v = blk.attn.c_attn.weight.detach().double()[:, 2 * d:]  # Conv1D: (D in, D out)
        b_v = blk.attn.c_attn.bias.detach().double()[2 * d:]
        v_hand = (x @ w_v + b_v).reshape(-1, n_h, d_h)  # (n, H, Dh)
        w_o = blk.attn.c_proj.weight.detach().double()  # (H·Dh in, D out)
        f = value_norms(v[layer], weights[layer][0])[0]  # (H, K), the code under test
        for h in range(n_h):
            moved = v_hand[:, h] @ w_o[h * d_h:(h + 1) * d_h]  # (n, D): v_j W_O^h
            np.testing.assert_allclose(f[h], moved.norm(dim=-1).numpy(), rtol=1e-4)
            want = attn[layer, 0, h].astype(np.float64) * moved.norm(dim=-1).numpy()[None, :]
            np.testing.assert_allclose(norms[layer, 0, h], want, rtol=1e-4, atol=1e-7,
                                       err_msg=f"layer {layer} head {h}")


def test_llama_grouped_query_heads_read_their_shared_value_head():
    model = _llama()
    mods = projection_modules(model, "decoder")["dec_self"]
    n_h, n_kv, d_h = 9, 3, 8
    groups = [h // (n_h // n_kv) for h in range(n_h)]

    def split_v(x: torch.Tensor) -> torch.Tensor:  # v_proj output (B, n, G·Dh) -> (B,G,n,Dh)
        b, n, _ = x.shape
        return x.reshape(b, n, n_kv, d_h).transpose(1, 2)

    v_proj = [layer.self_attn.v_proj for layer in model.model.layers]
    ids = torch.tensor([[1, 9, 11, 3, 7, 20, 31]])
    attn, v, outs = _run_recording(model, v_proj, split_v, mods, ids)
    assert v.shape[2] == n_kv
    for layer, (w_o, bias) in enumerate(output_projections(_Fake(model, "decoder"))["dec_self"]):
        assert bias is None
        vec = key_vectors(attn[layer], v[layer], w_o, groups)
        assert np.abs(vec.sum(axis=(1, 3)) - outs[layer]).max() <= 1e-4
    norms = hf_norms(_Fake(model, "decoder"), {"dec_self": attn}, {"dec_self": v},
                     np.array(groups))
    assert norms["dec_self"].shape == attn.shape


@pytest.mark.parametrize("family", ["bert", "t5", "marian", "distilbert"])
def test_every_family_names_one_projection_per_layer_and_kind(family):
    import transformers as tf

    torch.manual_seed(0)
    if family == "bert":
        model, fam = tf.BertModel(tf.BertConfig(
            vocab_size=50, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
            intermediate_size=32)), "encoder"
        want = {"enc_self": 2}
    elif family == "distilbert":
        model, fam = tf.DistilBertModel(tf.DistilBertConfig(
            vocab_size=50, dim=16, n_layers=3, n_heads=2, hidden_dim=32)), "encoder"
        want = {"enc_self": 3}
    elif family == "t5":
        model, fam = tf.T5ForConditionalGeneration(tf.T5Config(
            vocab_size=50, d_model=16, d_kv=4, d_ff=32, num_layers=2, num_decoder_layers=3,
            num_heads=4)), "seq2seq"
        want = {"enc_self": 2, "dec_self": 3, "cross": 3}
    else:
        model, fam = tf.MarianMTModel(tf.MarianConfig(
            vocab_size=50, pad_token_id=0, d_model=16, encoder_layers=2, decoder_layers=2,
            encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=32,
            decoder_ffn_dim=32)), "seq2seq"
        want = {"enc_self": 2, "dec_self": 2, "cross": 2}
    found = projection_modules(model, fam)
    assert {k: len(v) for k, v in found.items()} == want
    w_o, _ = projection_weight(found["enc_self"][0])
    assert w_o.shape == (16, 16)


# ---- alignment: weights vs norms ----------------------------------------------------------


def test_alignment_scores_any_map_given_as_weights():
    """α looks at the wrong source word, the norms map at the gold one: the scores follow."""
    from model import Trace
    from model.analysis.alignment import alignment_agreement

    src = ["<2ko>", "▁cat", "▁eats", "</s>"]  # source words: cat = 0, eats = 1
    tgt = ["<s>", "▁A", "▁B"]  # rows 0 and 1 predict target words 0 and 1
    attn = np.zeros((1, 1, 1, 3, 4), np.float32)
    attn[0, 0, 0, 0, 2] = attn[0, 0, 0, 1, 1] = attn[0, 0, 0, 2, 3] = 1.0  # crossed
    norms = np.zeros_like(attn)
    norms[0, 0, 0, 0, 1] = norms[0, 0, 0, 1, 2] = norms[0, 0, 0, 2, 3] = 0.5  # gold
    tr = Trace(src_tokens=[src], tgt_tokens=[tgt], src_ids=np.arange(4, 8)[None],
               tgt_ids=np.arange(4, 7)[None], masks={"cross": np.zeros((1, 3, 4), bool)},
               scores={}, attn={"cross": attn}, q={}, k={}, v={}, hidden={},
               pos_table=np.zeros((8, 2), np.float32), logits=None, norms={"cross": norms})
    gold = [[(0, 0), (1, 1)]]
    assert alignment_agreement(tr, gold, [True]).tolist() == [[0.0]]
    assert alignment_agreement(tr, gold, [True], tr.norms["cross"]).tolist() == [[1.0]]


def test_evaluate_stores_both_tables_and_the_table_reads_them(tokenizer):
    from training import alignment_table
    from training.corpus import generate
    from training.evaluate import evaluate_bundle

    from .conftest import make_bundle

    bundle = make_bundle(tokenizer, max_len=40)  # a random model decodes to max_len: keep it short
    pairs = generate(4, seed=5)
    metrics = evaluate_bundle(bundle, pairs, batch=4)
    alpha, norms = (np.asarray(metrics[k]) for k in ("alignment_per_head",
                                                      "alignment_norms_per_head"))
    assert alpha.shape == norms.shape == (2, 4)
    direct = alignment_table.alignment_tables(bundle, pairs, batch=4)
    np.testing.assert_allclose(alpha, np.round(100 * direct[0], 1))
    np.testing.assert_allclose(norms, np.round(100 * direct[1], 1))
    best = metrics["best_alignment_norms_head"]
    assert norms[best["layer"], best["head"]] == norms.max() == best["agreement"]
    rows = alignment_table.layer_rows("tiny", alpha / 100, norms / 100)
    assert len(rows) == 2
    for layer, row in enumerate(rows):
        ha, hn = int(alpha[layer].argmax()), int(norms[layer].argmax())
        assert f"head {ha}: {alpha[layer, ha]:.1f} %" in row
        assert f"head {hn}: {norms[layer, hn]:.1f} %" in row
    tables = alignment_table.card_tables({"metrics": metrics})
    np.testing.assert_allclose(tables[1], norms / 100)
    assert alignment_table.card_tables({"metrics": {"alignment_per_head": [[1]]}}) is None


# ---- through capture() and the Hugging Face recorder ---------------------------------------


def _folder(tmp_path, model):
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    words = ["<pad>", "<s>", "</s>", "<unk>"] + "the cat eats fish every day winter is cold".split()
    tk = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="<unk>"))
    tk.pre_tokenizer = pre_tokenizers.Whitespace()
    tok = PreTrainedTokenizerFast(tokenizer_object=tk, pad_token="<pad>", unk_token="<unk>",
                                  bos_token="<s>", eos_token="</s>")
    model.save_pretrained(tmp_path, safe_serialization=True)
    tok.save_pretrained(tmp_path)
    return tmp_path


@pytest.mark.parametrize("make", [_gpt2, _llama])
def test_hf_capture_records_norms_that_sum_to_the_projection_output(make, tmp_path):
    from model import load_checkpoint

    bundle = load_checkpoint(_folder(tmp_path, make(64, 4, 2) if make is _gpt2 else make()))
    texts = ["the cat eats fish every day", "winter is cold"]
    mods = projection_modules(bundle.model, "decoder")["dec_self"]
    outs: list[np.ndarray] = []
    handles = [m.register_forward_hook(lambda _m, _i, o: outs.append(o.detach().float().numpy()))
               for m in mods]
    try:
        tr = capture(bundle, texts, names=["attn", "v", "norms"])
    finally:
        for h in handles:
            h.remove()
    groups = [int(g) for g in tr.kv_groups]
    outs = outs[-len(mods):]  # the recorded forward is the last one
    for layer, (w_o, bias) in enumerate(output_projections(bundle)["dec_self"]):
        vec = key_vectors(tr.attn["dec_self"][layer], tr.v["dec_self"][layer], w_o, groups)
        total = vec.sum(axis=(1, 3)) + (0.0 if bias is None else bias)
        n = [len(t) for t in tr.tgt_tokens]
        for b, length in enumerate(n):  # real positions (padding rows are the model's own)
            assert np.abs(total[b, :length] - outs[layer][b, :length]).max() <= 1e-4
        np.testing.assert_allclose(tr.norms["dec_self"][layer], np.linalg.norm(vec, axis=-1),
                                   rtol=1e-4, atol=1e-5)
    only = capture(bundle, texts, names=["norms"])
    np.testing.assert_array_equal(only.norms["dec_self"], tr.norms["dec_self"])


# ---- value_norms at a real width: against ‖v W_O^h‖ by hand, in float64 -----------------


@pytest.mark.parametrize("n_heads, n_kv", [(12, 12), (8, 2)])
def test_value_norms_equal_the_projected_norm_at_real_width(n_heads, n_kv):
    """GPT-2-small's 64-wide heads into 768 (and a grouped 8/2 layout): ‖v_j · W_O^h‖ computed
    per head from the weight's own columns, in float64, within 2e-7 relative (float32's
    rounding of the result is 6e-8)."""
    rng = np.random.default_rng(3)
    d_h, d = 64, 768
    v = rng.standard_normal((2, n_kv, 40, d_h)).astype(np.float32)
    w_o = (rng.standard_normal((d, n_heads * d_h)) * 0.02).astype(np.float32)  # (D, H·Dh)
    groups = [h // (n_heads // n_kv) for h in range(n_heads)]
    want = np.empty((2, n_heads, 40))
    for h in range(n_heads):
        cols = w_o[:, h * d_h:(h + 1) * d_h].astype(np.float64)  # (D, Dh): head h's inputs
        want[:, h] = np.linalg.norm(v[:, groups[h]].astype(np.float64) @ cols.T, axis=-1)
    got = value_norms(v, w_o, None if n_kv == n_heads else groups)
    assert got.dtype == np.float32 and got.shape == want.shape
    assert np.abs(got / want - 1).max() <= 2e-7
    attn = rng.random((2, n_heads, 5, 40)).astype(np.float32)
    from model.norms import weighted_norms

    np.testing.assert_allclose(weighted_norms(attn, v, w_o, None if n_kv == n_heads else groups),
                               attn * want[:, :, None].astype(np.float32), rtol=3e-7)


def test_grams_are_kept_per_weight_and_made_again_when_it_changes():
    """projection_grams: one Gram array per weight while it is unchanged, shared read-only;
    a change in place (load_state_dict, an edit) makes them again, equal to head_grams of the
    new weight; a weight that is gone takes its Grams with it."""
    import gc

    from model.norms import head_grams, projection_grams

    lin = torch.nn.Linear(4 * 16, 48, bias=False)  # (D, H·Dh) = (48, 64): 4 heads of 16
    make = lambda w=lin.weight: w.detach().numpy()  # noqa: E731
    first = projection_grams(lin.weight, 4, make)
    assert projection_grams(lin.weight, 4, make) is first and not first.flags.writeable
    np.testing.assert_array_equal(first, head_grams(make(), 4))
    assert projection_grams(lin.weight, 2, make).shape == (2, 32, 32)  # other heads: remade
    with torch.no_grad():
        lin.weight.mul_(2.0)
    again = projection_grams(lin.weight, 4, make)
    assert again is not first
    np.testing.assert_allclose(again, 4 * first, rtol=1e-12)
    from model.norms import grams_held

    held = grams_held()
    del lin, make
    gc.collect()
    assert grams_held() == held - 1


def test_blas_threads_hold_one_thread_and_the_server_limit():
    """The norms hold numpy's BLAS to one thread (its spinning workers slowed torch's next
    forward) and give the limit back after; the server (ui/admission.server_gate) sets that
    limit for the whole process."""
    threadpoolctl = pytest.importorskip("threadpoolctl")
    from model.norms import blas_threads, limit_blas_threads

    def blas() -> set[int]:
        return {i["num_threads"] for i in threadpoolctl.threadpool_info()
                if i["user_api"] == "blas"}

    before, threads = blas(), torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        limit_blas_threads(2)
        with blas_threads():
            assert blas() == {1}
        assert blas() == {2}
        torch.set_num_threads(2)
        with blas_threads():
            assert blas() == {1}
        assert blas() == {2}
        limit_blas_threads(1)
        assert blas() == {1}
    finally:
        torch.set_num_threads(threads)
        limit_blas_threads(max(before))


def test_importing_model_makes_idle_openmp_threads_sleep_unless_told_otherwise():
    """model/__init__ sets OMP_WAIT_POLICY=PASSIVE before torch loads OpenMP; a value the
    operator set is kept."""
    import subprocess
    import sys

    code = "import model, os; print(os.environ['OMP_WAIT_POLICY'])"
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    for given, want in ((None, "PASSIVE"), ("ACTIVE", "ACTIVE")):
        run_env = env if given is None else {**env, "OMP_WAIT_POLICY": given}
        out = subprocess.run([sys.executable, "-c", code], env=run_env, capture_output=True,
                             text=True, timeout=120, check=True,
                             cwd=Path(__file__).resolve().parents[2])
        assert out.stdout.strip() == want
