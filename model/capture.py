"""capture(): run the model once with recording hooks and return a Trace of numpy arrays."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import BinaryIO

import numpy as np

from .hooks import Head
from .norms import LazyNorms, Weighing

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
