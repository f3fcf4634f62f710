"""capture(): run the model once with recording hooks and return a Trace of numpy arrays."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import BinaryIO

import numpy as np
import torch

from .batch import Batch
from .decode import Translation, checked_heads, translate_native
from .hooks import Head, ablation_hooks, buffers, hooks
from .masks import trace_masks
from .norms import LazyNorms, Weighing, native_norms
from .slabs import ATTN_HOOKS, Slabs

GROUPS = ("attn", "scores", "q", "k", "v", "hidden", "logits", "norms")
# The one vocabulary for sides: a Trace's tokens and ids sit on side "src" (the encoder's
# input, or an encoder-only model's text) or "tgt" (the decoder's input); hidden states,
# positions and patching name the same sides by their stack, "enc" / "dec".
SIDE_STACK = {"src": "enc", "tgt": "dec"}
STACK_SIDE = {"enc": "src", "dec": "tgt"}
KIND_SIDES = {"enc_self": ("src", "src"), "dec_self": ("tgt", "tgt"), "cross": ("tgt", "src")}


def side_of(side: str) -> str:
    """'src' or 'tgt' for a side named either way ('src'/'tgt' or its stack 'enc'/'dec')."""
    found = STACK_SIDE.get(side, side)
    if found not in SIDE_STACK:
        raise ValueError(f"side must be 'src', 'tgt', 'enc' or 'dec', not {side!r}")
    return found


def query_side(kind: str) -> str:
    """The side an attention kind's queries come from ('src' or 'tgt')."""
    return KIND_SIDES[kind][0]


def key_side(kind: str) -> str:
    """The side an attention kind's keys come from ('src' or 'tgt')."""
    return KIND_SIDES[kind][1]


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
    # int64 (H,): the key/value head each query head reads (grouped-query attention), identity
    # otherwise; k and v hold one row per key/value head, (L, B, Hkv, n, Dh), so query head h
    # reads k[:, :, kv_groups[h]]
    kv_groups: np.ndarray | None = None
    norms: dict[str, np.ndarray] = field(default_factory=dict)  # (L, B, H, Q, K) ‖α·f(x)‖

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(self.masks)

    def n_layers(self, kind: str) -> int:
        return next(iter(self.attn_like(kind).values())).shape[0]

    def attn_like(self, kind: str) -> dict[str, np.ndarray]:
        return {g: getattr(self, g)[kind] for g in ("attn", "scores", "q", "k", "v")
                if kind in getattr(self, g)}

    def tokens(self, side: str) -> list[list[str]]:
        """Every sentence's pieces on a side ('src'/'tgt', or its stack 'enc'/'dec')."""
        return self.src_tokens if side_of(side) == "src" else self.tgt_tokens

    def ids(self, side: str) -> np.ndarray:
        """int64 (B, n) padded ids on a side ('src'/'tgt', or 'enc'/'dec')."""
        return self.src_ids if side_of(side) == "src" else self.tgt_ids

    def length(self, side: str, b: int) -> int:
        """Unpadded length of sentence b on a side ('src'/'tgt', or 'enc'/'dec')."""
        return len(self.tokens(side)[b])

    def save(self, path: str | Path) -> Path:
        """Write this Trace to one .npz (arrays + trace.json, no pickle); see model.trace_io."""
        from .trace_io import save_trace

        return save_trace(self, path)

    @classmethod
    def load(cls, source: str | Path | bytes | BinaryIO) -> Trace:
        """Read a Trace written by save() or downloaded from the app (path, bytes or file)."""
        from .trace_io import load_trace

        return load_trace(source, cls)


def trace_arrays(trace: Trace):
    """Every array a Trace holds now (LazyNorms' pending arrays are not made)."""
    for value in vars(trace).values():
        if isinstance(value, LazyNorms):
            yield from value.ready()
            continue
        for arr in value.values() if isinstance(value, dict) else (value,):
            if isinstance(arr, np.ndarray):
                yield arr


def nbytes(trace: Trace) -> int:
    """Bytes a Trace's arrays hold or, for norms not yet weighed, will hold (what caching it
    costs: counted in full, so reading the norms later never takes the cache past its bound)."""
    pending = sum(v.pending_nbytes() for v in vars(trace).values() if isinstance(v, LazyNorms))
    return sum(arr.nbytes for arr in trace_arrays(trace)) + pending


def freeze(trace: Trace) -> Trace:
    """Make every array of a Trace read-only, so one Trace can be shared (e.g. cached for all
    sessions of a server) without any reader changing what the others see."""
    for arr in trace_arrays(trace):
        arr.flags.writeable = False
    for value in vars(trace).values():
        if isinstance(value, LazyNorms):
            value.freeze()  # and the norms weighed later
    return trace


def merge(old: Trace, new: Trace) -> Trace:
    """One Trace with the groups of both: two captures of the same input (same ids, the same
    decoder input) that recorded different groups. Arrays are shared, not copied; `old`'s win
    where both recorded a group."""
    if not (np.array_equal(old.src_ids, new.src_ids) and np.array_equal(old.tgt_ids, new.tgt_ids)):
        raise ValueError("merge needs two captures of the same input")
    fields = {}
    for name in ("scores", "attn", "q", "k", "v", "hidden", "acts"):
        fields[name] = {**getattr(new, name), **getattr(old, name)}
    norms = {**_held(new.norms), **_held(old.norms)}
    # a pending weighing keeps its attn alive: one whose attn is not the merged Trace's own
    # (the other capture's copy) is weighed now, so no array is held that nbytes cannot see
    fields["norms"] = LazyNorms({k: w() if isinstance(w, Weighing) and w.attn is not
                                 fields["attn"].get(k) else w for k, w in norms.items()})
    return replace(old, logits=old.logits if old.logits is not None else new.logits, **fields)


