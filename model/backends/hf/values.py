"""The output–value side of one head on a Hugging Face model (issue 37): its values split by
upstream component (the key-side streams of components.py, through the head's W_V and b_V),
and a write carried to the logits along the direct path.

The direct path of a pre-norm decoder-only model is the final norm, frozen at the scale of the
residual it actually reads at that position (recorded at the last block's output through the
recorder's residual points), then the unembedding; heads of other families reach the logits
only through later blocks' nonlinear reads, so they get a ValueError.

Shape legend: D model size, Dh head size, n rows, V vocabulary.
"""

from __future__ import annotations

import numpy as np
import torch

from ...capture import Trace
from ...hooks import hooks
from ...qkparts import Parts, project_parts
from .circuits import circuit_weights
from .components import streams
from .contributions import final_norm
from .recorder import residual_points


def ov_parts(backend, trace: Trace, kind: str, layer: int, head: int, keys,
             batch: int) -> Parts:
    """Backend.ov_parts for a Hugging Face model (see base.py)."""
    s = streams(backend, trace, kind, layer, batch)
    w = circuit_weights(backend.bundle, kind, layer)
    wv, bv = torch.from_numpy(w["W_V"][head]), torch.from_numpy(w["b_V"][head])
    rows = [project_parts(s.key(int(p)), lambda t: t @ wv + bv) for p in keys]
    names = list(dict.fromkeys(n for r in rows for n in r))
    zero = np.zeros(w["W_V"].shape[2])
    return {n: np.stack([r.get(n, zero) for r in rows]) for n in names}


def _final_residual(backend, trace: Trace, query: int, batch: int) -> np.ndarray:
    """(D,) the residual at `query` before the final norm (the last block's output)."""
    bundle = backend.bundle
    model = bundle.model
    if not residual_points(model, bundle.config.family):
        raise ValueError("this model's blocks are not known to the recorder")
    name = f"decoder.layers.{bundle.n_layers('dec_self') - 1}.hook_resid_post"
    got: dict[str, np.ndarray] = {}

    def keep(x: torch.Tensor, _name: str) -> None:
        got["x"] = x[0, query].detach().to("cpu", torch.float64).numpy()

    device = next(model.parameters()).device
    ids = torch.tensor(np.asarray(trace.ids("dec")[batch:batch + 1]), device=device)
    n = len(trace.tokens("tgt")[batch])  # real pieces; the rest of the row is padding
    mask = (torch.arange(ids.shape[1], device=device) < n).long()[None, :]
    with torch.inference_mode(), hooks({name: keep}):
        backend.forward(ids[:, :0], None, ids, mask)
    return got["x"]


def direct_logits(backend, trace: Trace, kind: str, layer: int, query: int, write,
                  batch: int) -> np.ndarray:
    """Backend.direct_logits for a pre-norm decoder-only Hugging Face model (see base.py)."""
    caps = backend.caps
    if caps.family != "decoder" or not caps.logit_attribution:
        raise ValueError("a head's direct effect on the logits is computed for pre-norm "
                         "decoder-only models (and this project's own decoders)")
    model = backend.bundle.model
    if getattr(backend.bundle.config.hf, "final_logit_softcapping", None):
        raise ValueError("the final logits are softcapped, so they are not a sum of parts")
    x = _final_residual(backend, trace, query, batch)
    norm = final_norm(model)
    gamma = norm.weight.detach().double().cpu().numpy()
    eps = float(getattr(norm, "eps", None) or getattr(norm, "variance_epsilon", None) or 1e-6)
    rows = np.atleast_2d(np.asarray(write, np.float64))  # (n, D)
    if isinstance(norm, torch.nn.LayerNorm):  # centred, scaled by the residual's σ
        moved = (rows - rows.mean(-1, keepdims=True)) * gamma / np.sqrt(x.var() + eps)
    else:  # RMSNorm (Gemma's scale is 1 + γ)
        scale = 1.0 + gamma if type(norm).__name__.startswith("Gemma") else gamma
        moved = rows * scale / np.sqrt((x * x).mean() + eps)
    w_u = model.get_output_embeddings().weight.detach().double().cpu().numpy()  # (V, D)
    out = moved @ w_u.T  # (n, V)
    return out if np.ndim(write) == 2 else out[0]
