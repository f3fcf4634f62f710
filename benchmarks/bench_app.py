"""The app's own costs (issues 5 and 8), on checkpoints/paper or a random paper-shaped model.

(a) a rerun of the default (tokens) view for 2 sentences of <= 32 pieces, server side (AppTest),
    for a new input and for a cached one, beside the plain forward pass;
(b) the attention view for one 512-piece input: server seconds and bytes of chart data sent
    (the plotly figure JSON), beside bertviz's own head_view(html_action="return");
(c) in Chromium: Ctrl+Enter after a new sentence -> last chart drawn, median of 5;
(d) peak RSS (VmHWM) of a `streamlit run` server given the largest input the app accepts
    (16 lines, each cut to the model's max_len pieces), target <= 2 GB.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

import torch

from benchmarks.bench_load import checkpoint_env
from benchmarks.common import share_script_cache
from benchmarks.sessions import (
    Session,
    close_all,
    collect,
    launch_browser,
    open_session,
    peak_rss_mib,
    start_server,
    stop_server,
    type_all,
    wait_idle,
)
from model import capture
from model.decode import source_batch
from model.inputs import MAX_CHARS, MAX_LINES

PAIRS = [("The cat eats the fish.", "겨울은 추워요."),
         ("My friend reads a book.", "감기 조심하세요."),
         ("The big dog drinks water.", "고양이는 생선을 먹어요."),
         ("A child is cold.", "내 친구는 공원에서 책을 읽어요."),
         ("The teacher eats bread.", "개가 물을 마셔요.")]
TYPED = ["The cat drinks water.", "My friend is cold.", "겨울은 추워요.", "A child reads a book.",
         "The big dog eats the fish."]


def _app_test(env: dict[str, str], **query):
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


def rerun_default_view(env, bundle) -> list[str]:
    """(a) for short sentences and for ~30-piece ones."""
    return [_rerun_default_view(env, bundle, PAIRS, "(a)"),
            _rerun_default_view(env, bundle, LONG_PAIRS, "(a')")]


def _rerun_default_view(env, bundle, pairs, label) -> str:
    """New input (capture + translation + figures) and cached input (figures only)."""
    at = _app_test(env, view="tokens", text="Winter is cold.")
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
    return (f"{label} tokens view, 2 sentences (<= {pieces} source pieces), AppTest rerun: "
            f"new input {n * 1000:.0f} ms ({n / fwd:.0f}x the plain forward), cached input "
            f"{c * 1000:.0f} ms ({c / fwd:.0f}x); plain forward {fwd * 1000:.1f} ms; "
            f"target <= 150 ms")


def text_of_pieces(bundle, n: int) -> str:
    """Ordinary sentences, repeated and cut so the tokenizer gives n pieces (give or take)."""
    tok = bundle.tokenizer
    base = " ".join(f"{a} {b}" for a, b in PAIRS)
    ids = tok.encode((base + " ") * (n // len(tok.encode(base)) + 2))[:n]
    return tok.decode(ids)


def attention_512(env, bundle) -> list[str]:
    """(b): the attention view for one 512-piece sentence, and bertviz on the same attention."""
    from benchmarks.bench_bertviz import theirs

    text = text_of_pieces(bundle, 512)
    at = _app_test(env, view="attention", text=text)
    first = _timed_run(at)
    sent = sum(len(el.proto.spec.encode()) for el in at.get("plotly_chart"))
    head = at.selectbox(key="_w_head")
    again = _timed_run(at, lambda a: head.select((head.value + 1) % bundle.config.n_heads))
    trace = capture(bundle, [text], target_lang="auto")
    t0 = time.perf_counter()
    html = theirs(trace)
    t_bv, b_bv = time.perf_counter() - t0, len(html.encode())
    n_src, n_tgt = trace.src_ids.shape[1], trace.tgt_ids.shape[1]
    return [f"(b) attention view, one sentence of {n_src} source / {n_tgt} target positions: "
            f"{first:.2f} s server side (capture included), {again:.2f} s for another head; "
            f"{sent / 1e6:.2f} MB of chart JSON ({len(at.get('plotly_chart'))} charts)",
            f"    bertviz head_view(html_action='return') on the same attention: "
            f"{t_bv:.2f} s, {b_bv / 1e6:.1f} MB"]


def browser_median(env, bundle) -> list[str]:
    """(c): one tab, five new sentences in turn, Ctrl+Enter -> last chart drawn."""
    launched = launch_browser()
    if launched is None:
        return ["(c) skipped: playwright or /usr/bin/chromium missing"]
    pw, browser = launched
    with tempfile.TemporaryDirectory() as tmp:
        proc, base = start_server(env, Path(tmp) / "server.log")
        s = Session("", {"view": "tokens"}, [])
        try:
            open_session(browser, base, s, viewport=(1280, 900))
            wait_idle([s], 300)
            times = []
            for text in TYPED:
                s.sentence = text
                s.expect_src = capture(bundle, [text], target_lang="auto").src_tokens[0]
                type_all([s])
                collect([s], 4, 120)
                times.append(s.latency_s)
        finally:
            close_all([s])
            stop_server(proc)
            browser.close()
            pw.stop()
    return [f"(c) browser, tokens view: Ctrl+Enter -> last chart drawn, median of 5 "
            f"{statistics.median(times):.2f} s (each: {', '.join(f'{t:.2f}' for t in times)})"]


def largest_input(bundle) -> str:
    """16 lines of one repeated letter: every line is cut to max_len pieces, and a trained
    model never ends such a translation, so decoding runs to its step budget too."""
    per_line = MAX_CHARS // MAX_LINES - 2
    return "\n".join(["a" * per_line] * MAX_LINES)


def peak_memory(env, bundle) -> list[str]:
    """(d): a fresh server: default page, then the largest input on tokens and attention."""
    launched = launch_browser()
    if launched is None:
        return ["(d) skipped: playwright or /usr/bin/chromium missing"]
    pw, browser = launched
    text = largest_input(bundle)
    src, _, cuts = source_batch(bundle, text.split("\n"), ["ko"] * MAX_LINES)
    lines = [f"(d) largest accepted input: {MAX_LINES} lines x {src.shape[1]} source pieces "
             f"({sum(cuts):,} pieces cut first), {len(text):,} characters"]
    with tempfile.TemporaryDirectory() as tmp:
        proc, base = start_server(env, Path(tmp) / "server.log")
        pages = []
        try:
            first = Session("", {"view": "tokens"}, [])
            pages.append(first)
            open_session(browser, base, first)
            wait_idle([first], 300)
            lines.append(f"    server after the default page: {peak_rss_mib(proc.pid):.0f} MiB")
            for view in ("tokens", "attention"):
                s = Session("", {"view": view, "text": text}, [])
                pages.append(s)
                t0 = time.monotonic()
                open_session(browser, base, s)
                wait_idle([s], 600)
                lines.append(f"    {view} view of it: page ready after "
                             f"{time.monotonic() - t0:.1f} s; server peak RSS "
                             f"{peak_rss_mib(proc.pid):.0f} MiB (target <= 2048)")
        finally:
            close_all(pages)
            stop_server(proc)
            browser.close()
            pw.stop()
    return lines


def main() -> list[str]:
    with tempfile.TemporaryDirectory() as tmp:
        env, bundle, label = checkpoint_env(Path(tmp))
        lines = [f"model: {label}; torch threads: {torch.get_num_threads()}"]
        for part in (rerun_default_view, attention_512, browser_median, peak_memory):
            lines += part(env, bundle)
    return lines


if __name__ == "__main__":
    print("\n".join(main()))
