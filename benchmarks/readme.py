"""The README's measured figures, written from benchmarks/results.json.

A figure block in README.md is the text between two markers:

    <!-- figures:NAME -->
    ...generated text, never edited by hand...
    <!-- /figures:NAME -->

`BLOCKS[NAME]` renders that text from the whole results.json dict. Adding a block is one
renderer function and one line in `BLOCKS` (a row of the benchmark table: one function and one
line in `TABLE_ROWS`); `python -m benchmarks.readme` (`make readme`) rewrites every block in
place, and tests/unit/test_readme.py fails while a block differs from what the file gives or a
figure outside every block looks measured (see `NOT_MEASURED` for what is allowed there).
Every rendered figure names its results key and the run's date, core count and load average.
Model-quality blocks (checkpoints, alignment, tokenizer, examples) render the shipped cards,
checkpoints/NAME/card.json, instead.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path

from benchmarks.common import ROOT, load_results

README = ROOT / "README.md"
BLOCK = re.compile(
    r"(<!-- figures:(?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- /figures:(?P=name) -->)", re.S)


class MissingResult(KeyError):
    """A block's renderer needs a results key that results.json does not hold."""


def part(results: dict, key: str) -> dict:
    """results['bench_x']['part'] for key 'bench_x.part', or MissingResult naming the key."""
    node = results
    for step in key.split("."):
        if not isinstance(node, dict) or step not in node:
            raise MissingResult(f"benchmarks/results.json has no {key!r}; run "
                                f"`python -m benchmarks {key.split('.')[0]}` first")
        node = node[step]
    return node


def provenance(results: dict, key: str) -> str:
    """'`key`, <date>, <n> cores, load average <l>': which run a figure comes from."""
    p = part(results, key)
    load = p.get("load_average")
    if isinstance(load, list | tuple) and load:
        how = f"load average {load[0]:.1f} (1 min), {load[1]:.1f} (5 min)" if len(load) > 1 \
            else f"load average {load[0]:.1f}"
    elif "load_average_start" in p:
        how = f"load average {p['load_average_start']:.1f} at the start"
    else:
        how = "load average not recorded"
    when = p.get("measured", "date not recorded")
    return f"`{key}`, {when}, {p.get('cpu_cores', '?')} cores, {how}"


def _with_source(row: str, results: dict, key: str) -> str:
    """A table row '| what | measured | target |' with the run named in the measured cell."""
    head, _, target = row.rstrip().removesuffix("|").rstrip().rpartition(" | ")
    return f"{head} ({provenance(results, key)}) | {target} |"


# ---- rows of the benchmark table ----------------------------------------------------------

def rows_bertviz(results: dict) -> list[str]:
    """The bertviz page against bertviz's own head_view (bench_bertviz.pages)."""
    from benchmarks.bench_bertviz import readme_rows

    part(results, "bench_bertviz.pages")
    return [_with_source(r, results, "bench_bertviz.pages")
            for r in readme_rows(results["bench_bertviz"])]


def rows_attention_512(results: dict) -> list[str]:
    """The attention view at 512 pieces (bench_app.attention_512)."""
    from benchmarks.bench_app import readme_rows

    part(results, "bench_app.attention_512")
    return [_with_source(r, results, "bench_app.attention_512")
            for r in readme_rows(results["bench_app"])]


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
            f"{f['new_input_s'] * 1000:.0f} ms new input, {f['cached_s'] * 1000:.0f} ms cached "
            f"(plain forward {f['plain_forward_s'] * 1000:.1f} ms; "
            f"{r.get('torch_threads', '?')} torch thread(s)) ({provenance(results, key)}) "
            f"| ≤ {r['target_s'] * 1000:.0f} ms |")
    return rows


def rows_scan(results: dict) -> list[str]:
    """The importance scan over every head of one short sentence (bench_heads.scan)."""
    key = "bench_heads.scan"
    s = part(results, key)
    return [f"| importance scan, {s['heads']} heads, one short sentence | {s['scan_s']:.3f} s, "
            f"{s['scan_s'] / s['plain_forward_s']:.0f}× one plain forward, median of "
            f"{s['repeat']} ({provenance(results, key)}) | ≤ 3 s |"]


