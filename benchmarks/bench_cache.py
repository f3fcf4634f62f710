"""Issue 57: generation through the key/value cache with recording on, beside transformers' own
generate() and beside a full forward per new piece (what view=generate did before).

A random GPT-2-small-shaped model (12 layers × 12 heads, 768 wide, vocabulary 50,257) built
offline with the word-level tokenizer of benchmarks/big_models; a 512-piece prompt, 64 new
pieces, greedy, one thread. Runs are interleaved and each figure is the median of REPEAT.
The full-forward-per-piece generation is timed for FULL_STEPS pieces only (each is a forward
over 512+ positions) and compared per piece.

    python -m benchmarks bench_cache
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from pathlib import Path

from benchmarks.common import Report, run_parts

PROMPT, NEW, REPEAT, FULL_STEPS = 512, 64, 3, 8
TARGET = 1.3  # issue 57: at most 1.3x transformers' generate with its cache
LM_BUDGETS = (8, 16, 32, 64)  # checkpoints/lm holds 128 positions


def _folder(root: Path) -> Path:
    import torch
    import transformers as tf

    from benchmarks.big_models import SPECIALS, WORDS, make_tokenizer

    torch.manual_seed(0)
    model = tf.GPT2LMHeadModel(tf.GPT2Config(
        n_embd=768, n_layer=12, n_head=12, n_positions=1024, vocab_size=50257, pad_token_id=0,
        bos_token_id=2, eos_token_id=3))
    assert len(SPECIALS) + len(WORDS) < 50257
    model.save_pretrained(root / "gpt2-small", safe_serialization=True)
    make_tokenizer(None).save_pretrained(root / "gpt2-small")
    return root / "gpt2-small"


def _timed(fn) -> tuple[float, object]:
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def measure() -> tuple[list[str], dict]:
    import torch
    import transformers as tf

    from benchmarks.big_models import WORDS
    from model import generate, load_checkpoint

    torch.set_num_threads(1)
    text = " ".join(WORDS[(i * 7 + i // 3) % len(WORDS)] for i in range(PROMPT))
    with tempfile.TemporaryDirectory() as tmp:
        folder = _folder(Path(tmp))
        bundle = load_checkpoint(folder)
        twin = tf.GPT2LMHeadModel.from_pretrained(folder).eval()  # transformers' default (sdpa)
    ids = list(bundle.tokenizer(text)["input_ids"])
    assert len(ids) == PROMPT, len(ids)
    x = torch.tensor([ids])

    def theirs():
        with torch.inference_mode():
            out = twin.generate(x, attention_mask=torch.ones_like(x), max_new_tokens=NEW,
                                do_sample=False, num_beams=1)
        return [t for t in out[0, PROMPT:].tolist() if t != 3]

    def ours():
        return generate(bundle, [text], max_new=NEW, record=True)[0]

    def full_forward():
        seq = list(ids)
        with torch.inference_mode():
            for _ in range(FULL_STEPS):
                logits = bundle.model(input_ids=torch.tensor([seq]), use_cache=False,
                                      logits_to_keep=1).logits[0, -1]
                seq.append(int(logits.argmax()))
        return seq[PROMPT:]

    ours()  # warm-up: first calls allocate
    theirs()
    t_ours, t_theirs = [], []
    for _ in range(REPEAT):
        t, g = _timed(ours)
        t_ours.append(t)
        t, hf_ids = _timed(theirs)
        t_theirs.append(t)
    t_full, full_ids = _timed(full_forward)
    same = g.ids == hf_ids and full_ids == g.ids[:FULL_STEPS]
    o, h = statistics.median(t_ours), statistics.median(t_theirs)
    per_full = t_full / FULL_STEPS
    per_cached = o / max(1, len(g.steps))
    figures = {"shape": "GPT-2 small (12x12, 768, vocab 50257), random", "prompt": PROMPT,
               "new": len(g.steps), "threads": 1, "repeat": REPEAT,
               "ours_s": round(o, 3), "transformers_s": round(h, 3),
               "ours_over_transformers": round(o / h, 3),
               "full_forward_ms_per_piece": round(per_full * 1000, 1),
               "cached_ms_per_piece_prompt_included": round(per_cached * 1000, 1),
               "full_over_cached_per_piece": round(per_full / per_cached, 2),
               "same_greedy_output": same, "target": TARGET}
    lines = [
        f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}",
        f"{PROMPT}-piece prompt + {len(g.steps)} new, 1 thread, median of {REPEAT}: cached "
        f"generation with recording {o:.2f} s, transformers' generate {h:.2f} s "
        f"({o / h:.2f}x; target <= {TARGET}x), same greedy output: {same}",
        f"per new piece: full forward {per_full * 1000:.0f} ms, through the cache "
        f"{per_cached * 1000:.0f} ms, the prompt's forward included ({per_full / per_cached:.1f}x)"]
    return lines, figures


def lm_eviction(budgets: tuple[int, ...] = LM_BUDGETS, late: int = 64) -> tuple[list[str], dict]:
    """checkpoints/lm on its held-out documents (training/lm/figures.py's, cut to the
    model's 128 positions): mean next-piece loss per policy and budget, over every prediction
    and over those from position `late` on (where every budget here evicts something)."""
    import numpy as np

    from benchmarks.common import ROOT
    from model import load_checkpoint
    from model.analysis.eviction import POLICIES, full_run, least_budget, rescore
    from training.lm.figures import held_out_documents

    bundle = load_checkpoint(ROOT / "checkpoints" / "lm")
    docs = held_out_documents(bundle)
    rows_all: dict[str, list] = {p: [] for p in POLICIES}
    rows_late: dict[str, list] = {p: [] for p in POLICIES}
    full_all, full_late = [], []
    for doc in docs:
        ids = list(bundle.tokenizer(doc)["input_ids"])[: bundle.config.max_len]
        full = full_run(bundle, ids)
        full_all.append(float(full.loss.mean()))
        full_late.append(float(full.loss[late:].mean()))
        for p in POLICIES:
            every, after = [], []
            for b in budgets:
                if b < least_budget(p):
                    every.append(None)
                    after.append(None)
                    continue
                loss = rescore(bundle, full, p, b).loss  # one run, both means
                every.append(float(loss.mean()))
                after.append(float(loss[late:].mean()))
            rows_all[p].append(every)
            rows_late[p].append(after)

    def mean(rows: list) -> list:
        a = np.array([[np.nan if v is None else v for v in r] for r in rows], float)
        return [None if np.isnan(c).all() else round(float(np.nanmean(c)), 4) for c in a.T]

    figures = {"documents": len(docs), "positions": bundle.config.max_len,
               "budgets": list(budgets), "late_from": late,
               "full_all": round(float(np.mean(full_all)), 4),
               "full_late": round(float(np.mean(full_late)), 4),
               "all": {p: mean(rows_all[p]) for p in POLICIES},
               "late": {p: mean(rows_late[p]) for p in POLICIES}}
    lines = [f"checkpoints/lm, {len(docs)} held-out documents of {bundle.config.max_len} pieces: "
             f"full cache {figures['full_all']:.3f} nats (from position {late}: "
             f"{figures['full_late']:.3f})"]
    for p in POLICIES:
        cells = ", ".join(f"{b}: {a} / {z}" for b, a, z in zip(budgets, figures["all"][p],
                                                             figures["late"][p]))
        lines.append(f"  {p:8s} budget: all / late  {cells}")
    return lines, figures


PARTS = {"gpt2_small_512": measure, "lm_eviction": lm_eviction}


def main(parts: list[str] | None = None) -> Report:
    """Every part, or those named (python -m benchmarks bench_cache:lm_eviction)."""
    return run_parts("bench_cache", PARTS, parts)


def block(results: dict) -> str:
    """The README's cache block: the lm's loss per eviction policy and budget, and the cached
    generation's speed beside transformers' generate."""
    from benchmarks.readme_results import provenance

    got = results.get("bench_cache", {})
    lm, speed = got.get("lm_eviction"), got.get("gpt2_small_512")
    if not lm:
        return "No run recorded yet: `python -m benchmarks bench_cache` measures it.\n"
    names = {"window": "window", "sinks": "sinks (4) + window", "heavy": "heavy hitters (H2O)",
             "no_sink": "every position but the first"}
    rows = ["| policy | " + " | ".join(f"budget {b}" for b in lm["budgets"]) + " |",
            "|---" * (len(lm["budgets"]) + 1) + "|"]
    for p in ("window", "sinks", "heavy", "no_sink"):
        row, late = lm["all"][p], lm["late"][p]
        cells = " | ".join("–" if a is None else f"{a:.3f} ({z:.3f})" for a, z in zip(row, late))
        rows.append(f"| {names.get(p, p)} | {cells} |")
    text = ("\n".join(rows) + f"\n\nMean next-piece loss in nats of `checkpoints/lm` on its "
            f"{lm['documents']} held-out documents ({lm['positions']} pieces each), every "
            f"prediction (in brackets: from position {lm['late_from']} on); the full cache "
            f"{lm['full_all']:.3f} ({lm['full_late']:.3f}); kept keys keep their positions "
            f"({provenance(results, 'bench_cache.lm_eviction')}).\n")
    if speed:
        text += (f"\nGeneration through the cache with recording on, {speed['prompt']}-piece "
                 f"prompt and {speed['new']} new pieces on a random GPT-2-small shape at one "
                 f"thread: {speed['ours_s']:.2f} s beside transformers' generate "
                 f"{speed['transformers_s']:.2f} s ({speed['ours_over_transformers']:.2f}×, "
                 f"same greedy output: {'yes' if speed['same_greedy_output'] else 'no'}); a "
                 f"full forward per piece took {speed['full_forward_ms_per_piece']:,.0f} ms "
                 f"a piece against {speed['cached_ms_per_piece_prompt_included']:,.0f} ms "
                 f"through the cache, the prompt's forward included "
                 f"({provenance(results, 'bench_cache.gpt2_small_512')}).\n")
    return text
