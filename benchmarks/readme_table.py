"""The rows of the README's benchmark table (block `benchmarks`): one function per
measurement, in TABLE_ROWS order; each returns its rows or raises MissingResult."""

from __future__ import annotations

from collections.abc import Callable

from benchmarks.readme_results import (
    MissingResult,
    flag,
    part,
    provenance,
    sourced_rows,
    with_source,
)

rows_bertviz = sourced_rows(
    "bench_bertviz.pages",
    "The bertviz page against bertviz's own head_view (bench_bertviz.pages).")


rows_beyond = sourced_rows(
    "bench_beyond.paper",
    "The query–key map's first build and cache, and the per-sentence analyses (bench_beyond).")


rows_attention_512 = sourced_rows(
    "bench_app.attention_512",
    "The attention view at 512 pieces (bench_app.attention_512).")


rows_refactor = sourced_rows(
    "bench_refactor.capture",
    "Full capture before and after issue 55's refactor, interleaved (bench_refactor.capture).")


def _gb(mb: float) -> str:
    return f"{mb / 1000:.2f}"


# bench_admission names each refusal by its exception: Busy before #29, then its two kinds.
BUSY_OUTCOMES = ("Busy", "QueueFull", "QueueTimeout")


def rows_admission(results: dict) -> list[str]:
    """N different largest inputs at once, with and without the gate (bench_admission)."""
    gate = part(results, "bench_admission.gate")
    none = part(results, "bench_admission.no_gate")
    gc, nc = gate["counts"], none["counts"]
    ns = sorted(gc, key=int)  # JSON keys are strings: "16" sorts before "4"
    first = gc[ns[0]]
    peaks = " / ".join(_gb(gc[n]["peak_mb"]) for n in ns)
    done = " / ".join(str(gc[n]["outcomes"].get("result", 0)) for n in ns)
    busy = " / ".join(str(sum(gc[n]["outcomes"].get(k, 0) for k in BUSY_OUTCOMES)) for n in ns)
    ungated = " / ".join(f"{_gb(nc[n]['peak_mb'])} GB" if "peak_mb" in nc[n]
                         else f"{n} not run ({nc[n].get('skipped', 'skipped')})" for n in ns)
    row = (f"| {' / '.join(ns)} different largest inputs at once (16 × 519 pieces) on one "
           f"process, `bench_admission` (model: {gate['model']}, estimate "
           f"{first['estimate_mb']} MB a run) | with the gate (defaults, budget "
           f"{first['budget_mb']} MB): peak {peaks} GB (baseline {_gb(first['base_mb'])} GB), "
           f"results {done}, busy {busy}; without: {ungated}; {cpu_per_result(results)} "
           f"({provenance(results, 'bench_admission.gate')}) | peak ≤ baseline + "
           "`ATTN_INFLIGHT_MB` + `ATTN_TRACE_CACHE_MB` |")
    return [row]


def cpu_per_result(results: dict, n: str = "4") -> str:
    """The server process's CPU seconds per finished result at n inputs at once, gated (runs ×
    threads as the gate set them), ungated and with 2 runs of 1 thread (bench_admission)."""
    cells = []
    for key, what in (("gate", "gated"), ("no_gate", "ungated"), ("runs2", "2 runs at once")):
        c = part(results, f"bench_admission.{key}")["counts"][n]
        runs = "all at once" if key == "no_gate" else f"{c['runs']} run(s)"
        cells.append(f"{c['cpu_s_per_result']:.2f} s {what} ({runs} × {c['threads']} "
                     "thread(s))")
    return f"CPU per result at {n}: " + ", ".join(cells)


def rows_load(results: dict) -> list[str]:
    """20 Chromium sessions typing at once into one `streamlit run` server (bench_load)."""
    key = "bench_load.sessions_20"
    r = part(results, key)
    return [f"| {r['sessions']} browser sessions at once, each typing a different sentence "
            f"(tokens view, {r['charts']} charts; {r['sessions']} headless Chromiums share the "
            f"cores with the server) | p50 {r['p50_s']:.1f} s / p95 {r['p95_s']:.1f} s "
            f"Ctrl+Enter → last chart, all done after {r['wall_s']:.0f} s; the server used "
            f"{r['server_cpu_s']:.1f} s of CPU, peaked at {r['server_peak_rss_mib']:,} MiB; "
            f"health round trip at most {r['health_max_s']:.2f} s; {r['problems']} problems; "
            f"load average {r['load_average_start']:.1f} before the browsers started "
            f"({provenance(results, key)}) | reported |"]