def rows_hf(results: dict) -> list[str]:
    """A GPT-2-small-shaped Hugging Face model through the recorder at 512 tokens (bench_hf)."""
    speed, rss, view = (part(results, f"bench_hf.{p}") for p in ("speed", "rss", "view"))
    return [
        f"| GPT-2-small shape (12 × 12, 768 wide, random), {speed['tokens']} tokens: capture ÷ "
        f"plain forward | full {speed['capture_over_plain']:.2f}×, attention only "
        f"{speed['attn_only_over_plain']:.2f}× (plain {speed['plain_ms']:.0f} ms, transformers' "
        f"sdpa {speed['sdpa_ms']:.0f} ms) ({provenance(results, 'bench_hf.speed')}) | ≤ 2× |",
        f"| same: peak RSS of a process that loads it and captures everything; attention view "
        f"in AppTest | {rss['peak_mib']:,} MiB (after loading {rss['loaded_mib']:,}); view first "
        f"run {view['first_s']:.2f} s, rerun {view['rerun_s']:.2f} s "
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
        f"head ({g['heads']}) | {g['exact_heads_s']:.0f} s ({provenance(results, key)}) "
        f"| ≤ {g['exact_target_s']:.0f} s |",
        f"| same: attribution patching (every head, attention output and residual position; two "
        f"forwards and one backward) ÷ one plain forward (logits at every position) "
        f"| {g['attribution_over_forward']:.2f}× ({provenance(results, key)}) "
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
    return [_with_source(r, results, k) for r, k in zip(readme_rows(section), keys, strict=True)]


def rows_cold_open(results: dict) -> list[str]:
    """The attention view from a new process on the GPT-2 shape (bench_hf.cold_open)."""
    from benchmarks.bench_hf import readme_rows

    part(results, "bench_hf.cold_open")
    return [_with_source(r, results, "bench_hf.cold_open")
            for r in readme_rows(results["bench_hf"])]


def rows_memory(results: dict) -> list[str]:
    """What the server process holds outside the Trace cache, stage by stage
    (bench_memory.memory)."""
    from benchmarks.bench_memory import readme_rows

    part(results, "bench_memory.memory")
    return [_with_source(r, results, "bench_memory.memory")
            for r in readme_rows(results["bench_memory"])]


def rows_native_capture(results: dict) -> list[str]:
    """The lab's own model: capture ÷ its plain forward (bench_capture.native)."""
    key = "bench_capture.native"
    n = part(results, key)
    cells = "; ".join(f"{size}: full {f['full_over_plain']:.2f}×, attention only "
                      f"{f['attn_over_plain']:.2f}× (plain {f['plain_ms']:.1f} ms)"
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
            f"{n['everything_over_sdpa']:.2f}× for everything ({provenance(results, key)}) "
            f"| less than everything |"]


def rows_detectors(results: dict) -> list[str]:
    """The heads view's detectors after the capture (bench_detectors)."""
    key = "bench_detectors.gpt2_512"
    d = part(results, key)
    return [f"| head detectors, GPT-2-small shape, {d['tokens']} tokens: first table after the "
            f"capture; all five (two run the model) | {d['first_table_ms']:.0f} ms; "
            f"{d['all_detectors_ms'] / 1000:.1f} s = {d['all_detectors_over_plain']:.2f}× one "
            f"plain forward ({provenance(results, key)}) | ≤ {d['target_s']:.0f} s |"]


# In table order; each returns its rows, or raises MissingResult.
TABLE_ROWS: list[Callable[[dict], list[str]]] = [rows_rerun, rows_attention_512, rows_bertviz,
                                                 rows_scan, rows_hf, rows_capture,
                                                 rows_native_capture, rows_needs,
                                                 rows_detectors, rows_cold_open, rows_memory,
                                                 rows_load,
                                                 rows_admission, rows_patch]


def block_benchmarks(results: dict) -> str:
    """The benchmark table: one row function per measurement (TABLE_ROWS)."""
    rows = ["| benchmark | measured (results key, date, cores, load) | target |", "|---|---|---|"]
    for fn in TABLE_ROWS:
        rows += fn(results)
    return "\n".join(rows)


# ---- prose blocks -------------------------------------------------------------------------

def block_patching(results: dict) -> str:
    """Where the shipped checkpoint carries the cat/dog difference (bench_patch.paper)."""
    key = "bench_patch.paper"
    p = part(results, key)
    clean, corrupted = (o.split()[0].removesuffix("가") for o in p["outputs"])
    at = sorted(set(p["enc_at_changed"]))
    where = (f"{at[0]:.1f} at every layer" if len(at) == 1
             else ", ".join(f"{v:.2f}" for v in p["enc_at_changed"]))
    heads = ", ".join(f"{v:.2f}" for v in p["cross_last_heads"])
    elsewhere = "0" if p["enc_elsewhere_max"] == 0 else f"at most {p['enc_elsewhere_max']:.2f}"
    return (f"On `paper`, `The cat/dog eats fish.` → {clean}/{corrupted} (step {p['step']}): "
            f"the difference stays at the `{p['changed_piece']}` position of the encoder "
            f"({where}, {elsewhere} elsewhere) and reaches the decoder "
            f"through cross-attention, mostly layer {p['cross_last_layer']}: its "
            f"{len(p['cross_last_heads'])} heads alone recover {heads}, together "
            f"{p['cross_last_together']:.2f}, and all cross heads of all layers together "
            f"{p['cross_all_together']:.2f}; encoder and decoder self-attention heads recover at "
            f"most {p['self_heads_max']:.2f} ({provenance(results, key)}).")


def block_soak(results: dict) -> str:
    """make soak's last committed run (bench_soak.soak)."""
    s = part(results, "bench_soak.soak")
    rss, cache = s["rss_mb"], s["trace_cache_mb_series"]
    beyond = [r - c for r, c in zip(rss, cache, strict=True)]
    every = s["inputs"] // (len(rss) - 1) if len(rss) > 1 else s["inputs"]
    bound = s["trace_cache_mb"] + 600
    half = len(rss) // 2
    return (
        f"**Measured** ({provenance(results, 'bench_soak.soak')}; {s['inputs']:,} inputs, "
        f"{s['trace_cache_mb']:,.0f} MB Trace cache): RSS every {every} inputs "
        + " ".join(f"{r:.0f}" for r in rss) + " MB; beyond the cache "
        + " ".join(f"{b:.0f}" for b in beyond) + " MB. The cache held "
        f"{min(cache[half:]) / 1000:.2f}–{max(cache[half:]) / 1000:.2f} GB over the last "
        f"{s['inputs'] - half * every:,} inputs. Peak after warm-up "
        f"{s['peak_after_warmup_mb']:,} MB against the {bound:,.0f} MB bound, beyond the cache "
        f"at most {s['peak_outside_cache_mb']:,} MB, slope beyond the cache "
        f"{s['outside_slope_mb_per_100_inputs']:+.1f} MB per 100 inputs (RSS itself "
        f"{s['slope_mb_per_100_inputs']:+.1f}); " + ("passed." if s["passed"] else "FAILED.")
    )


def block_soak_short(results: dict) -> str:
    """make test's short soak, run as `python -m benchmarks bench_soak:short`."""
    key = "bench_soak.short"
    s = part(results, key)
    bound = s["trace_cache_mb"] + 600  # the bound, which the short soak's test holds
    return (f"**Measured** ({provenance(results, key)}; {s['inputs']:,} inputs, "
            f"{s['trace_cache_mb']:g} MB Trace cache, {s['wall_s']:,} s): peak RSS after warm-up "
            f"{s['peak_after_warmup_mb']:,} MB against the {bound:,.0f} MB bound ("
            + ("within it" if s["peak_after_warmup_mb"] <= bound else "OVER it")
            + f"), beyond the cache at most {s['peak_outside_cache_mb']:,} MB, RSS slope over "
            f"the last half {s['slope_mb_per_100_inputs']:+.1f} MB per 100 inputs.")


def _signed(x: float) -> str:
    """A share as a signed percentage with a true minus sign: −12 %, +15 %."""
    return f"{x:+.0%}".replace("-", "−").replace("%", " %")


def block_estimates(results: dict) -> str:
    """Where the memory estimates land against measured peaks (bench_estimates)."""
    said = []
    for name, what in (("capture", "capture estimates"), ("runs", "the other runs' estimates")):
        key = f"bench_estimates.{name}"
        e = part(results, key)
        rows = ", ".join(f"{r['label']} {r['estimate_mb'] / r['peak_mb']:.2f}" for r in e["rows"])
        said.append(f"{what} land within {_signed(e['low'])} … {_signed(e['high'])} of the "
                    f"peak over "
                    f"{len(e['rows'])} rows ({rows}; {provenance(results, key)})")
    return ("**Measured** (estimate ÷ peak RSS, each in a fresh process with one torch thread, "
            "the rows the tests check): " + "; ".join(said) + ".")


def block_capacity(results: dict) -> str:
    """bench_capacity's last committed run: p50/p95 per request rate."""
    c = part(results, "bench_capacity.capacity")
    rows = ["| reruns/s | p50 | p95 | reruns | CPU s per rerun | load average (1 min) |",
            "|---|---|---|---|---|---|"]
    rows += [f"| {s['rate']:g} | {s['p50_s']:.2f} s | {s['p95_s']:.2f} s | {s['reruns']} | "
             f"{s['cpu_s_per_rerun']:.2f} | {s['load_1min']:g} |" for s in c["steps"]]
    rate = c["rate_at_p95_1s"]
    if rate is None:
        over = [s["p95_s"] > 1 for s in c["steps"]]
        verdict = ("p95 was over 1 s at every rate tried, so this run names no knee" if all(over)
                   else "p95 did not cross 1 s for good between the rates tried")
    else:
        verdict = (f"p95 crosses 1 s for good at {rate:.2f} reruns/s: at one request per "
                   f"student every 15 s, about {rate * 15:.0f} students")
    return ("\n".join(rows) + f"\n\n{c['sessions']} sessions, {c['seconds']:g} s per rate "
            f"({provenance(results, 'bench_capacity.capacity')}, the load per rate in the "
            f"table); {verdict}.")


def block_capacity_nginx(results: dict) -> str:
    """bench_capacity through nginx, 1 and 2 replicas (bench_capacity.readme_cluster)."""
    from benchmarks.bench_capacity import readme_cluster

    return readme_cluster(results, part, provenance)


# ---- figures from the shipped checkpoints' cards (model quality, not speed) ---------------
# These renderers read checkpoints/NAME/card.json, written by training and evaluation; the
# results dict is not used.

CARDS = ("paper", "seed001")
VARIANTS = {"paper": "post-LN, sinusoidal, ReLU (the paper, seeds 000/004)",
            "seed001": "pre-LN + final LN, learned positions, GELU (seed 001)"}


def _cards() -> dict[str, dict]:
    import json

    found = {}
    for name in CARDS:
        path = ROOT / "checkpoints" / name / "card.json"
        if not path.is_file():
            raise MissingResult(f"{path} is missing")
        found[name] = json.loads(path.read_text(encoding="utf-8"))
    return found


def _pct(x: float) -> str:
    return f"{x:g} %"


def _legs(card: dict) -> str:
    """Steps and minutes of each training leg, earliest first: a warm-started card names the
    weights it began from (card.warm_start, nested), so the chain reads 3,572 → 2,800 → …"""
    legs, node = [(card["steps"], card["train_wall_time_s"])], card.get("warm_start")
    while node and "steps" in node:
        legs.append((node["steps"], node["train_wall_time_s"]))
        node = node.get("warm_start")
    legs.reverse()
    return (" → ".join(f"{s:,}" for s, _ in legs) + " steps, "
            + " + ".join(f"{t / 60:.0f}" for _, t in legs) + " min")


def block_checkpoints(results: dict) -> str:
    """The shipped checkpoints' quality table, from their cards."""
    rows = ["| checkpoint | variant | test en→ko exact / chrF | test ko→en exact / chrF | everyday "
            "en→ko | everyday ko→en | best cross head (alignment) | steps, training time |",
            "|---|---|---|---|---|---|---|---|"]
    params = []
    for name, card in _cards().items():
        m = card["metrics"]
        ev, best = m["everyday"], m["best_alignment_head"]
        cells = [f"{_pct(d['exact_match'])} / {d['chrf']:.2f}"
                 for d in (m["en->ko"], m["ko->en"], ev["en->ko"], ev["ko->en"])]
        rows.append(f"| `{name}` | {VARIANTS.get(name, card.get('variant', ''))} | "
                    + " | ".join(cells) + f" | layer {best['layer']} head {best['head']}: "
                    f"{_pct(best['agreement'])} | {_legs(card)} |")
        params.append(f"`{name}` {card['parameters'] / 1e6:.2f} M")
    return ("\n".join(rows) + "\n\nParameters: " + ", ".join(params) + " (from each "
            "`checkpoints/NAME/card.json`).")


def block_alignment(results: dict) -> str:
    """Best head by α vs by ‖αf(x)‖ per layer, from the cards' two per-head tables."""
    import numpy as np

    from model.training.alignment_table import HEADER, card_tables, layer_rows

    rows, diffs, drops = [HEADER], [], []
    for name, card in _cards().items():
        tables = card_tables(card)
        if tables is None:
            raise MissingResult(f"checkpoints/{name}/card.json lacks an alignment table")
        alpha, norms = tables
        rows += layer_rows(name, alpha, norms)
        # from the rounded figures the table shows, so the sentence agrees with the rows
        shown = np.vectorize(lambda x: float(f"{100 * x:.1f}"))  # as layer_rows prints it
        diffs += list(shown(norms.max(1)) - shown(alpha.max(1)))
        drops += list(shown(alpha.mean(1)) - shown(norms.mean(1)))
    lo, hi = min(diffs), max(diffs)
    said = (f"The claim does not hold here: the best head by ‖αf(x)‖ is within {lo:+.1f} to "
            f"{hi:+.1f} points of the best head by α, and the mean over heads drops by "
            f"{min(drops):.1f} to {max(drops):.1f} points.").replace("-", "−")
    return "\n".join(rows) + "\n\n" + said


def block_tokenizer(results: dict) -> str:
    """The shipped tokenizer's one-piece shares (the same file for both cards)."""
    shares = [c["tokenizer"]["one_piece_share_top500"] for c in _cards().values()]
    if any(s != shares[0] for s in shares):
        raise ValueError("the shipped checkpoints' tokenizer figures differ")
    s = shares[0]
    return (f"The tokenizer: {_pct(s['en_lower'])} of the 500 most frequent English words are one "
            f"piece in lower case and {_pct(s['en_capitalised'])} capitalised (`▁winter`, "
            f"`▁Winter`), {_pct(s['ko_stems'])} of the 500 most frequent Korean nouns and stems "
            f"once the particle is split off (`▁겨울` of 겨울은; {_pct(s['ko_words'])} of Korean "
            "words as written, since particles and copula endings are pieces of their own: `▁겨울 "
            "은`, `▁학생 이에요`), from the cards' `tokenizer` figures.")


def block_tokenizers(results: dict) -> str:
    """The tokenizer sizes compared on the shipped training split (bench_tokenizers.sizes)."""
    key = "bench_tokenizers.sizes"
    r = part(results, key)
    shipped = r["shipped"]
    # results.json sorts its keys; the table reads unigram first, then BPE by size
    toks = dict(sorted(r["tokenizers"].items(),
                       key=lambda kv: (kv[1]["model_type"] != "unigram", kv[1]["vocab_asked"])))
    cols = ("en_lower", "en_capitalised", "ko_stems", "ko_words")
    rows = ["| tokenizer | English lower | English capitalised | Korean nouns/stems | Korean "
            "words as written | pieces per sentence (en / ko) | `겨울은 추워요.` |",
            "|---|---|---|---|---|---|---|"]
    for name, t in toks.items():
        asked, got = t["vocab_asked"], t["vocab_size"]
        label = (f"unigram, {asked:,} asked" + (f" (stops at {got:,})" if got < asked else "")
                 if t["model_type"] == "unigram" else f"BPE {asked:,}")
        if name == shipped:
            label = f"**{label} (shipped)**"
        s, p = t["one_piece_share_top500"], t["pieces_per_sentence"]
        rows.append(f"| {label} | " + " | ".join(_pct(s[c]) for c in cols)
                    + f" | {p['en']:.1f} / {p['ko']:.1f} | `{t['example']}` |")
    said = []
    for t in toks.values():
        if t["model_type"] == "unigram" and t["vocab_size"] < t["vocab_asked"]:
            ko = [w.lstrip("▁") for w in t["example"].split()]
            single = all(len(w) <= 1 for w in ko)
            said.append(f"The unigram trainer stops at {t['vocab_size']:,} of the "
                        f"{t['vocab_asked']:,} pieces asked on this text"
                        + (" and leaves `겨울은 추워요.` in single syllables." if single else "."))
    bpe = sorted((t["vocab_asked"], n) for n, t in toks.items() if t["model_type"] == "bpe")
    full = [size for size, n in bpe if toks[n]["one_piece_share_top500"]["ko_stems"] >= 100]
    said.append(f"Of the BPE sizes tried, {full[0]:,} is the smallest at which every one of the "
                "500 most frequent Korean nouns and stems is one piece." if full else
                "No BPE size tried makes every frequent Korean noun and stem one piece.")
    base = toks[shipped]
    for size, n in bpe:
        if size <= base["vocab_asked"]:
            continue
        gains = [f"{toks[n]['one_piece_share_top500'][c] - base['one_piece_share_top500'][c]:+.1f}"
                 f" points {what}" for c, what in zip(cols, ("English lower case",
                                                             "English capitalised",
                                                             "Korean nouns/stems",
                                                             "Korean words"), strict=True)
                 if toks[n]["one_piece_share_top500"][c] != base["one_piece_share_top500"][c]]
        said.append(f"BPE {size:,} against the shipped {base['vocab_asked']:,}: "
                    + (", ".join(gains) if gains else "no share changes")
                    + f", for {100 * (size / base['vocab_asked'] - 1):.0f} % more output-layer "
                    "rows.")
    same = r["same_pieces_as_shipped"]
    card = r["shipped_card"]["one_piece_share_top500"]
    if same and base["one_piece_share_top500"] != card:
        # the same pieces on the same split must give the card's figures: a measuring bug
        raise ValueError(f"{key}: the shipped row's shares {base['one_piece_share_top500']} "
                         f"differ from the card's {card} although the pieces are the same")
    said.append((f"The BPE {base['vocab_asked']:,} trained here holds the same pieces, in the "
                 "same order, as the shipped `checkpoints/paper/tokenizer.model`" if same else
                 f"The BPE {base['vocab_asked']:,} trained here differs from the shipped "
                 "`checkpoints/paper/tokenizer.model`")
                + "; the cards' `tokenizer` figures for the shipped one are "
                + " / ".join(_pct(card[c]) for c in cols) + f" (`{key}`).")
    head = (f"Measured on the training split the shipped tokenizer was trained on "
            f"({r['train_pairs']:,} pairs, corpus seed {r['corpus_seed']}), each candidate "
            "trained by `pieces.train_tokenizer` and measured by `pieces.one_piece_shares` as "
            f"training measures the card ({provenance(results, key)}); share of the 500 most "
            "frequent words that are one piece, and mean pieces per training sentence:")
    return head + "\n\n" + "\n".join(rows) + "\n\n" + " ".join(said)


def block_examples(results: dict) -> str:
    """How many of the seed sentences and the learner's first sentences each card gets exactly
    right (metrics.seed_pairs, metrics.everyday_examples)."""
    parts = []
    for what, key in (("the seed sentences", "seed_pairs"),
                      ("the learner's first sentences", "everyday_examples")):
        counts = []
        for name, card in _cards().items():
            rows = card["metrics"][key]
            counts.append(f"{sum(bool(r['exact']) for r in rows)} of {len(rows)} for `{name}`")
        parts.append(f"{what}: " + ", ".join(counts))
    return "Exactly right, from the cards: " + "; ".join(parts) + "."


def block_textbook(results: dict) -> str:
    """The hand-written first-year textbook sentences and the issue's seven sentences, per
    card (card.textbook, written by python -m model.training.textbook_eval --write)."""
    cards = _cards()
    areas = sorted({a for card in cards.values() for a in card["textbook"]["areas"]})
    head = ["| checkpoint | en→ko exact / chrF | ko→en exact / chrF | "
            + " | ".join(f"{a} (en→ko / ko→en chrF)" for a in areas)
            + " | the issue's seven |",
            "|---|---|---|" + "---|" * len(areas) + "---|"]
    for name, card in cards.items():
        tb = card["textbook"]
        cells = [f"{d['exact']} of {d['n']} / {d['chrf']:.1f}"
                 for d in (tb["directions"]["en-ko"], tb["directions"]["ko-en"])]
        cells += [" / ".join(f"{tb['areas'][a][d]['chrf']:.1f}" if d in tb["areas"][a] else "–"
                             for d in ("en-ko", "ko-en")) for a in areas]
        seven = tb["issue_sentences"]
        cells.append(f"{sum(bool(x['exact']) for x in seven)} of {len(seven)}")
        head.append(f"| `{name}` | " + " | ".join(cells) + " |")
    n = {d: card["textbook"]["directions"][d]["n"] for d in ("en-ko", "ko-en")
         for card in list(cards.values())[:1]}
    conf = "; ".join(
        f"`{name}` flags below {c['confidence']['threshold']:g}, AUROC {ev['auroc']:g} on "
        f"{ev['sentences']} sentences outside the grammar ({ev['exact']} exact)"
        for name, c in cards.items() for ev in [c["confidence"]["evaluation"]])
    return ("\n".join(head) + f"\n\nOn {n['en-ko']} English and {n['ko-en']} Korean sentences "
            "written by hand per chapter (`tests/data/textbook_*.tsv`), which the corpus never "
            "draws into any split (`corpus.held_out`; a test checks); from each "
            "`checkpoints/NAME/card.json` (`textbook`). "
            f"`Translation.confidence` (card `confidence`): {conf}.")


BLOCKS: dict[str, Callable[[dict], str]] = {
    "checkpoints": block_checkpoints,
    "textbook": block_textbook,
    "examples": block_examples,
    "alignment": block_alignment,
    "tokenizer": block_tokenizer,
    "tokenizers": block_tokenizers,
    "benchmarks": block_benchmarks,
    "estimates": block_estimates,
    "soak": block_soak,
    "patching": block_patching,
    "soak_short": block_soak_short,
    "capacity": block_capacity,
    "capacity_nginx": block_capacity_nginx,
}


def render(name: str, results: dict) -> str:
    """The text block NAME should hold (without its markers)."""
    if name not in BLOCKS:
        raise KeyError(f"README block {name!r} has no renderer in benchmarks.readme.BLOCKS")
    return BLOCKS[name](results).rstrip("\n") + "\n"


def blocks_in(text: str) -> dict[str, str]:
    """{name: body} of every figure block in a README text."""
    found: dict[str, str] = {}
    for m in BLOCK.finditer(text):
        if m["name"] in found:
            raise ValueError(f"README has two figure blocks named {m['name']!r}")
        found[m["name"]] = m["body"]
    return found


def rewrite(text: str, results: dict) -> str:
    """text with every figure block's body rendered again from results."""
    blocks_in(text)  # duplicate names are an error, not a silent overwrite
    return BLOCK.sub(lambda m: m.group(1) + render(m["name"], results) + m.group(4), text)


# ---- what may stand outside a block -------------------------------------------------------

# A number with a unit a measurement would carry.
MEASURED = re.compile(
    r"(?<![\w.])[−+-]?~?\d[\d,]*(?:\.\d+)?\s?(?:ms|s|MB|GB|KB|kB|×|%|reruns/s|students|min|"
    r"minutes|seconds|CPU s)(?![\w/])|(?<![\w/])1/\d+(?:\.\d+)?\b")

# Numbers with units outside any block that are settings, bounds or definitions, not
# measurements: (regex over one README line, why it may stay). Matches are blanked before the
# scan, so each entry allows exactly the phrase it names.
NOT_MEASURED: dict[str, str] = {
    r"zoomed 1\.5×|with 1\.5× larger fonts": "presenter-mode zoom, a setting",
    r"`max_len` 520|14 MB per folder": "shipped checkpoint size on disk (a file size)",
    r"--max-minutes 50|9\.5 more|50\n?\s*minutes|59\.5 with|about 39 minutes|for 19 minutes|"
    r"resumed to 34": "training time limits and the leg-1 stop",
    r"10 % of the pairs": "--typed-share 0.1, a setting",
    r"are 35 % of the corpus|ones 25 %|textbook's 40 %|share of its 40 %|\((?:16|22|15|10) %\)":
        "corpus mixture, settings",
    r"2 × source \+ 10": "decoding formula",
    r"within ±30 % of measured peaks": "test tolerance",
    r"every 0\.2 s": "queue poll interval, a setting",
    r"still busy after 90 seconds": "the QueueTimeout message at the default timeout",
    r"blocks of 1 MB or more|up to 32 MB": "glibc M_MMAP_THRESHOLD, settings",
    r"1\.2 × budget": "test bound",
    r"16 × 512 tokens|16 lines of 519 pieces": "input sizes",
    r"is estimated at 1\.0 GB|2\.3 GB\.|about 1\.1 GB|about 0\.3 GB|about 10\.5 GB":
        "model.budget's estimate from shapes, deterministic (H5's tests tie it to the code)",
    r"of 8–48 MB each|184 MB together": "st.cache_data max sizes, settings",
    r"at most 2 minutes": "Streamlit's disconnected-session limit",
    r"\+ 600 MB|±5 MB": "soak pass bounds, settings",
    r"an 8 MB Trace": "test setting",
    r"baseline \+ 5\.1 GB with the defaults": "sum of the default budgets (3,072 + 2,048 MB)",
    r"every 15 s": "planning assumption",
    r"every 100 inputs": "sampling interval",
}
# Sections left unchecked, each with why: (first line's start, next section's start). None
# today: the tokenizer-size comparison is the `tokenizers` block (bench_tokenizers).
UNCHECKED_SECTIONS: list[tuple[str, str]] = []


def outside_blocks(text: str) -> list[tuple[int, str]]:
    """(line number, line) of README lines outside every figure block and unchecked section."""
    lines = text.splitlines()
    keep, inside, skip_until = [], None, None
    for i, line in enumerate(lines, 1):
        m = re.match(r"<!-- (/?)figures:([\w-]+) -->", line)
        if m:
            inside = None if m[1] else m[2]
            continue
        if skip_until is None:
            skip_until = next((end for start, end in UNCHECKED_SECTIONS if line.startswith(start)),
                              None)
        elif line.startswith(skip_until):
            skip_until = None
        if inside is None and skip_until is None:
            keep.append((i, line))
    return keep


def measured_outside_blocks(text: str) -> list[tuple[int, str, list[str]]]:
    """(line number, line, figures) for each figure outside a block that looks measured."""
    allowed = re.compile("|".join(f"(?:{p})" for p in NOT_MEASURED))
    hits = []
    for i, line in outside_blocks(text):
        figures = MEASURED.findall(allowed.sub(" ", line))
        if figures:
            hits.append((i, line, figures))
    return hits


def main(argv: list[str] | None = None) -> int:
    """Rewrite README.md's figure blocks from benchmarks/results.json; --check only compares."""
    argv = sys.argv[1:] if argv is None else argv
    text = README.read_text(encoding="utf-8")
    new = rewrite(text, load_results())
    stray = measured_outside_blocks(new)
    for i, line, figures in stray:
        print(f"README.md:{i}: figure outside a block: {', '.join(figures)}: {line.strip()}")
    if "--check" in argv:
        return 1 if new != text or stray else 0
    if new != text:
        README.write_text(new, encoding="utf-8")
    print(f"README.md: {len(blocks_in(new))} figure blocks written from "
          f"{Path('benchmarks/results.json')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
