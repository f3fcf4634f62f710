"""model.budget: the peak-memory estimate against measured peaks, and the admission gate.

The estimate is checked against the peak resident set size of a child process during each
capture (tests/unit/peaks.py says how and why RSS). The child runs the lab's `paper`
checkpoint (or a random model of its shape when it is not shipped) at two sizes, and three
random Hugging Face models built here with real vocabulary sizes: GPT-2 (attention only,
everything but norms, full), Llama with 8 query heads on 2 key/value heads (attention only,
full) and Marian, an encoder–decoder (attention only, full).
"""

from __future__ import annotations

import threading
import time

import pytest

from model import capture
from model.backends.hf.shapes import FORWARD_COSTS
from model.budget import MB, Dims, estimate, lines_that_fit, quad_bytes, too_large_message
from model.gate import Busy, Gate, TooLarge, Withdrawn, gate_from_env
from tests.unit.peaks import MIN_PEAK, check_estimate, run_child

CHILD = r"""
import gc, json, random, tempfile
from pathlib import Path
import torch
torch.set_num_threads(1)
import transformers as tf
from tokenizers import Tokenizer, models, pre_tokenizers
from benchmarks.common import paper_bundle
from model import capture, load_checkpoint
from model.dispatch import estimate_capture
from model.heap import return_freed_memory
from tests.unit.peaks import peak_of

return_freed_memory()  # as the server does (ui/admission.server_gate)

def measure(bundle, sources, targets, names, label):
    est = estimate_capture(bundle, sources, targets, target_lang="ko", names=names)
    def run():  # the norms are weighed on first read (LazyNorms): the estimate counts them
        trace = capture(bundle, sources, targets, target_lang="ko", names=names)
        trace.norms.values()
        return trace
    trace, peak = peak_of(run)
    print(json.dumps({"label": label, "batch": len(sources), "src": trace.src_ids.shape[1],
                      "tgt": trace.tgt_ids.shape[1], "estimate": est.bytes, "peak": peak,
                      "parts": sorted(est.parts)}), flush=True)

rnd = random.Random(0)
words = "the cat eats fish every day winter is cold a dog runs in park".split()
def text(n):
    return " ".join(rnd.choice(words) for _ in range(n))

bundle, _ = paper_bundle()
capture(bundle, ["warm up"], ["따뜻해요"], target_lang="ko")
for b, n in ((4, 250), (8, 600)):  # 600 words: cut to the model's 519 pieces
    measure(bundle, [text(n) for _ in range(b)], [text(12) for _ in range(b)], None,
            f"paper full {b}x{n}")
del bundle; gc.collect()

specials = ["<pad>", "<unk>", "<s>", "</s>"]
vocab = {w: i for i, w in enumerate(specials + words)}
def folder(model, name):
    tk = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tk.pre_tokenizer = pre_tokenizers.Whitespace()
    tok = tf.PreTrainedTokenizerFast(tokenizer_object=tk, pad_token="<pad>", unk_token="<unk>",
                                     bos_token="<s>", eos_token="</s>")
    out = Path(tempfile.mkdtemp()) / name
    model.save_pretrained(out, safe_serialization=True)
    tok.save_pretrained(out)
    return load_checkpoint(out)

ids = dict(bos_token_id=2, eos_token_id=3, pad_token_id=0)
# real vocabularies (GPT-2's 50,257, Llama's 32,000): the (B, n, V) logits are a large part
torch.manual_seed(0)
hf = folder(tf.GPT2LMHeadModel(tf.GPT2Config(vocab_size=50257, n_embd=256, n_layer=4,
                                             n_head=8, n_positions=512, **ids)), "gpt2")
capture(hf, ["the cat"])
measure(hf, [text(512)], None, ["attn"], "gpt2 attn 1x512")
measure(hf, [text(256) for _ in range(2)], None,
        ["attn", "scores", "q", "k", "v", "hidden", "logits"], "gpt2 no-norms 2x256")
measure(hf, [text(512)], None, None, "gpt2 full 1x512")
del hf; gc.collect()
torch.manual_seed(0)
hf = folder(tf.LlamaForCausalLM(tf.LlamaConfig(
    vocab_size=32000, hidden_size=256, intermediate_size=688, num_hidden_layers=4,
    num_attention_heads=8, num_key_value_heads=2, max_position_embeddings=512, **ids)), "llama")
capture(hf, ["the cat"])
measure(hf, [text(512)], None, ["attn"], "llama attn 1x512")
measure(hf, [text(512)], None, None, "llama full 1x512")
del hf; gc.collect()
torch.manual_seed(0)
hf = folder(tf.MarianMTModel(tf.MarianConfig(
    vocab_size=32000, d_model=256, encoder_layers=2, decoder_layers=2, encoder_attention_heads=8,
    decoder_attention_heads=8, encoder_ffn_dim=1024, decoder_ffn_dim=1024,
    max_position_embeddings=512, pad_token_id=0, eos_token_id=3, decoder_start_token_id=0,
    forced_eos_token_id=3)), "marian")
capture(hf, ["the cat"], ["the dog"])
for names, kind in ((["attn"], "attn"), (None, "full")):
    measure(hf, [text(300) for _ in range(2)], [text(300) for _ in range(2)], names,
            f"marian {kind} 2x300")
"""

