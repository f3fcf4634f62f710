"""Bytes and seconds of our bertviz page vs bertviz's own head_view(html_action="return").

Same attention for both: a synthetic 6-layer x 8-head encoder–decoder trace (random softmax
rows) with n source and n target tokens, so each page carries encoder, decoder and cross
attention. Target: our page at most 1/5 of bertviz's bytes at 128 tokens.
"""

from __future__ import annotations

import time

import numpy as np

from model import Trace
from viz.bertviz_embed import BertvizTooLarge, bertviz_html

SIZES = (64, 128, 256)
LAYERS, HEADS = 6, 8


def synthetic_trace(n: int, seed: int = 0) -> Trace:
    """One sentence, n source and n target tokens, random attention for the three kinds."""
    rng = np.random.default_rng(seed)
    attn = {}
    for kind in ("enc_self", "dec_self", "cross"):
        logits = rng.normal(size=(LAYERS, 1, HEADS, n, n)).astype(np.float32)
        e = np.exp(logits - logits.max(-1, keepdims=True))
        attn[kind] = e / e.sum(-1, keepdims=True)
    src = [f"▁s{i}" for i in range(n)]
    tgt = [f"▁t{i}" for i in range(n)]
    ids = np.ones((1, n), np.int64)
    return Trace(src_tokens=[src], tgt_tokens=[tgt], src_ids=ids, tgt_ids=ids,
                 masks={k: np.zeros((1, n, n), bool) for k in attn}, scores={}, attn=attn,
                 q={}, k={}, v={}, hidden={}, pos_table=np.zeros((1, 8), np.float32),
                 logits=None)


def _timed(fn, *args, **kwargs):
    start = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - start


def theirs(trace: Trace) -> str:
    import torch
    from bertviz import head_view

    def layers(kind: str) -> list:
        return [torch.from_numpy(a) for a in trace.attn[kind]]  # each (1, H, Q, K)

    return head_view(encoder_attention=layers("enc_self"), decoder_attention=layers("dec_self"),
                     cross_attention=layers("cross"), encoder_tokens=trace.src_tokens[0],
                     decoder_tokens=trace.tgt_tokens[0], html_action="return").data


def _verdict(trace: Trace) -> str:
    """Whether the app would show the head view of this trace, or why not."""
    try:
        bertviz_html(trace, 0, "head")
    except BertvizTooLarge as exc:
        return "refused: " + ("too many lines" if exc.lines else "over the byte budget")
    return "shown"


def main() -> list[str]:
    bertviz_html(synthetic_trace(4), 0)  # read the JavaScript files once, outside the timing
    lines = [f"{LAYERS} layers x {HEADS} heads, encoder+decoder+cross, n source = n target",
             f"{'n':>5} {'ours MB':>9} {'ours s':>7} {'bertviz MB':>11} {'bertviz s':>10} "
             f"{'bytes ratio':>12}  with the app's default limits"]
    for n in SIZES:
        trace = synthetic_trace(n)
        ours, t_ours = _timed(bertviz_html, trace, 0, "head", budget_bytes=10**10,
                              max_lines=10**12)
        ref, t_ref = _timed(theirs, trace)
        b_ours, b_ref = len(ours.encode()), len(ref.encode())
        del ours, ref
        lines.append(f"{n:>5} {b_ours / 1e6:>9.2f} {t_ours:>7.2f} {b_ref / 1e6:>11.1f} "
                     f"{t_ref:>10.2f} {f'1/{b_ref / b_ours:.1f}':>12}  "
                     f"{_verdict(trace)}")
    return lines


if __name__ == "__main__":
    print("\n".join(main()))