def rows_rerun(results: dict) -> list[str]:
    """The default (tokens) view rerun in AppTest, new and cached input (bench_app)."""
    key = "bench_app.rerun_default_view"
    r = part(results, key)
    rows = []
    for name, what in (("short", "2 short sentences"), ("long", "same, 2 of the corpus's "
                                                          "longest sentences")):
        f = r[name]
        rows.append(
            f"| default view rerun, {what} (≤ {f['source_pieces']} pieces) | "
            f"{f['new_input_s'] * 1000:.0f} ms new input "
            f"({flag(f['new_input_s'], r['target_s'])}), "
            f"{f['cached_s'] * 1000:.0f} ms cached "
            f"(plain forward {f['plain_forward_s'] * 1000:.1f} ms; "
            f"{r.get('torch_threads', '?')} torch thread(s)) ({provenance(results, key)}) "
            f"| ≤ {r['target_s'] * 1000:.0f} ms |")
    return rows


def rows_scan(results: dict) -> list[str]:
    """The importance scan over every head of one short sentence (bench_heads.scan)."""
    key = "bench_heads.scan"
    s = part(results, key)
    return [f"| importance scan, {s['heads']} heads, one short sentence | {s['scan_s']:.3f} s "
            f"({flag(s['scan_s'], 3.0)}), "
            f"{s['scan_s'] / s['plain_forward_s']:.0f}× one plain forward, median of "
            f"{s['repeat']} ({provenance(results, key)}) | ≤ 3 s |"]


def rows_hf(results: dict) -> list[str]:
    """A GPT-2-small-shaped Hugging Face model through the recorder at 512 tokens (bench_hf)."""
    speed, rss, view = (part(results, f"bench_hf.{p}") for p in ("speed", "rss", "view"))
    return [
        f"| GPT-2-small shape (12 × 12, 768 wide, random), {speed['tokens']} tokens: capture ÷ "
        f"plain forward | full {speed['capture_over_plain']:.2f}×, attention only "
        f"{speed['attn_only_over_plain']:.2f}× (full {flag(speed['capture_over_plain'], 2.0)}; "
        f"plain {speed['plain_ms']:.0f} ms, transformers' "
        f"sdpa {speed['sdpa_ms']:.0f} ms) ({provenance(results, 'bench_hf.speed')}) | ≤ 2× |",
        f"| same: peak RSS of a process that loads it and captures everything; attention view "
        f"in AppTest | {rss['peak_mib']:,} MiB ({flag(rss['peak_mib'], 2048)}; after loading "
        f"{rss['loaded_mib']:,}); view first run {view['first_s']:.2f} s "
        f"({flag(view['first_s'], 3.0)}), rerun {view['rerun_s']:.2f} s "
        f"({flag(view['rerun_s'], 3.0)}) "
        f"({provenance(results, 'bench_hf.view')}) | ≤ 2,048 MiB, ≤ 3 s |",
    ]


def rows_patch(results: dict) -> list[str]:
    """Activation patching (bench_patch): exact and attribution on a GPT-2-small shape, and
    how well attribution agrees with exact patching."""
    key = "bench_patch.gpt2_small_64"
    g = part(results, key)
    lab = {n: part(results, f"bench_patch.{n}")["agreement"]["all_heads"]
           for n in ("paper", "seed001")}
    return [
        f"| activation patching, GPT-2-small shape (random), {g['tokens']} tokens: exact, every "
        f"head ({g['heads']}) | {g['exact_heads_s']:.0f} s "
        f"({flag(g['exact_heads_s'], g['exact_target_s'])}; {provenance(results, key)}) "
        f"| ≤ {g['exact_target_s']:.0f} s |",
        f"| same: attribution patching (every head, attention output and residual position; two "
        f"forwards and one backward) ÷ one plain forward (logits at every position) "
        f"| {g['attribution_over_forward']:.2f}× "
        f"({flag(g['attribution_over_forward'], g['attribution_target'])}; "
        f"{provenance(results, key)}) "
        f"| ≤ {g['attribution_target']:.0f}× |",
        f"| attribution vs exact patching: correlation over heads, `The cat/dog eats fish.` on "
        f"the checkpoints | GPT-2 shape {g['agreement']['all_heads']:.4f}, paper "
        f"{lab['paper']:.4f}, seed001 {lab['seed001']:.4f} "
        f"({provenance(results, 'bench_patch.paper')}) | reported |",
    ]


