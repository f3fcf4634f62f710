"""Finish a training run into the shipped folder: chosen snapshots, and the card's figures.

    python -m training.lm.ship --out checkpoints/lm --work run/lm --keep 16

The card's `training.command` is the one command that trains the whole recipe
(schedule.RECIPE) and ships it; `training.as_run` is what the log says was run, leg by leg.

Snapshots: of every probe's fp16 weights in --work, keep --keep, spread over the run and
denser around the phase change (where the best induction score rises most), always the first
and the last. Then measure the card (figures.py) on the folder through the lab's API and
write card.json.
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from pathlib import Path

import numpy as np

from .history import read_history
from .schedule import RECIPE

COMMAND = ("python -m training.lm.train --out checkpoints/lm --work run/lm --steps 6000 "
           "--batch 16 --every 100 --lr 3e-3 --period 6 24 --threads 1 "
           f"--schedule '{RECIPE}' && python -m training.lm.ship --out checkpoints/lm "
           "--work run/lm")
# why each leg's mix, as the log shows it (kept in the card beside the schedule)
WHY_THE_LEGS = (
    "At 50 % repeated random rows no induction had formed by step 1,500 (random-row loss 6.2, "
    "copying only the run's set of pieces); at 80 % the phase change came at steps "
    "1,600-1,900; at 30 % the text loss fell with both circuits kept. Leg 4 changed the text: "
    "rows of short packed paragraphs (which start afresh several times a row) gave an "
    "in-context learning score of about 0 on held-out rows, so it trains on story excerpts, "
    "long paragraphs whose made-up cast and places recur all through a row (text.py, "
    "story.py), and the held-out rows are drawn the same way.")

PATCH_PRESETS = (
    ("Ravonel: I eat fish. Velkamo: I read a book. Ravonel: I",
     "Velkamo: I eat fish. Ravonel: I read a book. Ravonel: I"),
    ("Ravonel: The cat eats fish. Velkamo: The dog drinks water. Ravonel: The",
     "Velkamo: The cat eats fish. Ravonel: The dog drinks water. Ravonel: The"),
    ("윤하석: 저는 생선을 먹어요. 민서준: 저는 책을 읽어요. 윤하석: 저는",
     "민서준: 저는 생선을 먹어요. 윤하석: 저는 책을 읽어요. 윤하석: 저는"),
)


def choose(steps: list[int], phase: int | None, keep: int) -> list[int]:
    """keep steps: half evenly over the run, half nearest the phase change; first and last."""
    steps = sorted(steps)
    if len(steps) <= keep:
        return steps
    chosen = {steps[0], steps[-1]}
    even = np.linspace(0, len(steps) - 1, keep // 2).round().astype(int)
    chosen.update(steps[i] for i in even)
    if phase is not None:
        for s in sorted(steps, key=lambda s: abs(s - phase)):
            if len(chosen) >= keep:
                break
            chosen.add(s)
    rest = [s for s in steps if s not in chosen]
    while len(chosen) < keep and rest:  # fill evenly from what is left
        chosen.add(rest.pop(len(rest) // 2))
    return sorted(chosen)


def schedule(log: list[dict], first_share: float) -> list[dict]:
    """Where the share of repeated random rows or the text mode changed (resumed legs log
    theirs; probes from before text modes existed are "packed")."""
    legs: list[dict] = []
    for before, rec in zip([None, *log], log):
        mix = {"random_share": rec.get("random_share", first_share),
               "text": rec.get("text", "packed")}
        if not legs or {k: legs[-1][k] for k in mix} != mix:  # resumed from the last probe
            legs.append({"from_step": before["step"] if before else 0, **mix})
    return legs


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default="checkpoints/lm")
    p.add_argument("--work", default="run/lm")
    p.add_argument("--keep", type=int, default=16, help="snapshots, the last step included")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--first-share", type=float, default=0.5,
                   help="the first leg's --random-share (resumed legs log their own)")
    a = p.parse_args(argv)
    import torch

    torch.set_num_threads(a.threads)
    out, work = Path(a.out), Path(a.work)
    history = read_history(out)
    if history is None:
        raise SystemExit(f"{out}/training/log.jsonl is missing: train first")
    phase = history.phase_change()
    available = {int(f.stem.split("_")[1]): f for f in work.glob("step_*.safetensors")}
    last = int(history.steps[-1])
    # the folder's own weights, fp16 like the snapshots, are the last step: that keeps
    # --keep snapshots in (keep) x 2.4 MB under the 40 MB
    keep = choose([s for s in available if s != last], phase, a.keep - 1)
    shutil.copyfile(available[last], out / "model.safetensors")
    snaps = out / "snapshots"
    shutil.rmtree(snaps, ignore_errors=True)
    snaps.mkdir()
    for step in keep:
        shutil.copyfile(available[step], snaps / available[step].name)
    from model.dispatch import load_checkpoint

    from .figures import measure, snapshot_figures

    t0 = time.time()
    bundle = load_checkpoint(str(out))
    figures = measure(bundle)
    per_snapshot = snapshot_figures(bundle, read_history(out))
    log = [json.loads(x) for x in (out / "training" / "log.jsonl").read_text().splitlines()]
    card = {
        "description": "A 2-layer Llama-class language model trained in this project on running "
                       "English and Korean text from the textbook grammar, with repeated "
                       "random-token rows; induction and previous-token heads form in it.",
        "training": {
            "command": COMMAND,
            "as_run": [x for x in (out / "training" / "train.log").read_text().splitlines()
                       if x.startswith(("resumed from", "stopped", "note:"))],
            "steps": last, "tokens": int(log[-1]["tokens"]),
            "seconds": float(log[-1]["seconds"]), "phase_change_step": phase,
            "snapshots": [*keep, last], "weights": "fp16 on disk, loaded as float32",
            "final_probe": {k: log[-1][k] for k in ("val_loss", "icl")},
            "schedule": schedule(log, a.first_share),
            "why_the_legs": WHY_THE_LEGS,
            # the log's val_loss and icl were first taken on one held-out packed row repeated
            # 32 times (a bug in legs 1-3's train.py, fixed since), then on 32 story rows
            "snapshot_figures": per_snapshot,
            "probe_rows_note": "training/log.jsonl's val_loss and icl: to step 2,800 one "
                               "129-piece held-out packed row (legs 1-3's validation set "
                               "repeated one row), after it 32 held-out story rows; "
                               "snapshot_figures and figures: 48 held-out story rows",
            "machine": "this shared 2-core machine, one torch thread, beside other work",
        },
        "figures": figures,
        # the patch view's minimal pairs: swapping who said what changes the piece that the
        # induction head copies after the repeated name
        "patch_presets": [list(p) for p in PATCH_PRESETS],
        "measured_in_seconds": round(time.time() - t0, 1),
    }
    (out / "card.json").write_text(json.dumps(card, indent=1, ensure_ascii=False) + "\n")
    print(json.dumps({k: v for k, v in figures.items() if k != "detectors"}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
