"""The Setup of a clean/corrupted pair for a Hugging Face model the recorder serves.

Heads are patched at the recorder's `hook_context` (query heads: under grouped-query attention
each query head is patched alone); the residual stream at the block hooks that
`recorder.residual_points` installs. What is measured:
    decoder-only     logits of the next token after the typed text (last position)
    encoder–decoder  logits at decoder step `step` of the clean target, teacher-forced
    encoder-only     the mean of the last hidden state over the positions (the folder loads
                     without an LM head), read along the clean − corrupted direction; on a
                     sentence-embedding model (Bundle.sentence) the sentence embedding as it
                     pools it, read as its cosine to the clean line's
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence

import torch

from ...batch import Batch
from ...hooks import HookFn
from ...pairs import (
    Setup,
    check_same_length,
    checked_step,
    first_difference,
    nothing_differs,
    pair_batch,
)
from .embed import pool
from .forced import greedy
from .pieces import piece_names
from .record import device_of, encode_checked, target_lists
from .recorder import residual_points, sites


def hf_setup(bundle, clean: str, corrupted: str, *, target: str | None, step: int | None,
             fns: dict[str, HookFn], encoded: Batch | None = None) -> Setup:
    """Tokenise (or read `encoded`, the pair's Batch), check and decide where the metric is
    read; nothing patched yet."""
    model, tok, cfg = bundle.model, bundle.tokenizer, bundle.config
    family = cfg.family
    found = sites(model, family)
    if found is None:
        raise ValueError("patching needs the model's attention to run through the lab's "
                         "recorder (transformers' AttentionInterface); this model does not")
    sides = residual_points(model, family)
    if target is not None and family != "seq2seq":
        raise ValueError("target= is for encoder–decoder models (the text to teacher-force)")
    given = pair_batch(encoded, clean, corrupted)
    (ids_c, ids_r) = ((list(x) for x in given.src_lists) if given is not None
                      else encode_checked(tok, [clean, corrupted], cfg.max_len)[0])
    pieces = tok.convert_ids_to_tokens
    check_same_length(ids_c, ids_r, pieces, "sentences")
    if ids_c == ids_r:
        raise nothing_differs(pieces(ids_c))
    device = device_of(model)
    outputs, chosen, position = ("", ""), None, -1
    shown = {"dec" if family == "decoder" else "enc": pieces(ids_c)}
    shown_r = {"dec" if family == "decoder" else "enc": pieces(ids_r)}
    lengths = {side: len(ids_c) for side in shown}
    dec: list[int] = []
    if family == "seq2seq":  # a decoder-only model's output is its next token (patch())
        done = greedy(bundle, [clean, corrupted], fns, ids=[ids_c, ids_r])
        outputs = (done[0].text, done[1].text)
    if family == "seq2seq":
        start = cfg.decoder_start_id if cfg.decoder_start_id is not None else cfg.pad_id
        if target is None:
            body = list(done[0].ids)
        else:
            src = torch.tensor([ids_c], device=device)
            body = target_lists(bundle, src, torch.ones_like(src), [target])[0][1:]
        body = body[: cfg.max_len - 2]
        chosen = checked_step(step, first_difference(done[0].ids, done[1].ids), len(body))
        dec = [start, *body][: chosen + 1]
        position = chosen
        lengths["dec"] = len(dec)
        shown["dec"] = shown_r["dec"] = pieces(dec)
    elif family == "decoder":
        position = len(ids_c) - 1
    keep_one = "logits_to_keep" in inspect.signature(model.forward).parameters
    sentence = bundle.sentence if family == "encoder" else None
    pooled = sentence is not None and sentence.pooling in ("mean", "cls", "max")

    def run(which: Sequence[str], grad: bool) -> torch.Tensor:
        """(R, V) logits at the metric's position, or (R, D) the mean last hidden state (the
        sentence embedding on a sentence-embedding model)."""
        rows = len(which)
        ids = torch.tensor([ids_c if w == "clean" else ids_r for w in which], device=device)
        args: dict = dict(input_ids=ids, attention_mask=torch.ones_like(ids), return_dict=True)
        if family != "encoder":
            args["use_cache"] = False
        if family == "seq2seq":
            args["decoder_input_ids"] = torch.tensor([dec], device=device).repeat(rows, 1)
        if family == "decoder" and keep_one:
            args["logits_to_keep"] = 1  # the unembedding of one position, not of all
        with torch.enable_grad() if grad else torch.no_grad():
            out = model(**args)
        if pooled:  # every row is one line, unpadded: its mask is all ones
            hidden = out.last_hidden_state.float()
            return pool(hidden, torch.ones(hidden.shape[:2], device=hidden.device),
                        sentence.pooling, sentence.normalize)
        if family == "encoder":
            return out.last_hidden_state.mean(dim=1)
        return out.logits[:, -1]  # the metric reads it in float64

    never = tuple(i for i in (cfg.pad_id,) if i is not None and family == "seq2seq")
    return Setup(run=run, kinds=dict(found.layers), sides=dict(sides or {}), lengths=lengths,
                 n_heads=found.n_heads, clean_ids=list(ids_c), corrupted_ids=list(ids_r),
                 position=position, pieces=shown, corrupted_pieces=shown_r, outputs=outputs,
                 step=chosen, lm=family != "encoder", cosine=pooled,
                 id_to_piece=lambda i: piece_names(tok, [i])[0],
                 token_id=lambda s: _token_id(tok, s), never=never,
                 prefix=family != "seq2seq" and len(sides or {}) == 1)


def _token_id(tok, text: str) -> int:
    """A token of the vocabulary ('Ġcat') or a text that is one token (' cat') -> its id."""
    vocab = tok.get_vocab()
    if text in vocab:
        return int(vocab[text])
    ids = tok(text, add_special_tokens=False)["input_ids"]
    if len(ids) != 1:
        shown = " ".join(tok.convert_ids_to_tokens(ids))
        raise ValueError(f"{text!r} is {len(ids)} tokens ({shown}); answer and wrong must be "
                         "one token each")
    return int(ids[0])
