"""Many threads on shared models: every instrument at once, checked against its sequential run.

`stress(models, workers, rounds)` runs every operation of `operations(bundle)` once alone, then
`rounds` times in shuffled order from `workers` threads sharing the same loaded models, and
reports what differs: a result that is not bit for bit its sequential run, a module hook that
was not there right after load, a worker thread still alive, resident memory after the run.
The stress test (tests/hostile/test_stress.py) and `benchmarks/bench_stress.py` share it.
"""

from __future__ import annotations

import ctypes
import dataclasses
import gc
import random
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from torch import nn

from model import Bundle, capture, capture_long, generate, translate
from model.analysis import detect_heads, qk_components, qk_terms
from model.analysis.contributions import head_contributions
from model.analysis.flow import flow_routes
from model.backends import capabilities
from model.patching import patch

Op = Callable[[], object]
HOOK_TABLES = ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks",
               "_backward_pre_hooks")
GLOBAL_TABLES = ("_global_forward_hooks", "_global_forward_pre_hooks",
                 "_global_backward_hooks", "_global_backward_pre_hooks")


def hook_census(model: nn.Module) -> set[tuple[str, str, int]]:
    """Every hook on the model: (module path or 'global' or a parameter, table, hook id)."""
    found = set()
    for name, module in model.named_modules():
        for table in HOOK_TABLES:
            found |= {(name or "<root>", table, k) for k in getattr(module, table, {})}
    for name, param in model.named_parameters():
        found |= {(name, "tensor", k) for k in (param._backward_hooks or {})}
    from torch.nn.modules import module as torch_module

    for table in GLOBAL_TABLES:
        found |= {("global", table, k) for k in getattr(torch_module, table, {})}
    return found


def rss_mb() -> float:
    """Resident memory of this process in MB (after the caller's gc/trim, if any)."""
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * 4096 / 2**20


def trimmed_rss_mb() -> float:
    """RSS after gc and glibc's malloc_trim: what the process really holds, not free heap."""
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except OSError:  # not glibc
        pass
    return rss_mb()


