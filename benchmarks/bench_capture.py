"""capture() cost against the plain forward pass (issues 3 and 26).

native: the lab's own model (checkpoints/paper), tokenize + forward against capture().
gpt2, llama: random-weight Hugging Face folders of real shapes, at 512 tokens, one torch thread
    (and one BLAS thread): GPT-2 small (12 layers × 12 heads, 768 wide, vocabulary 50,257) and
    an 8-layer Llama with 8 query heads on 2 key/value heads (512 wide, vocabulary 32,000).
    Ratios are to transformers' own sdpa forward of the same folder (tokenize + forward,
    use_cache=False, every position's logits, as a user calling the model gets them), medians
    of interleaved rounds: a full capture (q/k/v, scores, attention, hidden, logits, norms) and
    an attention-only one (names=["attn"]). TransformerLens beside them: bench_tl.py
    (make bench-tl, its own venv).
memory: a fresh process per shape measures the capture's peak RSS above its start (VmHWM, as
    tests/unit/peaks.py) against model.dispatch.estimate_capture, attention-only and full.
    (capture_memory.py; the shapes and their folders are in capture_shapes.py.)
"""

from __future__ import annotations

import os
import random
import tempfile
from collections.abc import Callable
from pathlib import Path

import torch

from benchmarks.bench_hf import text
from benchmarks.capture_memory import memory
from benchmarks.capture_shapes import N_TOKENS, SHAPES, build
from benchmarks.common import Report, median_times, paper_bundle, run_parts
from model import capture
from model.backends.lab.decode import source_batch

REPEAT = 5
FULL_TARGET, ATTN_TARGET = 1.2, 1.0  # issue 26: ratios to the sdpa forward


