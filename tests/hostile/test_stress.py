"""Eight threads, every instrument at once, on one shared `paper`, tiny GPT-2 and tiny Llama
(grouped-query attention): each result is bit for bit its sequential run, no module hook is
added after load, no worker thread outlives the run, and memory comes back within a bound.

Two planted races show the check can fail: the residual block hooks registered per call again
(as before issue 41: the first patch or contributions call hooked the shared model while other
sessions ran it), and hooks kept as global state instead of per context.
"""

from __future__ import annotations

from pathlib import Path

import torch

from model import load_checkpoint
from model.heap import return_freed_memory
from tests.conftest import ROOT, needs
from tests.hostile.families import build_folder
from tests.stress import hook_census, operations, stress, tiny_llama

PAPER = ROOT / "checkpoints" / "paper"
TEXTS = {"paper": ("The cat eats fish.", "The dog eats fish.", "ko"),
         "gpt2": ("The cat eats the fish.", "The dog eats the fish.", None),
         "llama": ("The cat eats the fish.", "The dog eats the fish.", None)}
# RSS after gc + malloc_trim may end at most this far above where it started, with the heap
# set as the server sets it (model.heap.return_freed_memory, called by ui.admission): blocks of
# 1 MB or more mmapped on their own. Without it glibc raises its mmap threshold (up to 32 MB)
# each time such a block is freed, and later activations of that size land in the 8 worker
# threads' own heaps, whose pages stay resident: benchmarks/bench_stress measured RSS
# 550-664 MB after each of 6 repeats of 60 runs (loaded: 419), 441-445 with the server's
# setting and 439-469 with MALLOC_ARENA_MAX=2; Python's own allocations stayed at 0.4 MB.
GROWTH_MB = 60

pytestmark = needs((PAPER / "config.json").is_file(),
                                reason="the stress test shares the shipped paper checkpoint")


def load(root: Path, names=("paper", "gpt2", "llama")) -> tuple[dict, dict]:
    """Freshly loaded models: {name: (bundle, ops)} and each one's hook census after load."""
    folders = {"paper": PAPER, "gpt2": build_folder(root, "gpt2"), "llama": tiny_llama(root)}
    bundles = {n: load_checkpoint(folders[n]) for n in names}
    census = {n: hook_census(b.model) for n, b in bundles.items()}
    return {n: (b, operations(b, *TEXTS[n])) for n, b in bundles.items()}, census


def test_every_instrument_at_once_equals_its_sequential_run(tmp_path):
    return_freed_memory()  # as the server does (ui.admission.server_gate)
    models, census = load(tmp_path)
    assert {o for _, ops in models.values() for o in ops} >= {
        "capture", "capture_ablated", "patch_exact", "patch_attribution", "detectors",
        "qk_terms", "qk_components", "contributions", "flow", "translate", "generate"}
    report = stress(models, workers=8, rounds=2, loaded=census)
    assert report.runs == 2 * sum(len(ops) for _, ops in models.values())
    assert not report.problems(), report.problems()
    assert report.rss_after_mb - report.rss_loaded_mb <= GROWTH_MB, report


def test_load_hooks_the_model_once_and_a_copy_is_not_hooked_again(tmp_path):
    """Every module hook exists after load_checkpoint; a snapshot-style deep copy keeps them
    and patching it adds none."""
    import copy
    from dataclasses import replace

    from model.patching import patch

    bundle = load_checkpoint(tiny_llama(tmp_path))
    after_load = hook_census(bundle.model)
    assert any(t == "_forward_pre_hooks" for _, t, _ in after_load)  # ours, at each block
    assert any(t == "_forward_hooks" for _, t, _ in after_load)  # transformers' own
    twin = replace(bundle, model=copy.deepcopy(bundle.model))
    copied = hook_census(twin.model)
    clean, corrupted, _ = TEXTS["llama"]
    for b in (bundle, twin):
        patch(b, clean, corrupted)
    assert hook_census(bundle.model) == after_load
    assert hook_census(twin.model) == copied


class GlobalVar:
    """A ContextVar look-alike whose value every thread shares (the planted race)."""

    def __init__(self) -> None:
        self.value = None

    def get(self):
        return self.value

    def set(self, value):
        old, self.value = self.value, value
        return old

    def reset(self, token) -> None:
        self.value = token


def test_planted_per_call_hooks_are_caught(tmp_path, monkeypatch):
    """Block hooks registered on every patch/contributions call, without the context gate, as
    the recorder did before: the census names them."""
    from model.backends.hf import contributions, patching, recorder
    from model.hooks import HookPoint

    def per_call(model: torch.nn.Module, family: str):
        sides = recorder.residual_points(model, family)
        for name, block in model.named_modules():
            if getattr(block, recorder.RESID_MARK, False):
                point = HookPoint()
                point.name = f"{name}.planted"
                block.register_forward_pre_hook(
                    lambda _m, args, point=point: (point(args[0]), *args[1:]) if args else None)
        return sides

    monkeypatch.setattr(patching, "residual_points", per_call)
    monkeypatch.setattr(contributions, "residual_points", per_call)
    models, census = load(tmp_path, ("llama",))
    report = stress(models, workers=4, rounds=1, loaded=census)
    assert report.new_hooks, report
    assert any("hook left" in p for p in report.problems())


def test_planted_global_hooks_are_caught(tmp_path, monkeypatch):
    """Hook functions kept as one global instead of per context: one thread's knock-out or
    patch reaches another thread's forward, and the comparison with the sequential run fails."""
    models, census = load(tmp_path, ("llama",))
    import importlib

    hooks_module = importlib.import_module("model.hooks")  # `model.hooks` is also a function
    monkeypatch.setattr(hooks_module, "_ACTIVE", GlobalVar())
    report = stress(models, workers=8, rounds=6, loaded=census)
    assert report.mismatches or report.errors, report
