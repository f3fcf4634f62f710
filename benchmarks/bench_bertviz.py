"""Bytes and seconds of our bertviz page vs bertviz's own head_view(html_action="return").

Both sides draw the same thing: a synthetic 6-layer x 8-head encoder–decoder trace (random
softmax rows) with n source and n target tokens, so each page carries encoder, decoder and
cross attention, every layer and head, every token (nothing block-averaged).

- like for like: both pages get the values rounded to 3 decimals, so they carry the same
  numbers and only the encodings differ (ours: integer thousandths, once; bertviz: decimal
  text, written twice by its template);
- as sent: ours as the app sends it (rounded to 3 decimals) against bertviz as its users call
  it, on float32 attention, which it prints as full floats (0.12300000339746475).

Our page inlines d3 and jQuery (bertviz's loads them from a CDN); their size is counted in ours.
Times are medians of REPEAT interleaved rounds after one warm-up call of each side (imports and
file reads stay outside the timing). Target: our page at most 1/5 of bertviz's bytes at 128.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from benchmarks.common import Report, median_times
from model import Trace
from viz.bertviz_embed import BertvizTooLarge, bertviz_html, d3_js, jquery_js

SIZES = (64, 128, 256)
LAYERS, HEADS = 6, 8
REPEAT = 5
DECIMALS = 3  # what our page sends (viz.bertviz_embed writes integer thousandths)
KINDS = ("enc_self", "dec_self", "cross")


def synthetic_trace(n: int, seed: int = 0) -> Trace:
    """One sentence, n source and n target tokens, random attention for the three kinds."""
    rng = np.random.default_rng(seed)
    attn = {}
    for kind in KINDS:
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


def rounded(trace: Trace, decimals: int = DECIMALS) -> Trace:
    """The trace with its attention rounded, as float64 so that bertviz prints 0.123, not the
    float32 neighbour 0.12300000339746475."""
    attn = {k: np.round(a.astype(np.float64), decimals) for k, a in trace.attn.items()}
    return dataclasses.replace(trace, attn=attn)


def theirs(trace: Trace) -> str:
    """bertviz's own head view page for sentence 0: every layer and head of each kind."""
    import torch
    from bertviz import head_view

    def layers(kind: str) -> list:
        return [torch.from_numpy(a[:1]) for a in trace.attn[kind]]  # each (1, H, Q, K)

    return head_view(encoder_attention=layers("enc_self"), decoder_attention=layers("dec_self"),
                     cross_attention=layers("cross"), encoder_tokens=trace.src_tokens[0],
                     decoder_tokens=trace.tgt_tokens[0], html_action="return").data


def ours(trace: Trace) -> str:
    """Our page with every layer and head, no size limits (the app's limits are in _verdict)."""
    return bertviz_html(trace, 0, "head", budget_bytes=10**10, max_lines=10**12)


def _verdict(trace: Trace) -> str:
    """Whether the app would show the head view of this trace, or why not."""
    try:
        bertviz_html(trace, 0, "head")
    except BertvizTooLarge as exc:
        return "refused: " + ("too many lines" if exc.lines else "over the byte budget")
    return "shown"


def measure(n: int, repeat: int = REPEAT) -> dict:
    """Bytes of the three pages and their median times for an n-token trace."""
    trace = synthetic_trace(n)
    same = rounded(trace)
    b_ours = len(ours(trace).encode())  # as sent: our page rounds to 3 decimals itself
    b_ours_same = len(ours(same).encode())  # like for like: given the same rounded values
    b_same = len(theirs(same).encode())
    b_default = len(theirs(trace).encode())
    # one warm-up call each (imports, file reads), then interleaved rounds
    t_ours, t_same, t_default = median_times(
        [lambda: ours(trace), lambda: theirs(same), lambda: theirs(trace)],
        repeat=repeat, warmup=1)
    return {"n": n, "ours_bytes": b_ours, "ours_rounded_bytes": b_ours_same,
            "bertviz_rounded_bytes": b_same,
            "bertviz_default_bytes": b_default, "ours_s": t_ours, "bertviz_rounded_s": t_same,
            "bertviz_default_s": t_default, "app_verdict": _verdict(trace)}