def flat(value: object, path: str = "") -> Iterator[tuple[str, object]]:
    """(path, leaf) for every number, string and array inside a result."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            yield from flat(getattr(value, f.name), f"{path}.{f.name}")
    elif isinstance(value, dict):
        for k in sorted(value, key=repr):
            yield from flat(value[k], f"{path}[{k!r}]")
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            yield from flat(v, f"{path}[{i}]")
    elif isinstance(value, (set, frozenset)):
        yield path, sorted(value, key=repr)
    elif isinstance(value, torch.Tensor):
        yield path, value.detach().cpu().numpy()
    else:
        yield path, value


def differences(a: object, b: object) -> list[str]:
    """Paths where two results are not bit for bit equal (NaN equals NaN)."""
    left, right = dict(flat(a)), dict(flat(b))
    if left.keys() != right.keys():
        return [f"fields differ: {sorted(left.keys() ^ right.keys())[:5]}"]
    out = []
    for path, x in left.items():
        y = right[path]
        if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
            x, y = np.asarray(x), np.asarray(y)
            same = x.shape == y.shape and x.dtype == y.dtype and (
                np.array_equal(x, y, equal_nan=x.dtype.kind in "fc"))
        elif isinstance(x, float) and isinstance(y, float):
            same = x == y or (x != x and y != y)
        else:
            same = x == y
        if not same:
            out.append(path)
    return out


def operations(bundle: Bundle, clean: str, corrupted: str, lang: str | None) -> dict[str, Op]:
    """Every instrument of the public API that this model offers, as name -> no-argument run
    (the long mode of issue 38 too, on a short text: its code path, not its size)."""
    caps = capabilities(bundle)
    kind = "cross" if "cross" in caps.kinds else caps.kinds[0]
    first = next(iter(bundle.kinds))
    knocked = {(first, 0, 1)}
    trace = capture(bundle, [clean], target_lang=lang)  # read only: detectors, qk, flow
    n_q = trace.scores[kind].shape[3]
    q, k = n_q - 1, trace.scores[kind].shape[4] // 2
    ops: dict[str, Op] = {
        "capture": lambda: capture(bundle, [clean, corrupted], target_lang=lang),
        "capture_ablated": lambda: capture(bundle, [clean], target_lang=lang, ablate=knocked),
        "patch_exact": lambda: patch(bundle, clean, corrupted, target_lang=lang),
        "patch_attribution": lambda: patch(bundle, clean, corrupted, target_lang=lang,
                                           method="attribution"),
        "detectors": lambda: detect_heads(bundle, trace),
        "qk_terms": lambda: qk_terms(bundle, trace, kind, 1, 1, q, k),
        "qk_components": lambda: qk_components(bundle, trace, kind, 1, 1, q, k),
        "flow": lambda: flow_routes(capture(bundle, [clean], target_lang=lang), 0),
    }
    if caps.logit_attribution or caps.translates:
        ops["contributions"] = lambda: head_contributions(bundle, clean, target_lang=lang)
    if caps.translates:
        ops["translate"] = lambda: translate(bundle, [clean, corrupted], target_lang=lang)
    if caps.generates:
        ops["generate"] = lambda: generate(bundle, [clean], max_new=6, ablate=knocked)
    if caps.long_context:  # diverts this context's attention while others run it plainly
        ops["capture_long"] = lambda: capture_long(bundle, " ".join([clean] * 4), pixels=16)
    return ops


@dataclass
class Report:
    """What a stress run found; `problems()` is empty when it found nothing."""

    runs: int = 0
    mismatches: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    new_hooks: list[tuple[str, str, int]] = field(default_factory=list)
    threads_alive: list[str] = field(default_factory=list)
    rss_loaded_mb: float = 0.0
    rss_after_mb: float = 0.0
    seconds: float = 0.0

    def problems(self) -> list[str]:
        return ([f"mismatch: {m}" for m in self.mismatches[:10]]
                + [f"error: {e}" for e in self.errors[:10]]
                + [f"hook left: {h}" for h in self.new_hooks[:10]]
                + [f"thread alive: {t}" for t in self.threads_alive])


def stress(models: dict[str, tuple[Bundle, dict[str, Op]]], workers: int = 8, rounds: int = 2,
           seed: int = 0, loaded: dict[str, set] | None = None) -> Report:
    """Run every op of every model alone, then `rounds` × all of them shuffled on `workers`
    threads; compare each threaded result with the sequential one. `loaded`: each model's
    hook_census right after load (default: taken now, before any op)."""
    start = time.perf_counter()
    report = Report(rss_loaded_mb=trimmed_rss_mb())
    census = loaded or {name: hook_census(b.model) for name, (b, _) in models.items()}
    before = set(threading.enumerate())
    jobs = [(m, o) for m, (_, ops) in models.items() for o in ops]
    alone = {(m, o): models[m][1][o]() for m, o in jobs}
    schedule = jobs * rounds
    random.Random(seed).shuffle(schedule)

    def one(job: tuple[str, str]) -> tuple[tuple[str, str], list[str]]:
        got = models[job[0]][1][job[1]]()
        return job, differences(alone[job], got)

    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="stress") as pool:
        futures = [pool.submit(one, j) for j in schedule]
        for fut in futures:
            try:
                (m, o), diff = fut.result()
            except Exception as exc:  # a race may surface as an exception
                report.errors.append(f"{type(exc).__name__}: {exc}")
                continue
            report.runs += 1
            report.mismatches += [f"{m}.{o}{p}" for p in diff]
    futures.clear()
    alone.clear()  # the results, so the RSS below is without them
    report.threads_alive = sorted(t.name for t in set(threading.enumerate()) - before
                                  if t.is_alive())
    for name, (bundle, _) in models.items():
        report.new_hooks += sorted((f"{name}:{a}", b, c)
                                   for a, b, c in hook_census(bundle.model) - census[name])
    report.rss_after_mb = trimmed_rss_mb()
    report.seconds = time.perf_counter() - start
    return report


def tiny_llama(root: Path) -> Path:
    """root/llama: a random 2-layer Llama with grouped-query attention (6 query heads reading 2
    key/value heads), with the hostile suite's GPT-2-style BPE tokenizer."""
    from transformers import LlamaConfig, LlamaForCausalLM

    from tests.hostile.families import POSITIONS, make_tokenizer

    tok = make_tokenizer("gpt2")
    torch.manual_seed(0)
    model = LlamaForCausalLM(LlamaConfig(
        vocab_size=len(tok), hidden_size=24, num_hidden_layers=2, num_attention_heads=6,
        num_key_value_heads=2, intermediate_size=32, max_position_embeddings=POSITIONS,
        bos_token_id=0, eos_token_id=0, pad_token_id=tok.pad_token_id))
    folder = root / "llama"
    model.save_pretrained(folder, safe_serialization=True)
    tok.save_pretrained(folder)
    return folder
