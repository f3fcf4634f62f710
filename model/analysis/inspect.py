"""Read one attention block's weights out of a loaded model, as numpy, for the steps view."""

from __future__ import annotations

import numpy as np

from ..backends import backend_for


def head_weights(bundle, kind: str, layer: int) -> dict[str, np.ndarray]:
    """W_Q, W_K, W_V, W_O as (D, D) in the x @ W convention, and biases b_Q … b_O as (D,)
    (Backend.head_weights; ValueError where the backend does not offer them).

    Q = X @ W_Q + b_Q, then head h is columns h·Dh … (h+1)·Dh; the block's output is
    concat(heads) @ W_O + b_O. Arrays are float32 copies: nothing points into the model.
    """
    return backend_for(bundle).head_weights(kind, layer)