def main(parts: list[str] | None = None) -> Report:
    import bertviz  # noqa: F401
    import torch  # noqa: F401 - imported here, outside every timing

    ours(synthetic_trace(4))  # read the JavaScript files once, outside the timing
    rows = [measure(n) for n in SIZES]
    libs = len(d3_js().encode()) + len(jquery_js().encode())
    lines = [f"{LAYERS} layers x {HEADS} heads, encoder+decoder+cross, n source = n target; "
             f"medians of {REPEAT} interleaved runs after a warm-up; ours inlines d3+jQuery "
             f"({libs / 1e6:.2f} MB)",
             f"{'n':>5} {'ours MB':>8} {'ours s':>7} | like for like (bertviz given 3 decimals):"
             f" {'MB':>7} {'s':>6} {'ratio':>7} | as sent (bertviz's full floats): {'MB':>7} "
             f"{'s':>6} {'ratio':>7} | app"]
    for r in rows:
        lines.append(
            f"{r['n']:>5} {r['ours_bytes'] / 1e6:>8.2f} {r['ours_s']:>7.2f} | "
            f"{'':>42}{r['bertviz_rounded_bytes'] / 1e6:>7.1f} {r['bertviz_rounded_s']:>6.2f} "
            f"{_ratio(r['bertviz_rounded_bytes'], r['ours_rounded_bytes']):>7} | {'':>31}"
            f"{r['bertviz_default_bytes'] / 1e6:>7.1f} {r['bertviz_default_s']:>6.2f} "
            f"{_ratio(r['bertviz_default_bytes'], r['ours_bytes']):>7} | {r['app_verdict']}")
    figures = {"pages": {"layers": LAYERS, "heads": HEADS, "kinds": list(KINDS),
                         "decimals": DECIMALS, "repeat": REPEAT, "libraries_bytes": libs,
                         "sizes": rows}}
    lines += ["README rows:", *readme_rows({"pages": figures["pages"]})]
    return Report(lines, figures)


def _ratio(theirs_bytes: float, ours_bytes: float) -> str:
    """Our bytes as a fraction of theirs: 1/14, or 1/1.6 when the two are close."""
    x = theirs_bytes / ours_bytes
    return f"1/{x:.0f}" if x >= 10 else f"1/{x:.1f}"


def readme_rows(section: dict) -> list[str]:
    """The README's benchmark rows for this module, written from its results.json section."""
    if "pages" not in section:
        return []
    p = section["pages"]
    by_n = {r["n"]: r for r in p["sizes"]}
    ns = " / ".join(str(n) for n in by_n)
    mid = by_n[128] if 128 in by_n else p["sizes"][len(p["sizes"]) // 2]
    drew = (f"both draw encoder, decoder and cross attention, all {p['layers']} layers × "
            f"{p['heads']} heads, every token")
    same = ", ".join(_ratio(r["bertviz_rounded_bytes"], r["ours_rounded_bytes"])
                     for r in by_n.values())
    if 128 in by_n:  # the target: at most 1/5 of bertviz's bytes at 128 tokens
        from benchmarks.readme_results import flag

        at = by_n[128]
        same += f" ({flag(at['ours_rounded_bytes'] / at['bertviz_rounded_bytes'], 0.2)} at 128)"
    sent = ", ".join(_ratio(r["bertviz_default_bytes"], r["ours_bytes"]) for r in by_n.values())
    return [
        f"| bertviz page vs bertviz's own `head_view`, like for like: {ns} tokens; {drew}; "
        f"values rounded to {p['decimals']} decimals on both sides (ours inlines d3 + jQuery, "
        f"{p['libraries_bytes'] / 1e6:.2f} MB) | {same} of the bytes; median of {p['repeat']}: "
        f"{mid['ours_s']:.2f} s vs {mid['bertviz_rounded_s']:.2f} s at {mid['n']} | "
        f"≤ 1/5 at 128 |",
        f"| same, as sent: ours as the app sends it ({p['decimals']} decimals), bertviz on "
        f"float32 attention as its users call it (full floats) | {sent} of the bytes; "
        f"{mid['ours_s']:.2f} s vs {mid['bertviz_default_s']:.2f} s at {mid['n']} | reported |",
    ]


if __name__ == "__main__":
    print("\n".join(main().lines))
