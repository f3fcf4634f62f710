"""sha256 digests of everything the lab computes on fixed inputs: "no behaviour change" evidence.

    python -m benchmarks.trace_hashes [--json out.json] [--only NAME ...]

A refactoring that only moves code must leave every number the same, bit for bit. This script
loads the shipped checkpoints (paper, seed001, lm, checkpoints/minilm; each skipped with a line
when absent) and builds, from the tests' own seeded builders, a tiny random lab checkpoint and
tiny random GPT-2 / Llama / T5 / BERT folders; on each it digests every array of the Trace of
fixed inputs (norms weighed), the same through the app's path (model.dispatch.run, every need
group), the greedy translations, patching (model.patching.patch) on paper
and lm, detect_heads, composition_scores and one capture_long. Run it before and after, then
compare the two JSON files (`--diff before.json after.json`): any digest that moved names what
changed.

One torch thread, so that reductions run in the same order on every run.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing here may reach the network

TRANSLATOR_LINES = ["The cat eats fish.", "겨울은 추워요."]
ENGLISH_LINES = ["The cat eats fish every day.", "Winter is cold."]
TINY_LINES = ["the cat eats fish every day .", "winter is cold"]  # the tiny folders' words
CLEAN, CORRUPTED = "The cat eats fish.", "The dog eats fish."
LONG_TEXT = " ".join(["The cat eats fish every day and the dog runs in the park."] * 40)


def digest(value: object) -> str:
    """sha256 of one leaf: an array's dtype, shape and bytes, or any other value's repr."""
    h = hashlib.sha256()
    if isinstance(value, np.ndarray):
        arr = np.ascontiguousarray(value)
        h.update(f"{arr.dtype.str}{arr.shape}".encode())
        if arr.dtype == object:
            h.update(repr(arr.tolist()).encode())
        else:
            h.update(arr.tobytes())
    else:
        h.update(repr(value).encode())
    return h.hexdigest()


def leaves(value: object, path: str) -> Iterator[tuple[str, object]]:
    """(path, leaf) for every array and plain value inside dataclasses, dicts and sequences;
    dict keys are walked sorted (a LazyNorms weighs each kind as it is read)."""
    try:
        import torch

        if isinstance(value, torch.Tensor):
            value = value.detach().cpu().numpy()
    except ImportError:  # pragma: no cover - torch is a dependency of the lab
        pass
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            yield from leaves(getattr(value, f.name), f"{path}.{f.name}")
        extra = {k: v for k, v in vars(value).items()
                 if k not in {f.name for f in dataclasses.fields(value)}}
        for k in sorted(extra):
            yield from leaves(extra[k], f"{path}.{k}")
    elif isinstance(value, dict):
        for k in sorted(value, key=repr):
            yield from leaves(value[k], f"{path}[{k!r}]")
        for k, v in sorted(vars(value).items()) if hasattr(value, "__dict__") else ():
            if not k.startswith("_"):
                yield from leaves(v, f"{path}.{k}")
    elif isinstance(value, (list, tuple)) and any(
            isinstance(v, (np.ndarray, dict)) or dataclasses.is_dataclass(v) for v in value):
        for i, v in enumerate(value):
            yield from leaves(v, f"{path}[{i}]")
    else:
        yield path, value


def digests(value: object, name: str) -> dict[str, str]:
    return {path: digest(leaf) for path, leaf in leaves(value, name)}


def tiny_folders(root: Path) -> dict[str, Path]:
    """The tests' tiny random folders: a lab checkpoint (tests/tiny_model.py) and GPT-2, Llama,
    T5 and BERT (tests/unit/test_hf_recorder.py's build, saved by tests/hf_folders.py)."""
    from tests.tiny_model import save_tiny_checkpoint
    from tests.unit.test_hf_recorder import build

    try:  # the suite's one folder builder (issue 55 item 5); before it, test_hf's
        from tests.hf_folders import save_families
    except ImportError:
        from tests.unit.test_hf import save_families

    families = ("gpt2", "llama", "t5", "bert")
    save_families(root, families, build)
    folders = {f"tiny_{f}": root / f for f in families}
    folders["tiny_lab"] = save_tiny_checkpoint(root / "lab")
    return folders


def shipped_folders() -> dict[str, Path]:
    return {name: Path("checkpoints") / name for name in ("paper", "seed001", "lm", "minilm")}


def jobs(name: str, bundle) -> list[tuple[str, Callable[[], object]]]:
    """What is digested for one model: its Trace of fixed inputs, and for the shipped
    translators and lm the analyses named in issue 55 item 9."""
    from model import capture, capture_long, translate
    from model.analysis import detect_heads
    from model.analysis.composition import composition_scores
    from model.backends import capabilities
    from model.patching import patch

    caps = capabilities(bundle)
    lines = (TRANSLATOR_LINES if caps.translates
             else TINY_LINES if name.startswith("tiny_") else ENGLISH_LINES)
    first = next(iter(bundle.kinds))
    out: list[tuple[str, Callable[[], object]]] = [
        ("trace", lambda: capture(bundle, lines)),
        ("trace_ablated", lambda: capture(bundle, lines, ablate={(first, 0, 1)})),
    ]
    out.append(("trace_run", lambda: app_run(bundle, lines, caps.translates)))
    if caps.translates:
        out.append(("translate", lambda: translate(bundle, lines)))
    if name in ("paper", "lm"):
        trace = capture(bundle, lines, names=["attn"])
        out += [
            ("patch", lambda: patch(bundle, CLEAN, CORRUPTED)),
            ("detect_heads", lambda: detect_heads(bundle, trace)),
            ("composition", lambda: composition_scores(bundle)),
        ]
    if name == "lm":
        out.append(("capture_long", lambda: capture_long(bundle, LONG_TEXT, pixels=64)))
    return out


def app_run(bundle, lines: list[str], decode: bool) -> object:
    """The app's path (ui/runtime's cached capture): the one model.dispatch.run with every
    need group and a gate that admits at once; before issue 55 item 2, the backend's own run.
    Returns (Trace, the Translations it decoded)."""
    from model.backends import EVERYTHING, backend_for

    def admit(_cost, work):
        return work()

    try:
        from model.dispatch import run as one_run
    except ImportError:  # a checkout from before the one run
        return backend_for(bundle).run(lines, None, None, EVERYTHING, (), admit=admit,
                                       decode=decode)
    return one_run(bundle, lines, None, None, EVERYTHING, (), admit=admit, decode=decode)


def run(only: set[str] | None = None) -> dict:
    import torch

    from model import load_checkpoint

    torch.set_num_threads(1)
    result: dict = {"models": {}, "skipped": {}, "seconds": {}}
    with tempfile.TemporaryDirectory(prefix="trace_hashes_") as tmp:
        folders = {**shipped_folders(), **tiny_folders(Path(tmp))}
        for name, folder in folders.items():
            if only and name not in only:
                continue
            if not (folder / "config.json").is_file():
                result["skipped"][name] = f"{folder} not installed"
                print(f"{name}: skipped ({folder} not installed)", flush=True)
                continue
            bundle = load_checkpoint(folder)
            found: dict[str, str] = {}
            for part, fn in jobs(name, bundle):
                t0 = time.perf_counter()
                torch.manual_seed(0)
                found.update(digests(fn(), part))
                result["seconds"][f"{name}/{part}"] = round(time.perf_counter() - t0, 2)
                print(f"{name}/{part}: {time.perf_counter() - t0:.1f} s", flush=True)
            result["models"][name] = found
    return result


def diff(before: dict, after: dict) -> list[str]:
    """Lines naming every digest that differs, appears or disappears between two runs."""
    lines = []
    for name in sorted(set(before["models"]) | set(after["models"])):
        a, b = before["models"].get(name, {}), after["models"].get(name, {})
        for path in sorted(set(a) | set(b)):
            if a.get(path) != b.get(path):
                lines.append(f"{path} ({name}): {a.get(path, 'absent')[:12]} -> "
                             f"{b.get(path, 'absent')[:12]}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="write the digests to this file")
    parser.add_argument("--only", nargs="*", help="model names (paper, lm, tiny_gpt2, ...)")
    parser.add_argument("--diff", nargs=2, metavar=("BEFORE", "AFTER"),
                        help="compare two JSON files written by --json and exit")
    parser.add_argument("--save", nargs=3, metavar=("PART", "COMMIT_BEFORE", "COMMIT_AFTER"),
                        help="with --diff: keep the comparison in benchmarks/results.json under "
                             "trace_hashes.PART (the two commits the files were made at)")
    args = parser.parse_args(argv)
    if args.diff:
        before, after = (json.loads(Path(p).read_text()) for p in args.diff)
        changed = diff(before, after)
        total = sum(len(m) for m in after["models"].values())
        print("\n".join(changed) or f"identical: {total} digests over "
              f"{len(after['models'])} models")
        if args.save:
            from benchmarks.common import save_results

            part, commit_before, commit_after = args.save
            save_results("trace_hashes", {part: {
                "commit_before": commit_before, "commit_after": commit_after,
                "identical": not changed, "digests": total,
                "models": sorted(after["models"]), "skipped": after.get("skipped", {}),
                "differences": changed}})
        return 1 if changed else 0
    result = run(set(args.only) if args.only else None)
    for name, found in result["models"].items():
        combined = hashlib.sha256("".join(f"{k}={v}" for k, v in sorted(found.items()))
                                  .encode()).hexdigest()
        print(f"{name}: {len(found)} digests, combined {combined[:16]}")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
