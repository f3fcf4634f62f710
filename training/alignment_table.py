"""Weights vs weighted norms: which scores gold word alignments better, per cross-attention layer?

python -m training.alignment_table checkpoints/paper checkpoints/seed001

Prints a Markdown table, one row per checkpoint and decoder layer: the layer's best head by
attention weight α and by ‖α·f(x)‖ (Kobayashi et al. 2020), each with its share of gold-aligned
target words whose argmax lands on a gold source word. The per-head tables come from the card
(metrics.alignment_per_head, metrics.alignment_norms_per_head, written by model.evaluate) when
it has both; otherwise, or with --recompute, they are measured here on the card's test split,
teacher-forced on the reference, both directions (no translation is run).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from model.analysis.alignment import alignment_agreement
from model.checkpoint import Bundle
from model.dispatch import capture, load_checkpoint

from . import corpus


def alignment_tables(bundle: Bundle, pairs: Sequence[corpus.Pair], batch: int = 64
                     ) -> tuple[np.ndarray, np.ndarray]:
    """(L, H) agreement shares for α and for ‖αf(x)‖ over both directions of `pairs`."""
    total, n = None, 0
    for lang, src_of, tgt_of in (("ko", "en", "ko"), ("en", "ko", "en")):
        for start in range(0, len(pairs), batch):
            chunk = pairs[start:start + batch]
            tr = capture(bundle, [getattr(p, src_of) for p in chunk],
                         [getattr(p, tgt_of) for p in chunk], target_lang=lang,
                         names=["attn", "norms"])
            gold, is_en = [p.align for p in chunk], [src_of == "en"] * len(chunk)
            part = np.stack([alignment_agreement(tr, gold, is_en),
                             alignment_agreement(tr, gold, is_en, tr.norms["cross"])])
            total = part * len(chunk) if total is None else total + part * len(chunk)
            n += len(chunk)
    tables = total / max(n, 1)
    return tables[0], tables[1]


def card_tables(card: dict) -> tuple[np.ndarray, np.ndarray] | None:
    """The two (L, H) tables in [0, 1] from a card's metrics, or None if it lacks either."""
    metrics = card.get("metrics", {}) if isinstance(card, dict) else {}
    alpha, norms = metrics.get("alignment_per_head"), metrics.get("alignment_norms_per_head")
    if alpha is None or norms is None:
        return None
    return np.asarray(alpha, float) / 100, np.asarray(norms, float) / 100


def layer_rows(name: str, alpha: np.ndarray, norms: np.ndarray) -> list[str]:
    """Markdown rows: per layer, best head by α and by ‖αf(x)‖ with their agreement."""
    rows = []
    for layer in range(alpha.shape[0]):
        ha, hn = int(alpha[layer].argmax()), int(norms[layer].argmax())
        rows.append(f"| `{name}` | {layer} | head {ha}: {100 * alpha[layer, ha]:.1f} % "
                    f"| head {hn}: {100 * norms[layer, hn]:.1f} % "
                    f"| {100 * (norms[layer, hn] - alpha[layer, ha]):+.1f} "
                    f"| {100 * alpha[layer].mean():.1f} % → {100 * norms[layer].mean():.1f} % |")
    return rows


HEADER = ("| checkpoint | layer | best head by weight α | best head by ‖αf(x)‖ "
          "| difference (points) | mean over heads, α → ‖αf(x)‖ |\n"
          "|---|---|---|---|---|---|")


def main(argv: Sequence[str] | None = None) -> str:
    ap = argparse.ArgumentParser(prog="python -m training.alignment_table",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("checkpoints", nargs="+")
    ap.add_argument("--recompute", action="store_true",
                    help="measure on the test split even when the card has both tables")
    ap.add_argument("--n-test", type=int, default=None,
                    help="test pairs per direction when measuring (default: the card's)")
    args = ap.parse_args(argv)
    lines = [HEADER]
    for folder in args.checkpoints:
        card_path = Path(folder) / "card.json"
        card = json.loads(card_path.read_text(encoding="utf-8")) if card_path.is_file() else {}
        tables = None if args.recompute else card_tables(card)
        source = "card"
        if tables is None:
            bundle = load_checkpoint(folder)
            pairs = corpus.splits(seed=card.get("corpus_seed", 0),
                                  n_train=card.get("train_pairs_requested", 200_000),
                                  n_val=card.get("val_pairs_requested", 1000),
                                  n_test=args.n_test or card.get("test_pairs_per_direction",
                                                                 2000))["test"]
            tables = alignment_tables(bundle, pairs)
            source = f"measured on {len(pairs)} test pairs per direction"
        lines += layer_rows(Path(folder).name, *tables)
        print(f"{Path(folder).name}: {source}", flush=True)
    text = "\n".join(lines)
    print(text)
    return text


if __name__ == "__main__":
    main()
