"""The README's language-model block: the shipped checkpoints/lm card's figures."""

from __future__ import annotations

import json

from benchmarks.common import ROOT


def _heads(scores: list[list[float]]) -> str:
    """'L1 H2 0.83' for the best head of an (L, H) table."""
    best = max(((v, layer, h) for layer, row in enumerate(scores) for h, v in enumerate(row)))
    return f"L{best[1]} H{best[2]} {best[0]:.2f}"


def block_lm(results: dict) -> str:
    """Loss, detectors, in-context learning and its knock-out, from checkpoints/lm/card.json."""
    card = json.loads((ROOT / "checkpoints" / "lm" / "card.json").read_text(encoding="utf-8"))
    f, t = card["figures"], card["training"]
    det = f["detectors"]
    rows = [
        "| figure (from `checkpoints/lm/card.json`) | value |", "|---|---|",
        f"| held-out loss / perplexity ({f['held_out_documents']} documents) | "
        f"{f['held_out_loss']:.3f} nats / {f['perplexity']:.1f} |",
        f"| best induction head (lab detector) | {_heads(det['induction'])} |",
        f"| best previous-token head | {_heads(det['previous_token'])} |",
        f"| best sink head (first position or a special piece) | {_heads(det['sink'])} |",
        f"| in-context learning score (loss at 192–255 − loss at 16–31) | {f['icl']:+.3f} |",
        f"| … with {', '.join(f['induction_heads'])} knocked out | "
        f"{f['icl_induction_knocked_out']:+.3f} |",
        f"| … with {', '.join(f['control_heads'])} knocked out instead (control) | "
        f"{f['icl_control_knocked_out']:+.3f} |",
        f"| phase change (largest rise of the best induction score) | step "
        f"{t['phase_change_step']:,} |",
        f"| training | {t['steps']:,} steps, {t['tokens'] / 1e6:.1f} M tokens, "
        f"{t['seconds'] / 60:.0f} min on one thread |",
        f"| snapshots shipped | {len(t['snapshots'])} |",
    ]
    return "\n".join(rows)
