"""capture() overhead against the plain forward pass (issue 3)."""

from __future__ import annotations

import random

import torch

from benchmarks.common import median_times, paper_bundle
from model import capture
from model.decode import source_batch


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


def main() -> list[str]:
    torch.set_num_threads(max(1, torch.get_num_threads()))
    bundle, label = paper_bundle()
    lines = [f"model: {label}, torch threads: {torch.get_num_threads()}"]
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

        repeat = 9 if n_tok <= 64 else 5
        t_plain, t_full, t_attn = median_times([plain, full, attn_only], repeat)
        lines.append(f"{n_sent} x {src.size(1)} src / {tgt.size(1)} tgt pieces: tokenize+forward "
                     f"{t_plain * 1e3:.1f} ms, full capture {t_full * 1e3:.1f} ms "
                     f"({t_full / t_plain:.2f}x, target <= 1.3x), attention-only "
                     f"{t_attn * 1e3:.1f} ms ({t_attn / t_plain:.2f}x, target <= 1.1x)")
    return lines
