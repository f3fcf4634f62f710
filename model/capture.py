"""capture(): run the model once with recording hooks and return a Trace of numpy arrays."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from .decode import checked_heads, source_batch, target_langs, translate
from .hooks import Head, ablation_hooks, attn_prefix, hooks
from .masks import cross_mask, decoder_mask, encoder_mask
from .positional import position_ids

GROUPS = ("attn", "scores", "q", "k", "v", "hidden", "logits")
_ATTN_HOOK = {"attn": "hook_probs", "scores": "hook_scores",
              "q": "hook_q", "k": "hook_k", "v": "hook_v"}


@dataclass(frozen=True)
class Trace:
    """What the model did on one batch. Shapes: see the Trace contract in DESIGN.md."""

    src_tokens: list[list[str]]  # pieces as fed, specials included, unpadded
    tgt_tokens: list[list[str]]
    src_ids: np.ndarray  # int64 (B, S), padded with pad_id
    tgt_ids: np.ndarray  # int64 (B, T)
    masks: dict[str, np.ndarray]  # bool (B, Q, K), True = blocked
    scores: dict[str, np.ndarray]  # float32 (L, B, H, Q, K), QKᵀ/√Dh before masking
    attn: dict[str, np.ndarray]  # float32 (L, B, H, Q, K), blocked entries exactly 0
    q: dict[str, np.ndarray]  # float32 (L, B, H, n, Dh)
    k: dict[str, np.ndarray]
    v: dict[str, np.ndarray]
    hidden: dict[str, np.ndarray]  # "enc"/"dec": float32 (L+1, B, n, D)
    pos_table: np.ndarray  # float32 (max_len, D)
    logits: np.ndarray | None  # float32 (B, T, V)
    pad_id: int = 0
    sources: list[str] = field(default_factory=list)
    targets: list[str] = field(default_factory=list)
    target_langs: list[str | None] = field(default_factory=list)
    positions: dict[str, np.ndarray] = field(default_factory=dict)  # "enc"/"dec": int64 (B, n)
    src_cut: list[int] = field(default_factory=list)  # pieces cut per sentence to fit max_len
    ablate: frozenset[Head] = frozenset()
    acts: dict[str, np.ndarray] = field(default_factory=dict)  # extra hooks asked for by name

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(self.masks)

    def n_layers(self, kind: str) -> int:
        return next(iter(self.attn_like(kind).values())).shape[0]

    def attn_like(self, kind: str) -> dict[str, np.ndarray]:
        return {g: getattr(self, g)[kind] for g in ("attn", "scores", "q", "k", "v")
                if kind in getattr(self, g)}

    def length(self, side: str, b: int) -> int:
        """Unpadded length of sentence b on side 'src' or 'tgt'."""
        return len(self.src_tokens[b] if side == "src" else self.tgt_tokens[b])


def freeze(trace: Trace) -> Trace:
    """Make every array of a Trace read-only, so one Trace can be shared (e.g. cached for all
    sessions of a server) without any reader changing what the others see."""
    for value in vars(trace).values():
        for arr in value.values() if isinstance(value, dict) else (value,):
            if isinstance(arr, np.ndarray):
                arr.flags.writeable = False
    return trace


def _wanted(names: Collection[str] | None, model) -> tuple[set[str], list[str]]:
    """Split `names` into field groups and raw hook names, checking both."""
    if names is None:
        return set(GROUPS), []
    groups = {n for n in names if n in GROUPS}
    raw = [n for n in names if n not in GROUPS]
    if raw:
        known = set(model.hook_names())
        unknown = [n for n in raw if n not in known]
        if unknown:
            raise ValueError(f"unknown names {unknown}; use {GROUPS} or hook names")
    return groups, raw


def _numpy(t: torch.Tensor) -> np.ndarray:
    return t.detach().to("cpu", torch.float32).numpy()


def _target_batch(bundle, targets, sources, target_lang, ablate) -> list[list[int]]:
    """Decoder inputs [bos] + pieces: given texts, or the model's own greedy translation."""
    tok, limit = bundle.tokenizer, bundle.config.max_len - 1
    if targets is None and bundle.model.encoder is None:
        targets = sources  # a decoder-only model reads the typed text itself
    if targets is None:
        done = translate(bundle, sources, target_lang, ablate=ablate)
        return [[tok.bos_id, *t.ids[: limit - 1]] for t in done]
    return [tok.target_ids(t, limit)[0] for t in targets]


