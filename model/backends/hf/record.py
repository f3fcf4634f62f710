"""One forward pass of a Hugging Face model, recorded into the lab's Trace.

Attention is recorded by the lab's attention function (recorder.py) through the same hook names
and per-group slabs as the lab's own model: each layer's tensor is copied (from the GPU, from
bf16) into a float32 CPU slab while the forward runs, so the device holds at most one layer's
quadratic tensors beyond the model. Models that do not route attention through transformers'
AttentionInterface fall back to `output_attentions` (attention only, no ablation).
"""

from __future__ import annotations

import inspect
from collections.abc import Collection, Iterable, Sequence
from typing import Any

import numpy as np
import torch

from ...capture import GROUPS, Trace
from ...checkpoint import Bundle
from ...decode import checked_heads
from ...hooks import Head, ablation_hooks, buffers, hooks
from ...masks import trace_masks
from ...slabs import ATTN_HOOKS, Slabs
from .load import POS_NAMES
from .positions import rotary_frequencies
from .projections import hf_norms
from .recorder import sites, watch_masks


def encode_ids(tok: Any, texts: Sequence[str], limit: int, target: bool = False
               ) -> tuple[list[list[int]], list[int]]:
    """Token ids with the tokenizer's own special tokens, cut to `limit`; and how many were cut.
    Each text is tokenized once: a row over the limit loses body tokens from the tokenizer's
    truncation side while its leading and trailing special tokens stay, as transformers'
    own truncation does (a row whose specials it cannot tell apart is tokenized again, cut
    by transformers)."""
    key = "text_target" if target else "text"
    full = tok(**{key: list(texts)}, add_special_tokens=True, return_special_tokens_mask=True)
    kept, cuts, again = [], [], []
    for i, (ids, special) in enumerate(zip(full["input_ids"], full["special_tokens_mask"])):
        row = cut_row(list(ids), list(special), limit, tok.num_special_tokens_to_add(),
                      getattr(tok, "truncation_side", "right"))
        if row is None:
            again.append(i)
        kept.append(row if row is not None else list(ids))
        cuts.append(len(ids) - len(kept[-1]))
    if again:
        redone = tok(**{key: [texts[i] for i in again]}, add_special_tokens=True,
                     truncation=True, max_length=limit)["input_ids"]
        for i, row in zip(again, redone, strict=True):
            cuts[i] = len(kept[i]) - len(row)
            kept[i] = list(row)
    return kept, cuts


def cut_row(ids: list[int], special: list[int], limit: int, n_special: int,
            side: str = "right") -> list[int] | None:
    """ids cut to `limit` by dropping body tokens from `side`, the special tokens that open
    and close the row kept; None when the row's edges do not hold exactly the n_special
    tokens the tokenizer adds (a typed special token at an edge: transformers decides)."""
    over = len(ids) - limit
    if over <= 0:
        return ids
    lead = next((i for i, s in enumerate(special) if not s), len(ids))
    trail = next((i for i, s in enumerate(reversed(special)) if not s), len(ids))
    if lead + trail != n_special or over > len(ids) - n_special:
        return None
    body = ids[lead:len(ids) - trail]
    body = body[:len(body) - over] if side == "right" else body[over:]
    return ids[:lead] + body + ids[len(ids) - trail:]


def encode_checked(tok: Any, texts: Sequence[str], limit: int
                   ) -> tuple[list[list[int]], list[int]]:
    """encode_ids, refusing any text that the tokenizer turns into no tokens at all (a model
    cannot run on an empty row: transformers fails with 'cannot reshape tensor of 0 elements')."""
    ids, cuts = encode_ids(tok, texts, limit)
    for i, row in enumerate(ids):
        if not row:
            shown = texts[i] if len(texts[i]) <= 40 else texts[i][:40] + "…"
            raise ValueError(f"sentence {i + 1} ({shown!r}) turns into no tokens for this "
                             "model's tokenizer; type something it can read")
    return ids, cuts