def _inputs(bundle, n_sent: int, n_tok: int):
    """n_sent synthetic sentences of about n_tok source pieces and their target texts."""
    words = ["the", "big", "dog", "eats", "fish", "in", "park", "today", "friend", "reads"]
    rng = random.Random(0)
    tok = bundle.tokenizer
    sources, targets = [], []
    for _ in range(n_sent):
        text = "The"
        while len(tok.encode(text)) < n_tok - 2:
            text += " " + rng.choice(words)
        sources.append(text)
        targets.append("겨울은 추워요. " * max(1, n_tok // 8))
    return sources, targets


def native(threads: int = 1) -> tuple[list[str], dict]:
    """The lab's model: 2 × 32 and 1 × 512 pieces, full, attention-only and logits-only
    capture, at `threads` torch (and BLAS) threads."""
    from threadpoolctl import threadpool_limits

    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        with threadpool_limits(limits=threads):
            return _native()
    finally:
        torch.set_num_threads(before)


def _native() -> tuple[list[str], dict]:
    bundle, label = paper_bundle()
    lines = [f"model: {label}, torch threads: {torch.get_num_threads()}"]
    figures: dict = {"model": label, "sizes": {}}
    for n_sent, n_tok in ((2, 32), (1, 512)):
        sources, targets = _inputs(bundle, n_sent, n_tok)
        langs = ["ko"] * n_sent

        def batch(sources=sources, targets=targets, langs=langs):
            tok, limit = bundle.tokenizer, bundle.config.max_len - 1
            src, _, _ = source_batch(bundle, sources, langs)
            tgt = torch.from_numpy(tok.pad([tok.target_ids(t, limit)[0] for t in targets]))
            return src, tgt

        src, tgt = batch()

        def plain(batch=batch):
            # what a user does without capture: text -> ids -> one forward pass
            src, tgt = batch()
            with torch.inference_mode():
                bundle.model(src, tgt)

        def full(sources=sources, targets=targets):
            capture(bundle, sources, targets, target_lang="ko")

        def attn_only(sources=sources, targets=targets):
            capture(bundle, sources, targets, target_lang="ko", names=["attn"])

        def logits_only(sources=sources, targets=targets):
            capture(bundle, sources, targets, target_lang="ko", names=["logits"])

        repeat = 9 if n_tok <= 64 else 5
        t_plain, t_full, t_attn, t_logits = median_times([plain, full, attn_only, logits_only],
                                                          repeat)
        size = f"{n_sent}x{src.size(1)}/{tgt.size(1)}"
        figures["sizes"][size] = {"plain_ms": round(t_plain * 1e3, 1),
                                  "full_ms": round(t_full * 1e3, 1),
                                  "attn_ms": round(t_attn * 1e3, 1),
                                  "full_over_plain": round(t_full / t_plain, 3),
                                  "attn_over_plain": round(t_attn / t_plain, 3),
                                  "logits_ms": round(t_logits * 1e3, 1),
                                  "full_over_logits": round(t_full / t_logits, 3)}
        lines.append(f"{n_sent} x {src.size(1)} src / {tgt.size(1)} tgt pieces: tokenize+forward "
                     f"{t_plain * 1e3:.1f} ms, full capture {t_full * 1e3:.1f} ms "
                     f"({t_full / t_plain:.2f}x, target <= 1.3x), attention-only "
                     f"{t_attn * 1e3:.1f} ms ({t_attn / t_plain:.2f}x, target <= 1.1x); full / "
                     f"logits-only {t_full / t_logits:.2f}x (target <= 1.3x)")
    return lines, figures


# ---- Hugging Face shapes (capture_shapes.py builds their folders) --------------------------


def sdpa_forward(folder: Path, tokenizer, line: str) -> Callable[[], object]:
    """The baseline: transformers' own sdpa forward of the folder's model over line."""
    from transformers import AutoModelForCausalLM

    sdpa = AutoModelForCausalLM.from_pretrained(folder, attn_implementation="sdpa").eval()

    def plain() -> None:
        ids = torch.tensor([tokenizer(line)["input_ids"]])
        with torch.inference_mode():
            sdpa(input_ids=ids, attention_mask=torch.ones_like(ids), use_cache=False)

    return plain


def hf_shape(shape: str) -> tuple[list[str], dict]:
    """One shape: the sdpa forward, full and attention-only capture."""
    from threadpoolctl import threadpool_limits

    from model import load_checkpoint

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with tempfile.TemporaryDirectory() as tmp, threadpool_limits(limits=1):
            folder = build(shape, Path(tmp) / shape)
            bundle = load_checkpoint(folder)
            line = text()
            plain = sdpa_forward(folder, bundle.tokenizer, line)
            fns = [plain, lambda: capture(bundle, [line]),
                   lambda: capture(bundle, [line], names=["attn"])]
            times = median_times(fns, repeat=REPEAT, warmup=1)
            n = len(capture(bundle, [line], names=["attn"]).tgt_tokens[0])
    finally:
        torch.set_num_threads(threads)
    t_plain, t_full, t_attn = times[:3]
    figures = {"shape": SHAPES[shape], "tokens": n, "repeat": REPEAT, "torch_threads": 1,
               "sdpa_ms": round(t_plain * 1e3, 1), "full_ms": round(t_full * 1e3, 1),
               "attn_ms": round(t_attn * 1e3, 1),
               "full_over_sdpa": round(t_full / t_plain, 3),
               "attn_over_sdpa": round(t_attn / t_plain, 3)}
    lines = [f"{SHAPES[shape]}; {n} tokens, 1 thread, median of {REPEAT} interleaved rounds",
             f"    transformers sdpa forward {t_plain * 1e3:.0f} ms; full capture "
             f"{t_full * 1e3:.0f} ms = {t_full / t_plain:.2f}x (target <= {FULL_TARGET}x); "
             f"attention only {t_attn * 1e3:.0f} ms = {t_attn / t_plain:.2f}x "
             f"(target <= {ATTN_TARGET}x)"]
    return lines, figures


PARTS = {"native": native, "native_2threads": lambda: native(2), "gpt2": lambda: hf_shape("gpt2"),
         "llama": lambda: hf_shape("llama"), "memory": memory}


def main(parts: list[str] | None = None) -> Report:
    """Every part, or those named (python -m benchmarks bench_capture:gpt2,llama)."""
    report = run_parts("bench_capture", PARTS, parts, Report([
        f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the start "
        "(timings are ratios in one run)"]))
    report.lines += ["README rows:", *readme_rows(report.figures)]
    return report


def readme_rows(section: dict) -> list[str]:
    """The README's rows for the Hugging Face capture cost, from this module's results."""
    from benchmarks.readme_results import flag

    rows = []
    for shape in SHAPES:
        if shape not in section:
            continue
        s = section[shape]
        rows.append(f"| capture cost, {s['shape']}, {s['tokens']} tokens, 1 thread | full "
                    f"capture {s['full_over_sdpa']:.2f}x ({flag(s['full_over_sdpa'], FULL_TARGET)}"
                    f"), attention only {s['attn_over_sdpa']:.2f}x "
                    f"({flag(s['attn_over_sdpa'], ATTN_TARGET)}) transformers' sdpa forward "
                    f"({s['sdpa_ms']:.0f} "
                    f"ms; median of {s['repeat']}) | ≤ {FULL_TARGET}x, ≤ {ATTN_TARGET}x |")
    mem = section.get("memory", {})
    if mem:
        # within ±30 %: an estimate / peak ratio from 0.7 to 1.3
        cells = "; ".join(f"{shape} {cap} {r['estimate_mib']:.0f} / {r['peak_mib']:.0f} MiB "
                          f"({r['ratio']:.2f}, "
                          f"{'within it' if 0.7 <= r['ratio'] <= 1.3 else 'OVER it'})"
                          for shape in SHAPES if shape in mem
                          for cap, r in mem[shape].items())
        rows.append(f"| capture memory estimate / measured peak, {N_TOKENS} tokens | {cells} | "
                    "within ±30 % |")
    return rows