def capture(bundle, sources: Sequence[str] | str, targets: Sequence[str] | None = None, *,
            target_lang: str | None = None, ablate: Iterable[Head] | str = (),
            names: Collection[str] | None = None) -> Trace:
    """Record attention, q/k/v, hidden states and logits for a batch of sentences."""
    if isinstance(sources, str):
        sources = [sources]
    sources = list(sources)
    if not sources:
        raise ValueError("capture needs at least one sentence")
    if targets is not None and len(targets) != len(sources):
        raise ValueError(f"{len(targets)} targets for {len(sources)} sources")
    if bundle.kind != "native":
        from .hf import capture_hf

        return capture_hf(bundle, sources, targets, target_lang=target_lang, ablate=ablate,
                          names=names)
    model, tok, cfg = bundle.model, bundle.tokenizer, bundle.config
    heads = checked_heads(bundle, ablate)
    groups, raw = _wanted(names, model)
    langs = target_langs(bundle, sources, target_lang)
    src, src_lists, cuts = source_batch(bundle, sources, langs)
    has_dec = model.decoder is not None
    tgt_lists = _target_batch(bundle, targets, sources, target_lang, heads) if has_dec else []
    tgt = torch.from_numpy(tok.pad(tgt_lists)) if has_dec else None

    layers = {k: bundle.n_layers(k) for k in bundle.kinds}
    record: dict[str, torch.Tensor] = {}
    watch = set(raw)
    for kind, n in layers.items():
        for group in groups & set(_ATTN_HOOK):
            watch.update(f"{attn_prefix(kind, i)}.{_ATTN_HOOK[group]}" for i in range(n))
    if "hidden" in groups:
        for side, stack in (("encoder", model.encoder), ("decoder", model.decoder)):
            if stack is not None:
                watch.add(f"{side}.hook_embed")
                watch.update(f"{side}.layers.{i}.hook_resid_post" for i in range(len(stack.layers)))

    def keep(x: torch.Tensor, name: str) -> None:
        record[name] = x.detach()

    if model.training:  # checked, not forced: eval() walks every module and costs ms
        model.eval()
    with torch.inference_mode(), hooks(ablation_hooks(heads)), hooks(dict.fromkeys(watch, keep)):
        out = model(src, tgt)
    logits = _numpy(out) if has_dec and "logits" in groups else None

    kept_raw = set(raw)

    def layered(names_: list[str]) -> np.ndarray:
        """Per-layer records -> one (L, ...) float32 array. Each record is copied in and then
        dropped, so memory peaks at the Trace plus one layer, not at twice the Trace."""
        out = None
        for i, name in enumerate(names_):
            part = _numpy(record[name] if name in kept_raw else record.pop(name))
            if out is None:
                out = np.empty((len(names_), *part.shape), np.float32)
            out[i] = part
        return out

    def stacked(kind: str, hook: str) -> np.ndarray:  # (L, B, H, Q, K) or (L, B, H, n, Dh)
        return layered([f"{attn_prefix(kind, i)}.{hook}" for i in range(layers[kind])])

    per_group = {g: {k: stacked(k, _ATTN_HOOK[g]) for k in layers} if g in groups else {}
                 for g in _ATTN_HOOK}
    hidden = {}
    if "hidden" in groups:
        for short, side, stack in (("enc", "encoder", model.encoder),
                                   ("dec", "decoder", model.decoder)):
            if stack is not None:
                names_ = [f"{side}.hook_embed"] + [f"{side}.layers.{i}.hook_resid_post"
                                                   for i in range(len(stack.layers))]
                hidden[short] = layered(names_)  # (L+1, B, n, D)
    masks = {}
    if "enc_self" in layers:
        masks["enc_self"] = encoder_mask(src, cfg.pad_id).numpy().copy()
    if "dec_self" in layers:
        masks["dec_self"] = decoder_mask(tgt, cfg.pad_id).numpy().copy()
    if "cross" in layers:
        masks["cross"] = cross_mask(tgt, src, cfg.pad_id).numpy().copy()
    positions = {"enc": position_ids(src, cfg.pad_id).numpy()}
    if tgt is not None:
        positions["dec"] = position_ids(tgt, cfg.pad_id).numpy()
    return Trace(
        src_tokens=[tok.ids_to_pieces(s) for s in src_lists],
        tgt_tokens=[tok.ids_to_pieces(t) for t in tgt_lists],
        src_ids=src.numpy(),
        tgt_ids=tgt.numpy() if tgt is not None else np.zeros((len(sources), 0), np.int64),
        masks=masks, scores=per_group["scores"], attn=per_group["attn"],
        q=per_group["q"], k=per_group["k"], v=per_group["v"], hidden=hidden,
        pos_table=_numpy(model.pos_embed.weight()).copy(), logits=logits, pad_id=cfg.pad_id,
        sources=sources, targets=[tok.decode(t) for t in tgt_lists], target_langs=langs,
        positions=positions, src_cut=cuts, ablate=heads,
        acts={n: _numpy(record[n]) for n in raw},
    )
