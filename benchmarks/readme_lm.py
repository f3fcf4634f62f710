"""The README's language-model block: the shipped checkpoints/lm card's figures."""

from __future__ import annotations

import json

from benchmarks.common import ROOT


def _heads(scores: list[list[float]]) -> str:
    """'L1 H2 0.83' for the best head of an (L, H) table."""
    best = max(((v, layer, h) for layer, row in enumerate(scores) for h, v in enumerate(row)))
    return f"L{best[1]} H{best[2]} {best[0]:.2f}"


KNOCKED = (("induction", "induction heads"), ("previous_token", "previous-token heads"),
           ("control", "heads in neither circuit (control)"))


def _knocked(f: dict, value, named: bool) -> list[str]:
    """One row per knocked-out group the card has: value(group) in the second cell."""
    return [f"| … with the {what} knocked out"
            + (f" ({', '.join(f[name + '_heads'])})" if named else "") + f" | {value(name)} |"
            for name, what in KNOCKED if f.get(name + "_heads")]


def block_lm(results: dict) -> str:
    """Loss, detectors, in-context learning and its knock-out, from checkpoints/lm/card.json."""
    card = json.loads((ROOT / "checkpoints" / "lm" / "card.json").read_text(encoding="utf-8"))
    f, t = card["figures"], card["training"]
    det = f["detectors"]
    snaps = {int(k): v["icl"] for k, v in t["snapshot_figures"].items()}
    low_step = min(snaps, key=snaps.get)
    low_icl = snaps[low_step]
    rows = [
        "| figure (from `checkpoints/lm/card.json`) | value |", "|---|---|",
        f"| held-out loss / perplexity ({f['held_out_documents']} documents of 128 pieces) | "
        f"{f['held_out_loss']:.3f} nats / {f['perplexity']:.1f} |",
        f"| best induction head (lab detector) | {_heads(det['induction'])} |",
        f"| best previous-token head | {_heads(det['previous_token'])} |",
        f"| best sink head (first position or a special piece) | {_heads(det['sink'])} |",
        f"| words said twice: loss on the second copy − the first (20 random words) | "
        f"{f['repeat_gap']:+.2f} |",
        *_knocked(f, lambda name: f"{f['repeat_gap_' + name + '_knocked_out']:+.2f}", True),
        f"| in-context learning score on held-out story rows (loss at 96–127 − loss at 8–15) | "
        f"{f['icl']:+.3f}; lowest over the snapshots {low_icl:+.3f} at step {low_step:,} |",
        *_knocked(f, lambda name: f"{f['icl_' + name + '_knocked_out']:+.3f} (held-out loss "
                                  f"{f['loss_' + name + '_knocked_out']:.3f})", False),
        f"| phase change (largest rise of the best induction score) | step "
        f"{t['phase_change_step']:,} |",
        f"| training | {t['steps']:,} steps, {t['tokens'] / 1e6:.1f} M tokens, "
        f"{t['seconds'] / 60:.0f} min on one thread; legs: "
        + ", ".join(f"from step {x['from_step']:,} {x['random_share']:.0%} repeated random "
                    f"rows and {x.get('text', 'packed')} text" for x in t["schedule"]) + " |",
        f"| snapshots shipped | {len(t['snapshots'])} |",
    ]
    return "\n".join(rows)
