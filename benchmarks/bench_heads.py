"""Importance scan over every head for one short sentence (issue 7; target <= 3 s)."""

from __future__ import annotations

import torch

from benchmarks.common import Report, median_times, paper_bundle
from model import translate
from model.analysis.ablation import all_heads, importance_scan
from model.backends.lab.decode import source_batch

SENTENCE = "The big dog eats the fish."
TARGET_S = 3.0


def _bundle():
    """checkpoints/paper, else a random 3+3 × 4-head d_model-128 model with ~3000 pieces."""
    bundle, label = paper_bundle()
    if label == "checkpoints/paper":
        return bundle, label
    try:
        from model import Bundle, ModelConfig, Tokenizer, Transformer
        from training.corpus import generate
    except ImportError:  # no corpus generator yet: the smaller-vocabulary stand-in
        return bundle, label
    pairs = generate(4000, seed=0)
    tok = Tokenizer.train([p.en for p in pairs] + [p.ko for p in pairs], vocab_size=3000)
    cfg = ModelConfig(vocab_size=tok.vocab_size, d_model=128, n_heads=4, d_ff=512,
                      n_enc_layers=3, n_dec_layers=3, max_len=520)
    torch.manual_seed(0)
    return Bundle(Transformer(cfg).eval(), tok, cfg, {}, "random"), "random paper-shaped model"


def main() -> Report:
    bundle, label = _bundle()
    tok = bundle.tokenizer
    done = translate(bundle, [SENTENCE], "ko")[0]
    src, _, _ = source_batch(bundle, [SENTENCE], ["ko"])
    tgt = torch.tensor([[tok.bos_id, *done.ids]])
    reference = done.text

    def plain():
        with torch.inference_mode():
            bundle.model(src, tgt)

    def scan():
        importance_scan(bundle, SENTENCE, "ko")

    def scan_forced():  # the batched ablation forward alone, no greedy decoding
        importance_scan(bundle, SENTENCE, "ko", target=reference)

    def greedy():
        translate(bundle, [SENTENCE], "ko")

    t_plain, t_scan, t_forced, t_greedy = median_times([plain, scan, scan_forced, greedy],
                                                       repeat=5, warmup=1)
    n = len(all_heads(bundle))
    verdict = "ok" if t_scan <= TARGET_S else "SLOWER than target"
    figures = {"scan": {"model": label, "sentence": SENTENCE, "heads": n,
                        "source_pieces": int(src.size(1)), "target_pieces": int(tgt.size(1)),
                        "scan_s": round(t_scan, 4), "forced_scan_s": round(t_forced, 4),
                        "greedy_s": round(t_greedy, 4), "plain_forward_s": round(t_plain, 5),
                        "repeat": 5, "torch_threads": torch.get_num_threads()}}
    return Report([
        f"model: {label} (vocab {bundle.config.vocab_size}), torch threads "
        f"{torch.get_num_threads()}",
        f"sentence: {SENTENCE!r}: {src.size(1)} source / {tgt.size(1)} target pieces, "
        f"{n} heads",
        f"importance scan: {t_scan:.3f} s (target <= {TARGET_S:.0f} s: {verdict}); "
        f"{t_scan / t_plain:.1f}x one plain forward ({t_plain * 1e3:.1f} ms)",
        f"  of which greedy translation {t_greedy * 1e3:.1f} ms; teacher-forced scan alone "
        f"{t_forced * 1e3:.1f} ms ({t_forced / t_plain:.1f}x a forward, "
        f"{n + 1} rows in one batch)",
    ], figures)


if __name__ == "__main__":
    print("\n".join(main().lines))
