"""What each head contributes to the token the decoder predicts at one step.

Two measures:
- direct logit attribution (pre-LN models only): the decoder's final residual stream x is a sum
  of parts (embedding, each head's output, each block's output bias, each FFN). With the final
  LayerNorm's scale frozen at its value on x, LN(x) = Σ_c γ ⊙ (c − mean c)/σ + β is linear in
  the parts, so logit_v = Σ_c [γ ⊙ (c − mean c)/σ] · w_v + β · w_v exactly. On a post-LN model
  every sublayer's LayerNorm rescales what came before, so no such sum exists.
- knock-out (every model): the token's logit with one head's context zeroed minus the logit
  without, teacher-forced on the same decoder input; one forward per `chunk` heads.

Top tokens a head promotes and suppresses: the vocabulary through the same frozen final LN and
unembedding (pre-LN), and, on every model, the tokens whose logit falls (promoted) or rises
(suppressed) most when the head is knocked out.

Written once against the backend: its `attribution` gives the step's logits and the direct
attribution (the lab's pre-LN encoder–decoder: model/backends/lab/contributions.py; Hugging Face
pre-LN decoder-only models, the final norm LayerNorm or RMSNorm: hf/contributions.py), its
`step_logits` runs the knock-out rows. Both pass the same sum-to-logit identity.

Shape legend: L layers, H heads, T decoder positions, D model size, V vocabulary.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..forced import top_tokens
from ..hooks import Head
from .ablation import all_heads, row_ablation_hooks, teacher_forced

TOP_K = 8


@dataclass
class Contributions:
    """Head contributions to one predicted token (see the module docstring)."""

    step: int  # decoder position whose output is explained
    token_id: int
    token: str
    logit: float  # the model's own logit for token_id at that step
    knockout: dict[str, np.ndarray]  # kind -> (L, H) logit change when the head is knocked out
    knockout_top: dict[Head, dict[str, list[tuple[str, float]]]]  # promotes / suppresses
    dla: dict[str, np.ndarray] | None = None  # "dec_self"/"cross" -> (L, H); pre-LN only
    other: dict[str, float] = field(default_factory=dict)  # the remaining terms of the sum
    dla_top: dict[Head, dict[str, list[tuple[str, float]]]] = field(default_factory=dict)
    tgt_tokens: list[str] = field(default_factory=list)  # decoder input pieces
    src_tokens: list[str] = field(default_factory=list)

    def dla_total(self) -> float:
        """Σ of every DLA term and the other terms: equals `logit` on a pre-LN model."""
        if self.dla is None:
            return float("nan")
        return float(sum(a.sum() for a in self.dla.values()) + sum(self.other.values()))


def head_contributions(bundle, source: str, target: str | None = None, *,
                       target_lang: str | None = None, step: int | None = None,
                       token_id: int | None = None, k: int = TOP_K,
                       chunk: int = 64, knockout: bool = True,
                       progress: Callable[[float], None] | None = None) -> Contributions:
    """Each head's effect on the token predicted at decoder position `step` of one sentence.

    target None: the model's own greedy translation. step None: the last position (the one
    that predicts </s>); token_id None: the model's argmax at that step. knockout False skips
    the sweep of heads + 1 rows (knockout and knockout_top stay empty): the direct attribution
    alone is one pass, where the sweep of a model with thousands of heads takes minutes.
    progress gets fractions 0..1 between forwards; it may raise to stop the sweep (a page's
    Cancel), which then leaves nothing behind: hooks are per forward, in context managers.
    """
    report = progress or (lambda _f: None)
    backend = teacher_forced(bundle, "head contributions")
    run = backend.attribution(source, target, target_lang, step, token_id, k)
    step, token_id, pieces = run.step, run.token_id, run.pieces
    # knock-out: row 0 untouched, row r knocks out heads[r - 1]
    heads = all_heads(bundle) if knockout else []
    rows: list[Head | None] = [None, *heads] if knockout else []
    picked: list[np.ndarray] = []
    for start in range(0, len(rows), max(1, chunk)):
        part = rows[start:start + chunk]
        inputs = {name: x.repeat(len(part), 1) for name, x in run.inputs.items()}
        picked.append(backend.step_logits(inputs, step, row_ablation_hooks(part)))  # (n, V)
        report(min(1.0, (start + len(part)) / len(rows)))
    change = np.concatenate(picked)[1:] - picked[0][:1] if picked else []  # (heads, V)
    knock = {kd: np.zeros((bundle.n_layers(kd), bundle.config.n_heads))
             for kd in bundle.kinds} if knockout else {}
    knock_top: dict[Head, dict] = {}
    for (kind, layer, h), row in zip(heads, change):
        knock[kind][layer, h] = row[token_id]
        knock_top[(kind, layer, h)] = top_tokens(-row, pieces, k)  # falls when removed
    return Contributions(step=step, token_id=token_id, token=pieces[token_id],
                         logit=float(run.logits[token_id]), knockout=knock,
                         knockout_top=knock_top, dla=run.dla, other=run.other,
                         dla_top=run.dla_top, tgt_tokens=run.tgt_tokens,
                         src_tokens=run.src_tokens)
