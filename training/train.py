"""Training CLI: python -m training.train --variant paper|seed001 --out checkpoints/<name>.

Both translation directions are trained in one model: the source starts with the target tag
(<2ko> for English->Korean, <2en> for Korean->English). The run is deterministic for a seed and
resumable: its state (weights, optimizer moments, data position, RNG) is written as safetensors
+ JSON into <out>.state/ — nothing is pickled.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import random
import shlex
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import load_file, save_file
from torch import nn
from tqdm import tqdm

from model.backends.lab.checkpoint import save_checkpoint
from model.backends.lab.config import ModelConfig
from model.backends.lab.tokenizer import Tokenizer
from model.backends.lab.transformer import Transformer

from . import corpus, pieces
from .knowledge import write_corpus_words
from .warm import warm_start

VARIANTS = {
    # post-LN, sinusoidal, ReLU: the paper and seeds 000/004
    "paper": ModelConfig(pos_encoding="sinusoidal", norm="post", activation="relu"),
    # pre-LN with a final LayerNorm, learned positions, GELU: seed 001
    "seed001": ModelConfig(pos_encoding="learned", norm="pre", activation="gelu"),
}


def examples(pairs: list[corpus.Pair]) -> list[tuple[str, str, str]]:
    """(target_lang, source, target) for both directions of every pair (one for a pair whose
    `to` names its only direction)."""
    out = []
    for p in pairs:
        if p.to != "en":
            out.append(("ko", p.en, p.ko))
        if p.to != "ko":
            out.append(("en", p.ko, p.en))
    return out


def typed_examples(pairs: list[corpus.Pair], share: float, seed: int
                   ) -> list[tuple[str, str, str]]:
    """Sources as people type them, for a share of the pairs: English all lowercase and/or
    without the final punctuation ("i am a student" -> 저는 학생이에요.), Korean without it;
    the target stays as the grammar wrote it."""
    rng = random.Random(f"typed:{seed}")
    out = []
    for p in pairs:
        if rng.random() >= share:
            continue
        x = rng.random()
        en = p.en.lower() if x < 0.67 else p.en
        if x >= 0.33:
            en = en.rstrip(".?!")
        if p.to != "en":
            out.append(("ko", en, p.ko))
        if rng.random() < 0.5 and p.to != "ko":
            out.append(("en", p.ko.rstrip(".?!"), p.en))
    return out


def encode_examples(tok: Tokenizer, exs, max_len: int) -> list[tuple[list[int], list[int]]]:
    """Source ids ([tag] + pieces + [eos]) and target ids (pieces + [eos]) per example."""
    out = []
    for lang, src, tgt in exs:
        s, _ = tok.source_ids(src, lang, max_len - 1)
        _, t_out = tok.target_ids(tgt, max_len - 1)
        out.append((s, t_out))
    return out


def make_batches(data, max_tokens: int, rng: random.Random) -> list[list[int]]:
    """Length-bucketed batches of example indices holding about max_tokens tokens each."""
    order = list(range(len(data)))
    rng.shuffle(order)
    chunk = max_tokens * 50 // 8  # sort within chunks so lengths are similar but order is random
    batches = []
    for start in range(0, len(order), chunk):
        part = sorted(order[start:start + chunk], key=lambda i: len(data[i][0]) + len(data[i][1]))
        batch, width = [], 0
        for i in part:
            w = max(width, len(data[i][0]), len(data[i][1]) + 1)
            if batch and w * (len(batch) + 1) > max_tokens:
                batches.append(batch)
                batch, w = [], max(len(data[i][0]), len(data[i][1]) + 1)
            batch.append(i)
            width = w
        if batch:
            batches.append(batch)
    rng.shuffle(batches)
    return batches


def collate(tok: Tokenizer, data, idx: list[int]) -> tuple[torch.Tensor, ...]:
    """(B, S) source, (B, T) decoder input [bos]+y, (B, T) labels y+[eos] padded with pad_id."""
    src = tok.pad([data[i][0] for i in idx])
    labels = tok.pad([data[i][1] for i in idx])
    dec_in = tok.pad([[tok.bos_id, *data[i][1][:-1]] for i in idx])
    return torch.from_numpy(src), torch.from_numpy(dec_in), torch.from_numpy(labels)


def lr_at(step: int, peak: float, warmup: int) -> float:
    """Linear warm-up then inverse square root decay (the paper's schedule, rescaled)."""
    step = max(step, 1)
    return peak * min(step / warmup, math.sqrt(warmup / step))


def save_state(folder: Path, model, opt, step: int, epoch: int, pos: int, losses,
               elapsed: float, commands: list[str], warm: dict | None = None) -> None:
    """Everything needed to resume, as safetensors + JSON."""
    folder.mkdir(parents=True, exist_ok=True)
    tensors = {f"model.{k}": v.detach().contiguous() for k, v in model.state_dict().items()}
    opt_state = opt.state_dict()
    for idx, st in opt_state["state"].items():
        for key, val in st.items():
            tensors[f"opt.{idx}.{key}"] = torch.as_tensor(val).contiguous()
    tensors["rng.torch"] = torch.get_rng_state()
    save_file(tensors, str(folder / "state.safetensors"))
    meta = {"step": step, "epoch": epoch, "pos": pos, "losses": losses[-200:], "elapsed": elapsed,
            "commands": commands, "warm_start": warm,
            "param_groups": opt_state["param_groups"]}
    (folder / "state.json").write_text(json.dumps(meta), encoding="utf-8")


def load_state(folder: Path, model, opt) -> dict:
    """Restore what save_state wrote; returns the JSON part."""
    tensors = load_file(str(folder / "state.safetensors"))
    meta = json.loads((folder / "state.json").read_text(encoding="utf-8"))
    model.load_state_dict({k[6:]: v for k, v in tensors.items() if k.startswith("model.")})
    state: dict[int, dict] = {}
    for key, val in tensors.items():
        if key.startswith("opt."):
            _, idx, name = key.split(".", 2)
            state.setdefault(int(idx), {})[name] = val
    opt.load_state_dict({"state": state, "param_groups": meta["param_groups"]})
    torch.set_rng_state(tensors["rng.torch"])
    return meta


def build_tokenizer(path: Path, pairs, vocab_size: int) -> Tokenizer:
    """Load the shared tokenizer, or train it on the training split and save it (see
    training/pieces.py for how the text is prepared so pieces look like words)."""
    if path.is_file():
        return Tokenizer(path)
    tok = pieces.train_tokenizer([p.en for p in pairs], [p.ko for p in pairs], vocab_size)
    path.parent.mkdir(parents=True, exist_ok=True)
    tok.save(path)
    return tok


@torch.no_grad()
def val_loss(model, tok, data, max_tokens: int) -> float:
    """Mean per-token cross-entropy on data (no label smoothing)."""
    was_training = model.training
    model.eval()
    total, count = 0.0, 0
    for idx in make_batches(data, max_tokens, random.Random(0)):
        src, dec_in, labels = collate(tok, data, idx)
        logits = model(src, dec_in)
        loss = nn.functional.cross_entropy(logits.flatten(0, 1), labels.flatten(),
                                           ignore_index=tok.pad_id, reduction="sum")
        total += float(loss)
        count += int(labels.ne(tok.pad_id).sum())
    model.train(was_training)
    return total / max(count, 1)


def parse_args(argv=None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m training.train",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--variant", choices=sorted(VARIANTS), required=True)
    ap.add_argument("--out", required=True, help="checkpoint folder to write")
    ap.add_argument("--steps", type=int, default=6000)
    ap.add_argument("--max-minutes", type=float, default=0,
                    help="stop after this much training time (0: no limit); steps is the cap")
    ap.add_argument("--cooldown-minutes", type=float, default=0,
                    help="with --max-minutes: decay the learning rate linearly to 0 over the "
                         "last N minutes")
    ap.add_argument("--seed-repeat", type=int, default=20,
                    help="extra copies of the anchor pairs (the seed documents' sentences, the "
                         "set phrases, the issue's examples) in training")
    ap.add_argument("--rare-target", type=int, default=0,
                    help="oversample pairs with rare English words to about this many "
                         "sightings per word (0: off); see corpus.rare_copies")
    ap.add_argument("--rare-cap", type=int, default=100, help="most copies of one rare pair")
    ap.add_argument("--frequent-cap", type=int, default=0,
                    help="copies (at most this many) of pairs the grammar draws often but the "
                         "deduplicated split holds once (0: off); see corpus.frequent_copies")
    ap.add_argument("--typed-share", type=float, default=0.0,
                    help="share of training pairs also given with a lowercase / unpunctuated "
                         "source, as people type (0: off)")
    ap.add_argument("--boost", type=int, default=0,
                    help="extra training pairs from the glue and copy-through areas (issue 42; "
                         "0: off); see corpus.boost_pairs")
    ap.add_argument("--boost-area", action="append", default=[], metavar="NAME=N",
                    help="N extra training pairs of one construction (repeatable), e.g. older "
                         "ones a glue warm start unlearns; see corpus.boost_pairs")
    ap.add_argument("--short-kin", type=int, default=0,
                    help="extra English -> Korean pairs saying 'my brother' for 제 형 (0: off); "
                         "see corpus.short_kin_pairs")
    ap.add_argument("--resume", action="store_true", help="continue from <out>.state/")
    ap.add_argument("--init-from", default="",
                    help="start from this checkpoint folder's weights (token rows remapped by "
                         "piece when the tokenizer changed; see training/warm.py)")
    ap.add_argument("--seed", type=int, default=0, help="corpus and training seed")
    ap.add_argument("--n-train", type=int, default=200_000, help="training pairs (×2 directions)")
    ap.add_argument("--n-val", type=int, default=1_000, help="validation pairs")
    ap.add_argument("--n-test", type=int, default=2_000, help="test pairs per direction")
    ap.add_argument("--max-tokens", type=int, default=6000, help="tokens per batch")
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--warmup", type=int, default=600)
    ap.add_argument("--vocab", type=int, default=6000)
    ap.add_argument("--d-model", type=int, default=0, help="model width (0: the variant's)")
    ap.add_argument("--d-ff", type=int, default=0, help="feed-forward width (0: the variant's)")
    ap.add_argument("--tokenizer", default="runs/tokenizer.model",
                    help="shared tokenizer: loaded if present, else trained and saved here")
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0: leave default)")
    ap.add_argument("--eval-every", type=int, default=1000)
    ap.add_argument("--save-every", type=int, default=500)
    ap.add_argument("--tiny", action="store_true", help="a small model, for smoke tests")
    ap.add_argument("--no-eval", action="store_true", help="skip the final test-split evaluation")
    return ap.parse_args(argv)


