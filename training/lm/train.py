"""Train the lab's small language model: a 2-layer Llama-class decoder with rotary positions.

    python -m training.lm.train --out run/lm --work run/lm/work --lr 3e-3 --period 6 24 \
        --schedule "1500:0.5:packed 2100:0.8:packed 2800:0.3:packed 3400:0.3:story"

Writes a plain Hugging Face folder (config.json, model.safetensors, tokenizer files) that
`AutoModelForCausalLM` / `AutoTokenizer` open with no project code, plus
    training/log.jsonl     one line per probe: step, losses, icl, per-head scores
    training/train.log     what the run printed
    snapshots/step_NNNNNN.safetensors   fp16 weights at chosen steps (same config)

Why Llama-class: rotary positions make "attend one back" a fixed rotation any head can learn
early, so the previous-token head that induction needs forms fast; it also runs the lab's
rotary and grouped-kv paths on trained weights. Two layers: the classic setting in which an
induction head (layer 1) composes with a previous-token head (layer 0).

Shape legend
    B rows per step   T context (128)   V vocabulary (2,048)   L layers   H heads
"""

from __future__ import annotations

import argparse
import json
import math
import random
import shlex
import sys
import time
from pathlib import Path

import numpy as np
import torch

from . import probes, schedule, text, vocab

CONTEXT = 128
ARCH = dict(vocab_size=2048, hidden_size=192, intermediate_size=512, num_hidden_layers=2,
            num_attention_heads=6, num_key_value_heads=3, max_position_embeddings=CONTEXT,
            rope_theta=10000.0, rms_norm_eps=1e-5, tie_word_embeddings=True,
            bos_token_id=0, eos_token_id=1, pad_token_id=3)


class Rows:
    """Training rows of CONTEXT + 1 ids: packed paragraphs, or a random run repeated."""

    def __init__(self, tokenizer, seed: int, random_share: float = text.RANDOM_SHARE,
                 period: tuple[int, int] = (8, 64), mode: str = "packed"):
        self.tok, self.r, self.period = tokenizer, random.Random(seed), period
        self.paras = text.paragraphs(seed, mode)
        self.random_share = random_share
        self.first = len(vocab.SPECIALS)

    def natural(self) -> list[int]:
        """<s> paragraph </s> paragraph ... cut to CONTEXT + 1."""
        ids = [0]
        while len(ids) < CONTEXT + 1:
            ids += self.tok(next(self.paras), add_special_tokens=False)["input_ids"] + [1]
        return ids[:CONTEXT + 1]

    def repeated(self) -> list[int]:
        """<s> then one random run of (period) pieces, repeated to the end."""
        n = self.r.randint(*self.period)
        run = [self.r.randrange(self.first, self.tok.vocab_size) for _ in range(n)]
        return ([0] + run * (CONTEXT // n + 2))[:CONTEXT + 1]

    def batch(self, rows: int) -> tuple[torch.Tensor, torch.Tensor]:
        """(B, T + 1) ids and (B,) whether each row is random."""
        kinds = [self.r.random() < self.random_share for _ in range(rows)]
        ids = [self.repeated() if k else self.natural() for k in kinds]
        return torch.tensor(ids), torch.tensor(kinds)


def lr_at(step: int, steps: int, peak: float, warmup: int) -> float:
    """Linear warmup, then cosine down to a tenth of the peak."""
    if step < warmup:
        return peak * (step + 1) / warmup
    t = min(1.0, (step - warmup) / max(1, steps - warmup))
    return peak * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * t)))


@torch.no_grad()
def probe(model, val: torch.Tensor, rep: torch.Tensor) -> dict:
    """Held-out loss, icl and the per-head scores, with eager attention."""
    model.eval()
    model.set_attn_implementation("eager")
    losses = probes.token_losses(model, val)
    scores = probes.text_scores(model, val[:8])
    scores["induction"] = probes.induction_scores(model, rep)
    model.set_attn_implementation("sdpa")
    model.train()
    return {"val_loss": float(losses.mean()), "icl": probes.icl_score(losses, CONTEXT),
            **{k: np.round(v, 4).tolist() for k, v in scores.items()}}


def save_snapshot(model, path: Path) -> None:
    """fp16 weights, tied embedding once."""
    from safetensors.torch import save_file
    state = {k: v.detach().to(torch.float16).contiguous() for k, v in model.state_dict().items()
             if k != "lm_head.weight"}
    save_file(state, str(path))


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default="checkpoints/lm")
    p.add_argument("--work", default="run/lm", help="every snapshot goes here first")
    p.add_argument("--steps", type=int, default=6000,
                   help="the cosine schedule's length (and the last step without --schedule)")
    p.add_argument("--schedule", default="",
                   help=f"legs END:RANDOM_SHARE:TEXT run one after the other, each going on "
                        f"from the last (checkpoints/lm: \"{schedule.RECIPE}\")")
    p.add_argument("--minutes", type=float, default=0, help="stop a leg early after this long")
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--warmup", type=int, default=150)
    p.add_argument("--every", type=int, default=100, help="probe and snapshot every N steps")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--hidden", type=int, default=ARCH["hidden_size"])
    p.add_argument("--random-share", type=float, default=text.RANDOM_SHARE)
    p.add_argument("--text", choices=text.MODES, default="packed", help="text rows' mode")
    p.add_argument("--period", type=int, nargs=2, default=(8, 64), help="random run lengths")
    p.add_argument("--resume-from", type=int, default=0,
                   help="go on from this step's snapshot in --work (new data mix allowed)")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    a = parse_args(argv)
    legs = (schedule.parse(a.schedule) if a.schedule
            else [schedule.Leg(a.steps, a.random_share, a.text)])
    for first, leg in schedule.remaining(legs, a.resume_from):
        train_leg(a, first, leg, argv if argv is not None else sys.argv[1:])
    return 0