def padded(lists: Sequence[Sequence[int]], pad: int, device: torch.device | str = "cpu"
            ) -> tuple[torch.Tensor, torch.Tensor]:
    """(B, n) ids padded on the right and the (B, n) attention mask (1 = real token)."""
    n = max((len(x) for x in lists), default=0)
    ids = torch.full((len(lists), n), pad, dtype=torch.long)
    mask = torch.zeros((len(lists), n), dtype=torch.long)
    for row, x in enumerate(lists):
        ids[row, : len(x)] = torch.tensor(x, dtype=torch.long)
        mask[row, : len(x)] = 1
    return ids.to(device), mask.to(device)


def _pads(mask: torch.Tensor) -> np.ndarray:
    """bool (B, n) pad positions of a (B, n) attention mask (1 = a real token)."""
    return mask.cpu().numpy() == 0


def pad_numbering(model: torch.nn.Module) -> tuple[str, int]:
    """How the model numbers a right-padded batch's slots: ("row", padding_idx) where its
    position table keeps a row for the pad (RoBERTa: real tokens padding_idx + 1 + i, pads
    padding_idx); ("counted", 0) where every slot, pads included, takes its index (a position
    table or rotary angles: BERT, GPT-2, Llama); ("none", 0) where positions are no absolute
    rows at all (T5's relative bias between real tokens)."""
    table = None
    for name, module in model.named_modules():
        if name.rsplit(".", 1)[-1] in POS_NAMES and isinstance(getattr(module, "weight", None),
                                                                torch.Tensor):
            table = module
            break
    if table is not None and getattr(table, "padding_idx", None) is not None:
        return "row", int(table.padding_idx)
    if table is not None or rotary_frequencies(model) is not None:
        return "counted", 0
    return "none", 0


def _positions(mask: torch.Tensor, offset: int, numbering: tuple[str, int]) -> np.ndarray:
    """int64 (B, n): the position each slot ran at, as the model numbers it (pad_numbering):
    the row of pos_table (or the rotary angle's index), pads included; -1 for pads only where
    positions are not absolute."""
    mask = mask.cpu().bool()
    index = torch.arange(mask.size(1))[None, :].expand_as(mask)
    how, pad_row = numbering
    if how == "row":
        return torch.where(mask, index + pad_row + 1, torch.full_like(index, pad_row)
                           ).numpy().copy()
    if how == "counted":
        return (index + offset).numpy().copy()
    return torch.where(mask, index + offset, torch.full_like(index, -1)).numpy().copy()


def _pos_table(model: torch.nn.Module, d_model: int) -> tuple[np.ndarray, int]:
    """The first position embedding table in the model (encoder first) and its row offset."""
    for name, module in model.named_modules():
        weight = getattr(module, "weight", None)
        if (name.rsplit(".", 1)[-1] in POS_NAMES and isinstance(weight, torch.Tensor)
                and weight.dim() == 2 and weight.size(1) == d_model):
            return weight.detach().float().cpu().numpy().copy(), int(getattr(module, "offset", 0))
    return np.zeros((1, d_model), np.float32), 0


def skips_logits(model: torch.nn.Module) -> bool:
    """True when the model's forward takes `logits_to_keep` (transformers' causal LMs), so a
    capture that records no logits computes the LM head for one position only."""
    try:
        return "logits_to_keep" in inspect.signature(model.forward).parameters
    except (TypeError, ValueError):  # a forward without a readable signature
        return False


def device_of(model: torch.nn.Module) -> torch.device:
    return next(model.parameters()).device