CASES = ("paper full", "gpt2 attn", "gpt2 no-norms", "gpt2 full", "llama attn", "llama full",
         "marian attn", "marian full")


@pytest.fixture(scope="module")
def measured() -> list[dict]:
    return run_child(CHILD)


def test_estimate_within_30_percent_of_the_measured_peak(measured):
    """Attention-only, full, grouped-query and encoder–decoder captures, each within ±30 %."""
    assert sorted({r["label"].rsplit(" ", 1)[0] for r in measured}) == sorted(CASES), measured
    for row in measured:
        check_estimate(row, f"{row['label']}: B={row['batch']} S={row['src']} T={row['tgt']}")
    # the sizes span the range: the largest is cut to the models' full length
    assert max(r["src"] for r in measured if r["label"].startswith("paper")) >= 500
    assert max(r["tgt"] for r in measured if r["label"].startswith("gpt2")) == 512
    # what the estimate must count to get there: logits computed but not recorded (Marian has
    # no logits_to_keep), and none of them where the model takes logits_to_keep
    parts = {r["label"]: r["parts"] for r in measured}
    assert "logits (unrecorded)" in parts["marian attn 2x300"]
    assert not any("logits" in p for p in parts["gpt2 attn 1x512"] + parts["llama attn 1x512"])


def test_the_check_refuses_small_rows_and_large_misses():
    # the CI row that used to pass on an absolute allowance (0.66 of a 12 MB peak): too small
    with pytest.raises(AssertionError, match="too small"):
        check_estimate({"estimate": 8438784, "peak": 12873728}, "CI gpt2 2x64")
    # issue 29: a 4.9 MB estimate no longer passes for an 18 MB peak
    with pytest.raises(AssertionError):
        check_estimate({"estimate": int(4.9 * MB), "peak": 18 * MB}, "small")
    # a 1.5x or 0.6x miss fails at the smallest size kept as at a large one; 1.25x passes
    for peak in (MIN_PEAK, 100 * MB):
        for factor in (1.5, 0.6):
            with pytest.raises(AssertionError):
                check_estimate({"estimate": int(factor * peak), "peak": peak}, "miss")
        check_estimate({"estimate": int(1.25 * peak), "peak": peak}, "near")


def _dims(**kw) -> Dims:
    base = dict(batch=2, src=10, tgt=7, layers={"enc_self": 3, "dec_self": 3, "cross": 3},
                heads=4, d_head=32, d_model=128, d_ff=512, vocab=2000)
    return Dims(**{**base, **kw})


