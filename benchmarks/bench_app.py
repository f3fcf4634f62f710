"""The app's own costs (issues 5 and 8), on checkpoints/paper or a random paper-shaped model.

(a) a rerun of the default (tokens) view for 2 sentences of <= 32 pieces, server side (AppTest),
    for a new input and for a cached one, beside the plain forward pass;
(b) the attention view for one 512-piece input: server seconds and bytes of chart data sent
    (the plotly figure JSON; the view draws one head plus block-averaged panels), beside
    bertviz's own head_view(html_action="return") of every head; and a like-for-like
    comparison: every layer x head at full resolution on both sides, same rounding;
(c) in Chromium: Ctrl+Enter after a new sentence -> last chart drawn, median of 5;
(d) peak RSS (VmHWM) of a `streamlit run` server given the largest input the app accepts
    (16 lines, each cut to the model's max_len pieces), target <= 2 GB.

(c) and (d) live in app_browser.py, (e) (the first builds, issue 26) in app_first_builds.py;
this module runs them all as its parts.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

import torch

from benchmarks.app_browser import browser_median, peak_memory
from benchmarks.app_first_builds import first_builds
from benchmarks.bench_load import checkpoint_env
from benchmarks.common import Report, median_times, share_script_cache
from model import capture
from viz.attention import LAYER_MAX, THUMB_MAX

PAIRS = [("The cat eats the fish.", "겨울은 추워요."),
         ("My friend reads a book.", "감기 조심하세요."),
         ("The big dog drinks water.", "고양이는 생선을 먹어요."),
         ("A child is cold.", "내 친구는 공원에서 책을 읽어요."),
         ("The teacher eats bread.", "개가 물을 마셔요.")]


def app_test(env: dict[str, str], **query):
    import os

    from streamlit import config
    from streamlit.testing.v1 import AppTest

    os.environ.update(env)
    share_script_cache()  # app.py compiled once, as on a server (AppTest recompiles per run)
    at = AppTest.from_file(str(Path(__file__).resolve().parents[1] / "app.py"),
                           default_timeout=600)
    for k, v in query.items():
        at.query_params[k] = v
    config.set_option("client.showErrorDetails", "full")
    return at


def _timed_run(at, action=None) -> float:
    t0 = time.perf_counter()
    (action(at) if action else at).run()
    dt = time.perf_counter() - t0
    assert not at.exception, [e.value for e in at.exception]
    return dt


# two of the grammar's longest sentences, ~30 pieces each with the tag and </s>: the upper
# end of "2 sentences of <= 32 pieces", with a ~20-step translation each
LONG_PAIRS = [
    ("They sold the gift at the market but you did not learn tennis with a student.",
     "건강한 학생이 카페에서 중국어를 조용히 공부할 거지만 공을 잡을 거예요."),
    ("You will work with a soldier at the restaurant but will bake the cake.",
     "당신은 야구를 싫어했지만 똑똑한 손님들이 나쁜 돼지고기를 요리하지 않았어요."),
    ("The soldier opened the new door and the sad tourist chose the knives.",
     "그들은 프랑스어를 천천히 했지만 그녀는 편지를 가져왔어요."),
]


def rerun_default_view(env, bundle) -> tuple[list[str], dict]:
    """(a) for short sentences and for ~30-piece ones; figures for results.json."""
    short, short_fig = _rerun_default_view(env, bundle, PAIRS, "(a)")
    long, long_fig = _rerun_default_view(env, bundle, LONG_PAIRS, "(a')")
    return [short, long], {"short": short_fig, "long": long_fig, "target_s": 0.15,
                           "torch_threads": torch.get_num_threads()}


def _rerun_default_view(env, bundle, pairs, label) -> tuple[str, dict]:
    """New input (capture + translation + figures) and cached input (figures only)."""
    at = app_test(env, view="tokens", text="Winter is cold.")
    _timed_run(at)
    new, cached = [], []
    for pair in pairs:
        text = "\n".join(pair)
        new.append(_timed_run(at, lambda a, t=text: a.text_area(key="text").input(t)))
        flip = not at.checkbox(key="numbers").value
        cached.append(_timed_run(at, lambda a, f=flip: a.checkbox(key="numbers").set_value(f)))
    forwards, pieces = [], 0
    for pair in pairs:
        trace = capture(bundle, list(pair), target_lang="auto")
        pieces = max(pieces, trace.src_ids.shape[1])
        src, tgt = torch.from_numpy(trace.src_ids), torch.from_numpy(trace.tgt_ids)
        with torch.inference_mode():
            bundle.model(src, tgt)
            t0 = time.perf_counter()
            for _ in range(5):
                bundle.model(src, tgt)
        forwards.append((time.perf_counter() - t0) / 5)
    fwd, n, c = (statistics.median(x) for x in (forwards, new, cached))
    figures = {"source_pieces": int(pieces), "new_input_s": round(n, 4),
               "cached_s": round(c, 4), "plain_forward_s": round(fwd, 5), "inputs": len(pairs)}
    return (f"{label} tokens view, 2 sentences (<= {pieces} source pieces), AppTest rerun: "
            f"new input {n * 1000:.0f} ms ({n / fwd:.0f}x the plain forward), cached input "
            f"{c * 1000:.0f} ms ({c / fwd:.0f}x); plain forward {fwd * 1000:.1f} ms; "
            f"target <= 150 ms"), figures


def text_of_pieces(bundle, n: int) -> str:
    """Ordinary sentences, repeated and cut so the tokenizer gives n pieces (give or take)."""
    tok = bundle.tokenizer
    base = " ".join(f"{a} {b}" for a, b in PAIRS)
    ids = tok.encode((base + " ") * (n // len(tok.encode(base)) + 2))[:n]
    return tok.decode(ids)


AS_SENT = ("one head at full size, the layer's heads block-averaged to at most "
           f"{LAYER_MAX}×{LAYER_MAX} cells each, and the layers × heads grid to "
           f"{THUMB_MAX}×{THUMB_MAX}")


def all_heads_json(trace) -> int:
    """Bytes of plotly JSON for every layer × head of every kind at full resolution, built by
    the attention view's own head_figure and serialised as Streamlit serialises a chart."""
    import plotly.io as pio

    from viz.attention import head_figure

    return sum(len(pio.to_json(head_figure(trace, kind, layer, 0, head), validate=False)
                   .encode())
               for kind in trace.kinds for layer in range(trace.n_layers(kind))
               for head in range(trace.attn[kind].shape[2]))


