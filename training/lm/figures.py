"""The language model's card figures, measured on the shipped folder through the lab's own API.

    held-out loss and perplexity   next-piece loss on documents the training never drew
    repeat gap                     on 20 random words said twice: loss on the second copy
                                   minus loss on the first (only copying can lower it)
    detectors                      model.analysis.detect_heads on a repeated text
    icl                            late minus early loss on held-out documents, as in
                                   probes.py (positions 96..127 minus 8..15 at 128)
    knockout                       icl again with the induction heads knocked out (the lab's
                                   head ablation), with the previous-token heads knocked out,
                                   and with every head in neither circuit knocked out (control)

Everything goes through model.capture (logits recorded, heads ablated by its `ablate`), so
the card checks the Hugging Face path on trained weights.

Shape legend
    B documents   T pieces   V vocabulary   L layers   H heads
"""

from __future__ import annotations

import random

import numpy as np

from model.capture import Trace
from model.checkpoint import Bundle
from model.dispatch import capture

from . import probes, text

HELD_OUT_SEED = 4242  # training drew seeds 0 (rows) and 1,000 (tokenizer); validation 999
DEMO = ("Ravonel: The cat eats fish. Velkamo: I read a book. Ravonel: The cat eats fish. "
        "Velkamo: I read a book.")


def held_out_documents(bundle: Bundle, n: int = 48) -> list[str]:
    """n rows of held-out text drawn as the last leg draws its text rows (story paragraphs,
    longer than the context; packed with </s> should one fall short), from a seed training
    never used."""
    paras = text.paragraphs(HELD_OUT_SEED, "story")
    docs = []
    for _ in range(n):
        doc = next(paras)
        while len(bundle.tokenizer(doc)["input_ids"]) < bundle.config.max_len + 8:
            doc += "</s>" + next(paras)  # as training packs them: </s> between paragraphs
        docs.append(doc)
    return docs


def repeated_word_lists(bundle: Bundle, n: int = 24, words: int = 20) -> list[str]:
    """n texts "w₁ … w_k w₁ … w_k" of random whole-word pieces (▁ + letters), the text form of
    the detectors' repeated random tokens: only the first copy can tell the second."""
    tok = bundle.tokenizer
    pool = sorted(p[1:] for p in tok.get_vocab() if p.startswith("▁") and p[1:].isalpha()
                  and tok.tokenize(" " + p[1:]) == [p])
    r = random.Random(HELD_OUT_SEED)
    out = []
    for _ in range(n):
        run = " ".join(r.sample(pool, words))
        out.append(f"{run} {run}")
    return out


def repeat_gap(trace: Trace, words: int = 20) -> float:
    """Mean loss on the second copy minus mean loss on the first (pieces 2..k of each copy)."""
    losses = token_losses(trace)  # row b: <s> w₁..w_k w₁..w_k, one piece per word
    first = losses[:, 1:words].mean()  # predicting w₂..w_k of the first copy
    second = losses[:, words + 1:2 * words].mean()  # … of the second copy
    return float(second - first)


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


def measure(bundle: Bundle, threshold: float = 0.5) -> dict:
    """Every card figure (see the module docstring); about half a minute on one thread.

    Induction heads: lab induction score ≥ threshold; previous-token heads likewise; the
    control knocks out every other head instead (heads in neither circuit)."""
    from model.analysis import detect_heads

    docs = held_out_documents(bundle)
    repeats = repeated_word_lists(bundle)
    context = bundle.config.max_len
    base = losses_with(bundle, docs)
    trace = capture(bundle, [DEMO], names={"attn"})
    det = {k: v["dec_self"] for k, v in detect_heads(bundle, trace).items() if "dec_self" in v}

    def heads_over(scores: np.ndarray) -> list[tuple[int, int]]:
        return [(int(x), int(h)) for x, h in zip(*np.nonzero(scores >= threshold))]

    groups = {"induction": heads_over(det["induction"]),
              "previous_token": heads_over(det["previous_token"])}
    used = set(groups["induction"]) | set(groups["previous_token"])
    n_l, n_h = det["induction"].shape
    groups["control"] = [(x, h) for x in range(n_l) for h in range(n_h) if (x, h) not in used]
    loss = float(np.nanmean(base))
    out = {"held_out_documents": len(docs),
           "held_out_loss": round(loss, 4), "perplexity": round(float(np.exp(loss)), 2),
           "icl": round(icl(base, context), 4), "threshold": threshold,
           "repeat_gap": round(repeat_gap(capture(bundle, repeats, names={"logits"})), 4)}
    for name, heads in groups.items():
        knocked = tuple(("dec_self", x, h) for x, h in heads)
        out[f"{name}_heads"] = [f"L{x} H{h}" for x, h in heads]
        if not heads:
            out[f"icl_{name}_knocked_out"] = out[f"loss_{name}_knocked_out"] = None
            out[f"repeat_gap_{name}_knocked_out"] = None
            continue
        losses = losses_with(bundle, docs, knocked)
        out[f"icl_{name}_knocked_out"] = round(icl(losses, context), 4)
        out[f"loss_{name}_knocked_out"] = round(float(np.nanmean(losses)), 4)
        out[f"repeat_gap_{name}_knocked_out"] = round(repeat_gap(
            capture(bundle, repeats, names={"logits"}, ablate=knocked)), 4)
    out["detectors"] = {k: np.round(v, 3).tolist() for k, v in det.items()}
    return out


def snapshot_figures(bundle: Bundle, history) -> dict[str, dict]:
    """{step: {held_out_loss, icl}} on the held-out documents for every snapshot of a history
    (training.lm.history.History): the curve the training view draws over the log's."""
    from .history import snapshot_bundle

    docs = held_out_documents(bundle)
    out = {}
    for step, path in sorted(history.snapshots.items()):
        losses = losses_with(snapshot_bundle(bundle, path, step), docs)
        out[str(step)] = {"held_out_loss": round(float(np.nanmean(losses)), 4),
                          "icl": round(icl(losses, bundle.config.max_len), 4)}
    return out
