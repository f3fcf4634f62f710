"""Logit lens: read every decoder layer's hidden state out through the output projection."""

from __future__ import annotations

import torch

from ..backends import backend_for


def piece_name(pieces: list[str], i: int) -> str:
    """The tokenizer's piece for output row i, or "[id i]" for a row it has no piece for: a
    model's output may be wider than its tokenizer (vocabulary padded to a round size, or a
    random GPT-2-small shape over a small word list), and the top pieces can fall there."""
    return pieces[i] if 0 <= i < len(pieces) else f"[id {i}]"


@torch.inference_mode()
def logit_lens(bundle, trace, b: int, k: int = 5) -> dict:
    """Top-k next pieces predicted from each decoder layer for sentence b.

    Returns {"layers": [0..L], "tokens": decoder input pieces,
             "top": [layer][position] -> [(piece, prob), …]}. Layer 0 is the embedding sum;
    pre-LN models apply their final LayerNorm first, as the real output does (Backend.unembed).
    """
    backend = backend_for(bundle)
    if not backend.caps.logit_lens or "dec" not in trace.hidden:
        raise ValueError("the logit lens needs this project's encoder–decoder and a decoder trace")
    tokens = trace.tgt_tokens[b]
    # a copy: the Trace's arrays are read-only, and torch warns on wrapping one (L+1, T, D)
    hidden = torch.tensor(trace.hidden["dec"][:, b, : len(tokens)])
    probs = torch.softmax(backend.unembed(hidden), dim=-1)  # (L+1, T, V)
    p_top, i_top = probs.topk(k, dim=-1)
    pieces = backend.vocabulary()
    top = [[[(piece_name(pieces, int(i)), float(p)) for p, i in zip(p_row, i_row, strict=True)]
            for p_row, i_row in zip(p_layer, i_layer, strict=True)]
           for p_layer, i_layer in zip(p_top, i_top, strict=True)]
    return {"layers": list(range(hidden.shape[0])), "tokens": list(tokens), "top": top}
