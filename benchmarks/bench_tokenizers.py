"""The tokenizer-size comparison behind README's **Pieces.** paragraph, trained again.

sizes: the four candidates the README compares (unigram asking for 8,000 pieces; BPE 6,000,
    8,000 and 16,000 (shipped)), each trained by training.pieces.train_tokenizer, the
    function training/train.py trains the shipped one with, on the same training split:
    corpus.splits with the shipped cards' corpus_seed and split sizes, so the same prepared
    text (pieces.training_lines: particles split off, English case variants). Each is measured
    as training measures the card: pieces.one_piece_shares on that split (share of the 500 most
    frequent words that are one piece), plus mean pieces per training sentence (English /
    Korean, as written) and how `겨울은 추워요.` splits. The BPE 6,000 model is also compared
    piece by piece with the shipped checkpoints/paper/tokenizer.model.

SentencePiece trains in memory (no files); the process is pinned to one core while it trains,
so its worker threads take one core of the shared machine.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Sequence

from benchmarks.common import ROOT, Report, run_parts

# (results name, README label, model_type, vocabulary asked)
CANDIDATES: tuple[tuple[str, str, str, int], ...] = (
    ("unigram_8000", "unigram", "unigram", 8000),
    ("bpe_6000", "BPE", "bpe", 6000),
    ("bpe_8000", "BPE", "bpe", 8000),
    ("bpe_16000", "BPE", "bpe", 16000),
)
EXAMPLE = "겨울은 추워요."
CARD = ROOT / "checkpoints" / "paper" / "card.json"
SHIPPED = "bpe_16000"  # what the shipped cards' --vocab 16000 trains


def measure(tok, en: Sequence[str], ko: Sequence[str]) -> dict:
    """The README table's columns for one tokenizer on one split's sentences."""
    from training.pieces import one_piece_shares

    def per_sentence(lines: Sequence[str]) -> float:
        return round(sum(len(tok.pieces(s)) for s in lines) / max(len(lines), 1), 2)

    return {"vocab_size": tok.vocab_size,
            "one_piece_share_top500": one_piece_shares(tok, en, ko),
            "pieces_per_sentence": {"en": per_sentence(en), "ko": per_sentence(ko)},
            "example": " ".join(tok.pieces(EXAMPLE))}


def compare(en: Sequence[str], ko: Sequence[str], candidates=CANDIDATES) -> dict[str, dict]:
    """Train each candidate on (en, ko) as training does and measure it: {name: figures}."""
    from training.pieces import train_tokenizer

    found = {}
    cores = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(cores)})  # SentencePiece's threads share one core
    try:
        for name, _, model_type, vocab in candidates:
            t0 = time.perf_counter()
            tok = train_tokenizer(en, ko, vocab, model_type=model_type)
            train_s = time.perf_counter() - t0
            found[name] = {"model_type": model_type, "vocab_asked": vocab,
                           "train_s": round(train_s, 1), **measure(tok, en, ko), "_tok": tok}
    finally:
        os.sched_setaffinity(0, cores)
    return found


def same_pieces(a, b) -> bool:
    """Whether two tokenizers hold the same pieces in the same order."""
    return a.vocab_size == b.vocab_size and all(
        a.id_to_piece(i) == b.id_to_piece(i) for i in range(a.vocab_size))


def sizes() -> tuple[list[str], dict]:
    """The four candidates on the shipped training split."""
    from model import Tokenizer
    from training import corpus

    card = json.loads(CARD.read_text(encoding="utf-8"))
    t0 = time.perf_counter()
    train = corpus.splits(seed=card["corpus_seed"], n_train=card["train_pairs_requested"],
                          n_val=card["val_pairs_requested"],
                          n_test=card["test_pairs_per_direction"])["train"]
    corpus_s = time.perf_counter() - t0
    en, ko = [p.en for p in train], [p.ko for p in train]
    found = compare(en, ko)
    shipped = Tokenizer(CARD.parent / "tokenizer.model")
    same = same_pieces(found[SHIPPED].pop("_tok"), shipped)
    for f in found.values():
        f.pop("_tok", None)
    figures = {"train_pairs": len(train), "corpus_seed": card["corpus_seed"],
               "corpus_s": round(corpus_s, 1), "shipped": SHIPPED,
               "same_pieces_as_shipped": same,
               "shipped_card": card["tokenizer"], "tokenizers": found}
    lines = [f"training split: {len(train):,} pairs (corpus seed {card['corpus_seed']}), "
             f"generated in {corpus_s:.1f} s"]
    for name, f in found.items():
        s, p = f["one_piece_share_top500"], f["pieces_per_sentence"]
        lines.append(f"{name}: {f['vocab_size']:,} pieces in {f['train_s']:.1f} s; one piece: "
                     f"en {s['en_lower']} / {s['en_capitalised']} %, ko stems {s['ko_stems']} %, "
                     f"ko words {s['ko_words']} %; pieces per sentence {p['en']} / {p['ko']}; "
                     f"{EXAMPLE} -> {f['example']}")
    lines.append(f"{SHIPPED} has the same pieces as checkpoints/paper/tokenizer.model: {same}")
    return lines, figures


PARTS = {"sizes": sizes}


def main(parts: list[str] | None = None) -> Report:
    """Run the named parts (all by default) and return their lines and figures."""
    return run_parts("bench_tokenizers", PARTS, parts)


if __name__ == "__main__":
    for line in main().lines:
        print(line)
