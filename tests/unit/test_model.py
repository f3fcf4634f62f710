"""The Transformer, its hook points, masks, positions and capture() on tiny random models."""

from __future__ import annotations

import importlib
import math
import types

import numpy as np
import pytest
import torch

from model import ModelConfig, Transformer, capture, hooks, translate
from model.backends.lab.positional import position_ids, sinusoid_table
from model.hooks import active_hooks
from model.masks import MASK_FILL, cross_mask, decoder_mask, encoder_mask, subsequent_mask

SENTS = ["Winter is cold.", "The big dog eats the fish in the park today."]


def test_config_rejects_inconsistent_values():
    with pytest.raises(ValueError, match="divisible"):
        ModelConfig(d_model=30, n_heads=4)
    with pytest.raises(ValueError, match="pos_encoding"):
        ModelConfig(pos_encoding="rotary")
    with pytest.raises(ValueError, match="unknown config keys"):
        ModelConfig.from_dict({"d_model": 32, "n_head": 2})
    cfg = ModelConfig(d_model=32, n_heads=2)
    assert ModelConfig(**cfg.to_dict()) == cfg


def _attn_hooks(prefix: str) -> list[str]:
    return [f"{prefix}.hook_{s}" for s in
            ("in", "q", "k", "v", "scores", "masked", "probs", "context", "out")]


def test_exact_hook_names_in_forward_order(bundle):
    expected = ["encoder.hook_tok", "encoder.hook_pos", "encoder.hook_embed"]
    for i in range(2):
        p = f"encoder.layers.{i}"
        expected += [f"{p}.hook_resid_pre", *_attn_hooks(f"{p}.self_attn"),
                     f"{p}.hook_resid_mid", f"{p}.ffn.hook_hidden", f"{p}.hook_resid_post"]
    expected += ["encoder.hook_out", "decoder.hook_tok", "decoder.hook_pos", "decoder.hook_embed"]
    for i in range(2):
        p = f"decoder.layers.{i}"
        expected += [f"{p}.hook_resid_pre", *_attn_hooks(f"{p}.self_attn"), f"{p}.hook_resid_mid",
                     *_attn_hooks(f"{p}.cross_attn"), f"{p}.hook_resid_cross",
                     f"{p}.ffn.hook_hidden", f"{p}.hook_resid_post"]
    expected.append("decoder.hook_out")
    model = bundle.model
    assert model.hook_names() == expected
    fired: list[str] = []
    src = torch.tensor([[4, 10, 11, 3]])
    with torch.inference_mode(), hooks({n: lambda x, n: fired.append(n) for n in expected}):
        model(src, torch.tensor([[2, 12, 13]]))
    assert fired == expected


def test_no_hook_remains_even_when_forward_raises(bundle):
    model = bundle.model
    calls = []
    with pytest.raises(RuntimeError, match="boom"):
        with hooks({"encoder.hook_embed": lambda x, n: calls.append(n)}):
            raise RuntimeError("boom")

    def explode(x, name):
        raise RuntimeError("boom in hook")

    with pytest.raises(RuntimeError, match="boom in hook"), hooks({"encoder.hook_tok": explode}):
        model(torch.tensor([[4, 10, 3]]), torch.tensor([[2, 10]]))
    assert dict(active_hooks()) == {}
    assert all(not m._forward_hooks and not m._forward_pre_hooks for m in model.modules())
    capture(bundle, SENTS[:1])
    assert dict(active_hooks()) == {}


def test_masks_shapes_and_values():
    src = torch.tensor([[5, 6, 7, 0], [5, 6, 0, 0]])
    tgt = torch.tensor([[2, 8, 9], [2, 8, 0]])
    enc = encoder_mask(src, 0)
    assert enc.shape == (2, 4, 4) and enc.dtype == torch.bool
    assert enc[1, 0].tolist() == [False, False, True, True]
    assert subsequent_mask(3).tolist() == [[False, True, True], [False, False, True],
                                           [False, False, False]]
    dec = decoder_mask(tgt, 0)
    assert dec[1].tolist() == [[False, True, True], [False, False, True], [False, False, True]]
    assert cross_mask(tgt, src, 0).shape == (2, 3, 4)
    assert cross_mask(tgt, src, 0)[1, 2].tolist() == [False, False, True, True]