def test_quadratic_groups_by_hand():
    d = _dims()
    # enc_self 3·2·4·10·10, dec_self 3·2·4·7·7, cross 3·2·4·7·10, float32
    assert quad_bytes(d, "enc_self") == 3 * 2 * 4 * 100 * 4
    assert quad_bytes(d, "dec_self") == 3 * 2 * 4 * 49 * 4
    assert quad_bytes(d, "cross") == 3 * 2 * 4 * 70 * 4
    parts = estimate(d, {"attn", "logits"}).parts
    assert parts["attn"] == 4 * 24 * (100 + 49 + 70)
    assert parts["logits"] == 2 * 7 * 2000 * 4
    # twice the batch, twice the quadratic bytes; twice the length, four times
    assert estimate(_dims(batch=4), {"attn"}).parts["attn"] == 2 * parts["attn"]
    big = _dims(src=20, tgt=14)
    assert estimate(big, {"attn"}).parts["attn"] == 4 * parts["attn"]


def test_hf_parts_by_hand_kv_heads_and_unrecorded_logits():
    """Hugging Face k/v are stored at Hkv heads; logits the forward computes count whether or
    not they are recorded, unless it computes one row (logits_to_keep)."""
    gqa = Dims(batch=2, src=0, tgt=16, layers={"dec_self": 3}, heads=8, kv_heads=2, d_head=32,
               d_model=256, d_ff=688, vocab=32000, lm_trim=True, **FORWARD_COSTS)
    parts = estimate(gqa, {"q", "k", "v"}).parts
    assert parts["q"] == 3 * 2 * 8 * 16 * 32 * 4
    assert parts["k"] == parts["v"] == 3 * 2 * 2 * 16 * 32 * 4  # 2 kv heads, not 8
    assert "logits (unrecorded)" not in estimate(gqa, {"attn"}).parts
    seq2seq = Dims(batch=2, src=10, tgt=7, layers={"enc_self": 2, "dec_self": 2, "cross": 2},
                   heads=4, d_head=32, d_model=128, d_ff=512, vocab=8000, **FORWARD_COSTS)
    attn = estimate(seq2seq, {"attn"}).parts
    assert attn["logits (unrecorded)"] == 2 * 7 * 8000 * 4
    recorded = estimate(seq2seq, {"attn", "logits"}).parts
    assert recorded["logits"] == 2 * 7 * 8000 * 4 and "logits (unrecorded)" not in recorded
    # an encoder without a language-model head has no logits at all
    bare = Dims(batch=2, src=10, tgt=0, layers={"enc_self": 2}, heads=4, d_head=32,
                d_model=128, d_ff=512, vocab=8000, logit_rows=0, **FORWARD_COSTS)
    assert not any("logits" in k for k in estimate(bare, {"attn"}).parts)


def test_a_decoder_capture_without_logits_runs_the_lm_head_on_one_row(tmp_path):
    """logits_to_keep=1 when logits are not recorded: the LM head sees one position, and the
    attention recorded is the same as with every position's logits."""
    import numpy as np
    import torch
    import transformers as tf

    from model import capture, load_checkpoint
    from tests.hostile.families import make_tokenizer

    tok = make_tokenizer("gpt2")
    torch.manual_seed(0)
    tf.GPT2LMHeadModel(tf.GPT2Config(vocab_size=len(tok), n_embd=32, n_layer=2, n_head=4,
                                     n_positions=32, pad_token_id=tok.pad_token_id)
                       ).save_pretrained(tmp_path, safe_serialization=True)
    tok.save_pretrained(tmp_path)
    bundle = load_checkpoint(tmp_path)
    rows: list[int] = []
    handle = bundle.model.lm_head.register_forward_hook(lambda m, i, o: rows.append(o.shape[1]))
    try:
        text = ["The cat eats the fish.", "Winter is cold."]
        lean = capture(bundle, text, names=["attn"])
        full = capture(bundle, text, names=["attn", "logits"])
    finally:
        handle.remove()
    n = full.tgt_ids.shape[1]
    assert rows[-2:] == [1, n] and n > 1
    assert lean.logits is None and full.logits.shape[1] == n
    np.testing.assert_array_equal(lean.attn["dec_self"], full.attn["dec_self"])