def rows_capture(results: dict) -> list[str]:
    """Capture cost against transformers' sdpa forward and the memory estimate against the
    measured peak, GPT-2 and Llama shapes at 512 tokens (bench_capture)."""
    from benchmarks.bench_capture import SHAPES, readme_rows

    section = results["bench_capture"] if "bench_capture" in results else {}
    keys = [f"bench_capture.{k}" for k in SHAPES if k in section]
    if "memory" in section:
        keys.append("bench_capture.memory")
    if not keys:
        raise MissingResult("bench_capture")
    return [with_source(r, results, k) for r, k in zip(readme_rows(section), keys, strict=True)]


rows_cold_open = sourced_rows(
    "bench_hf.cold_open",
    "The attention view from a new process on the GPT-2 shape (bench_hf.cold_open).")


rows_memory = sourced_rows(
    "bench_memory.memory",
    "What the server process holds outside the Trace cache, stage by stage (bench_memory.memory).")


def rows_native_capture(results: dict) -> list[str]:
    """The lab's own model: capture ÷ its plain forward (bench_capture.native)."""
    key = "bench_capture.native"
    n = part(results, key)
    cells = "; ".join(f"{size}: full {f['full_over_plain']:.2f}× "
                      f"({flag(f['full_over_plain'], 1.2)}), attention only "
                      f"{f['attn_over_plain']:.2f}× ({flag(f['attn_over_plain'], 1.0)}; "
                      f"plain {f['plain_ms']:.1f} ms)"
                      for size, f in n["sizes"].items())
    return [f"| capture cost, the lab's `{n['model'].rsplit('/', 1)[-1]}` (batch × source / "
            f"target pieces) | {cells} ({provenance(results, key)}) | ≤ 1.2×, ≤ 1.0× |"]


def rows_needs(results: dict) -> list[str]:
    """What the attention view records against recording everything (bench_needs)."""
    key = "bench_needs.gpt2_512"
    n = part(results, key)
    return [f"| attention view records only its needs ({', '.join(n['needs'])}), GPT-2-small "
            f"shape, {n['tokens']} tokens | {n['view_mb']:.0f} MB at {n['view_over_sdpa']:.2f}× "
            f"the sdpa forward, against {n['everything_mb']:.0f} MB at "
            f"{n['everything_over_sdpa']:.2f}× for everything ("
            f"{'within it' if n['view_mb'] < n['everything_mb'] else 'OVER it'}; "
            f"{provenance(results, key)}) "
            f"| less than everything |"]


def rows_detectors(results: dict) -> list[str]:
    """The heads view's detectors after the capture (bench_detectors)."""
    key = "bench_detectors.gpt2_512"
    d = part(results, key)
    return [f"| head detectors, GPT-2-small shape, {d['tokens']} tokens: first table after the "
            f"capture; all five (two run the model) | {d['first_table_ms']:.0f} ms "
            f"({flag(d['first_table_ms'] / 1000, d['target_s'])}); "
            f"{d['all_detectors_ms'] / 1000:.1f} s = {d['all_detectors_over_plain']:.2f}× one "
            f"plain forward ({provenance(results, key)}) | ≤ {d['target_s']:.0f} s |"]


# In table order; each returns its rows, or raises MissingResult.
TABLE_ROWS: list[Callable[[dict], list[str]]] = [rows_rerun, rows_attention_512, rows_bertviz,
                                                 rows_scan, rows_beyond, rows_hf,
                                                 rows_capture,
                                                 rows_native_capture, rows_refactor,
                                                 rows_needs,
                                                 rows_detectors, rows_cold_open, rows_memory,
                                                 rows_load,
                                                 rows_admission, rows_patch]


def block_benchmarks(results: dict) -> str:
    """The benchmark table: one row function per measurement (TABLE_ROWS)."""
    rows = ["| benchmark | measured (results key, date, cores, load) | target |", "|---|---|---|"]
    for fn in TABLE_ROWS:
        rows += fn(results)
    return "\n".join(rows)
