"""Activation patching (issue 24).

(a) exact patching of every head (12 × 12) of a random GPT-2-small-shaped model (768 wide,
    vocabulary 50,257) at 64 tokens, target <= 60 s on this machine;
(b) attribution patching (every head, attention output and residual position: two forwards
    and one backward) as a ratio to one plain forward of the same model and input
    (`model(input_ids)`, logits at every position as transformers computes by default),
    target <= 3x; medians of interleaved repeats;
(c) agreement of attribution with exact patching: Pearson correlation over all heads, on
    checkpoints/paper, checkpoints/seed001 and the GPT-2 shape.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from benchmarks.bench_hf import WORDS, build
from benchmarks.common import ROOT, Report, median_times

N_TOKENS = 64
EXACT_TARGET_S, ATTRIBUTION_TARGET = 60.0, 3.0
LAB_PAIR = ("The cat eats fish.", "The dog eats fish.")


def pair(n: int = N_TOKENS) -> tuple[str, str]:
    """n words of the word-level tokenizer (n tokens), and the same with word 2 changed."""
    words = [WORDS[i % len(WORDS)] for i in range(n)]
    corrupted = list(words)
    corrupted[1] = "dog" if words[1] != "dog" else "cat"
    return " ".join(words), " ".join(corrupted)


def agreement(exact, approx) -> dict:
    """Pearson correlation over every head (all kinds together) and per kind."""
    kinds = sorted(exact.heads)
    e = np.concatenate([exact.heads[k].ravel() for k in kinds])
    a = np.concatenate([approx.heads[k].ravel() for k in kinds])
    out = {"all_heads": round(float(np.corrcoef(e, a)[0, 1]), 4), "heads": int(e.size)}
    out.update({k: round(float(np.corrcoef(exact.heads[k].ravel(),
                                           approx.heads[k].ravel())[0, 1]), 4) for k in kinds})
    return out


def main() -> Report:
    from model import load_checkpoint
    from model.patching import patch

    lines, figures = [], {}
    threads = torch.get_num_threads()
    with tempfile.TemporaryDirectory() as tmp:
        bundle = load_checkpoint(build(Path(tmp)))
        clean, corrupted = pair()
        ids = torch.tensor([bundle.tokenizer(corrupted)["input_ids"]])
        assert ids.size(1) == N_TOKENS

        def plain():
            with torch.inference_mode():
                bundle.model(input_ids=ids, use_cache=False)

        def attribution():
            return patch(bundle, clean, corrupted, method="attribution")

        t_plain, t_attr = median_times([plain, attribution], repeat=5, warmup=1)
        t0 = time.perf_counter()
        exact = patch(bundle, clean, corrupted, parts=("heads",))
        t_exact = time.perf_counter() - t0
        agree = agreement(exact, attribution())
    ratio = t_attr / t_plain
    figures["gpt2_small_64"] = {
        "exact_heads_s": round(t_exact, 2), "heads": 144, "tokens": N_TOKENS,
        "exact_target_s": EXACT_TARGET_S, "plain_forward_s": round(t_plain, 4),
        "attribution_s": round(t_attr, 4), "attribution_over_forward": round(ratio, 2),
        "attribution_target": ATTRIBUTION_TARGET, "torch_threads": threads,
        "agreement": agree}
    lines += [
        f"GPT-2-small shape (random), {N_TOKENS} tokens, torch threads {threads}:",
        f"  exact, 144 heads: {t_exact:.1f} s (target <= {EXACT_TARGET_S:.0f} s: "
        f"{'ok' if t_exact <= EXACT_TARGET_S else 'SLOWER'})",
        f"  attribution (all parts) {t_attr * 1000:.0f} ms / plain forward "
        f"{t_plain * 1000:.0f} ms = {ratio:.2f}x (target <= {ATTRIBUTION_TARGET:.0f}x: "
        f"{'ok' if ratio <= ATTRIBUTION_TARGET else 'SLOWER'})",
        f"  attribution vs exact, correlation over heads: {agree['all_heads']}"]
    lab_lines, lab = lab_figures()
    figures.update(lab)
    lines += lab_lines
    lines.append("  (timings on a shared 2-core machine under other helpers' load)")
    return Report(lines, figures)


def lab_figures() -> tuple[list[str], dict]:
    """(c) on the shipped checkpoints, and where the difference travels (the README's
    "Activation patching" paragraph): the last layer's cross heads one by one and together,
    every cross head together, the largest self-attention head, the encoder's positions."""
    from model import load_checkpoint
    from model.patching import effect, patch

    lines, figures = [], {}
    for name in ("paper", "seed001"):
        folder = ROOT / "checkpoints" / name
        if not (folder / "config.json").is_file():
            lines.append(f"  checkpoints/{name}: missing, skipped")
            continue
        lab = load_checkpoint(folder)
        t0 = time.perf_counter()
        exact = patch(lab, *LAB_PAIR)
        t_exact = time.perf_counter() - t0
        approx = patch(lab, *LAB_PAIR, method="attribution")
        agree = agreement(exact, approx)
        cross = exact.heads["cross"]  # (L, H)
        last = cross.shape[0] - 1
        every = [("head", "cross", layer, h) for layer in range(cross.shape[0])
                 for h in range(cross.shape[1])]
        enc = exact.resid["enc"]  # (L+1, n): which positions carry the difference
        changed = [i for i, p in enumerate(exact.pieces["enc"])
                   if p != exact.corrupted_pieces["enc"][i]]
        figures[name] = {
            "pair": list(LAB_PAIR), "outputs": list(exact.outputs), "step": exact.step,
            "exact_all_parts_s": round(t_exact, 3), "agreement": agree,
            "cross_last_layer": last,
            "cross_last_heads": [round(float(v), 2) for v in cross[last]],
            "cross_last_together": round(effect(lab, *LAB_PAIR, [
                ("head", "cross", last, h) for h in range(cross.shape[1])]), 2),
            "cross_all_together": round(effect(lab, *LAB_PAIR, every), 2),
            "self_heads_max": round(max(float(abs(exact.heads[k]).max())
                                        for k in ("enc_self", "dec_self")), 2),
            "changed_piece": exact.pieces["enc"][changed[0]] if changed else "",
            "enc_at_changed": [round(float(v), 2) for v in enc[:, changed[0]]]
            if changed else [],
            "enc_elsewhere_max": round(float(abs(np.delete(enc, changed, axis=1)).max()), 2)}
        lines.append(f"  checkpoints/{name} {LAB_PAIR[0]!r}/{LAB_PAIR[1]!r} -> "
                     f"{exact.outputs[0]!r}/{exact.outputs[1]!r}: exact (all parts) "
                     f"{t_exact:.2f} s; attribution vs exact over heads: {agree}; "
                     f"{figures[name]}")
    return lines, figures
