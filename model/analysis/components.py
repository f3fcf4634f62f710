"""Why a head attends, component by component (issue 37): one recorded score split over
(query component, key component) pairs.

The residual stream at the query and at the key is a sum of component writes: the token
embedding, the positional term (models with added positions), each earlier head's output
("L{l}H{h}", "L{l}H{h} cross"), each earlier MLP ("MLP {l}") and constants ("bias": output
biases, norms' β, the head's own b_Q / b_K). With every norm frozen at its actual scale the
head's query and key are sums of one vector per component (rotary models rotate each part by
its own position), so the score s·q·k (s the head's scaling) is a bilinear sum:

    terms[i, j] = s · q_i · k_j        over query_parts × key_parts ("bias" last in both)
    bias        = s · q_bias · k_bias  (what involves no component; its cell in terms is 0),
                  plus T5's relative position bias of the (query, key) pair
    terms.sum() + bias == score        (the recorded score, within 1e-4)

The backend builds the parts (Backend.qk_parts: model/backends/*/components.py); this module
checks the address and assembles the matrix.

Shape legend: n_q / n_k query / key components.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..backends import backend_for
from ..capture import Trace
from .qkterms import check_address


@dataclass(frozen=True)
class QKComponents:
    """One score split over (query component, key component) pairs."""

    query_parts: list[str]  # component names on the query side, "bias" last
    key_parts: list[str]  # component names on the key side, "bias" last
    terms: np.ndarray  # float64 (n_q, n_k): s · q_i · k_j; the (bias, bias) cell is 0
    bias: float  # s · q_bias · k_bias (+ T5's position bias): what involves no component
    score: float  # trace.scores[kind][layer, batch, head, query, key]

    def top(self, n: int = 5) -> list[tuple[str, str, float]]:
        """The n largest terms by size: (query part, key part, value)."""
        flat = np.argsort(-np.abs(self.terms), axis=None)[:n]
        rows, cols = np.unravel_index(flat, self.terms.shape)
        return [(self.query_parts[i], self.key_parts[j], float(self.terms[i, j]))
                for i, j in zip(rows, cols, strict=True)]


def _ordered(parts: dict) -> list[str]:
    return [p for p in parts if p != "bias"] + ["bias"]


def qk_components(bundle, trace: Trace, kind: str, layer: int, head: int, query: int,
                  key: int, batch: int = 0) -> QKComponents:
    """QKComponents of trace.scores[kind][layer, batch, head, query, key] (module docstring);
    ValueError where the backend cannot split this model's stream."""
    check_address(trace, kind, layer, head, query, key, batch)
    q, k, scale, constant = backend_for(bundle).qk_parts(trace, kind, layer, head, query, key,
                                                         batch)
    q.setdefault("bias", np.zeros_like(next(iter(q.values()))))
    k.setdefault("bias", np.zeros_like(next(iter(k.values()))))
    q_names, k_names = _ordered(q), _ordered(k)
    qm = np.stack([np.asarray(q[n], np.float64) for n in q_names])  # (n_q, Dh)
    km = np.stack([np.asarray(k[n], np.float64) for n in k_names])  # (n_k, Dh)
    terms = scale * qm @ km.T
    bias = float(terms[-1, -1]) + float(constant)
    terms[-1, -1] = 0.0
    score = float(trace.scores[kind][layer, batch, head, query, key])
    return QKComponents(q_names, k_names, terms, bias, score)
