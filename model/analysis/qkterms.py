"""Why one query–key score is what it is: the recorded score split into terms that add up to it.

Models with added positions (the lab's sinusoidal and learned models, GPT-2, BERT). The
residual stream at the attention's input is split into parts that add up to it:
    token      the token embedding (the lab: × √D; BERT: + its token-type row)
    position   the position embedding (or sinusoidal row)
    layers     what earlier blocks wrote: the residual minus the embedding (as the flow view
               splits it); 0 at layer 0 of self-attention
    bias       constant vectors: BERT's embedding LayerNorm β
The query and key are affine in the (normalised) residual, q = A·x̃ + b, so each part p gives
A·p̃ and the bias b goes to the bias part. A LayerNorm in the way (pre-LN blocks, GPT-2's ln_1,
the lab's final encoder norm before cross-attention keys, BERT's embedding norm) is not linear;
it is linearised by freezing its scale at the value computed from the whole residual:
LN(x) = Σ_p γ ⊙ (p − mean p)/σ(x) + β, exact for this x because the parts add up to x. β joins
the bias part. Then score = s · q·k = s · Σ_{a,b} q_a·k_b (s the head's scaling), reported as
token·token, token·position, position·token, position·position, layers·embedding,
embedding·layers, layers·layers (left out when both layers parts are 0) and bias (every
product with a bias part).

Rotary models: q and k are recorded after rotation; with the rotate-half layout dimension i
pairs with i + r/2 and turns at θ_i, so score = s · Σ_i (q_i k_i + q_{i+r/2} k_{i+r/2}) splits
into one term per band of neighbouring frequencies (and 'not rotated' for dimensions past r).

T5: the content score q·k (T5 does not scale) plus the relative-position bias of the head.

Written once here (the checks) against Backend.qk_terms: the lab's decomposition is in
model/backends/lab/qkterms.py, Hugging Face's in hf/qkterms.py, the shared algebra in
model/qkparts.py.

Shape legend: D model size, Dh head size, H heads, n positions.
"""

from __future__ import annotations

from ..backends import backend_for
from ..capture import Trace


def check_address(trace: Trace, kind: str, layer: int, head: int, query: int, key: int,
           batch: int) -> None:
    if kind not in trace.scores:
        raise ValueError(f"the trace has no recorded scores for {kind!r}")
    n_l, n_b, n_h, n_q, n_k = trace.scores[kind].shape
    for name, value, top in (("layer", layer, n_l), ("batch", batch, n_b), ("head", head, n_h),
                             ("query", query, n_q), ("key", key, n_k)):
        if not 0 <= value < top:
            raise ValueError(f"{name} must be between 0 and {top - 1}")


def qk_terms(bundle, trace: Trace, kind: str, layer: int, head: int, query: int, key: int,
             batch: int = 0) -> dict[str, float]:
    """{term: value} adding up to trace.scores[kind][layer, batch, head, query, key]
    (within 1e-4); the terms depend on how the model knows positions (module docstring), and
    the backend builds them (Backend.qk_terms)."""
    check_address(trace, kind, layer, head, query, key, batch)
    return backend_for(bundle).qk_terms(trace, kind, layer, head, query, key, batch)
