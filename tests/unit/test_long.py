"""Long mode equals a full capture at small n, on every family built here (no download).

Oracle: model.capture's full attention matrices [L, H, n, n], reduced in numpy by the
definitions written out below (pixel bins, entropy, distances, bands, top keys). Chunks are
made small (CHUNK_BYTES patched) so that chunk edges cut across pixels and windows.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import model.long.attend as attend_module  # noqa: E402
from model import capture, capture_long, load_checkpoint  # noqa: E402
from model.backends import capabilities  # noqa: E402
from model.long.reduce import LOCAL, MIDDLE, REACH, bin_starts  # noqa: E402
from model.specials import is_special  # noqa: E402
from tests import word_models  # noqa: E402
from tests.conftest import needs
from tests.hf_folders import WORDS, save_families  # noqa: E402
from tests.unit.conftest import make_bundle  # noqa: E402

N_WORDS = 2047  # past the middle band (1,024); 2,048 pieces with <s>, the size issue 38 names
PIXELS = 96  # does not divide n: pixels of unequal size
WINDOW = 40
LM = Path(__file__).resolve().parents[2] / "checkpoints" / "lm"


def text(n_words: int) -> str:
    return " ".join(WORDS[(i * 7 + i // 5) % len(WORDS)] for i in range(n_words))


def build(family: str):
    import transformers as tf

    if family == "gpt2":
        return word_models.gpt2(16, 2, 4, N_WORDS + 8)
    common = word_models.vocab_args()
    rotary = dict(hidden_size=24, num_hidden_layers=2, num_attention_heads=6,
                  num_key_value_heads=2, intermediate_size=32,
                  max_position_embeddings=N_WORDS + 8, **common)
    if family == "llama":
        return tf.LlamaForCausalLM(tf.LlamaConfig(**rotary)), "<s> $A"
    if family == "mistral":
        return tf.MistralForCausalLM(tf.MistralConfig(sliding_window=WINDOW, **rotary)), \
            "<s> $A"
    # Qwen2: sliding window in layer 1 only (layer 0 full), as its layer_types say
    return tf.Qwen2ForCausalLM(tf.Qwen2Config(
        use_sliding_window=True, sliding_window=WINDOW, max_window_layers=1,
        layer_types=["full_attention", "sliding_attention"], **rotary)), "<s> $A"


@pytest.fixture(scope="module", autouse=True)
def _small_chunks():
    before, threads = attend_module.CHUNK_BYTES, torch.get_num_threads()
    attend_module.CHUNK_BYTES = 64 << 10  # a few dozen queries per chunk
    torch.set_num_threads(1)
    yield
    attend_module.CHUNK_BYTES = before
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    return save_families(tmp_path_factory.mktemp("long"), ("gpt2", "llama", "mistral", "qwen2"),
                         build)


def reference(a: np.ndarray, specials: np.ndarray, pixels: int) -> dict[str, np.ndarray]:
    """Everything long mode reports, from full [L, H, n, n] probabilities."""
    a = a.astype(np.float64)
    n = a.shape[-1]
    p = min(pixels, n)
    s = bin_starts(n, p)
    mean = np.zeros(a.shape[:2] + (p, p))
    mx = np.zeros_like(mean)
    for i in range(p):
        for j in range(p):
            cell = a[:, :, s[i]:s[i + 1], s[j]:s[j + 1]]
            mean[:, :, i, j] = cell.mean((-1, -2))
            mx[:, :, i, j] = cell.max((-1, -2))
    qi, kj = np.arange(n)[:, None], np.arange(n)[None, :]
    dist = np.abs(qi - kj).astype(np.float64)
    logs = np.log(np.where(a > 0, a, 1.0))
    prev = np.zeros(a.shape[:3])
    prev[..., 1:] = a[..., np.arange(1, n), np.arange(n - 1)]
    return {
        "mean": mean, "max": mx,
        "entropy": -(a * logs).sum(-1),
        "first": a[..., 0],
        "special": a[..., specials].sum(-1),
        "previous": prev,
        "mean_distance": (a * dist).sum(-1),
        "max_distance": top_reach(a, dist),
        "received": a.sum(-2),
        "bands": np.stack([(a * (dist <= LOCAL)).sum(-1).mean(-1),
                           (a * ((dist > LOCAL) & (dist <= MIDDLE))).sum(-1).mean(-1),
                           (a * (dist > MIDDLE)).sum(-1).mean(-1)], -1),
        "top": -np.sort(-a, -1)[..., :8],
    }


def top_reach(a: np.ndarray, dist: np.ndarray) -> np.ndarray:
    """The farthest of each query's top-8 keys that holds at least REACH of its weight."""
    order = np.argsort(-a, -1, kind="stable")[..., :8]
    w = np.take_along_axis(a, order, -1)
    d = dist[np.arange(a.shape[-2])[:, None], order]
    return np.where(w >= REACH, d, 0).max(-1)


