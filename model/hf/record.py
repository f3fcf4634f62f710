"""One forward pass of a Hugging Face model, recorded into the lab's Trace."""

from __future__ import annotations

import inspect
from collections.abc import Collection, Iterable, Sequence
from typing import Any

import numpy as np
import torch

from ..capture import GROUPS, Trace
from ..checkpoint import Bundle
from ..decode import checked_heads
from ..hooks import Head
from .load import _POS_NAMES, HFConfig


def _encode(tok: Any, texts: Sequence[str], limit: int, target: bool = False
            ) -> tuple[list[list[int]], list[int]]:
    """Token ids with the tokenizer's own special tokens, cut to `limit`; and how many were cut."""
    key = "text_target" if target else "text"
    full = tok(**{key: list(texts)}, add_special_tokens=True)["input_ids"]
    kept = tok(**{key: list(texts)}, add_special_tokens=True, truncation=True,
               max_length=limit)["input_ids"]
    return [list(k) for k in kept], [len(f) - len(k) for f, k in zip(full, kept)]


def _padded(lists: Sequence[Sequence[int]], pad: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(B, n) ids padded on the right and the (B, n) attention mask (1 = real token)."""
    n = max((len(x) for x in lists), default=0)
    ids = torch.full((len(lists), n), pad, dtype=torch.long)
    mask = torch.zeros((len(lists), n), dtype=torch.long)
    for row, x in enumerate(lists):
        ids[row, : len(x)] = torch.tensor(x, dtype=torch.long)
        mask[row, : len(x)] = 1
    return ids, mask


def _blocked(q_valid: torch.Tensor, k_valid: torch.Tensor, causal: bool) -> np.ndarray:
    """bool (B, Q, K), True = blocked: pad keys, and future keys when causal."""
    out = ~k_valid.bool()[:, None, :].expand(-1, q_valid.size(1), -1)
    if causal:
        n = q_valid.size(1)
        out = out | torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)
    return out.numpy().copy()


def _positions(mask: torch.Tensor, offset: int) -> np.ndarray:
    """int64 (B, n): the row of pos_table each token used; -1 for padding."""
    pos = torch.arange(mask.size(1))[None, :].expand_as(mask) + offset
    return torch.where(mask.bool(), pos, torch.full_like(pos, -1)).numpy().copy()


def _pos_table(model: torch.nn.Module, d_model: int) -> tuple[np.ndarray, int]:
    """The first position embedding table in the model (encoder first) and its row offset."""
    for name, module in model.named_modules():
        weight = getattr(module, "weight", None)
        if (name.rsplit(".", 1)[-1] in _POS_NAMES and isinstance(weight, torch.Tensor)
                and weight.dim() == 2 and weight.size(1) == d_model):
            return weight.detach().float().numpy().copy(), int(getattr(module, "offset", 0))
    return np.zeros((1, d_model), np.float32), 0


def _head_masks(model: torch.nn.Module, cfg: HFConfig, heads: frozenset[Head]
                ) -> dict[str, torch.Tensor]:
    """head_mask-style arguments that knock out `heads`, if the model's forward takes them."""
    if not heads:
        return {}
    names = {"enc_self": "head_mask", "cross": "cross_attn_head_mask",
             "dec_self": "decoder_head_mask" if cfg.family == "seq2seq" else "head_mask"}
    accepted = inspect.signature(model.forward).parameters
    masks: dict[str, torch.Tensor] = {}
    for kind, layer, head in sorted(heads):
        arg = names[kind]
        if arg not in accepted:
            raise ValueError("head ablation is not supported for this model")
        n_layers = cfg.n_enc_layers if kind == "enc_self" else cfg.n_dec_layers
        masks.setdefault(arg, torch.ones(n_layers, cfg.n_heads))[layer, head] = 0.0
    return masks


def _target_lists(bundle: Bundle, src: torch.Tensor, src_mask: torch.Tensor,
                  targets: Sequence[str] | None, extra: dict[str, torch.Tensor]
                  ) -> list[list[int]]:
    """Decoder inputs [start] + pieces (eos excluded): given texts, or the model's greedy output."""
    model, tok, cfg = bundle.model, bundle.tokenizer, bundle.config
    start = cfg.decoder_start_id if cfg.decoder_start_id is not None else cfg.pad_id
    eos = tok.eos_token_id if tok.eos_token_id is not None else cfg.hf.eos_token_id
    limit = cfg.max_len - 1
    if targets is None:
        steps = max(1, min(limit, 2 * src.size(1) + 10))
        with torch.inference_mode():
            out = model.generate(input_ids=src, attention_mask=src_mask, max_new_tokens=steps,
                                 do_sample=False, num_beams=1, **extra)
        lists = []
        for row in out.tolist():
            pieces = []
            for t in row[1:]:
                if t in (eos, cfg.pad_id):
                    break
                pieces.append(t)
            lists.append([row[0], *pieces[: limit - 1]])
        return lists
    ids, _ = _encode(tok, targets, limit + 1, target=True)
    return [[start, *[t for t in x if t != eos][: limit - 1]] for x in ids]


def _stack(parts: Sequence[torch.Tensor] | None) -> np.ndarray:
    return torch.stack(list(parts)).detach().float().numpy()  # (L, B, ...) from L tensors


def capture_hf(bundle: Bundle, sources: Sequence[str], targets: Sequence[str] | None = None, *,
               target_lang: str | None = None, ablate: Iterable[Head] | str = (),
               names: Collection[str] | None = None) -> Trace:
    """One forward pass of a Hugging Face model with output_attentions and output_hidden_states.

    Fills src/tgt tokens (the model's own tokenizer, specials included), ids, masks (from the
    attention masks; decoder causal), attn, hidden, logits (where the model has an LM head),
    pos_table (the model's position embedding, or zeros (1, D) without one, e.g. T5) and
    positions (row of pos_table used, -1 for pad). `scores`, `q`, `k` and `v` are empty dicts:
    transformers does not return them. Encoder-only models put the text on the source side,
    decoder-only models on the target side. `target_lang` is ignored (a Hugging Face model
    translates in the direction it was trained for); with targets=None an encoder–decoder model
    decodes greedily with its own generate(). Ablation works only through head_mask arguments,
    which transformers 5 models no longer take: otherwise ValueError.
    """
    del target_lang
    model, tok, cfg = bundle.model, bundle.tokenizer, bundle.config
    sources = [sources] if isinstance(sources, str) else list(sources)
    groups = set(GROUPS) if names is None else set(names)
    if groups - set(GROUPS):
        raise ValueError(f"hook names {sorted(groups - set(GROUPS))} exist only in the lab's own "
                         f"model; a Hugging Face model records {GROUPS[0]}, hidden and logits")
    if targets is not None and cfg.family != "seq2seq":
        raise ValueError(f"a {cfg.family}-only model reads one text per sentence; pass "
                         "targets=None")
    heads = checked_heads(bundle, ablate)
    extra = _head_masks(model, cfg, heads)
    limit = cfg.max_len
    texts, cuts = _encode(tok, sources, limit)
    ids, mask = _padded(texts, cfg.pad_id)
    seq2seq, encoder = cfg.family == "seq2seq", cfg.family == "encoder"
    pos_table, offset = _pos_table(model, cfg.d_model)
    run = dict(output_attentions=True, output_hidden_states=True, return_dict=True, **extra)
    if seq2seq:
        tgt_lists = _target_lists(bundle, ids, mask, targets, extra)
        tgt, tgt_mask = _padded(tgt_lists, cfg.pad_id)
        with torch.inference_mode():
            out = model(input_ids=ids, attention_mask=mask, decoder_input_ids=tgt,
                        decoder_attention_mask=tgt_mask, **run)
        attn = {"enc_self": out.encoder_attentions, "dec_self": out.decoder_attentions,
                "cross": out.cross_attentions}
        hidden = {"enc": out.encoder_hidden_states, "dec": out.decoder_hidden_states}
        masks = {"enc_self": _blocked(mask, mask, False),
                 "dec_self": _blocked(tgt_mask, tgt_mask, True),
                 "cross": _blocked(tgt_mask, mask, False)}
        src_lists, src, src_mask = texts, ids, mask
    else:
        with torch.inference_mode():
            out = model(input_ids=ids, attention_mask=mask, **run)
        side, kind = ("enc", "enc_self") if encoder else ("dec", "dec_self")
        attn, hidden = {kind: out.attentions}, {side: out.hidden_states}
        masks = {kind: _blocked(mask, mask, causal=not encoder)}
        empty = torch.zeros((len(sources), 0), dtype=torch.long)
        if encoder:
            src_lists, src, src_mask, tgt_lists, tgt, tgt_mask = texts, ids, mask, [], empty, None
        else:
            src_lists, src, src_mask, tgt_lists, tgt, tgt_mask = [], empty, None, texts, ids, mask
    logits = getattr(out, "logits", None)
    positions = {}
    if src_mask is not None:
        positions["enc"] = _positions(src_mask, offset)
    if tgt_mask is not None:
        positions["dec"] = _positions(tgt_mask, offset)
    n = len(sources)
    return Trace(
        src_tokens=[tok.convert_ids_to_tokens(x) for x in src_lists] or [[] for _ in range(n)],
        tgt_tokens=[tok.convert_ids_to_tokens(x) for x in tgt_lists] or [[] for _ in range(n)],
        src_ids=src.numpy().copy(), tgt_ids=tgt.numpy().copy(), masks=masks,
        scores={}, q={}, k={}, v={},
        attn={k: _stack(a) for k, a in attn.items()} if "attn" in groups else {},
        hidden={s: _stack(h) for s, h in hidden.items()} if "hidden" in groups else {},
        pos_table=pos_table,
        logits=logits.detach().float().numpy() if logits is not None and "logits" in groups
        else None,
        pad_id=cfg.pad_id, sources=sources,
        targets=[tok.decode(t, skip_special_tokens=True) for t in tgt_lists] if seq2seq else [],
        target_langs=[None] * n, positions=positions, src_cut=cuts, ablate=heads,
    )