def attention_512(env, bundle, repeat: int = 5) -> tuple[list[str], dict]:
    """(b): the attention view for one 512-piece sentence, and bertviz on the same attention.

    As sent: what the view really sends (AS_SENT) against bertviz's head_view on every head.
    Like for like: every layer × head of every kind at full resolution on both sides, from the
    same attention rounded to 3 decimals (ours: plotly heatmaps, float32 binary; bertviz:
    decimal text). Times are medians of `repeat` interleaved rounds after a warm-up of each.
    """
    from benchmarks.bench_bertviz import DECIMALS, rounded, theirs

    text = text_of_pieces(bundle, 512)
    at = app_test(env, view="attention", text=text)
    first = _timed_run(at)  # capture and translation included: once, by nature
    charts = at.get("plotly_chart")
    sent = sum(len(el.proto.spec.encode()) for el in charts)
    head = at.selectbox(key="_w_head")

    def another_head() -> None:
        _timed_run(at, lambda a: head.select((head.value + 1) % bundle.config.n_heads))

    trace = capture(bundle, [text], target_lang="auto", names=["attn"])
    same = rounded(trace, DECIMALS)
    b_ours = all_heads_json(same)
    b_same, b_default = len(theirs(same).encode()), len(theirs(trace).encode())
    t_rerun, t_ours, t_same, t_default = median_times(
        [another_head, lambda: all_heads_json(same), lambda: theirs(same),
         lambda: theirs(trace)], repeat=repeat, warmup=1)
    n_src, n_tgt = trace.src_ids.shape[1], trace.tgt_ids.shape[1]
    figures = {
        "n_source": n_src, "n_target": n_tgt, "layers": {k: trace.n_layers(k) for k in trace.kinds},
        "heads": bundle.config.n_heads, "repeat": repeat, "decimals": DECIMALS,
        "as_sent": {"what": AS_SENT, "first_run_s": first, "another_head_s": t_rerun,
                    "chart_json_bytes": sent, "charts": len(charts),
                    "bertviz_default_s": t_default, "bertviz_default_bytes": b_default},
        "like_for_like": {"ours_s": t_ours, "ours_bytes": b_ours, "bertviz_s": t_same,
                          "bertviz_bytes": b_same},
    }
    lines = [
        f"(b) attention view, one sentence of {n_src} source / {n_tgt} target positions",
        f"    as sent ({AS_SENT}): {first:.2f} s server side on first show (capture included), "
        f"median {t_rerun:.2f} s for another head; {sent / 1e6:.2f} MB of chart JSON "
        f"({len(charts)} charts)",
        f"    bertviz head_view(html_action='return'), every head, float32 (full floats): "
        f"median {t_default:.2f} s, {b_default / 1e6:.1f} MB",
        f"    like for like, every layer × head of every kind at full resolution, "
        f"{DECIMALS} decimals on both sides: ours (plotly heatmaps) median {t_ours:.2f} s, "
        f"{b_ours / 1e6:.1f} MB; bertviz median {t_same:.2f} s, {b_same / 1e6:.1f} MB",
    ]
    return lines, figures