def target_lists(bundle: Bundle, src: torch.Tensor, src_mask: torch.Tensor,
                  targets: Sequence[str] | None,
                  encoded: Sequence[Sequence[int]] | None = None) -> list[list[int]]:
    """Decoder inputs [start] + pieces (eos excluded): given texts, or the model's greedy output
    (under whatever ablation hooks the caller attached). `encoded`: the targets already
    tokenized (a Batch's, by encode_ids(..., max_len, target=True))."""
    model, tok, cfg = bundle.model, bundle.tokenizer, bundle.config
    start = cfg.decoder_start_id if cfg.decoder_start_id is not None else cfg.pad_id
    eos = tok.eos_token_id if tok.eos_token_id is not None else cfg.hf.eos_token_id
    limit = cfg.max_len - 1
    if targets is None:
        steps = max(1, min(limit, 2 * src.size(1) + 10))
        with torch.inference_mode():
            out = model.generate(input_ids=src, attention_mask=src_mask, max_new_tokens=steps,
                                 do_sample=False, num_beams=1)
        lists = []
        for row in out.tolist():
            pieces = []
            for t in row[1:]:
                if t in (eos, cfg.pad_id):
                    break
                pieces.append(t)
            lists.append([row[0], *pieces[: limit - 1]])
        return lists
    ids = encoded if encoded is not None else encode_ids(tok, targets, limit + 1, target=True)[0]
    return [[start, *[t for t in x if t != eos][: limit - 1]] for x in ids]


def _stack(parts: Sequence[torch.Tensor]) -> np.ndarray:
    """(L, B, ...) float32 on the CPU from L tensors, moved one at a time."""
    parts = list(parts)
    out = torch.empty((len(parts), *parts[0].shape), dtype=torch.float32)
    for i, p in enumerate(parts):
        out[i].copy_(p)
    return out.numpy()


