"""The head atlas (issue 56): model.analysis.head_atlas end to end at one torch thread
(captures, per-input metrics, the induction runs, the Jensen–Shannon distances between every
pair of heads, the grouping), against the issue's targets:

  paper       300 validation pairs (half each way, teacher-forced)        <= 30 s
  bert_6x12   a 6 × 12 BERT-shaped encoder (all-MiniLM-L6-v2, unpacked by make; a random
              one of its shape otherwise), 300 English corpus sentences    <= 30 s
  gpt2_12x12  a GPT-2-small-shaped random model (12 × 12, 768 wide), 200 inputs of 64
              tokens                                                        <= 120 s

One run each (a build is tens of seconds), then the plain forward passes of the same inputs
(model.capture recording nothing, the same batches of 32): atlas / plain in wall-clock seconds,
and the same ratio in this process's CPU seconds. The wall ratio moves with the other sessions'
load between the two timings (the same code read 1.65x and 1.03x on the GPT-2 shape); the CPU
ratio, which counts only the work done here, is the one to compare across runs. The load
average beside the figures says how shared the machine was.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import torch

from benchmarks.common import ROOT, Report, paper_bundle

TARGETS = {"paper": 30.0, "bert_6x12": 30.0, "gpt2_12x12": 120.0}
PARTS = tuple(TARGETS)


def _timed(bundle, **kwargs) -> tuple[float, float, object]:
    """(wall seconds, CPU seconds of this process, the atlas) of one head_atlas."""
    from model.analysis.atlas import head_atlas

    start, cpu = time.perf_counter(), time.process_time()
    atlas = head_atlas(bundle, **kwargs)
    return time.perf_counter() - start, time.process_time() - cpu, atlas


def _bert_bundle(tmp: Path):
    """checkpoints/minilm (6 × 12, 384 wide), else a random BERT of that shape."""
    from model import load_checkpoint

    folder = ROOT / "checkpoints" / "minilm"
    if (folder / "config.json").is_file():
        return load_checkpoint(folder), "checkpoints/minilm"
    import transformers as tf

    from benchmarks.big_models import make_tokenizer

    torch.manual_seed(0)
    tf.BertModel(tf.BertConfig(vocab_size=64, hidden_size=384, num_hidden_layers=6,
                               num_attention_heads=12, intermediate_size=1536)).save_pretrained(
        tmp / "bert", safe_serialization=True)
    make_tokenizer(None).save_pretrained(tmp / "bert")
    return load_checkpoint(tmp / "bert"), "a random BERT of MiniLM's shape"


def _gpt2_lines(n: int, tokens: int) -> list[str]:
    """n different lines of `tokens` words, one token each for the word-level tokenizer."""
    from benchmarks.bench_hf import WORDS

    return [" ".join(WORDS[(i * 5 + j * (1 + i % 3)) % len(WORDS)] for j in range(tokens))
            for i in range(n)]


def _plain(bundle, inputs) -> tuple[float, float]:
    """(wall, CPU) seconds of the forward passes alone over the atlas's inputs (nothing
    recorded)."""
    from model import capture

    start, cpu = time.perf_counter(), time.process_time()
    for i in range(0, len(inputs), 32):
        chunk = inputs[i:i + 32]
        for lang in sorted({x.target_lang or "" for x in chunk}):
            group = [x for x in chunk if (x.target_lang or "") == lang]
            targets = [x.target for x in group]
            capture(bundle, [x.source for x in group],
                    None if any(t is None for t in targets) else targets,
                    target_lang=lang or None, names=[])
    return time.perf_counter() - start, time.process_time() - cpu


def _part(name: str, tmp: Path) -> tuple[str, dict]:
    from model import load_checkpoint
    from training.corpus import generate, read_pairs_file

    if name == "paper":
        bundle, what = paper_bundle()
        folder = ROOT / "checkpoints" / "paper" / "val_pairs.tsv"
        pairs = read_pairs_file(folder) if folder.is_file() else generate(300, seed=56)
        seconds, cpu, atlas = _timed(bundle, pairs=pairs, n=300)
    elif name == "bert_6x12":
        bundle, what = _bert_bundle(tmp)
        seconds, cpu, atlas = _timed(bundle, lines=[p.en for p in generate(300, seed=56)])
    else:
        from benchmarks.bench_hf import build

        bundle, what = load_checkpoint(build(tmp / "gpt2")), "random GPT-2-small shape"
        seconds, cpu, atlas = _timed(bundle, lines=_gpt2_lines(200, 64))
    plain, plain_cpu = _plain(bundle, atlas.inputs)
    kind = atlas.kinds[0]
    heads = sum(atlas.layers.values()) * atlas.n_heads
    target = TARGETS[name]
    verdict = "ok" if seconds <= target else "OVER the target"
    line = (f"{name}: {what}, {len(atlas.inputs)} inputs, {heads} heads, "
            f"{len(atlas.groups[kind])} groups of {kind}: {seconds:.1f} s at 1 thread "
            f"(target <= {target:.0f} s: {verdict}); the plain forward passes {plain:.1f} s, "
            f"atlas / plain {seconds / plain:.2f}x; in CPU seconds {cpu:.1f} / {plain_cpu:.1f} = "
            f"{cpu / plain_cpu:.2f}x")
    return line, {"model": what, "inputs": len(atlas.inputs), "heads": heads,
                  "seconds": round(seconds, 2), "target_s": target, "threads": 1,
                  "plain_forward_s": round(plain, 2), "over_plain": round(seconds / plain, 2),
                  "cpu_s": round(cpu, 2), "plain_forward_cpu_s": round(plain_cpu, 2),
                  "over_plain_cpu": round(cpu / plain_cpu, 2),
                  "groups": {k: len(g) for k, g in atlas.groups.items()}}


def main(parts: list[str] | None = None) -> Report:
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    lines, figures = [], {}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for name in parts or PARTS:
                if name not in TARGETS:
                    raise SystemExit(f"no part {name!r}; there are {', '.join(PARTS)}")
                line, figures[name] = _part(name, Path(tmp))
                lines.append(line)
                print(line, flush=True)
    finally:
        torch.set_num_threads(before)
    return Report(lines, figures)


if __name__ == "__main__":
    main()
