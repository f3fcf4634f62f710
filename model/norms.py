"""Norm-based attention (Kobayashi et al., EMNLP 2020, "Attention is Not Only a Weight").

A head's output at query i is Σ_j α_ij · f_h(v_j) with f_h(v) = v · W_O^h, W_O^h the head's
slice of the output projection (its bias is added once per block, not per head). The weight α
says where a head looks; ‖α_ij · f_h(v_j)‖ = α_ij · ‖f_h(v_j)‖ says how much it moves from there.

Pure functions on numpy arrays or torch tensors; the output projection comes in one canonical
orientation, `w_o` (D, H·Dh) as an nn.Linear stores it (out × in), so x_out = merged @ w_oᵀ + b.

Shape legend
    L  layers   B  sentences   H  query heads   G  key/value heads (= H without grouping)
    Q  queries  K  keys        Dh head size     D  model size
"""

from __future__ import annotations

import sys
import threading
import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

import numpy as np
import torch


@contextmanager
def blas_threads() -> Iterator[None]:
    """numpy's BLAS (OpenBLAS) held to one thread for the block.

    Unlimited, OpenBLAS starts one spinning thread per core: on a busy 2-core machine the
    norms' matrix products then took 1–6 s instead of 0.12 s. Held to torch's two threads, its
    workers went on spinning after these small products and took the cores from torch's own
    threads: the next forward's linear layers ran 4x slower, and a full capture of the lab's
    model at 512 pieces and 2 threads took 140–190 ms against 68–81 ms with one BLAS thread
    (issue 40). One thread costs these products 60 ms instead of 46–53 ms on GPT-2's 12 layers.
    """
    controller = _blas_controller()
    if controller is None:  # pragma: no cover - without threadpoolctl numpy keeps its default
        yield
        return
    with controller.limit(limits=1, user_api="blas"):
        yield


_CONTROLLER: list = [None, -1]  # [ThreadpoolController, len(sys.modules) when it was made]


def _blas_controller():
    """A ThreadpoolController, made again only when modules were imported since the last one
    (a new import may have loaded another BLAS, as scipy does).

    threadpool_limits() scans every loaded library (/proc/self/maps) on each call: 1.2–1.3 ms,
    three times per capture of the lab's model, a fifth of a 2 × 32-piece capture (issue 40).
    """
    try:
        from threadpoolctl import ThreadpoolController  # installed with scikit-learn
    except ImportError:  # pragma: no cover
        return None
    if _CONTROLLER[1] != len(sys.modules):
        _CONTROLLER[:] = [ThreadpoolController(), len(sys.modules)]
    return _CONTROLLER[0]


