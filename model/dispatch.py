"""The public entry points that serve every model: each asks the model's backend.

Which kind a model is, and what that kind does, is known only in model/backends/; these
functions take text (or a Batch a backend already made) and hand it to backend_for(bundle).
Hugging Face support (transformers) is imported only when such a model is loaded or run.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .backends import backend_for, capabilities, load_folder
from .backends.base import Admit
from .batch import Batch, directions
from .budget import (
    Dims,
    Estimate,
    ablation_estimate,
    estimate,
    groups_of,
    lens_estimate,
    scan_estimate,
    trace_parts,
    validation_estimate,
)
from .capture import Trace
from .checkpoint import Bundle
from .decode import Translation, checked_heads
from .hooks import Head
from .long.trace import LongTrace


def load_checkpoint(folder: str | Path) -> Bundle:
    """Load a checkpoint folder; every problem raises CheckpointError naming the file."""
    return load_folder(folder)


def _lines(sources: Sequence[str] | str) -> list[str]:
    return [sources] if isinstance(sources, str) else list(sources)


def encode(bundle: Bundle, sources: Sequence[str] | str, targets: Sequence[str] | None = None,
           *, target_lang: str | None = None) -> Batch:
    """Tokenize sentences (and teacher-forced targets) once into the Batch that capture(),
    translate() and the estimates take."""
    sources = _lines(sources)
    if not sources:
        raise ValueError("capture needs at least one sentence")
    if targets is not None and len(targets) != len(sources):
        raise ValueError(f"{len(targets)} targets for {len(sources)} sources")
    return backend_for(bundle).encode(sources, targets, target_lang)


def _batch(bundle: Bundle, sources: Sequence[str] | str | Batch,
           targets: Sequence[str] | None, target_lang: str | None) -> Batch:
    if isinstance(sources, Batch):
        if targets is not None:
            raise ValueError("pass targets to encode(), not beside a Batch")
        return sources
    return encode(bundle, sources, targets, target_lang=target_lang)


def capture(bundle: Bundle, sources: Sequence[str] | str | Batch,
            targets: Sequence[str] | None = None, *, target_lang: str | None = None,
            ablate: Iterable[Head] | str = (), names: Collection[str] | None = None,
            decoded: Sequence[Translation] | None = None) -> Trace:
    """Record attention, q/k/v, hidden states and logits for a batch of sentences.

    `sources`: text lines, or a Batch from encode() (then targets/target_lang are the
    Batch's). `names`: field groups (model.capture.GROUPS) and raw hook names to record.
    `decoded`: with targets=None, the translate() result for these sources (same target_lang
    and ablate), reused instead of decoding again; its ids are the decoder input as generated.
    """
    batch = _batch(bundle, sources, targets, target_lang)
    if decoded is not None and (batch.targets is not None
                                or [t.source for t in decoded] != list(batch.sources)):
        raise ValueError("decoded must be translate()'s result for these sources, without "
                         "targets")
    return backend_for(bundle).record(batch, names, ablate, decoded=decoded)


def run(bundle: Bundle, lines: Sequence[str], targets: Sequence[str] | None,
        target_lang: str | None, needs: Collection[str] | None, ablate: Iterable[Head] | str,
        *, admit: Admit, decoded: Sequence[Translation] | None = None,
        decode: bool = False) -> Any:
    """The typed lines' whole path, forward only, the same for every kind of model: the
    backend's encode once, its estimate of capture(batch, needs), then admit(estimate, work)
    (the caller's gate and caches) runs work(), which decodes (when `decode`, no `decoded`
    is given and the model translates) and captures through the backend's capture; work()
    returns (Trace, the Translations it decoded or None). Returns what admit returns."""
    backend = backend_for(bundle)
    batch = backend.encode(lines, targets, target_lang)
    cost = backend.estimate(batch, needs)

    def work() -> tuple[Trace, list[Translation] | None]:
        fresh = None
        if decode and decoded is None and backend.caps.translates:
            fresh = backend.translate(batch, top_k=5, ablate=ablate)
        trace = backend.capture(batch, needs, ablate,
                                decoded=decoded if decoded is not None else fresh)
        return trace, fresh

    return admit(cost, work)


def estimate_capture(bundle: Bundle, sources: Sequence[str] | str | Batch,
                     targets: Sequence[str] | None = None, *, target_lang: str | None = None,
                     names: Collection[str] | None = None, needs: Collection[str] | None = None
                     ) -> Estimate:
    """Peak bytes capture() with these arguments will need, from the shapes alone (runs
    nothing); see model/budget.py. `needs`: view need groups instead of capture names."""
    backend = backend_for(bundle)
    batch = _batch(bundle, sources, targets, target_lang)
    if needs is not None:
        return backend.estimate(batch, needs)
    return estimate(backend.dims(batch), *groups_of(names))


def _forced_dims(bundle: Bundle, sources: Sequence[str] | str | Batch,
                 target_lang: str | None) -> Dims:
    """Dims of a teacher-forced pass over what the model will write for these sources (its
    longest possible output: greedy decoding has not run yet)."""
    return backend_for(bundle).dims(_batch(bundle, sources, None, target_lang), forced=True)


def estimate_ablation(bundle: Bundle, sources: Sequence[str] | str | Batch,
                      target_lang: str | None = None) -> Estimate:
    """Peak bytes of model.analysis.ablation.ablation_effect(bundle, sources, …)."""
    return ablation_estimate(_forced_dims(bundle, sources, target_lang))


def estimate_scan(bundle: Bundle, source: str | Batch, target_lang: str | None = None,
                  chunk: int = 64) -> Estimate:
    """Peak bytes of importance_scan(bundle, source, …): one pass of min(chunk, heads + 1)
    copies of the sentence (each knocks out one head; the first none)."""
    heads = sum(bundle.n_layers(k) for k in bundle.kinds) * bundle.config.n_heads
    return scan_estimate(_forced_dims(bundle, source, target_lang),
                         min(max(1, chunk), heads + 1))


def estimate_logit_lens(bundle: Bundle, trace: Trace, b: int) -> Estimate:
    """Peak bytes of model.analysis.lens.logit_lens(bundle, trace, b)."""
    cfg = bundle.config
    layers = trace.hidden["dec"].shape[0] - 1 if "dec" in trace.hidden else 0
    return lens_estimate(Dims(batch=1, src=0, tgt=len(trace.tgt_tokens[b]),
                              layers={"dec_self": layers}, heads=cfg.n_heads,
                              d_head=cfg.d_model // cfg.n_heads, d_model=cfg.d_model,
                              d_ff=int(capabilities(bundle).d_ff or 0), vocab=cfg.vocab_size))


def estimate_validation(bundle: Bundle, pairs: Sequence, *, batch: int = 32,
                        target_lang: str | None = None) -> Estimate:
    """Peak bytes of validation_stats(bundle, pairs, batch=…): the largest moment of its
    chunk-by-chunk captures, in both directions (tokenizes every pair, runs nothing)."""
    if not pairs:
        raise ValueError("validation_stats needs at least one pair")
    backend = backend_for(bundle)
    chunks = [pairs[i:i + batch] for i in range(0, len(pairs), max(1, batch))]
    return validation_estimate([
        backend.dims(backend.encode([getattr(p, src_of) for p in chunk],
                                    [getattr(p, tgt_of) for p in chunk], lang))
        for lang, src_of, tgt_of in directions(target_lang) for chunk in chunks])


def estimate_contributions(bundle: Bundle, source: str, target: str | None = None, *,
                           target_lang: str | None = None, chunk: int = 64) -> Estimate:
    """Peak bytes of model.analysis.contributions.head_contributions: its one-sentence capture
    (attention, values, logits, residual hooks), then knock-out passes of min(chunk, heads + 1)
    copies of the sentence; the larger of the two moments."""
    backend = backend_for(bundle)
    batch = backend.encode([source], None if target is None else [target], target_lang)
    captured = estimate(backend.dims(batch), {"attn", "v", "logits"})
    heads = sum(bundle.n_layers(k) for k in bundle.kinds) * bundle.config.n_heads
    sweep = scan_estimate(backend.dims(batch), min(max(1, chunk), heads + 1))
    return sweep if sweep.bytes >= captured.bytes else captured


def estimate_qkmap(bundle: Bundle, sentences: Sequence, batch: int = 64) -> Estimate:
    """Peak bytes of building model.analysis.qkmap's map: q and k captured chunk by chunk
    (one language at a time, as _Captured does), every sentence's kept while the next runs."""
    backend = backend_for(bundle)
    peak, held, worst = 0, 0, None
    for start in range(0, len(sentences), max(1, batch)):
        chunk = sentences[start:start + batch]
        for lang in sorted({s.target_lang or "" for s in chunk}):
            group = [s for s in chunk if (s.target_lang or "") == lang]
            targets = [s.target for s in group]
            dims = backend.dims(backend.encode(
                [s.source for s in group],
                None if any(t is None for t in targets) else targets, lang or None))
            run = estimate(dims, {"q", "k"}).bytes + held
            peak, worst = (run, dims) if run > peak else (peak, worst)
            held += sum(trace_parts(dims, {"q", "k"}).values())
    return Estimate(max(peak, held), {"one chunk": peak, "kept": held}, worst, "validation")


def estimate_flow(trace: Trace, b: int, max_edges: int) -> Estimate:
    """Peak bytes of model.analysis.flow.flow_routes on sentence b: per node a float64 copy of
    its heads' (H, K) norms, at most max_edges edges, every node of every layer reachable."""
    heads = next((a.shape[2] for a in trace.norms.values()), 0)
    n = max(len(trace.src_tokens[b]), len(trace.tgt_tokens[b]))
    nodes = sum(a.shape[0] * n for a in trace.norms.values())
    per_node = 2 * heads * n * 8  # self and cross blocks, float64
    edges = max_edges * 256  # an Edge and its tuples
    return Estimate(per_node + nodes * 64 + edges, {"node": per_node, "edges": edges}, None,
                    "lens")


def generate(bundle: Bundle, sources: Sequence[str] | str, *, max_new: int = 24,
             top_k: int = 5, ablate: Iterable[Head] | str = (), record: bool = False,
             sample: int = 0, seed: int = 0, logits: bool = False) -> list[Translation]:
    """Continuation of each line by a decoder-only model through its key/value cache, with
    per-step top-k: greedy, or top-`sample` sampling seeded by `seed`. `record=True` adds what
    each new piece read from the cache (model.generation.Generation.attn, per layer
    (steps, H, positions)) and the cache's bytes per layer; `logits=True` each step's logits."""
    backend = backend_for(bundle)
    if not backend.caps.generates:  # a backend that says so implements generate()
        raise ValueError("step-by-step generation needs a decoder-only model")
    if not _lines(sources):
        return []
    if sample < 0 or max_new < 0:
        raise ValueError("sample and max_new must be 0 or more")
    options = dict(record=record, sample=sample, seed=seed, logits=logits)
    if not any((record, sample, logits)):
        options = {}  # what every backend's generate() takes
    return backend.generate(_batch(bundle, sources, None, None), max_new=max_new, top_k=top_k,
                            ablate=ablate, **options)


def embed(bundle: Bundle, lines: Sequence[str] | str, ablate: Iterable[Head] | str = ()
          ) -> np.ndarray:
    """(B, D) float32 sentence embeddings of a sentence-transformers model, pooled (and
    normalised) as its own files say, each line cut to the length it was trained for; heads
    in `ablate` knocked out. ValueError for a model that has no sentence embedding."""
    backend = backend_for(bundle)
    if not backend.caps.embeds:  # a backend that says so implements embed()
        raise ValueError("sentence embeddings need a sentence-transformers encoder (a folder "
                         "with modules.json and a mean, cls or max pooling config)")
    heads = checked_heads(bundle, ablate)
    return backend.embed(_lines(lines), heads).numpy().astype(np.float32, copy=False)


def translate(bundle: Bundle, sources: Sequence[str] | str | Batch,
              target_lang: str | None = None, *, max_len: int | None = None, top_k: int = 5,
              ablate: Iterable[Head] | str = ()) -> list[Translation]:
    """Greedy translation of each source sentence (batched), with per-step top-k."""
    if not capabilities(bundle).translates:
        raise ValueError("translation needs one of this project's encoder–decoder checkpoints")
    if not isinstance(sources, Batch) and not _lines(sources):
        return []
    batch = _batch(bundle, sources, None, target_lang)
    return backend_for(bundle).translate(batch, max_len=max_len, top_k=top_k, ablate=ablate)


def piece_logps(bundle: Bundle, source: str, target: str,
                target_lang: str | None = None) -> list[float]:
    """Teacher-forced log-probability of each piece of `target` (its end piece included) as
    a translation of `source`: what this translator thinks of a text another model wrote
    (issue 58's second opinion). One forward, no decoding; [] for an empty target."""
    if not capabilities(bundle).translates:
        raise ValueError("scoring a translation needs one of this project's encoder–decoder "
                         "checkpoints")
    if not target.strip():
        return []
    backend = backend_for(bundle)
    forced = backend.forced([source], target_lang, target=target)
    values = backend.forced_values(forced, {})  # (1, T) float64, 0 where not valid
    return [float(v) for v, ok in zip(values[0].tolist(), forced.valid[0].tolist(),
                                      strict=True) if ok]


def long_batch(bundle: Bundle, text: str | Batch) -> Batch:
    if isinstance(text, Batch):
        return text
    if not capabilities(bundle).long_context:
        raise ValueError("this model has no long mode")
    return backend_for(bundle).encode([text])


def long_pieces(batch: Batch) -> int:
    """Pieces the long text has, counting those cut at the model's length."""
    return len(batch.src_lists[0]) + int(batch.cuts[0])


def qk_plan(bundle: Bundle, batch: Batch, qk_dtype: str = "auto",
            qk_store: str = "auto") -> tuple[str, str]:
    """How a long capture keeps queries and keys: (dtype, "memory" or "disk"). "auto" store:
    on disk in float32 (exact blocks, nothing in memory) above SPILL_FROM bytes where the disk
    has room; else in memory, float32 while they take at most 1 GiB, float16 beyond."""
    from .long.spill import SPILL_FROM, can_spill

    if qk_store not in ("auto", "memory", "disk"):
        raise ValueError("qk_store is 'auto', 'memory' or 'disk'")
    d = backend_for(bundle).dims(batch)
    kept = sum(d.layers.values()) * (d.heads + d.hkv) * long_pieces(batch) * d.d_head * 4
    if qk_store == "auto":
        spill = qk_dtype in ("auto", "float32") and kept > SPILL_FROM and can_spill(kept)
        qk_store = "disk" if spill else "memory"
    if qk_dtype == "auto":
        qk_dtype = "float32" if qk_store == "disk" or kept <= 2**30 else "float16"
    return qk_dtype, qk_store


def estimate_long(bundle: Bundle, text: str | Batch, *, pixels: int = 512,
                  qk_dtype: str = "auto", qk_store: str = "auto") -> Estimate:
    """Peak bytes of capture_long(bundle, text) in memory (model/long/budget.py)."""
    from .long.budget import long_estimate

    batch = long_batch(bundle, text)
    dtype, store = qk_plan(bundle, batch, qk_dtype, qk_store)
    size = 0 if store == "disk" else 2 if dtype == "float16" else 4
    return long_estimate(backend_for(bundle).dims(batch), len(batch.src_lists[0]), pixels,
                         size)


def capture_long(bundle: Bundle, text: str | Batch, *, pixels: int = 512,
                 qk_dtype: str = "auto", qk_store: str = "auto") -> LongTrace:
    """Every head's attention over one long text, reduced as computed (model/long/):
    pooled maps at `pixels` per side, per-query statistics, exact block() drill-down from
    queries and keys kept in memory or on disk (qk_plan)."""
    from .long.budget import LONG_CAP

    batch = long_batch(bundle, text)
    if long_pieces(batch) > LONG_CAP:
        raise ValueError(f"the text has {long_pieces(batch):,} pieces; long mode takes at most "
                         f"{LONG_CAP:,}")
    if not 1 <= pixels <= 1024:
        raise ValueError("pixels must be 1..1,024")
    dtype, store = qk_plan(bundle, batch, qk_dtype, qk_store)
    return backend_for(bundle).capture_long(batch, pixels, dtype, store)
