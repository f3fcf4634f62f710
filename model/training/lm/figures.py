"""The language model's card figures, measured on the shipped folder through the lab's own API.

    held-out loss and perplexity   next-piece loss on documents the training never drew
    detectors                      model.analysis.detect_heads on a repeated text
    icl                            late minus early loss on held-out documents, as in
                                   probes.py (positions 96..127 minus 8..15 at 128)
    knockout                       icl again with the induction heads knocked out (the lab's
                                   head ablation), and with as many other heads of the same
                                   layers knocked out as a control

Everything goes through model.capture (logits recorded, heads ablated by its `ablate`), so
the card checks the Hugging Face path on trained weights.

Shape legend
    B documents   T pieces   V vocabulary   L layers   H heads
"""

from __future__ import annotations

import random

import numpy as np

from ...capture import Trace
from ...checkpoint import Bundle
from ...dispatch import capture
from . import probes, text

HELD_OUT_SEED = 4242  # training drew seeds 0 (rows) and 1,000 (tokenizer); validation 999
DEMO = ("Ravonel: The cat eats fish. Velkamo: I read a book. Ravonel: The cat eats fish. "
        "Velkamo: I read a book.")


def held_out_documents(bundle: Bundle, n: int = 48) -> list[str]:
    """n documents of paragraphs, each longer than the context (cut by the capture)."""
    pieces = bundle.config.max_len + 8
    paras = text.paragraphs(HELD_OUT_SEED)
    docs = []
    for _ in range(n):
        doc = next(paras)
        while len(bundle.tokenizer(doc)["input_ids"]) < pieces:
            doc += "</s>" + next(paras)  # as training packs them: </s> between paragraphs
        docs.append(doc)
    return docs


def token_losses(trace: Trace) -> np.ndarray:
    """(B, T − 1) next-piece loss from a trace captured with logits (NaN past each row)."""
    logits = trace.logits.astype(np.float64)  # (B, T, V)
    ids = trace.tgt_ids
    logits -= logits.max(axis=-1, keepdims=True)
    logp = logits - np.log(np.exp(logits).sum(axis=-1, keepdims=True))
    nxt = ids[:, 1:]
    loss = -np.take_along_axis(logp[:, :-1], nxt[..., None], axis=-1)[..., 0]
    lengths = np.array([trace.length("tgt", b) for b in range(len(ids))])
    loss[np.arange(loss.shape[1])[None, :] >= (lengths - 1)[:, None]] = np.nan
    return loss


def icl(losses: np.ndarray, context: int) -> float:
    """probes.icl_score over full-length rows only (losses: (B, context − 1))."""
    full = losses[~np.isnan(losses[:, context - 2])]
    return probes.icl_score(full, context)


def losses_with(bundle: Bundle, docs: list[str], ablate: tuple = ()) -> np.ndarray:
    return token_losses(capture(bundle, docs, names={"logits"}, ablate=ablate))


def measure(bundle: Bundle, top: int = 2, seed: int = 0) -> dict:
    """Every card figure (see the module docstring); runs in about a minute on one thread."""
    from ...analysis import detect_heads

    docs = held_out_documents(bundle)
    context = bundle.config.max_len
    base = losses_with(bundle, docs)
    trace = capture(bundle, [DEMO], names={"attn"})
    det = {k: v["dec_self"] for k, v in detect_heads(bundle, trace).items() if "dec_self" in v}
    ind = det["induction"]
    order = np.dstack(np.unravel_index(np.argsort(-ind, axis=None), ind.shape))[0]
    heads = [(int(layer), int(head)) for layer, head in order[:top]]
    knocked = tuple(("dec_self", layer, head) for layer, head in heads)
    rng = random.Random(seed)
    others = [(layer, h) for layer in sorted({x for x, _ in heads})
              for h in range(ind.shape[1]) if (layer, h) not in heads]
    control = tuple(("dec_self", layer, head) for layer, head in rng.sample(others, len(heads)))
    ablated, ctrl = losses_with(bundle, docs, knocked), losses_with(bundle, docs, control)
    loss = float(np.nanmean(base))
    return {
        "held_out_documents": len(docs),
        "held_out_loss": round(loss, 4), "perplexity": round(float(np.exp(loss)), 2),
        "icl": round(icl(base, context), 4),
        "induction_heads": [f"L{layer} H{head}" for layer, head in heads],
        "icl_induction_knocked_out": round(icl(ablated, context), 4),
        "control_heads": [f"L{x[1]} H{x[2]}" for x in control],
        "icl_control_knocked_out": round(icl(ctrl, context), 4),
        "detectors": {k: np.round(v, 3).tolist() for k, v in det.items()},
    }
