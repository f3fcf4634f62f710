"""A teacher-forced batch, what each backend's `forced` builds and `forced_values` scores:
ablation, the importance scan and the knock-out of contributions are written once on it.

What a head's removal costs depends on what the model does (`measure`):
    "logp"    log-probability of each output id (the next token of the text, or each token of
              the translation / greedy output given the source)
    "hidden"  an encoder-only model (no text to predict): the relative change of each token's
              last hidden state, ‖h_after − h_before‖ / ‖h_before‖ (hidden_change)

Shape legend: B sentences, T output positions, D model size.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch


@dataclass(frozen=True)
class Forced:
    """One batch to score: model inputs, the ids read at each output position, and which
    output positions are real (B, T)."""

    inputs: dict[str, torch.Tensor]  # the backend's own model inputs, (B, n) each
    out_ids: torch.Tensor  # int64 (B, T)
    valid: torch.Tensor  # bool (B, T)
    tokens: list[list[str]]  # the pieces scored per sentence (valid positions only)
    measure: str  # "logp" or "hidden"

    def repeat(self, n: int) -> Forced:
        """The same batch (of one sentence) n times, for one ablation per row."""
        return Forced({k: v.repeat(n, 1) for k, v in self.inputs.items()},
                      self.out_ids.repeat(n, 1), self.valid.repeat(n, 1), self.tokens * n,
                      self.measure)


def hidden_change(before: torch.Tensor, after: torch.Tensor, valid: torch.Tensor
                  ) -> torch.Tensor:
    """(B, T) ‖after − before‖ / ‖before‖ per token (0 where not valid)."""
    change = (after - before).norm(dim=-1) / before.norm(dim=-1).clamp_min(1e-12)
    return change.masked_fill(~valid.cpu(), 0.0)


@dataclass
class StepAttribution:
    """What a backend's `attribution` gives head_contributions for one decoder step: the step
    and token explained, its logits, the teacher-forced input to knock heads out on
    (`inputs`, the backend's own, for `step_logits`), and the direct logit attribution
    where the model allows it (dla None otherwise)."""

    step: int
    token_id: int
    logits: np.ndarray  # float64 (V,) at the step
    pieces: list[str]  # every piece of the vocabulary, by id
    inputs: dict[str, torch.Tensor]  # one row, (1, n) each
    dla: dict[str, np.ndarray] | None = None  # kind -> (L, H)
    other: dict[str, float] = field(default_factory=dict)
    dla_top: dict = field(default_factory=dict)
    tgt_tokens: list[str] = field(default_factory=list)
    src_tokens: list[str] = field(default_factory=list)


def top_tokens(scores: np.ndarray, pieces: list[str], k: int) -> dict[str, list[tuple[str, float]]]:
    order = np.argsort(scores)
    return {"promotes": [(pieces[i], float(scores[i])) for i in order[::-1][:k]],
            "suppresses": [(pieces[i], float(scores[i])) for i in order[:k]]}
