"""What a trained language model's folder keeps of its training: the probe log and snapshots.

    <folder>/training/log.jsonl             one JSON object per probe (train.py writes it)
    <folder>/snapshots/step_NNNNNN.safetensors   fp16 weights at chosen steps
    <folder>/model.safetensors              the last step (fp16 too), counted as a snapshot

Read defensively: the folder may be an operator's, so a bad line is skipped and counted, and
a snapshot is opened with safetensors only (never unpickled).

Shape legend
    S probes (steps)   L layers   H heads
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import torch

from model.checkpoint import Bundle, CheckpointError

DETECTORS = ("induction", "previous_token", "sink")
_SNAPSHOT = re.compile(r"step_(\d{6})\.safetensors")
MAX_LOG_BYTES = 20_000_000


@dataclass
class History:
    """A training run as the view draws it."""

    steps: np.ndarray  # (S,) int
    series: dict[str, np.ndarray]  # val_loss, icl, train_loss_text, ... (S,) float, NaN = none
    heads: dict[str, np.ndarray]  # detector -> (S, L, H)
    snapshots: dict[int, Path] = field(default_factory=dict)  # step -> file
    skipped: int = 0  # log lines that could not be read

    def phase_change(self, detector: str = "induction") -> int | None:
        """The step after the largest rise of the best head's score between two probes."""
        best = self.heads[detector].reshape(len(self.steps), -1).max(axis=1)
        if len(best) < 2:
            return None
        rise = np.diff(best)
        i = int(np.argmax(rise))
        return int(self.steps[i + 1]) if rise[i] > 0.05 else None

    def at(self, step: int) -> int:
        """Index of the probe nearest to step."""
        return int(np.argmin(np.abs(self.steps - step)))


def _number(v) -> float:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else np.nan


def read_history(folder: str | Path) -> History | None:
    """The folder's training history, or None when it keeps none."""
    folder = Path(folder)
    log = folder / "training" / "log.jsonl"
    if not log.is_file():
        return None
    if log.stat().st_size > MAX_LOG_BYTES:
        raise CheckpointError(log, f"is over {MAX_LOG_BYTES // 1_000_000} MB")
    rows, skipped = [], 0
    for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            rec = json.loads(line)
            shape = np.asarray(rec["induction"], dtype=float).shape
            if not isinstance(rec.get("step"), int) or len(shape) != 2:
                raise ValueError
            if any(np.asarray(rec[d], dtype=float).shape != shape for d in DETECTORS):
                raise ValueError
        except (ValueError, KeyError, TypeError, RecursionError):  # [[[… nested deep
            skipped += 1
            continue
        if rows and shape != np.asarray(rows[0]["induction"]).shape:
            skipped += 1
            continue
        rows.append(rec)
    if not rows:
        raise CheckpointError(log, "holds no readable probe")
    rows.sort(key=lambda r: r["step"])
    names = ("val_loss", "icl", "train_loss_text", "train_loss_random")
    snaps = {}
    for p in sorted((folder / "snapshots").glob("step_*.safetensors")):
        m = _SNAPSHOT.fullmatch(p.name)
        if m:
            snaps[int(m.group(1))] = p
    final = folder / "model.safetensors"  # the folder's own weights are the last step's
    if rows[-1]["step"] not in snaps and final.is_file():
        snaps[rows[-1]["step"]] = final
    return History(steps=np.array([r["step"] for r in rows]),
                   series={n: np.array([_number(r.get(n)) for r in rows]) for n in names},
                   heads={d: np.array([r[d] for r in rows], dtype=float) for d in DETECTORS},
                   snapshots=snaps, skipped=skipped)


def snapshot_bundle(bundle: Bundle, path: Path, step: int) -> Bundle:
    """A copy of bundle whose model holds the snapshot's weights (fp16 on disk -> the model's
    dtype); the tied output embedding follows the input one."""
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    try:
        state = load_file(str(path))
    except (SafetensorError, OSError, ValueError) as exc:
        raise CheckpointError(path, f"is not a readable safetensors file ({exc})") from None
    model = copy.deepcopy(bundle.model)
    own = model.state_dict()
    dtype = next(model.parameters()).dtype
    missing = [k for k in own if k not in state and k != "lm_head.weight"]
    wrong = [k for k, v in state.items() if k not in own or tuple(v.shape) != tuple(own[k].shape)]
    if missing or wrong:
        raise CheckpointError(path, f"does not fit the model ({len(missing)} missing, "
                              f"{len(wrong)} unexpected or misshapen tensors)")
    with torch.no_grad():
        model.load_state_dict({k: v.to(dtype) for k, v in state.items()}, strict=False)
    model.eval()
    card = {**bundle.card, "snapshot_step": step}
    return replace(bundle, model=model, card=card, name=f"{bundle.name}@{step}")