def test_the_lab_capture_without_logits_skips_the_output_projection(bundle):
    """The lab's model: no (B, T, V) logits unless recorded; the rest of the Trace is the same
    bit for bit."""
    import numpy as np

    calls: list[tuple] = []
    real = bundle.model.project

    def project(h):
        calls.append(tuple(h.shape))
        return real(h)

    src, tgt = ["The cat eats the fish.", "Winter is cold."], ["고양이", "겨울은 추워요."]
    bundle.model.project = project
    try:
        lean = capture(bundle, src, tgt, target_lang="ko", names=["attn", "hidden"])
        assert calls == [] and lean.logits is None
        full = capture(bundle, src, tgt, target_lang="ko", names=["attn", "hidden", "logits"])
        assert len(calls) == 1 and full.logits.shape[:2] == full.tgt_ids.shape
    finally:
        del bundle.model.project
    for kind in lean.attn:
        np.testing.assert_array_equal(lean.attn[kind], full.attn[kind])
    for side in lean.hidden:
        np.testing.assert_array_equal(lean.hidden[side], full.hidden[side])


def test_recording_less_costs_less():
    d = _dims(src=500, tgt=60, batch=16)
    full = estimate(d, {"attn", "scores", "q", "k", "v", "hidden", "logits", "norms"}).bytes
    attn = estimate(d, {"attn"}).bytes
    assert attn < full / 2


def test_too_large_message_says_how_to_fit():
    d = _dims(src=519, tgt=65, batch=16)
    est = estimate(d, {"attn", "scores"})
    budget = est.bytes // 3
    fit = lines_that_fit(est, budget)
    assert 1 <= fit < 16
    assert estimate(_dims(src=519, tgt=65, batch=fit), {"attn", "scores"}).bytes <= budget
    assert estimate(_dims(src=519, tgt=65, batch=fit + 1), {"attn", "scores"}).bytes > budget
    msg = too_large_message(est, budget)
    assert f"at most {fit} of these lines" in msg and "shorter lines" in msg
    tiny = too_large_message(est, 1000)
    assert "each line alone is too long" in tiny


# ---- the gate ------------------------------------------------------------------------------


def _hold(gate: Gate, need: int, started: threading.Event, release: threading.Event,
          log: list, name: str, **kw) -> threading.Thread:
    def run():
        try:
            with gate.admit(need, **kw):
                log.append(("in", name))
                started.set()
                release.wait(10)
            log.append(("out", name))
        except Exception as exc:  # recorded for the test to look at
            log.append((type(exc).__name__, name))
            started.set()

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


def _wait_for(cond, timeout=5.0):
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.01)


def _gate_held_by_a(timeout_s: float, log: list) -> tuple[Gate, threading.Event, threading.Thread]:
    """A one-run gate (budget 100, queue 5) that thread "a" fills until release is set."""
    gate = Gate(budget=100, queue=5, timeout_s=timeout_s, runs=1, poll_s=0.01)
    release = threading.Event()
    a = _hold(gate, 100, threading.Event(), release, log, "a")
    _wait_for(lambda: gate.snapshot()["running"] == 1)
    return gate, release, a


def test_gate_admits_within_the_budget_first_come_first_served():
    gate = Gate(budget=100, queue=10, timeout_s=10, runs=8, poll_s=0.01)
    log: list = []
    release = [threading.Event() for _ in range(4)]
    started = [threading.Event() for _ in range(4)]
    threads = [_hold(gate, 60, started[0], release[0], log, "a")]
    started[0].wait(5)
    threads.append(_hold(gate, 60, started[1], release[1], log, "b"))  # does not fit: waits
    _wait_for(lambda: gate.snapshot()["waiting"] == 1)
    threads.append(_hold(gate, 10, started[2], release[2], log, "c"))  # fits, but b is first
    _wait_for(lambda: gate.snapshot()["waiting"] == 2)
    # c would fit beside a (60 + 10 <= 100) but b came first: nobody overtakes
    assert log == [("in", "a")] and gate.snapshot()["running"] == 1
    release[0].set()
    _wait_for(lambda: ("in", "c") in log and ("in", "b") in log)
    assert gate.peak_in_use <= 100
    for e in release:
        e.set()
    for t in threads:
        t.join(5)
    assert gate.snapshot() == {"running": 0, "waiting": 0, "in_use": 0, "held": 0}


