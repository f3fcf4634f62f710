"""The public entry points that serve every model, and the one place that looks at bundle.kind.

The lab's own checkpoints ("native") are run by capture.py and decode.py; Hugging Face folders
("hf") by model/hf, imported only when such a model is used because it pulls in transformers.
Nothing below this module imports it, so the core never depends on its adapters.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from pathlib import Path

from .budget import Estimate, estimate, groups_of, native_dims
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
