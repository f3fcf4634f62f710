"""Sentence embeddings of a sentence-transformers encoder, pooled here as its files say.

Shape legend: R rows (sentences, or copies of them), n positions (padded), D model width,
H heads, Dh head size.

What sentence-transformers computes for a Transformer → Pooling → (Normalize) pipeline: the
last hidden states of the text cut to `max_seq_length` pieces, pooled over the real tokens
(mean: Σ h·mask / Σ mask; cls: the first position; max: the largest value per dimension among
real tokens), then scaled to length 1 when a Normalize module follows (sentence.py reads which).
Heads are knocked out and recorded at the lab's hook names (`...hook_context`, recorder.py).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from ...checkpoint import Bundle
from ...hooks import HookFn, hooks
from .record import device_of, encode_checked, padded


def embed_limit(bundle: Bundle) -> int:
    """Pieces a line is cut to: what the model was trained for, within its position table."""
    sentence = bundle.sentence
    trained = sentence.max_seq_length if sentence is not None else None
    return min(trained or bundle.config.max_len, bundle.config.max_len)


def sentence_ids(bundle: Bundle, lines: Sequence[str]) -> tuple[torch.Tensor, torch.Tensor]:
    """(R, n) ids with the tokenizer's specials, cut as sentence-transformers cuts, and the
    (R, n) mask (1 = a real token)."""
    ids, _ = encode_checked(bundle.tokenizer, list(lines), embed_limit(bundle))
    return padded(ids, bundle.config.pad_id, device_of(bundle.model))


def pool(hidden: torch.Tensor, mask: torch.Tensor, pooling: str, normalize: bool
         ) -> torch.Tensor:
    """(R, n, D) last hidden states and (R, n) mask -> (R, D) sentence vectors."""
    m = mask.to(hidden.dtype).unsqueeze(-1)  # (R, n, 1)
    if pooling == "mean":
        out = (hidden * m).sum(1) / m.sum(1).clamp(min=1e-9)
    elif pooling == "cls":
        out = hidden[:, 0]
    elif pooling == "max":
        out = hidden.masked_fill(m == 0, torch.finfo(hidden.dtype).min).amax(1)
    else:
        raise ValueError(f"pooling {pooling!r} is not computed by the lab")
    if normalize:  # sentence-transformers' Normalize: x / max(‖x‖, 1e-12)
        out = torch.nn.functional.normalize(out, p=2, dim=1)
    return out


def checked_sentence(bundle: Bundle):
    sentence = bundle.sentence
    if bundle.config.family != "encoder" or sentence is None or sentence.pooling == "none":
        raise ValueError("sentence embeddings need a sentence-transformers encoder (a folder "
                         "with modules.json and a mean, cls or max pooling config)")
    return sentence


def embed_rows(bundle: Bundle, ids: torch.Tensor, mask: torch.Tensor,
               fns: dict[str, HookFn] | None = None, *, grad: bool = False) -> torch.Tensor:
    """(R, D) float32 pooled vectors of given rows with hooks `fns` attached; `grad` keeps the
    graph (attribution), else inference mode."""
    sentence = checked_sentence(bundle)
    mode = torch.enable_grad() if grad else torch.inference_mode()
    with mode, hooks(fns or {}):
        hidden = bundle.model(input_ids=ids, attention_mask=mask).last_hidden_state
        return pool(hidden.float(), mask, sentence.pooling, sentence.normalize)


def embed_lines(bundle: Bundle, lines: Sequence[str], fns: dict[str, HookFn] | None = None
                ) -> torch.Tensor:
    """(B, D) float32 CPU sentence vectors of the lines."""
    if not lines:
        return torch.zeros((0, bundle.config.d_model), dtype=torch.float32)
    ids, mask = sentence_ids(bundle, lines)
    return embed_rows(bundle, ids, mask, fns).cpu()