def readme_rows(section: dict) -> list[str]:
    """The README's rows for (b), written from this module's results.json section."""
    if "attention_512" not in section:
        return []
    a = section["attention_512"]
    s, same = a["as_sent"], a["like_for_like"]
    n = a["n_source"]
    heads = sum(a["layers"].values()) * a["heads"]
    from benchmarks.readme_results import flag

    return [
        f"| attention view, {n} pieces, as sent: {s['what']} | first show {s['first_run_s']:.2f} s"
        f" (capture included; {flag(s['first_run_s'], 2.0)}), another head "
        f"{s['another_head_s']:.2f} s (median of {a['repeat']}), "
        f"{s['chart_json_bytes'] / 1e6:.2f} MB of chart data "
        f"({flag(s['chart_json_bytes'] / 1e6, 20.0)}; bertviz "
        f"`head_view` of every head, full floats: {s['bertviz_default_s']:.2f} s, "
        f"{s['bertviz_default_bytes'] / 1e6:.0f} MB) | ≤ 2 s, ≤ 20 MB |",
        f"| same attention, like for like: all {heads} heads (encoder, decoder, cross) at full "
        f"resolution, {a['decimals']} decimals on both sides; ours as one plotly heatmap per "
        f"head | ours {same['ours_s']:.2f} s, {same['ours_bytes'] / 1e6:.0f} MB; bertviz "
        f"`head_view` {same['bertviz_s']:.2f} s, {same['bertviz_bytes'] / 1e6:.0f} MB "
        f"(median of {a['repeat']}) | reported |",
    ]


PARTS = {"rerun_default_view": rerun_default_view, "attention_512": attention_512,
         "browser_median": browser_median, "peak_memory": peak_memory,
         "first_builds": first_builds}


def main(parts: list[str] | None = None) -> Report:
    """Every part, or those named (python -m benchmarks bench_app:attention_512)."""
    unknown = sorted(set(parts or ()) - set(PARTS))
    if unknown:
        raise SystemExit(f"bench_app has no part {unknown}; it has {', '.join(PARTS)}")
    figures: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        env, bundle, label = checkpoint_env(Path(tmp))
        lines = [f"model: {label}; torch threads: {torch.get_num_threads()}"]
        for name in parts or PARTS:
            out = PARTS[name](env, bundle)
            if isinstance(out, tuple):  # (lines, figures for results.json)
                out, figures[name] = out
                figures[name]["model"] = label
            lines += out
    if "attention_512" in figures:
        lines += ["README rows:", *readme_rows(figures)]
    return Report(lines, figures)


if __name__ == "__main__":
    print("\n".join(main().lines))
