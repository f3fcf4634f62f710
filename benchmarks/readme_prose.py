"""The README's prose blocks of measured figures: patching, the soak runs, the estimates
against measured peaks, and capacity (with and without nginx)."""

from __future__ import annotations

from benchmarks.readme_results import part, provenance


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
    # + what importing transformers adds where the language model is mixed in (bench_soak)
    bound = s.get("bound_mb", s["trace_cache_mb"] + 600)
    library = (f" (the cache + 600 MB + {s['library_mb']:.0f} MB that importing transformers "
               "adds, measured in a fresh process: the language model is a Hugging Face folder)"
               if s.get("library_mb") else "")
    half = len(rss) // 2
    return (
        f"**Measured** ({provenance(results, 'bench_soak.soak')}; {s['inputs']:,} inputs, "
        f"{s['trace_cache_mb']:,.0f} MB Trace cache): RSS every {every} inputs "
        + " ".join(f"{r:.0f}" for r in rss) + " MB; beyond the cache "
        + " ".join(f"{b:.0f}" for b in beyond) + " MB. The cache held "
        f"{min(cache[half:]) / 1000:.2f}–{max(cache[half:]) / 1000:.2f} GB over the last "
        f"{s['inputs'] - half * every:,} inputs. Peak after warm-up "
        f"{s['peak_after_warmup_mb']:,} MB against the {bound:,.0f} MB bound{library}, beyond "
        "the cache "
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