def _held(norms: dict) -> dict:
    return norms.parts() if isinstance(norms, LazyNorms) else dict(norms)


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


def _positions(pad: np.ndarray) -> np.ndarray:
    """(B, n) pad flags -> int64 positions 1..n, 0 on pad (as positional.position_ids)."""
    return np.where(pad, 0, np.arange(1, pad.shape[1] + 1, dtype=np.int64))


def _target_batch(bundle, batch: Batch, ablate, decoded) -> list[list[int]]:
    """Decoder inputs [bos] + pieces: the batch's (given texts, or a decoder-only model's
    typed text), or the model's own greedy translation."""
    tok, limit = bundle.tokenizer, bundle.config.max_len - 1
    if batch.tgt_lists is None:
        done = decoded if decoded is not None else translate_native(bundle, batch,
                                                                    ablate=ablate)
        return [[tok.bos_id, *t.ids[: limit - 1]] for t in done]
    return [list(t) for t in batch.tgt_lists]


def capture_native(bundle, batch: Batch, *, ablate: Iterable[Head] | str = (),
                   names: Collection[str] | None = None,
                   decoded: Sequence[Translation] | None = None) -> Trace:
    """capture() for the lab's own model, on a Batch from its backend's encode()."""
    model, tok, cfg = bundle.model, bundle.tokenizer, bundle.config
    heads = checked_heads(bundle, ablate)
    groups, raw = _wanted(names, model)
    need = groups | ({"attn", "v"} if "norms" in groups else set())  # norms come from these
    sources, langs, cuts = list(batch.sources), list(batch.langs), list(batch.cuts)
    # a copy: the Trace's src_ids is frozen later, and the Batch may be read again
    src = torch.from_numpy(batch.src_ids.copy())
    has_dec = model.decoder is not None
    tgt_lists = _target_batch(bundle, batch, heads, decoded) if has_dec else []
    tgt = torch.from_numpy(tok.pad(tgt_lists)) if has_dec else None

    layers = {k: bundle.n_layers(k) for k in bundle.kinds}
    slabs = Slabs(layers, need)  # model/slabs.py: one (L, ...) slab per group and kind
    if "hidden" in groups:
        for short, side, stack in (("enc", "encoder", model.encoder),
                                   ("dec", "decoder", model.decoder)):
            if stack is not None:
                n = len(stack.layers) + 1
                slabs.add(f"{side}.hook_embed", f"hidden/{short}", 0, n)
                for i in range(n - 1):
                    slabs.add(f"{side}.layers.{i}.hook_resid_post", f"hidden/{short}", i + 1, n)
    acts: dict[str, np.ndarray] = {}

    def record(x: torch.Tensor, name: str) -> None:
        if name in raw_set:
            acts[name] = _numpy(x).copy()
        if name in slabs.slots:
            slabs.record(x, name)

    raw_set = set(raw)
    if model.training:  # checked, not forced: eval() walks every module and costs ms
        model.eval()
    watch = dict.fromkeys([*slabs.slots, *raw], record)
    direct = slabs.buffers()  # the quadratic tensors written by the model into their slabs
    with torch.inference_mode(), hooks(ablation_hooks(heads)), hooks(watch), buffers(direct):
        if has_dec and "logits" not in groups:
            # model.forward without its last step: the (B, T, V) logits cost a large share of
            # the forward (as transformers' logits_to_keep saves for its models), unread here
            model.decode(tgt, model.encode(src) if model.encoder is not None else None, src)
            out = None
        else:
            out = model(src, tgt)
    logits = _numpy(out) if has_dec and "logits" in groups else None

    per_group = {g: {k: slabs.take(f"{g}/{k}") for k in layers} if g in need else {}
                 for g in ATTN_HOOKS}  # (L, B, H, Q, K) or (L, B, H, n, Dh)
    # (L, B, H, Q, K), weighed when first read where attn stays in the Trace (LazyNorms)
    norms = LazyNorms({k: native_norms(model, k, per_group["attn"][k], per_group["v"][k], heads,
                                       lazy="attn" in groups)
                       for k in layers}) if "norms" in groups else {}
    per_group.update({g: {} for g in need - groups})  # recorded only to make the norms
    hidden = {short: slabs.take(f"hidden/{short}")  # (L+1, B, n, D)
              for short in ("enc", "dec") if f"hidden/{short}" in slabs.slabs}
    # masks and positions straight from the ids in numpy: the same values as model.masks and
    # position_ids (tests compare them), without a round of small torch ops per call
    src_np = src.numpy()
    src_pad = src_np == cfg.pad_id  # (B, S)
    tgt_pad = tgt.numpy() == cfg.pad_id if tgt is not None else None  # (B, T)
    masks = trace_masks(src_pad, tgt_pad, layers)
    positions = {"enc": _positions(src_pad)}
    if tgt is not None:
        positions["dec"] = _positions(tgt_pad)
    return Trace(
        src_tokens=[list(p) for p in batch.pieces],
        tgt_tokens=[tok.ids_to_pieces(t) for t in tgt_lists],
        src_ids=src_np,
        tgt_ids=tgt.numpy() if tgt is not None else np.zeros((len(sources), 0), np.int64),
        masks=masks, scores=per_group["scores"], attn=per_group["attn"],
        q=per_group["q"], k=per_group["k"], v=per_group["v"], hidden=hidden,
        pos_table=_numpy(model.pos_embed.weight()).copy(), logits=logits, pad_id=cfg.pad_id,
        sources=sources, targets=[tok.decode(t) for t in tgt_lists], target_langs=langs,
        positions=positions, src_cut=cuts, ablate=heads,
        acts=acts, kv_groups=np.arange(cfg.n_heads, dtype=np.int64), norms=norms,
    )
