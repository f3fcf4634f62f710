"""The public entry points that serve every model, and the one place that looks at bundle.kind.

The lab's own checkpoints ("native") are run by capture.py and decode.py; Hugging Face folders
("hf") by model/hf, imported only when such a model is used because it pulls in transformers.
Nothing below this module imports it, so the core never depends on its adapters.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from pathlib import Path

from .budget import (
    Dims,
    Estimate,
    ablation_estimate,
    estimate,
    groups_of,
    lens_estimate,
    native_dims,
    scan_estimate,
    validation_estimate,
)
from .capture import Trace, capture_native
from .checkpoint import Bundle, CheckpointError, _read_json, load_native
from .decode import Translation, translate_native
from .hooks import Head


def load_checkpoint(folder: str | Path) -> Bundle:
    """Load a checkpoint folder; every problem raises CheckpointError naming the file."""
    folder = Path(folder)
    if not folder.is_dir():
        raise CheckpointError(folder, "not a checkpoint folder (missing)")
    raw_cfg = _read_json(folder / "config.json")
    if isinstance(raw_cfg, dict) and "model_type" in raw_cfg:
        from .hf import load_hf

        return load_hf(folder)
    return load_native(folder, raw_cfg)


def capture(bundle: Bundle, sources: Sequence[str] | str, targets: Sequence[str] | None = None,
            *, target_lang: str | None = None, ablate: Iterable[Head] | str = (),
            names: Collection[str] | None = None,
            decoded: Sequence[Translation] | None = None) -> Trace:
    """Record attention, q/k/v, hidden states and logits for a batch of sentences.

    `decoded`: with targets=None, the translate() result for these sources (same target_lang
    and ablate), reused instead of decoding again; its ids are the decoder input as generated.
    """
    sources = [sources] if isinstance(sources, str) else list(sources)
    if not sources:
        raise ValueError("capture needs at least one sentence")
    if targets is not None and len(targets) != len(sources):
        raise ValueError(f"{len(targets)} targets for {len(sources)} sources")
    if decoded is not None and (targets is not None or [t.source for t in decoded] != sources):
        raise ValueError("decoded must be translate()'s result for these sources, without "
                         "targets")
    if bundle.kind != "native":
        from .hf import capture_hf

        return capture_hf(bundle, sources, targets, target_lang=target_lang, ablate=ablate,
                          names=names)
    return capture_native(bundle, sources, targets, target_lang=target_lang, ablate=ablate,
                          names=names, decoded=decoded)


def estimate_capture(bundle: Bundle, sources: Sequence[str] | str,
                     targets: Sequence[str] | None = None, *, target_lang: str | None = None,
                     names: Collection[str] | None = None) -> Estimate:
    """Peak bytes capture() with these arguments will need, from the shapes alone (tokenizes,
    runs nothing); see model/budget.py."""
    sources = [sources] if isinstance(sources, str) else list(sources)
    if not sources:
        raise ValueError("capture needs at least one sentence")
    if bundle.kind != "native":
        from .hf.shapes import hf_dims

        dims = hf_dims(bundle, sources, targets)
    else:
        dims = native_dims(bundle, sources, targets, target_lang)
    return estimate(dims, *groups_of(names))


def _forced_dims(bundle: Bundle, sources: list[str], target_lang: str | None) -> Dims:
    """Dims of a teacher-forced pass over what the model will write for these sources (its
    longest possible output: greedy decoding has not run yet)."""
    if bundle.kind != "native":
        from .hf.shapes import hf_dims

        return hf_dims(bundle, sources)
    return native_dims(bundle, sources, target_lang=target_lang)


def estimate_ablation(bundle: Bundle, sources: Sequence[str] | str,
                      target_lang: str | None = None) -> Estimate:
    """Peak bytes of model.analysis.ablation.ablation_effect(bundle, sources, …)."""
    sources = [sources] if isinstance(sources, str) else list(sources)
    return ablation_estimate(_forced_dims(bundle, sources, target_lang))


def estimate_scan(bundle: Bundle, source: str, target_lang: str | None = None,
                  chunk: int = 64) -> Estimate:
    """Peak bytes of importance_scan(bundle, source, …): one pass of min(chunk, heads + 1)
    copies of the sentence (each knocks out one head; the first none)."""
    heads = sum(bundle.n_layers(k) for k in bundle.kinds) * bundle.config.n_heads
    return scan_estimate(_forced_dims(bundle, [source], target_lang),
                         min(max(1, chunk), heads + 1))


def estimate_logit_lens(bundle: Bundle, trace: Trace, b: int) -> Estimate:
    """Peak bytes of model.analysis.lens.logit_lens(bundle, trace, b)."""
    cfg = bundle.config
    layers = trace.hidden["dec"].shape[0] - 1 if "dec" in trace.hidden else 0
    return lens_estimate(Dims(batch=1, src=0, tgt=len(trace.tgt_tokens[b]),
                              layers={"dec_self": layers}, heads=cfg.n_heads,
                              d_head=cfg.d_model // cfg.n_heads, d_model=cfg.d_model,
                              d_ff=cfg.d_ff, vocab=cfg.vocab_size))


def estimate_validation(bundle: Bundle, pairs: Sequence, *, batch: int = 32,
                        target_lang: str | None = None) -> Estimate:
    """Peak bytes of validation_stats(bundle, pairs, batch=…): the largest moment of its
    chunk-by-chunk captures, in both directions (tokenizes every pair, runs nothing)."""
    if not pairs:
        raise ValueError("validation_stats needs at least one pair")
    # analysis.heads._directions, in its order (importing it here would make an import cycle)
    dirs = [d for d in (("ko", "en", "ko"), ("en", "ko", "en"))
            if target_lang in (None, "auto", "both", d[0])]
    chunks = [pairs[i:i + batch] for i in range(0, len(pairs), max(1, batch))]
    return validation_estimate([
        native_dims(bundle, [getattr(p, src_of) for p in chunk],
                    [getattr(p, tgt_of) for p in chunk], target_lang=lang)
        for lang, src_of, tgt_of in dirs for chunk in chunks])


def translate(bundle: Bundle, sources: Sequence[str] | str, target_lang: str | None = None, *,
              max_len: int | None = None, top_k: int = 5,
              ablate: Iterable[Head] | str = ()) -> list[Translation]:
    """Greedy translation of each source sentence (batched), with per-step top-k."""
    sources = [sources] if isinstance(sources, str) else list(sources)
    if bundle.kind != "native":
        raise ValueError("translation needs one of this project's encoder–decoder checkpoints")
    if not sources:
        return []
    return translate_native(bundle, sources, target_lang, max_len=max_len, top_k=top_k,
                            ablate=ablate)