def capture_hf(bundle: Bundle, sources: Sequence[str], targets: Sequence[str] | None = None, *,
               target_lang: str | None = None, ablate: Iterable[Head] | str = (),
               names: Collection[str] | None = None, batch: Any = None) -> Trace:
    """One forward pass of a Hugging Face model, recorded like the lab's own model.

    `batch`: the sources (and targets) already tokenized into a model.batch.Batch by the
    Hugging Face backend's encode(); without it they are tokenized here.

    Fills src/tgt tokens (the model's own tokenizer, specials included), ids, masks (the masks
    the model itself used: padding, causal, sliding window), attn, scores, q, k, v (k/v one row
    per key/value head; kv_groups maps query heads to them), hidden, logits (where the
    model has an LM head), pos_table (the model's position embedding, or zeros (1, D) without
    one, e.g. rotary models and T5) and positions (the position each slot ran at, pads
    included, as the model numbers them: pad_numbering; -1 for pads only on T5-like models).
    Encoder-only models put the text on the source side, decoder-only models on the target
    side. `target_lang` is ignored (a Hugging Face model translates in the direction it was
    trained for); with targets=None an encoder–decoder model decodes greedily with its own
    generate(), ablated heads knocked out there too.
    """
    del target_lang
    model, tok, cfg = bundle.model, bundle.tokenizer, bundle.config
    sources = [sources] if isinstance(sources, str) else list(sources)
    groups = set(GROUPS) if names is None else set(names)
    if groups - set(GROUPS):
        raise ValueError(f"hook names {sorted(groups - set(GROUPS))} exist only in the lab's own "
                         f"model; a Hugging Face model records the groups {GROUPS}")
    if targets is not None and cfg.family != "seq2seq":
        raise ValueError(f"a {cfg.family}-only model reads one text per sentence; pass "
                         "targets=None")
    heads = checked_heads(bundle, ablate)
    found = sites(model, cfg.family)
    if heads and found is None:
        raise ValueError("head ablation is not supported for this model: its attention does "
                         "not go through transformers' AttentionInterface")
    device = device_of(model)
    if batch is not None:
        texts, cuts = [list(x) for x in batch.src_lists], list(batch.cuts)
    else:
        texts, cuts = encode_checked(tok, sources, cfg.max_len)
    ids, mask = padded(texts, cfg.pad_id, device)
    seq2seq, encoder = cfg.family == "seq2seq", cfg.family == "encoder"
    pos_table, offset = _pos_table(model, cfg.d_model)
    recorded = groups | ({"attn", "v"} if "norms" in groups else set())  # norms need both
    slabs = Slabs(found.layers, recorded) if found is not None else None
    fallback = found is None and "attn" in groups
    run = dict(output_attentions=fallback, output_hidden_states="hidden" in groups,
               return_dict=True)
    if not encoder:
        run["use_cache"] = False  # one full forward: a KV cache would only cost memory
    if "logits" not in groups and skips_logits(model):
        # the LM head's (B, n, V) logits are a fifth of a GPT-2 forward: one row is enough
        run["logits_to_keep"] = 1
    with hooks(ablation_hooks(heads)):
        if seq2seq:
            tgt_lists = target_lists(bundle, ids, mask, targets,
                                      batch.extra.get("targets") if batch is not None else None)
            tgt, tgt_mask = padded(tgt_lists, cfg.pad_id, device)
            inputs = dict(input_ids=ids, attention_mask=mask, decoder_input_ids=tgt,
                          decoder_attention_mask=tgt_mask)
        else:
            inputs = dict(input_ids=ids, attention_mask=mask)
        watch = slabs.hooks() if slabs is not None else {}
        direct = slabs.buffers() if slabs is not None else {}
        with torch.inference_mode(), hooks(watch), buffers(direct), watch_masks() as seen:
            out = model(**inputs, **run)
    if seq2seq:
        attn = {"enc_self": out.encoder_attentions, "dec_self": out.decoder_attentions,
                "cross": out.cross_attentions}
        hidden = {"enc": out.encoder_hidden_states, "dec": out.decoder_hidden_states}
        masks = trace_masks(_pads(mask), _pads(tgt_mask), ("enc_self", "dec_self", "cross"))
        src_lists, src, src_mask = texts, ids, mask
    else:
        side, kind = ("enc", "enc_self") if encoder else ("dec", "dec_self")
        attn, hidden = {kind: out.attentions}, {side: out.hidden_states}
        masks = trace_masks(_pads(mask), _pads(mask), (kind,))
        empty = torch.zeros((len(sources), 0), dtype=torch.long)
        if encoder:
            src_lists, src, src_mask, tgt_lists, tgt, tgt_mask = texts, ids, mask, [], empty, None
        else:
            src_lists, src, src_mask, tgt_lists, tgt, tgt_mask = [], empty, None, texts, ids, mask
    if slabs is not None:
        per_group = {g: slabs.group(g) for g in ATTN_HOOKS}  # (L,B,H,Q,K) / (L,B,H or Hkv,n,Dh)
        # the masks the model itself applied (sliding windows included), where it had any
        masks.update({k: m.numpy().copy() for k, m in seen.items()})
        kv_groups = found.kv_groups.copy()
    else:
        per_group = {g: {} for g in ATTN_HOOKS}
        if fallback:
            per_group["attn"] = {k: _stack(a) for k, a in attn.items()}
        kv_groups = np.arange(cfg.n_heads, dtype=np.int64)
    logits = getattr(out, "logits", None)
    positions = {}
    numbering = pad_numbering(model)
    if src_mask is not None:
        positions["enc"] = _positions(src_mask, offset, numbering)
    if tgt_mask is not None:
        positions["dec"] = _positions(tgt_mask, offset, numbering)
    n = len(sources)
    return Trace(
        src_tokens=[tok.convert_ids_to_tokens(x) for x in src_lists] or [[] for _ in range(n)],
        tgt_tokens=[tok.convert_ids_to_tokens(x) for x in tgt_lists] or [[] for _ in range(n)],
        src_ids=src.cpu().numpy().copy(), tgt_ids=tgt.cpu().numpy().copy(), masks=masks,
        scores=per_group["scores"], q=per_group["q"], k=per_group["k"], v=per_group["v"],
        attn=per_group["attn"],
        hidden={s: _stack(h) for s, h in hidden.items()} if "hidden" in groups else {},
        pos_table=pos_table,
        logits=logits.detach().to("cpu", torch.float32).numpy()
        if logits is not None and "logits" in groups else None,
        pad_id=cfg.pad_id, sources=sources,
        targets=[tok.decode(t, skip_special_tokens=True) for t in tgt_lists] if seq2seq else [],
        target_langs=[None] * n, positions=positions, src_cut=cuts, ablate=heads,
        kv_groups=kv_groups,
        norms=hf_norms(bundle, per_group["attn"], per_group["v"], kv_groups, heads)
        if "norms" in groups else {},  # ‖α·f(x)‖ where the output projection is known
    )