def train_leg(a: argparse.Namespace, first: int, leg: schedule.Leg, argv: list[str]) -> None:
    """Train from step `first` (0: from scratch, with a new tokenizer) to leg.end."""
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    from transformers import LlamaConfig, LlamaForCausalLM

    out, work = Path(a.out), Path(a.work)
    (out / "training").mkdir(parents=True, exist_ok=True)
    work.mkdir(parents=True, exist_ok=True)
    offset, tokens = 0.0, 0
    if first:  # keep the log up to the snapshot we go on from; its clock goes on too
        kept = [x for x in (out / "training" / "log.jsonl").read_text().splitlines()
                if json.loads(x)["step"] <= first]
        offset, tokens = json.loads(kept[-1])["seconds"], json.loads(kept[-1])["tokens"]
        (out / "training" / "log.jsonl").write_text("".join(x + "\n" for x in kept))
    logf = open(out / "training" / "log.jsonl", "a" if first else "w")
    printed = open(out / "training" / "train.log", "a" if first else "w")

    def say(msg: str) -> None:
        print(msg, flush=True)
        printed.write(msg + "\n")
        printed.flush()

    t0 = time.time()
    if first:
        from transformers import PreTrainedTokenizerFast
        tok = PreTrainedTokenizerFast.from_pretrained(str(out))
    else:
        paras = text.paragraphs(a.seed + 1_000)
        tok = vocab.train_tokenizer((next(paras) for _ in range(20_000)), ARCH["vocab_size"])
        vocab.save(tok, out)
        say(f"tokenizer: {tok.vocab_size} pieces in {time.time() - t0:.0f} s")

    cfg = LlamaConfig(**{**ARCH, "hidden_size": a.hidden, "vocab_size": tok.vocab_size})
    model = LlamaForCausalLM(cfg)
    model.set_attn_implementation("sdpa")
    if first:
        from safetensors.torch import load_file
        state = load_file(str(work / f"step_{first:06d}.safetensors"))
        model.load_state_dict({k: v.float() for k, v in state.items()}, strict=False)
        say(f"resumed from step {first} (fp16 snapshot, fresh optimizer) for leg {leg}: "
            f"{shlex.join(argv)}")
    n_params = sum(p.numel() for p in model.parameters())
    say(f"model: {n_params:,} parameters; {json.dumps(ARCH)}")
    rows = Rows(tok, a.seed + first, leg.random_share, tuple(a.period), leg.text)
    # probe rows: 32 held-out story rows, the text the in-context learning score is about
    held = Rows(tok, 999, 0.0, mode="story")
    val = torch.tensor([held.natural() for _ in range(32)])
    rep = probes.random_repeats(tok.vocab_size, 16, seed=7)
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    other = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.05},
                             {"params": other, "weight_decay": 0.0}],
                            lr=a.lr, betas=(0.9, 0.95))
    start = time.time() - offset
    recent: list[tuple[float, float]] = []
    for step in range(first, leg.end + 1):
        if (step % a.every == 0 or step == leg.end) and not (first and step == first):
            rec = {"step": step, "seconds": round(time.time() - start, 1),
                   "tokens": tokens + (step - first) * a.batch * CONTEXT,
                   "random_share": leg.random_share, "text": leg.text,
                   **probe(model, val, rep)}
            if recent:
                nat = [x for x, r in recent if not r]
                ran = [x for x, r in recent if r]
                rec["train_loss_text"] = round(float(np.mean(nat)), 4) if nat else None
                rec["train_loss_random"] = round(float(np.mean(ran)), 4) if ran else None
            recent = []
            logf.write(json.dumps(rec) + "\n")
            logf.flush()
            save_snapshot(model, work / f"step_{step:06d}.safetensors")
            say(f"step {step:5d} {rec['seconds']:6.0f}s val {rec['val_loss']:.3f} "
                f"icl {rec['icl']:+.3f} ind {np.max(rec['induction']):.2f} "
                f"prev {np.max(rec['previous_token']):.2f} sink {np.max(rec['sink']):.2f}")
            if step == leg.end or (a.minutes and time.time() - start - offset > a.minutes * 60):
                break
        ids, kinds = rows.batch(a.batch)
        for g in opt.param_groups:
            # after a resume the fresh optimizer warms up again over `warmup` steps
            g["lr"] = lr_at(step, a.steps, a.lr, a.warmup) * (
                min(1.0, (step - first + 1) / a.warmup) if first else 1.0)
        logits = model(input_ids=ids[:, :-1]).logits
        loss_rows = torch.nn.functional.cross_entropy(
            logits.transpose(1, 2), ids[:, 1:], reduction="none").mean(dim=1)
        loss = loss_rows.mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        recent += [(float(x), bool(k)) for x, k in zip(loss_rows.detach(), kinds)]
    model.save_pretrained(str(out))
    say(f"done: leg {leg} at step {step}, {time.time() - start:.0f} s")
    logf.close()
    printed.close()


if __name__ == "__main__":
    raise SystemExit(main())