def boost_area(text: str) -> tuple[str, int]:
    """'clause_purpose=8000' -> ('clause_purpose', 8000); a name outside the corpus is refused."""
    name, sep, n = text.partition("=")
    if not sep or not n.strip().isdigit() or name not in corpus.CONSTRUCTIONS:
        raise SystemExit(f"--boost-area wants NAME=N with NAME one of corpus.CONSTRUCTIONS: "
                         f"{text!r}")
    return name, int(n)


def main(argv=None) -> dict:
    args = parse_args(argv)
    areas = [boost_area(a) for a in args.boost_area]  # checked before the corpus is drawn
    if args.threads:
        torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    out, state_dir = Path(args.out), Path(str(args.out).rstrip("/") + ".state")
    t0 = time.time()
    splits = corpus.splits(seed=args.seed, n_train=args.n_train, n_val=args.n_val,
                           n_test=args.n_test)
    tok = build_tokenizer(Path(args.tokenizer), splits["train"], args.vocab)
    cfg = replace(VARIANTS[args.variant], vocab_size=tok.vocab_size)
    if args.d_model:
        cfg = replace(cfg, d_model=args.d_model)
    if args.d_ff:
        cfg = replace(cfg, d_ff=args.d_ff)
    if args.tiny:
        cfg = replace(cfg, d_model=32, n_heads=2, d_ff=64, n_enc_layers=1, n_dec_layers=1,
                      max_len=64)
    # the seed documents' sentences and the set phrases are what a lecture types first: seen
    # more than once (each is only one sentence among 200k otherwise)
    seeded = examples(splits["train"]) + examples(corpus.ANCHOR_PAIRS) * args.seed_repeat
    if args.rare_target:
        seeded += examples(corpus.rare_copies(splits["train"], args.rare_target, args.rare_cap))
    if args.frequent_cap:
        seeded += examples(corpus.frequent_copies(splits["train"], args.seed,
                                                  cap=args.frequent_cap))
    if args.typed_share:
        seeded += typed_examples(splits["train"], args.typed_share, args.seed)
    if args.boost or args.boost_area:
        taken = {s for name in ("val", "test", "everyday") for p in splits[name]
                 for s in (p.en, p.ko)} | corpus.held_out()
        if args.boost:
            seeded += examples(corpus.boost_pairs(args.boost, args.seed, taken))
        for name, n in areas:
            seeded += examples(corpus.boost_pairs(n, args.seed, taken, construction=name))
    if args.short_kin:
        seeded += examples(corpus.short_kin_pairs(splits["train"], args.short_kin))
    train = encode_examples(tok, seeded, cfg.max_len)
    val = encode_examples(tok, examples(splits["val"]), cfg.max_len)
    model = Transformer(cfg)
    command = "python -m training.train " + shlex.join(sys.argv[1:] if argv is None else argv)
    commands = [command]
    warm = None
    if args.init_from and not (args.resume and (state_dir / "state.json").is_file()):
        warm = {"from": args.init_from, **warm_start(model, tok, args.init_from)}
        earlier_card = Path(args.init_from) / "card.json"
        if earlier_card.is_file():  # what the weights it starts from had been through
            before = json.loads(earlier_card.read_text(encoding="utf-8"))
            warm |= {k: before[k] for k in ("steps", "train_wall_time_s", "warm_start")
                     if k in before}
            earlier_cmds = before.get("command", [])
            commands = [*([earlier_cmds] if isinstance(earlier_cmds, str) else earlier_cmds),
                        command]
        print(f"warm start: {warm}", file=sys.stderr)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.98), eps=1e-9,
                            weight_decay=0.01)
    step, epoch, pos, losses, elapsed0 = 0, 0, 0, [], 0.0
    if args.resume and (state_dir / "state.json").is_file():
        meta = load_state(state_dir, model, opt)
        step, epoch, pos, losses = meta["step"], meta["epoch"], meta["pos"], meta["losses"]
        elapsed0 = meta.get("elapsed", 0.0)
        earlier = meta.get("commands")
        if earlier is None and (out / "card.json").is_file():  # states written before v2
            earlier = [json.loads((out / "card.json").read_text(encoding="utf-8"))["command"]]
        commands = [*(earlier or []), command]
        warm = meta.get("warm_start")  # a resumed warm start still began from those weights
        print(f"resumed from {state_dir} at step {step}", file=sys.stderr)
    batches = make_batches(train, args.max_tokens, random.Random(args.seed * 1000 + epoch))
    bar = tqdm(total=args.steps, initial=step, desc=args.variant, unit="step",
               dynamic_ncols=True, mininterval=2.0)
    tokens_seen, t_start = 0, time.time()
    deadline = t_start + 60 * args.max_minutes - elapsed0 if args.max_minutes else float("inf")
    while step < args.steps:
        if time.time() > deadline:
            bar.write(f"time budget of {args.max_minutes} min reached at step {step}")
            break
        if pos >= len(batches):
            epoch, pos = epoch + 1, 0
            batches = make_batches(train, args.max_tokens, random.Random(args.seed * 1000 + epoch))
        src, dec_in, labels = collate(tok, train, batches[pos])
        pos += 1
        lr = lr_at(step + 1, args.lr, args.warmup)
        if args.cooldown_minutes and args.max_minutes:
            left = deadline - time.time()
            lr *= min(1.0, max(0.0, left / (60 * args.cooldown_minutes)))
        for group in opt.param_groups:
            group["lr"] = lr
        logits = model(src, dec_in)  # (B, T, V)
        loss = nn.functional.cross_entropy(logits.flatten(0, 1), labels.flatten(),
                                           ignore_index=tok.pad_id, label_smoothing=0.1)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        step += 1
        losses.append(round(loss.item(), 4))
        tokens_seen += int(labels.ne(tok.pad_id).sum()) + int(src.ne(tok.pad_id).sum())
        rate = tokens_seen / max(time.time() - t_start, 1e-6)
        bar.set_postfix(loss=f"{np.mean(losses[-50:]):.3f}", tok_s=f"{rate:,.0f}", refresh=False)
        bar.update(1)
        if step % args.eval_every == 0:
            vl = val_loss(model, tok, val, args.max_tokens)
            bar.write(f"step {step}: train {np.mean(losses[-100:]):.3f}  val {vl:.3f}")
        if step % args.save_every == 0:
            save_state(state_dir, model, opt, step, epoch, pos, losses,
                       elapsed0 + time.time() - t_start, commands, warm)
    bar.close()
    wall = elapsed0 + time.time() - t_start
    save_state(state_dir, model, opt, step, epoch, pos, losses, wall, commands, warm)
    model.eval()
    n_params = sum(p.numel() for p in model.parameters())
    card = {
        "name": out.name, "variant": args.variant,
        "command": commands[0] if len(commands) == 1 else commands,
        "corpus_seed": args.seed, "train_pairs": len(splits["train"]),
        "train_pairs_requested": args.n_train, "val_pairs_requested": args.n_val,
        "test_pairs_per_direction": len(splits["test"]),
        "everyday_pairs_per_direction": len(splits["everyday"]), "steps": step,
        "train_wall_time_s": round(wall, 1), "setup_time_s": round(t_start - t0, 1),
        "parameters": n_params, "machine": f"{platform.machine()}, {torch.get_num_threads()} "
                                             "torch threads, CPU",
        "final_train_loss": float(np.mean(losses[-100:])) if losses else None,
        "val_loss": val_loss(model, tok, val, args.max_tokens),
        "default_target_lang": "auto",
        **({"warm_start": warm} if warm else {}),
        "lexicon_lemmas": corpus.lexicon_size(),
        "tokenizer": {"vocab_size": tok.vocab_size,
                      "one_piece_share_top500": pieces.one_piece_shares(
                          tok, [p.en for p in splits["train"]], [p.ko for p in splits["train"]])},
    }
    save_checkpoint(model, tok, out, card)
    # the words the model saw, for the out-of-lexicon notice (knowledge.unknown_words)
    write_corpus_words(out, splits["train"])
    # the validation split, so the app reads it instead of regenerating 200k pairs to reach it
    corpus.write_pairs(out / corpus.VAL_FILE, splits["val"])
    if not args.no_eval:
        from .evaluate import evaluate_folder

        card["metrics"] = evaluate_folder(out, seed=args.seed, n_test=args.n_test,
                                          n_train=args.n_train, n_val=args.n_val)
        save_checkpoint(model, tok, out, card)
    print(json.dumps({k: v for k, v in card.items() if k != "metrics"}, ensure_ascii=False))
    return card


if __name__ == "__main__":
    main()
