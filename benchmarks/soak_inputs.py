"""The soak's inputs: distinct texts made of corpus sentences glued to random lengths, most
classroom-sized and some drawn up to the input limits, and now and then knocked-out heads.
"""

from __future__ import annotations

import math
import random

from benchmarks.soak_common import KINDS, SoakConfig


class Inputs:
    """Distinct inputs made of corpus sentences, glued to random lengths."""

    def __init__(self, cfg: SoakConfig) -> None:
        from training import corpus

        self.cfg, self.rng = cfg, random.Random(cfg.seed)
        pairs = corpus.generate(4_000, seed=cfg.seed + 1)
        self.sentences = sorted({s for p in pairs for s in (p.en, p.ko)})
        self.seen: set[str] = set()

    def _log_uniform(self, high: int) -> int:
        return max(1, int(math.exp(self.rng.uniform(0, math.log(high + 1)))))

    def _line(self, words: int) -> str:
        out: list[str] = []
        while sum(len(s.split()) for s in out) < words:
            out.append(self.rng.choice(self.sentences))
        return " ".join(" ".join(out).split()[:words])

    def next(self) -> str:
        cfg = self.cfg
        while True:
            if self.rng.random() < cfg.stress_share:
                n_lines = self._log_uniform(cfg.max_lines)
                sizes = [self._log_uniform(cfg.max_words) for _ in range(n_lines)]
            else:
                n_lines = self.rng.randint(1, min(3, cfg.max_lines))
                sizes = [self.rng.randint(3, min(30, cfg.max_words)) for _ in range(n_lines)]
            text = "\n".join(self._line(n) for n in sizes)
            if text not in self.seen:
                self.seen.add(text)
                return text

    def long_text(self) -> str:
        """Words of LONG_MODEL's vocabulary, LONG_FROM + 1 .. long_max pieces with <s>
        (log-uniform), each text new."""
        from benchmarks.big_models import WORDS
        from model import LONG_FROM

        low, high = math.log(LONG_FROM + 1), math.log(self.cfg.long_max)
        n = int(math.exp(self.rng.uniform(low, high)))
        start = self.rng.randrange(len(WORDS))
        return " ".join(WORDS[(start + i * 7 + i // 13) % len(WORDS)] for i in range(n - 1))

    def ablation(self, n_layers: int = 3, n_heads: int = 4) -> str:
        if self.rng.random() >= self.cfg.ablate_share:
            return ""
        heads = {f"{self.rng.choice(KINDS)}:{self.rng.randrange(n_layers)}:"
                 f"{self.rng.randrange(n_heads)}" for _ in range(self.rng.randint(1, 3))}
        return ",".join(sorted(heads))