def limit_blas_threads(n: int) -> bool:
    """Hold numpy's BLAS to n threads for the rest of the process (the server's thread policy,
    ui/admission.server_gate); False when threadpoolctl is missing and nothing changed."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover
        return False
    threadpool_limits(limits=max(1, int(n)), user_api="blas")
    return True


def head_slices(w_o: np.ndarray, n_heads: int) -> np.ndarray:
    """(D, H·Dh) output projection -> (H, Dh, D): W_O^h, so that f_h(v) = v @ W_O^h."""
    w_o = np.asarray(w_o, dtype=np.float32)
    d_out, d_in = w_o.shape
    if d_in % n_heads:
        raise ValueError(f"output projection takes {d_in} inputs, not a multiple of "
                         f"{n_heads} heads")
    return np.ascontiguousarray(w_o.T.reshape(n_heads, d_in // n_heads, d_out))


def head_grams(w_o: np.ndarray, n_heads: int) -> np.ndarray:
    """(D, H·Dh) output projection -> (H, Dh, Dh) float64: W_O^h · W_O^hᵀ per head.

    ‖v W_O^h‖² = v (W_O^h W_O^hᵀ) vᵀ: with this Gram matrix a value's norm costs Dh² instead of
    Dh·D multiply-adds, and the (B, H, K, D) product is never built.
    """
    slices = head_slices(w_o, n_heads).astype(np.float64)  # (H, Dh, D)
    return np.matmul(slices, slices.transpose(0, 2, 1))


def projection_grams(weight: torch.Tensor, n_heads: int,
                     oriented: Callable[[], np.ndarray]) -> np.ndarray:
    """head_grams of one output projection, made once and kept beside its weight tensor.

    `oriented()` gives the weight as (D, H·Dh) float32 (a GPT-2 Conv1D's is transposed). The
    Grams are made again when the weight changes in place (its version counter) and dropped
    when it is collected (a weak reference and a finalizer). Made on every capture they took
    2.8 ms a layer, 33 ms of a 1.5 s full capture of GPT-2 small at 512 tokens (issue 40); they
    hold H·Dh²·8 bytes a layer, 2·Dh/D of W_O's own float32 bytes (17 % on GPT-2 small).
    Read-only: shared by sessions.
    """
    try:
        version = weight._version
    except RuntimeError:  # an inference-mode tensor keeps no version: nothing is kept
        return head_grams(oriented(), n_heads)
    key = id(weight)  # by id, not a WeakKeyDictionary: that compares tensors with ==
    with _GRAMS_LOCK:
        held = _GRAMS.get(key)
    if held is not None and held[0]() is weight and held[1] == (version, n_heads):
        return held[2]
    grams = head_grams(oriented(), n_heads)
    grams.flags.writeable = False
    with _GRAMS_LOCK:
        if held is None or held[0]() is not weight:
            weakref.finalize(weight, _forget_grams, key)
        _GRAMS[key] = (weakref.ref(weight), (version, n_heads), grams)
    return grams


def _forget_grams(key: int) -> None:
    """A weight was collected: drop its Grams (unless its id already holds a newer weight's)."""
    with _GRAMS_LOCK:
        held = _GRAMS.get(key)
        if held is not None and held[0]() is None:
            del _GRAMS[key]


def grams_held() -> int:
    """How many weights' Grams projection_grams keeps now."""
    with _GRAMS_LOCK:
        return len(_GRAMS)


# id(weight) -> (weak reference to it, (its version, heads), its Grams)
_GRAMS: dict[int, tuple[weakref.ref, tuple[int, int], np.ndarray]] = {}
_GRAMS_LOCK = threading.RLock()  # re-entrant: a collection inside it may run _forget_grams


def value_norms(v: np.ndarray, w_o: np.ndarray | None,
                kv_groups: Sequence[int] | None = None, grams: np.ndarray | None = None
                ) -> np.ndarray:
    """‖f_h(v_j)‖ = ‖v_j W_O^h‖₂ for one layer: v (B, G, K, Dh), w_o (D, H·Dh) -> (B, H, K).

    kv_groups[h] is the key/value head query head h reads (grouped-query attention). Computed
    in float64 through head_grams (rounded once, to float32, at the end); `grams` (H, Dh, Dh),
    when given (projection_grams), stands for w_o.
    """
    v = np.asarray(v)
    if grams is None:
        n_heads = len(kv_groups) if kv_groups is not None else v.shape[1]
        grams = head_grams(w_o, n_heads)  # (H, Dh, Dh)
    per_head = v if kv_groups is None else v[:, np.asarray(kv_groups)]  # (B, H, K, Dh)
    per_head = per_head.astype(np.float64)
    squared = np.einsum("bhkd,bhkd->bhk", np.matmul(per_head, grams), per_head)
    # v G vᵀ >= 0 in exact arithmetic; a rounding error below zero is a zero norm
    return np.sqrt(np.maximum(squared, 0.0)).astype(np.float32)


def weighted_norms(attn: np.ndarray, v: np.ndarray, w_o: np.ndarray,
                   kv_groups: Sequence[int] | None = None, out: np.ndarray | None = None
                   ) -> np.ndarray:
    """‖α_ij · f_h(v_j)‖ for one layer: attn (B, H, Q, K), v (B, G, K, Dh) -> (B, H, Q, K).

    `out` (float32, attn's shape) receives the result without a temporary (stack_norms).
    """
    f = value_norms(v, w_o, kv_groups)  # (B, H, K)
    if out is None:
        out = np.empty(np.shape(attn), dtype=np.float32)
    return np.multiply(attn, f[:, :, None, :], out=out, dtype=np.float32)


def stack_norms(attn: np.ndarray, v: np.ndarray, projections: Sequence[np.ndarray] | None,
                kv_groups: Sequence[int] | None = None,
                ablated_heads: Sequence[tuple[int, int]] = (), lazy: bool = False,
                grams: Sequence[np.ndarray] | None = None) -> np.ndarray | Weighing:
    """Every layer of one attention kind: attn (L, B, H, Q, K), v (L, B, G, K, Dh),
    projections[l] (D, H·Dh) -> (L, B, H, Q, K) float32.

    An ablated head writes nothing, so its (layer, head) rows in ablated_heads are 0.
    lazy: the small (L, B, H, K) value norms now, the (L, B, H, Q, K) product on first read
    (a Weighing, for LazyNorms); attn must then be kept unchanged (a Trace's own array).
    grams[l] (H, Dh, Dh), when given (projection_grams), stand for projections (then None).
    """
    if grams is not None:
        made = [(None, g) for g in grams]
    else:
        made = [(w_o, None) for w_o in projections]
    with blas_threads():  # the small float64 products first, on one BLAS thread
        moved = [value_norms(v[layer], w_o, kv_groups, g) for layer, (w_o, g) in enumerate(made)]
    weighing = Weighing(attn, moved, tuple(ablated_heads))
    return weighing if lazy else weighing()


class Weighing:
    """attn (L, B, H, Q, K) · moved[l] (B, H, 1, K), made when called: the one quadratic
    pass of the weighted norms, a memory-bound product of two arrays the Trace already owns."""

    def __init__(self, attn: np.ndarray, moved: list[np.ndarray],
                 ablated_heads: tuple[tuple[int, int], ...]) -> None:
        self.attn, self.moved, self.ablated_heads = attn, moved, ablated_heads

    @property
    def nbytes(self) -> int:
        """What the made array will hold (float32, attn's shape)."""
        return int(np.prod(np.shape(self.attn))) * 4

    def __call__(self) -> np.ndarray:
        out = np.empty(np.shape(self.attn), dtype=np.float32)

        def weigh(layer: int) -> None:  # (B, H, Q, K) · (B, H, 1, K), as weighted_norms
            np.multiply(self.attn[layer], self.moved[layer][:, :, None, :], out=out[layer],
                        dtype=np.float32)

        _spread(weigh, len(self.moved))
        for layer, head in self.ablated_heads:
            out[layer, :, head] = 0.0
        return out


class LazyNorms(dict):
    """Trace.norms whose (L, B, H, Q, K) arrays are weighed on first read (issue 40).

    A full capture of GPT-2 small at 512 tokens spent 0.12–0.3 s (a sixth of the forward)
    writing 151 MB of weighted norms that only the measure and flow views read. Values are
    arrays or Weighings; reading a key (``[]``, get, values, items, ``{**norms}``) makes its
    array once, under a lock, since one cached Trace is read by many sessions' threads.
    ``ready()`` and ``pending_nbytes()`` let the Trace cache count bytes without making them.
    """

    def __init__(self, parts: dict[str, np.ndarray | Weighing]) -> None:
        super().__init__(parts)
        self._lock = threading.Lock()
        self._frozen = False

    def __getitem__(self, kind: str) -> np.ndarray:
        value = dict.__getitem__(self, kind)
        if isinstance(value, Weighing):
            with self._lock:
                value = dict.__getitem__(self, kind)
                if isinstance(value, Weighing):
                    value = value()
                    value.flags.writeable = not self._frozen
                    dict.__setitem__(self, kind, value)
        return value

    def __iter__(self) -> Iterator[str]:  # defined, so {**norms} and dict(norms) read values
        return iter(dict.keys(self))      # through __getitem__, never a pending Weighing

    def get(self, kind: str, default=None):
        return self[kind] if kind in self else default

    def values(self) -> list[np.ndarray]:  # type: ignore[override]
        return [self[k] for k in self]

    def items(self) -> list[tuple[str, np.ndarray]]:  # type: ignore[override]
        return [(k, self[k]) for k in self]

    def ready(self) -> list[np.ndarray]:
        """The arrays made so far (nothing is weighed)."""
        return [v for v in dict.values(self) if isinstance(v, np.ndarray)]

    def pending_nbytes(self) -> int:
        """Bytes the arrays not yet made will hold."""
        return sum(v.nbytes for v in dict.values(self) if isinstance(v, Weighing))

    def freeze(self) -> None:
        """Every array, made now or later, read-only (model.capture.freeze)."""
        self._frozen = True
        for arr in self.ready():
            arr.flags.writeable = False

    def parts(self) -> dict[str, np.ndarray | Weighing]:
        """The values as held, made or pending (model.capture.merge keeps both lazy)."""
        return dict(dict.items(self))


def _spread(work, n: int) -> None:
    """work(0..n-1) on torch.get_num_threads() Python threads: the weighting is a memory-bound
    numpy pass (it releases the GIL) that otherwise ran on one core while torch's other
    threads sat idle after the forward (issue 40)."""
    workers = min(n, torch.get_num_threads())
    if workers <= 1:
        for i in range(n):
            work(i)
        return
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(work, range(n)))  # list(): re-raises a worker's exception here


def _moved(v: np.ndarray, w_o: np.ndarray, kv_groups: Sequence[int] | None) -> np.ndarray:
    """f_h(v_j) = v_j W_O^h itself: (B, H, K, D) float64 (np.matmul: BLAS, not einsum's loop)."""
    v = np.asarray(v, dtype=np.float64)
    n_heads = len(kv_groups) if kv_groups is not None else v.shape[1]
    slices = head_slices(w_o, n_heads).astype(np.float64)  # (H, Dh, D)
    per_head = v if kv_groups is None else v[:, np.asarray(kv_groups)]  # (B, H, K, Dh)
    return np.matmul(per_head, slices)


def key_vectors(attn: np.ndarray, v: np.ndarray, w_o: np.ndarray,
                kv_groups: Sequence[int] | None = None) -> np.ndarray:
    """α_ij · f_h(v_j) itself for one layer: (B, H, Q, K, D) float64. Memory grows as
    B·H·Q·K·D, so it is for checks and one sentence, not for a 512-token batch."""
    moved = _moved(v, w_o, kv_groups)  # (B, H, K, D)
    return np.asarray(attn, dtype=np.float64)[..., None] * moved[:, :, None]


def head_outputs(attn: np.ndarray, v: np.ndarray, w_o: np.ndarray,
                 kv_groups: Sequence[int] | None = None) -> np.ndarray:
    """What each head adds at each query, Σ_j α_ij f_h(v_j): (B, H, Q, D) float64 (no bias)."""
    v = np.asarray(v, dtype=np.float64)
    n_heads = len(kv_groups) if kv_groups is not None else v.shape[1]
    slices = head_slices(w_o, n_heads).astype(np.float64)  # (H, Dh, D)
    per_head = v if kv_groups is None else v[:, np.asarray(kv_groups)]  # (B, H, K, Dh)
    context = np.matmul(np.asarray(attn, dtype=np.float64), per_head)  # (B, H, Q, Dh)
    return np.matmul(context, slices)