def test_runs_limit_holds_even_when_memory_fits():
    gate = Gate(budget=10**9, queue=10, timeout_s=10, runs=2, poll_s=0.01)
    log: list = []
    release = threading.Event()
    threads = [_hold(gate, 1, threading.Event(), release, log, str(i)) for i in range(5)]
    _wait_for(lambda: gate.snapshot()["waiting"] == 3)
    assert gate.snapshot()["running"] == 2
    release.set()
    for t in threads:
        t.join(5)
    assert sum(1 for e in log if e[0] == "in") == 5


def test_too_large_is_refused_at_once_and_queue_overflow_is_busy():
    gate = Gate(budget=100, queue=1, timeout_s=10, runs=1, poll_s=0.01)
    with pytest.raises(TooLarge):
        with gate.admit(101):
            pass
    log: list = []
    release = threading.Event()
    a = _hold(gate, 50, threading.Event(), release, log, "a")
    _wait_for(lambda: gate.snapshot()["running"] == 1)
    b = _hold(gate, 50, threading.Event(), release, log, "b")
    _wait_for(lambda: gate.snapshot()["waiting"] == 1)
    with pytest.raises(Busy, match="every place in the queue for the model is taken"):
        with gate.admit(1):
            pass
    release.set()
    a.join(5)
    b.join(5)
    assert ("in", "b") in log


def test_a_long_wait_gives_up_busy_and_leaves_the_queue():
    gate, release, a = _gate_held_by_a(timeout_s=0.2, log=[])
    t0 = time.monotonic()
    with pytest.raises(Busy):
        with gate.admit(10):
            pass
    assert 0.15 < time.monotonic() - t0 < 2
    assert gate.snapshot()["waiting"] == 0
    release.set()
    a.join(5)


def test_a_session_that_goes_away_leaves_the_queue_and_keeps_its_place_on_rerun():
    log: list = []
    gate, release, a = _gate_held_by_a(timeout_s=10, log=log)
    seen: list[int] = []

    class Gone(Exception):
        pass

    def on_wait(ahead):  # the session is stopped (closed tab, or a rerun with new input)
        seen.append(ahead)
        raise Gone

    with pytest.raises(Gone):
        with gate.admit(10, owner="s1", on_wait=on_wait):
            pass
    assert seen == [1] and gate.snapshot()["waiting"] == 0
    b = _hold(gate, 10, threading.Event(), release, log, "b", owner="s2")
    _wait_for(lambda: gate.snapshot()["waiting"] == 1)
    # s1 comes back with its newest input at once: it is still ahead of s2
    ahead: list[int] = []
    c = _hold(gate, 10, threading.Event(), release, log, "c", owner="s1",
              on_wait=lambda k: ahead.append(k))
    _wait_for(lambda: gate.snapshot()["waiting"] == 2 and ahead)
    assert ahead[-1] == 1  # only the running one ahead
    release.set()
    for t in (a, b, c):
        t.join(5)
    assert log.index(("in", "c")) < log.index(("in", "b"))
    assert gate.snapshot() == {"running": 0, "waiting": 0, "in_use": 0, "held": 0}


def test_on_wait_true_withdraws_quietly():
    gate, release, a = _gate_held_by_a(timeout_s=10, log=[])
    with pytest.raises(Withdrawn):
        with gate.admit(10, on_wait=lambda k: True):
            raise AssertionError("the block must not run")
    release.set()
    a.join(5)
    assert gate.snapshot()["in_use"] == 0


def test_gate_from_env():
    gate = gate_from_env({"ATTN_INFLIGHT_MB": "512", "ATTN_QUEUE": "3",
                          "ATTN_QUEUE_TIMEOUT_S": "7", "ATTN_RUNS": "2"})
    assert (gate.budget, gate.queue_limit, gate.timeout_s, gate.runs) == (512 * MB, 3, 7.0, 2)