def check(bundle, line: str, kind: str, pixels: int = PIXELS) -> None:
    full = capture(bundle, [line])
    a = full.attn[kind][:, 0]  # (L, H, n, n)
    n = a.shape[-1]
    long = capture_long(bundle, line, pixels=pixels, qk_dtype="float32")
    assert long.n == n and long.kinds == [kind]
    specials = np.array([is_special(t) for t in long.tokens], bool)
    want = reference(a, specials, pixels)
    tol = dict(rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(long.pooled[kind]["mean"], want["mean"], **tol)
    np.testing.assert_allclose(long.pooled[kind]["max"], want["max"], **tol)
    st = long.stats[kind]
    for name in ("entropy", "first", "special", "previous", "received"):
        np.testing.assert_allclose(st[name], want[name], err_msg=name, **tol)
    # distances are in positions (up to n): relative tolerance
    np.testing.assert_allclose(st["mean_distance"], want["mean_distance"], rtol=1e-5, atol=1e-3)
    near = np.abs(a - REACH) < 1e-6  # a weight on the reach threshold itself may flip
    if not near.any():
        np.testing.assert_array_equal(st["max_distance"], want["max_distance"])
    np.testing.assert_allclose(long.summary[kind]["bands"], want["bands"], **tol)
    np.testing.assert_allclose(long.top[kind]["weights"], want["top"], **tol)
    keys = long.top[kind]["keys"]
    picked = np.take_along_axis(a, keys.astype(np.int64), -1)
    np.testing.assert_allclose(picked, long.top[kind]["weights"], **tol)
    n_layers, n_heads = a.shape[:2]
    for layer, head, q0, q1, k0, k1 in [(0, 0, 0, n, 0, min(n, 1024)),
                                        (n_layers - 1, n_heads - 1, n // 3, n, n // 4, n // 2),
                                        (n_layers - 1, 1, 5, 6, 0, n)]:
        if q1 - q0 > 1024 or k1 - k0 > 1024:
            q1, k1 = min(q1, q0 + 1024), min(k1, k0 + 1024)
        np.testing.assert_allclose(long.block(kind, layer, head, q0, q1, k0, k1),
                                   a[layer, head, q0:q1, k0:k1], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("family", ["gpt2", "llama", "mistral", "qwen2"])
def test_hugging_face_families_equal_a_full_capture(root, family):
    bundle = load_checkpoint(root / family)
    assert capabilities(bundle).long_context
    check(bundle, text(N_WORDS), "dec_self")


def test_pixels_of_one_size_pool_through_the_aligned_path(root):
    # n = 384 (383 words + <s>) over 96 pixels: 4 cells each, so query chunks end on pixel
    # edges and rows are pooled through a view (a sliding window cuts the key ranges)
    check(load_checkpoint(root / "mistral"), text(383), "dec_self", pixels=96)


def test_the_window_is_respected(root):
    bundle = load_checkpoint(root / "mistral")
    long = capture_long(bundle, text(300), pixels=64)
    # no query reaches farther back than the window
    assert long.stats["dec_self"]["max_distance"].max() < WINDOW
    assert long.summary["dec_self"]["bands"][..., 1:].max() == 0


def test_the_labs_encoder_decoder_equals_a_full_capture(tokenizer):
    bundle = make_bundle(tokenizer, max_len=700, norm="post", pos_encoding="sinusoidal")
    line = " ".join(["The cat eats fish every day and the dog runs in the park."] * 40)
    check(bundle, line, "enc_self", pixels=50)


@needs((LM / "config.json").is_file(), reason="checkpoints/lm not shipped")
def test_the_trained_language_model_equals_a_full_capture():
    bundle = load_checkpoint(LM)
    check(bundle, "The cat sat on the mat. " * 40, "dec_self", pixels=48)


def test_fp16_queries_and_keys_stay_within_2e_3(root):
    bundle = load_checkpoint(root / "llama")
    line = text(400)
    full = capture(bundle, [line]).attn["dec_self"][:, 0]
    long = capture_long(bundle, line, pixels=32, qk_dtype="float16")
    assert long.qk_dtype == "float16"
    np.testing.assert_allclose(long.block("dec_self", 1, 2, 0, 400, 0, 400), full[1, 2, :400, :400],
                               atol=2e-3)


def test_bad_requests_are_refused(root):
    bundle = load_checkpoint(root / "gpt2")
    long = capture_long(bundle, text(50), pixels=16)
    with pytest.raises(ValueError, match="outside"):
        long.block("dec_self", 0, 0, 0, 10, 0, long.n + 1)
    with pytest.raises(ValueError, match="pixels"):
        capture_long(bundle, text(50), pixels=2048)


def test_a_kept_long_trace_counts_against_the_gate():
    from model.gate import Gate, QueueTimeout

    gate = Gate(budget=100, timeout_s=0.3, poll_s=0.05)
    token = gate.hold(70)  # a session's LongTrace, kept after its run
    assert gate.held == 70 and gate.snapshot()["in_use"] == 0
    with pytest.raises(QueueTimeout), gate.admit(40):
        pass  # 70 held + 40 > 100: waits, then gives up
    gate.release(token)
    gate.release(token)  # twice is harmless
    with gate.admit(40):
        assert gate.held == 0 and gate.in_use == 40


def test_the_positional_detector_reads_the_strongest_keys():
    from model.long.trace import LongTrace

    n = 40
    q = np.arange(n)
    keys = np.zeros((1, 3, n, 8), np.int32)
    keys[0, 0, :, 0] = np.maximum(q - 3, 0)  # three back (the first three queries cannot be)
    keys[0, 1, :, 0] = 0  # a sink: its distance grows with the query
    keys[0, 2, :, 0] = np.where(q % 2 == 0, np.maximum(q - 1, 0), 0)  # half previous piece
    trace = LongTrace(tokens=["w"] * n, ids=q, pixels=n, qk_dtype="float32",
                      top={"s": {"keys": keys, "weights": np.ones_like(keys, np.float32)}})
    share, offset = trace.positional("s")
    assert offset[0, 0] == 3 and share[0, 0] == np.float32((n - 3) / n)
    assert share[0, 1] == np.float32(1 / n)
    # queries 2, 4, ..., 38 read one back, and so does query 1 (its sink is one back)
    assert offset[0, 2] == 1 and share[0, 2] == np.float32((n // 2) / n)


def test_finishing_holds_each_layer_once():
    """LongRecorder.finish moves each layer's arrays into the stacked ones and lets go of the
    layer's own as it goes: np.stack held every layer's pooled maps, statistics and top keys
    twice at the end of a capture (+1,180 MiB over a 600 MiB trace, 16 × 16 heads at 2,048
    tokens; +691 MiB after). The traced peak stays under the largest stacked array plus one
    layer, well below the trace's own size."""
    import tracemalloc

    from model.long.attend import Rule
    from model.long.trace import LongRecorder

    layers, heads, n, pixels = 8, 4, 64, 64  # one position per pixel: each mean is its sum
    tracemalloc.start()  # before the layers' arrays, so that freeing them is counted
    rec = LongRecorder(n, pixels, np.zeros(n, bool), "float32")
    rng = np.random.default_rng(0)
    sums = rng.random((layers, heads, pixels, pixels), np.float32)
    for layer in range(layers):
        red = rec.layer("self", layer, torch.zeros(heads, n, 4), torch.zeros(1, n, 4),
                        Rule(scaling=0.5, causal=True))
        red.sum[...] = sums[layer]
        red.max[...] = layer
        red.stats["received"][...] = layer + 1
    tracemalloc.reset_peak()
    before = tracemalloc.get_traced_memory()[0]
    trace = rec.finish([f"w{i}" for i in range(n)], np.arange(n), np.zeros(heads, int))
    peak = tracemalloc.get_traced_memory()[1] - before
    tracemalloc.stop()
    held = sum(a.nbytes for d in (trace.pooled, trace.stats, trace.top) for part in d.values()
               for a in part.values())
    assert peak < 0.6 * held, (peak, held)  # np.stack: peak >= held
    np.testing.assert_array_equal(trace.pooled["self"]["mean"], sums)
    assert trace.pooled["self"]["max"][:, 0, 0, 0].tolist() == list(range(layers))
    assert trace.stats["self"]["received"][:, 0, 0].tolist() == list(range(1, layers + 1))
    assert trace.summary["self"]["sink_share"].shape == (layers, heads)


def test_long_texts_split_a_chunk_by_heads(monkeypatch):
    """At 8 MB a chunk, every head shares it up to a few thousand tokens; past that it holds
    fewer heads and at least 64 query rows per kv head (16-row products ran at half speed)."""
    monkeypatch.setattr(attend_module, "CHUNK_BYTES", 8 << 20)
    per, size = attend_module.kv_per_chunk, attend_module.chunk_size
    assert per(12, 12, 2048) == 12  # GPT-2 shape, 2,048 tokens: as before
    assert per(12, 12, 8192) == 4 and size(4, 8192) == 64
    assert per(16, 4, 32768) == 1 and 4 * size(4, 32768) == 64  # Llama shape: R·c rows
    assert per(16, 4, 32768) * 4 * size(4, 32768) * 32768 * 4 <= 8 << 20


def test_head_groups_of_unequal_size_equal_one_chunk_of_every_head(monkeypatch):
    """5 heads over 2 kv-head-sized groups of 2, 2 and 1: the same output and reductions as
    all 5 in one chunk (equal up to float32 rounding of differently blocked products)."""
    from model.long.attend import Rule, attend
    from model.long.reduce import LayerReducer

    gen = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(5, 300, 8, generator=gen) for _ in range(3))
    specials = np.zeros(300, bool)
    specials[0] = True
    runs = []
    for chunk_bytes in (1 << 30, 2 * 4 * 300 * 64):  # everything at once; 2 heads a chunk
        monkeypatch.setattr(attend_module, "CHUNK_BYTES", chunk_bytes)
        red = LayerReducer(5, 300, 60, specials)
        out = attend(q, k, v, Rule(scaling=8 ** -0.5, causal=True), red)
        runs.append((out, red))
    assert attend_module.kv_per_chunk(5, 5, 300) == 2
    (out_a, a), (out_b, b) = runs
    torch.testing.assert_close(out_a, out_b, rtol=1e-5, atol=1e-6)
    for name in a.stats:
        np.testing.assert_allclose(a.stats[name], b.stats[name], rtol=1e-5, atol=1e-5)
    for field in ("sum", "max", "lse", "top_weights", "bands"):
        np.testing.assert_allclose(getattr(a, field), getattr(b, field), rtol=1e-5, atol=1e-6)


def test_queries_and_keys_on_disk_give_the_same_blocks(root, monkeypatch, tmp_path):
    """qk_store="disk": Q and K go to an unlinked file in ATTN_SPILL_DIR (nothing is left
    there, even while the trace lives), blocks are bit-equal to those kept in memory, and the
    trace counts only its maps and statistics as memory. "auto" spills above SPILL_FROM."""
    import gc

    import model.long.spill as spill
    from model.dispatch import long_batch, qk_plan

    monkeypatch.setenv("ATTN_SPILL_DIR", str(tmp_path))
    bundle = load_checkpoint(root / "llama")  # grouped kv heads: rows of kv head h // R
    line = text(400)
    mem = capture_long(bundle, line, pixels=32, qk_store="memory")
    disk = capture_long(bundle, line, pixels=32, qk_store="disk")
    assert (mem.qk_store, disk.qk_store, disk.qk_dtype) == ("memory", "disk", "float32")
    assert list(tmp_path.iterdir()) == []  # unlinked as soon as it was made
    layers, heads = disk.shape("dec_self")
    assert disk.disk_bytes() == layers * (heads + 2) * disk.n * 4 * 4 > 0  # 2 kv heads, Dh 4
    assert mem.disk_bytes() == 0
    assert mem.nbytes() - disk.nbytes() == disk.disk_bytes()
    for layer, head, q0, q1, k0, k1 in [(0, 0, 0, 401, 0, 401), (1, 5, 100, 300, 17, 251),
                                        (1, 3, 400, 401, 0, 401)]:
        np.testing.assert_array_equal(disk.block("dec_self", layer, head, q0, q1, k0, k1),
                                      mem.block("dec_self", layer, head, q0, q1, k0, k1))
    for name in mem.stats["dec_self"]:
        np.testing.assert_array_equal(disk.stats["dec_self"][name], mem.stats["dec_self"][name])
    closer = disk.kept["dec_self"][0].q.file._closer
    assert closer.alive
    del disk
    gc.collect()
    assert not closer.alive  # the file was closed with its trace
    batch = long_batch(bundle, line)
    assert qk_plan(bundle, batch) == ("float32", "memory")  # a few KB: stays in memory
    monkeypatch.setattr(spill, "SPILL_FROM", 0)
    assert qk_plan(bundle, batch) == ("float32", "disk")
    assert qk_plan(bundle, batch, "float16") == ("float16", "memory")  # disk holds float32
    monkeypatch.setenv("ATTN_SPILL_DIR", str(tmp_path / "missing"))
    assert qk_plan(bundle, batch) == ("float32", "memory")  # no room there: memory
    with pytest.raises(ValueError, match="qk_store"):
        qk_plan(bundle, batch, qk_store="cloud")


def test_the_estimate_leaves_out_what_goes_to_disk(root, monkeypatch, tmp_path):
    import model.long.spill as spill
    from model.dispatch import estimate_long

    monkeypatch.setenv("ATTN_SPILL_DIR", str(tmp_path))
    bundle = load_checkpoint(root / "gpt2")
    line = text(600)
    memory = estimate_long(bundle, line, pixels=64, qk_store="memory")
    monkeypatch.setattr(spill, "SPILL_FROM", 0)
    disk = estimate_long(bundle, line, pixels=64)
    assert disk.parts["queries and keys"] == 0 < memory.parts["queries and keys"]
    assert memory.bytes - disk.bytes == memory.parts["queries and keys"]


@pytest.mark.parametrize("shape", [(4, 64, 8192), (3, 5, 1000), (2, 7, 129), (1, 3, 8),
                                   (2, 2, 64 * 17 + 63), (1, 2, 64 * 17)])
def test_top_indices_find_the_largest_scores(shape):
    """The block-maxima shortcut picks the same scores as one topk over the row, with blocked
    cells (-1e30) among them, rows not a multiple of the block, and rows too short for it."""
    from model.long.reduce import top_indices

    gen = torch.Generator().manual_seed(sum(shape))
    s = torch.randn(*shape, generator=gen)
    s[..., ::7] = attend_module.BLOCKED
    s[..., -1, :40] = 5.0  # ties at the top of one row: any 8 of them
    k = min(8, shape[-1])
    got = s.gather(-1, top_indices(s, k)).sort(-1, descending=True).values
    assert torch.equal(got, torch.topk(s, k, dim=-1).values)


@pytest.mark.parametrize("n, pixels, step, window", [(256, 32, 3, None), (256, 32, 8, 21),
                                                     (250, 32, 5, None), (64, 64, 7, 9)])
def test_pooling_equals_the_dense_maps_where_chunks_cut_pixels(n, pixels, step, window):
    """LayerReducer's pooled sums and maxima equal a dense (H, n, n) matrix pooled cell by
    cell, when chunks start and stop inside pixels on either side (a window's first key, a
    causal chunk's last), and when pixels have two widths (n not a multiple of P)."""
    from model.long.attend import Rule
    from model.long.reduce import LayerReducer

    gen = torch.Generator().manual_seed(n + step)
    rule = Rule(scaling=1.0, causal=True, window=window)
    heads = 2
    dense = torch.zeros(heads, n, n)
    red = LayerReducer(heads, n, pixels, np.zeros(n, bool))
    for q0 in range(0, n, step):
        q1 = min(n, q0 + step)
        k0, k1 = rule.keys(q0, q1, n)
        s = torch.randn(heads, q1 - q0, k1 - k0, generator=gen)
        blocked = rule.block_mask(q0, q1, k0, k1)
        if blocked is not None:
            s.masked_fill_(blocked, attend_module.BLOCKED)
        p = torch.softmax(s, -1)
        dense[:, q0:q1, k0:k1] = p
        red.add(p, s.clone(), torch.zeros(heads, q1 - q0), q0, k0, True)
    edges = bin_starts(n, red.p)
    want_sum = np.zeros((heads, red.p, red.p), np.float32)
    want_max = np.zeros_like(want_sum)
    d = dense.numpy()
    for i in range(red.p):
        for j in range(red.p):
            cell = d[:, edges[i]:edges[i + 1], edges[j]:edges[j + 1]]
            want_sum[:, i, j] = cell.sum((1, 2))
            want_max[:, i, j] = cell.max((1, 2))
    np.testing.assert_allclose(red.sum, want_sum, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(red.max, want_max)