def test_sinusoid_table_matches_numpy_formula():
    n, d = 50, 16
    ref = np.zeros((n, d))
    for pos in range(n):
        for i in range(d):
            angle = pos / np.power(10000, 2 * (i // 2) / d)
            ref[pos, i] = np.sin(angle) if i % 2 == 0 else np.cos(angle)
    assert np.abs(sinusoid_table(n, d).numpy() - ref).max() < 1e-6


def test_positions_follow_seed_000():
    ids = torch.tensor([[3207, 3634, 197, 3986, 3790, 3620, 0, 0]])
    assert position_ids(ids, 0).tolist() == [[1, 2, 3, 4, 5, 6, 0, 0]]


def _finite(trace):
    arrays = [*trace.attn.values(), *trace.scores.values(), *trace.q.values(),
              *trace.hidden.values(), trace.logits]
    return all(np.isfinite(a).all() for a in arrays)


def test_attention_rows_and_blocked_cells(variant_bundle):
    tr = capture(variant_bundle, SENTS)
    assert _finite(tr)
    for kind, attn in tr.attn.items():
        mask = tr.masks[kind][None, :, None]  # (1, B, 1, Q, K)
        assert np.all(attn[np.broadcast_to(mask, attn.shape)] == 0.0)
        rows = attn.sum(-1)
        assert np.allclose(rows, 1.0, atol=1e-5), kind
    dec = tr.attn["dec_self"]
    upper = np.triu(np.ones(dec.shape[-2:], bool), 1)
    assert np.all(dec[..., upper] == 0.0)


def test_no_nan_when_every_key_is_blocked(bundle):
    attn = bundle.model.encoder.layers[0].self_attn
    x = torch.randn(1, 3, 32)
    mask = torch.ones(1, 3, 3, dtype=torch.bool)
    with torch.inference_mode():
        out = attn(x, x, mask)
    assert torch.isfinite(out).all()


def test_pad_invariance(variant_bundle):
    short = "Winter is cold."
    alone = capture(variant_bundle, [short], targets=["겨울은 추워요."])
    batch = capture(variant_bundle, [short, SENTS[1] * 2], targets=["겨울은 추워요.", "개가 커요."])
    s = alone.src_ids.shape[1]
    t = alone.tgt_ids.shape[1]
    assert np.allclose(alone.hidden["enc"][:, 0], batch.hidden["enc"][:, 0, :s], atol=1e-5)
    assert np.allclose(alone.attn["enc_self"][:, 0], batch.attn["enc_self"][:, 0, :, :s, :s],
                       atol=1e-5)
    assert np.allclose(alone.attn["cross"][:, 0], batch.attn["cross"][:, 0, :, :t, :s], atol=1e-5)
    assert np.allclose(alone.logits[0], batch.logits[0, :t], atol=1e-4)


def test_probs_equal_softmax_of_masked_scores_and_recomputation(bundle):
    tr = capture(bundle, SENTS, names=["attn", "scores", "q", "k",
                                       "encoder.layers.1.self_attn.hook_masked"])
    masked = tr.acts["encoder.layers.1.self_attn.hook_masked"]  # (B, H, S, S)
    soft = torch.softmax(torch.from_numpy(masked), -1).numpy()
    mask = tr.masks["enc_self"][:, None]
    soft[np.broadcast_to(mask, soft.shape)] = 0.0
    assert np.allclose(soft, tr.attn["enc_self"][1], atol=1e-5)
    for kind in tr.attn:
        q, k = tr.q[kind], tr.k[kind]
        scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
        assert np.allclose(scores, tr.scores[kind], atol=1e-5)
        z = np.where(tr.masks[kind][None, :, None], -1e9, scores)
        z = np.exp(z - z.max(-1, keepdims=True))
        z = z / z.sum(-1, keepdims=True)
        z[np.broadcast_to(tr.masks[kind][None, :, None], z.shape)] = 0.0
        assert np.allclose(z, tr.attn[kind], atol=1e-5)


def test_capture_does_not_change_the_output(bundle):
    tok = bundle.tokenizer
    tr = capture(bundle, SENTS, targets=["겨울은 추워요.", "개가 커요."], target_lang="ko")
    with torch.inference_mode():
        plain = bundle.model(torch.from_numpy(tr.src_ids), torch.from_numpy(tr.tgt_ids))
    assert torch.equal(plain, torch.from_numpy(tr.logits))
    assert tr.src_tokens[0][0] == "<2ko>" and tr.src_tokens[0][-1] == "</s>"
    assert tr.tgt_tokens[0][0] == "<s>"
    assert tr.src_ids.shape == (2, max(len(t) for t in tr.src_tokens))
    assert tok.pad_id == 0 and (tr.src_ids[0, len(tr.src_tokens[0]):] == 0).all()


def test_trace_shapes_follow_the_contract(bundle):
    tr = capture(bundle, SENTS)
    b, s = tr.src_ids.shape
    t = tr.tgt_ids.shape[1]
    h, dh, d = 4, 8, 32
    assert tr.attn["enc_self"].shape == (2, b, h, s, s)
    assert tr.attn["dec_self"].shape == (2, b, h, t, t)
    assert tr.attn["cross"].shape == (2, b, h, t, s)
    assert tr.q["cross"].shape == (2, b, h, t, dh) and tr.k["cross"].shape == (2, b, h, s, dh)
    assert tr.hidden["enc"].shape == (3, b, s, d) and tr.hidden["dec"].shape == (3, b, t, d)
    assert tr.pos_table.shape == (96, d)
    assert tr.logits.shape == (b, t, bundle.config.vocab_size)
    assert tr.attn["enc_self"].dtype == np.float32 and tr.src_ids.dtype == np.int64
    only = capture(bundle, SENTS, names=["attn"])
    assert only.q == {} and only.hidden == {} and only.logits is None and only.attn


def test_ablation(bundle):
    base = capture(bundle, SENTS, targets=["a", "b"])
    same = capture(bundle, SENTS, targets=["a", "b"], ablate=())
    for kind in base.attn:
        assert np.array_equal(base.attn[kind], same.attn[kind])
    assert np.array_equal(base.logits, same.logits)
    hit = capture(bundle, SENTS, targets=["a", "b"], ablate={("enc_self", 1, 2)})
    assert np.array_equal(hit.hidden["enc"][:2], base.hidden["enc"][:2])  # earlier layers
    assert not np.allclose(hit.hidden["enc"][2], base.hidden["enc"][2])
    with pytest.raises(ValueError, match="heads are numbered"):
        capture(bundle, SENTS, ablate={("cross", 0, 9)})
    with pytest.raises(ValueError, match="kind"):
        capture(bundle, SENTS, ablate="nope:0:0")


def test_translate_returns_text_and_steps(bundle):
    out = translate(bundle, SENTS, "ko", max_len=6, top_k=3)
    assert len(out) == 2
    for tr in out:
        assert len(tr.steps) <= 6 and all(len(step) == 3 for step in tr.steps)
        assert all(0.0 <= p <= 1.0 for p in tr.probs)
        assert isinstance(tr.text, str)


def test_both_variants_save_load_capture(variant_bundle, tmp_path):
    from model import load_checkpoint, save_checkpoint

    folder = save_checkpoint(variant_bundle.model, variant_bundle.tokenizer, tmp_path / "ck",
                             card={"variant": "test"})
    loaded = load_checkpoint(folder)
    a = capture(variant_bundle, SENTS, targets=["x", "y"])
    b = capture(loaded, SENTS, targets=["x", "y"])
    assert np.array_equal(a.logits, b.logits)
    assert loaded.card == {"variant": "test"}


def test_model_without_decoder(tokenizer):
    cfg = ModelConfig(vocab_size=tokenizer.vocab_size, d_model=16, n_heads=2, d_ff=32,
                      n_enc_layers=1, n_dec_layers=0, max_len=40)
    out = Transformer(cfg).eval()(torch.tensor([[4, 9, 3]]))
    assert out.shape == (1, 3, 16)


def test_decoder_only_model_captures_the_text_itself(tokenizer):
    from model import Bundle

    cfg = ModelConfig(vocab_size=tokenizer.vocab_size, d_model=16, n_heads=2, d_ff=32,
                      n_enc_layers=0, n_dec_layers=2, max_len=40)
    bundle = Bundle(Transformer(cfg).eval(), tokenizer, cfg, {}, "dec-only")
    tr = capture(bundle, ["Winter is cold."])
    assert set(tr.attn) == {"dec_self"} and tr.tgt_tokens[0][0] == "<s>"
    assert tr.logits.shape[:2] == tr.tgt_ids.shape


def test_trace_masks_and_positions_equal_the_model_functions(bundle):
    tr = capture(bundle, SENTS, targets=["겨울은 추워요.", "개가 커요. 개가 커요."])
    src, tgt = torch.from_numpy(tr.src_ids), torch.from_numpy(tr.tgt_ids)
    assert np.array_equal(tr.masks["enc_self"], encoder_mask(src, 0).numpy())
    assert np.array_equal(tr.masks["dec_self"], decoder_mask(tgt, 0).numpy())
    assert np.array_equal(tr.masks["cross"], cross_mask(tgt, src, 0).numpy())
    assert np.array_equal(tr.positions["enc"], position_ids(src, 0).numpy())
    assert np.array_equal(tr.positions["dec"], position_ids(tgt, 0).numpy())
    assert all(m.dtype == bool for m in tr.masks.values())


def test_buffers_are_written_in_place_and_leave_nothing_behind(bundle):
    from model.hooks import BUFFERS, buffers

    src = torch.from_numpy(capture(bundle, SENTS, names=["attn"]).src_ids)
    given: dict[str, torch.Tensor] = {}

    def offer(name):
        def make(shape):
            given[name] = torch.full(shape, float("nan"))
            return given[name]
        return make

    names = ["encoder.layers.1.self_attn.hook_probs", "encoder.layers.0.self_attn.hook_scores"]
    seen = {}
    with torch.inference_mode():
        plain = bundle.model.encode(src)
        with buffers({n: offer(n) for n in names}), hooks(
                {n: lambda x, name: seen.setdefault(name, x) for n in names}):
            offered = bundle.model.encode(src)
    assert BUFFERS.get() is None
    assert torch.equal(plain, offered)
    for n in names:  # the module wrote its result into the offered tensor, not a copy
        assert seen[n].data_ptr() == given[n].data_ptr()
        assert not torch.isnan(given[n]).any()
    tr = capture(bundle, SENTS, names=["attn", "scores"])
    assert np.array_equal(given[names[0]].numpy(), tr.attn["enc_self"][1])
    assert np.array_equal(given[names[1]].numpy(), tr.scores["enc_self"][0])


def test_scores_are_masked_in_place_only_when_nothing_reads_them(bundle):
    """With hook_scores unwatched (autograd off) the scores are masked in place; watched, its
    pre-mask values stay intact in their own tensor. The masked scores and probabilities are
    the same either way, and with autograd on."""
    src = torch.from_numpy(capture(bundle, SENTS, names=["attn"]).src_ids)
    at = "encoder.layers.0.self_attn."
    got: dict[str, torch.Tensor] = {}

    def keep(x, name):
        got[name.rsplit(".", 1)[1]] = x

    def run(names, grad=False):
        got.clear()
        with torch.set_grad_enabled(grad), hooks({at + n: keep for n in names}):
            bundle.model.encode(src)
        return dict(got)

    alone = run(["hook_masked", "hook_probs"])
    assert alone["hook_masked"].min() <= MASK_FILL  # pad cells masked
    both = run(["hook_scores", "hook_masked", "hook_probs"])
    assert both["hook_scores"].data_ptr() != both["hook_masked"].data_ptr()
    assert both["hook_scores"].min() > MASK_FILL  # the pre-mask values are intact
    assert torch.equal(both["hook_masked"], alone["hook_masked"])
    assert torch.equal(both["hook_probs"], alone["hook_probs"])
    assert bundle.model.get_submodule(at + "hook_scores").watched() is False
    training = run(["hook_masked"], grad=True)
    assert torch.equal(training["hook_masked"].detach(), alone["hook_masked"])


class _NanEmpty(types.ModuleType):
    """model.slabs' view of torch (the one slab recorder), except that torch.empty gives
    NaN-filled tensors: a slab slot that capture() never writes then stays NaN instead of
    holding whatever was in memory."""

    def __init__(self) -> None:
        super().__init__("torch")
        self.made: list[tuple[int, ...]] = []

    def __getattr__(self, name):
        return getattr(torch, name)

    def empty(self, *shape, **kw) -> torch.Tensor:
        size = tuple(shape[0]) if len(shape) == 1 and not isinstance(shape[0], int) else shape
        self.made.append(size)
        return torch.full(size, float("nan"), **kw)


def test_full_capture_slabs_hold_each_layer(bundle, monkeypatch):
    """Every layer of every recorded group holds that layer's tensor: slabs start as NaN, and
    each (group, kind, layer) is compared with the tensor its hook saw in a plain forward."""
    nan_torch = _NanEmpty()
    monkeypatch.setattr(importlib.import_module("model.slabs"), "torch", nan_torch)
    targets = ["겨울은 추워요.", "큰 개가 오늘 공원에서 생선을 먹어요."]
    tr = capture(bundle, SENTS, targets, target_lang="ko",
                 names=["attn", "scores", "q", "k", "v", "hidden"])
    monkeypatch.undo()
    assert len(nan_torch.made) == 5 * 3 + 2  # a slab per group and kind, one per hidden side

    # oracle: the tensors each hook point passes on in a plain forward of the same ids
    seen: dict[str, np.ndarray] = {}
    names = [n for n in bundle.model.hook_names()
             if n.endswith((".hook_probs", ".hook_scores", ".hook_q", ".hook_k", ".hook_v",
                            ".hook_embed", ".hook_resid_post"))]
    with torch.inference_mode(), hooks(
            {n: lambda x, name: seen.__setitem__(name, x.clone().numpy()) for n in names}):
        bundle.model(torch.from_numpy(tr.src_ids), torch.from_numpy(tr.tgt_ids))
    stacks = {"enc_self": "encoder.layers.{}.self_attn", "dec_self": "decoder.layers.{}.self_attn",
              "cross": "decoder.layers.{}.cross_attn"}
    hook = {"attn": "probs", "scores": "scores", "q": "q", "k": "k", "v": "v"}
    checked = 0
    for group, short in hook.items():
        for kind, prefix in stacks.items():
            arr = getattr(tr, group)[kind]
            assert arr.shape[0] == 2 and arr.flags.c_contiguous and arr.flags.writeable
            for layer in range(arr.shape[0]):
                want = seen[f"{prefix.format(layer)}.hook_{short}"]
                np.testing.assert_allclose(arr[layer], want, rtol=0, atol=1e-6,
                                           err_msg=f"{group} {kind} layer {layer}")
                checked += 1
    for side, stack in (("enc", "encoder"), ("dec", "decoder")):
        layers = [f"{stack}.hook_embed"] + [f"{stack}.layers.{i}.hook_resid_post"
                                              for i in range(2)]
        assert tr.hidden[side].shape[0] == len(layers)
        for i, name in enumerate(layers):
            np.testing.assert_allclose(tr.hidden[side][i], seen[name], rtol=0, atol=1e-6,
                                       err_msg=f"hidden {side} {i}")
            checked += 1
    assert checked == 5 * 3 * 2 + 2 * 3
    # recording only the attention gives the very same attention
    alone = capture(bundle, SENTS, targets, target_lang="ko", names=["attn"])
    for kind in stacks:
        assert np.array_equal(alone.attn[kind], tr.attn[kind]), kind


def test_prefix_cache_decodes_like_the_full_prefix(variant_bundle):
    """Step-by-step decoding with PrefixCache gives the full-prefix decoder's states."""
    from model.backends.lab.transformer import PrefixCache

    model, tok = variant_bundle.model, variant_bundle.tokenizer
    tr = capture(variant_bundle, SENTS, targets=["겨울은 추워요. 개가 커요.", "개가 커요."],
                 names=["attn"])
    src, tgt = torch.from_numpy(tr.src_ids), torch.from_numpy(tr.tgt_ids)
    with torch.inference_mode():
        memory = model.encode(src)
        full = model.decode(tgt, memory, src)  # (B, T, D)
        past = PrefixCache(len(model.decoder.layers))
        steps = [model.decode(tgt[:, : t + 1], memory, src, past) for t in range(tgt.size(1))]
    assert past.length == tgt.size(1) and all(s.shape[1] == 1 for s in steps)
    real = torch.from_numpy(tr.tgt_ids != tok.pad_id)  # pad rows may differ: never read
    assert torch.allclose(torch.cat(steps, 1)[real], full[real], atol=1e-5)


def test_translate_with_ablation_matches_the_ablated_forward(bundle):
    """Hooks fire on the cached step too: greedy ids under ablation are the argmax of the
    ablated teacher-forced forward on those ids."""
    heads = "dec_self:0:1,cross:1:0"
    done = translate(bundle, SENTS, "ko", max_len=8, ablate=heads)
    tr = capture(bundle, SENTS, targets=None, target_lang="ko", ablate=heads, names=["logits"])
    tok = bundle.tokenizer
    logits = tr.logits.copy()
    logits[..., [tok.pad_id, tok.bos_id, *tok.lang_ids.values()]] = -np.inf  # never generated
    for b, t in enumerate(done):
        n = len(t.ids)
        assert tr.tgt_ids[b, 1: n + 1].tolist() == t.ids
        assert logits[b, :n].argmax(-1).tolist() == t.ids


def test_capture_reuses_a_given_greedy_decode(bundle):
    done = translate(bundle, SENTS, "ko", ablate="cross:0:1")
    reused = capture(bundle, SENTS, target_lang="ko", ablate="cross:0:1", decoded=done,
                     names=["attn"])
    fresh = capture(bundle, SENTS, target_lang="ko", ablate="cross:0:1", names=["attn"])
    assert np.array_equal(reused.tgt_ids, fresh.tgt_ids)
    assert np.array_equal(reused.attn["cross"], fresh.attn["cross"])
    with pytest.raises(ValueError, match="decoded"):
        capture(bundle, SENTS[:1], decoded=done)  # a different batch
    with pytest.raises(ValueError, match="decoded"):
        capture(bundle, SENTS, targets=["a", "b"], decoded=done)
