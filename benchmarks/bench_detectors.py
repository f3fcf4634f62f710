"""Head detectors (issue 25) on a GPT-2-small-shaped random model (12 layers x 12 heads, 768
wide, vocabulary 50,257) at 512 tokens, beside the plain forward in one run:

(a) the first detector table: previous-token, duplicate-token and sink from the captured
    Trace alone (what the heads view shows first), target <= 3 s after the capture;
(b) all five detectors, with the induction run (4 x 49 random ids) and the shuffled input;
(c) the capture itself (names=["attn"]), for scale.
Medians of interleaved repeats; ratios to the plain forward (tokenize + forward, nothing
recorded).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import torch

from benchmarks.bench_hf import build, text
from benchmarks.common import Report, median_times

TARGET_S = 3.0


def main() -> Report:
    from model import capture, load_checkpoint
    from model.analysis.detectors import detect_heads, quick_detectors

    with tempfile.TemporaryDirectory() as tmp:
        bundle = load_checkpoint(build(Path(tmp) / "gpt2"))
        line = text()
        tok = bundle.tokenizer
        trace = capture(bundle, [line], names=["attn"])
        n = len(trace.tgt_tokens[0])

        def plain():
            ids = torch.tensor([tok(line)["input_ids"]])
            with torch.inference_mode():
                bundle.model(input_ids=ids, attention_mask=torch.ones_like(ids), use_cache=False)

        t_plain, t_capture, t_quick, t_all = median_times(
            [plain, lambda: capture(bundle, [line], names=["attn"]),
             lambda: quick_detectors(trace), lambda: detect_heads(bundle, trace)],
            repeat=5, warmup=1)
    verdict = "ok" if t_quick <= TARGET_S else "SLOWER than target"
    lines = [
        f"GPT-2-small shape (12 x 12, 768 wide, vocab 50257), {n} tokens, torch threads "
        f"{torch.get_num_threads()}",
        f"plain forward {t_plain * 1e3:.0f} ms; capture (attention) {t_capture * 1e3:.0f} ms = "
        f"{t_capture / t_plain:.2f}x",
        f"first detector table (previous, duplicate, sink) {t_quick * 1e3:.0f} ms after the "
        f"capture = {t_quick / t_plain:.2f}x plain (target <= {TARGET_S:.0f} s: {verdict})",
        f"all five detectors (two runs of the model included) {t_all * 1e3:.0f} ms = "
        f"{t_all / t_plain:.2f}x plain",
    ]
    figures = {"gpt2_512": {
        "tokens": n, "plain_ms": round(t_plain * 1e3, 1),
        "capture_attn_ms": round(t_capture * 1e3, 1),
        "first_table_ms": round(t_quick * 1e3, 1),
        "all_detectors_ms": round(t_all * 1e3, 1),
        "first_table_over_plain": round(t_quick / t_plain, 3),
        "all_detectors_over_plain": round(t_all / t_plain, 3),
        "target_s": TARGET_S}}
    return Report(lines, figures)


if __name__ == "__main__":
    print("\n".join(main().lines))
