"""The head atlas (issue 56): every head of every attention kind over a corpus, measured per
input and then summarised (mean, standard deviation, number of inputs), compared pairwise by
the Jensen–Shannon distance between their attention rows (Clark et al. 2019, §6) and grouped
by behaviour (atlas_groups.py). The per-input metrics are atlas_metrics.py's.

The corpus, in order of preference: the lines given; a translator's validation pairs (given
by the caller, which knows the checkpoint's folder), half of them English → Korean and half
Korean → English, teacher-forced on their references so gold alignments apply; else the
built-in sentence set (model/data/sentences_en.txt, where present); else a ValueError naming
what to pass (model/ does not import the training room, where the corpus is drawn).

Shape legend
    I  inputs   L  layers   H  heads   N = L · H heads of one kind, layer-major
    Q  query pieces   K  key pieces
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from ..backends import backend_for, is_translator
from ..budget import Dims, Estimate, estimate
from ..capture import Trace, key_side, query_side
from ..dispatch import capture
from .alignment import alignment_agreement
from .atlas_groups import Group, group_heads, mds_xy
from .atlas_metrics import METRICS, input_metrics, js_rows

Progress = Callable[[float], None] | None

DEFAULT_INPUTS = 300  # the corpus size when none is given (issue 56's targets)
MAX_INPUTS = 2_000  # more lines than this are refused: the atlas is one run per corpus
BATCH = 32  # inputs per capture
ATLAS_SEED = 56  # the seed to draw corpus sentences with, for a model without a set of its own
INDUCTION_SEEDS = (0, 1)  # repeated random sequences: detectors.INDUCTION_ROWS per seed
BUILTIN = Path(__file__).resolve().parents[1] / "data" / "sentences_en.txt"
# seconds per (head pair × query row × key) of the JS loop at one thread, counting every key
# of a row (estimate_atlas): 5.5e-9 for the old torch loop (0.23 s for 144 heads at 64 × 64
# pieces on this project's 2-core machine); the packed numpy loop took 0.24x (64 × 64) to 0.3x
# (21 spread rows of 64) of the old one's time at the same load
JS_SECONDS_PER_CELL = 1.5e-9
# query rows per kind that the JS distances read, spread evenly over the inputs and over each
# input's positions: the head-pair loop is the atlas's largest cost beside the forward passes
# (GPT-2-small's 144 heads at 64 pieces: ~0.05 s an input at every row), and a few thousand
# rows already fix a mean distance to about ±0.01
JS_ROWS = 4_096


@dataclass(frozen=True)
class AtlasInput:
    """One input of the corpus: its text and, for a translator, its reference and gold
    alignment ((English word, Korean word) pairs)."""

    source: str
    target: str | None = None
    target_lang: str | None = None
    align: tuple = ()
    src_is_en: bool = True


@dataclass(frozen=True)
class Example:
    """One input's attention for every head of a kind: the group patterns' input."""

    index: int  # into Atlas.inputs
    q_pieces: list[str]
    k_pieces: list[str]
    attn: np.ndarray  # (L, H, Q, K) float32


@dataclass
class Atlas:
    """The head atlas of one model over one corpus (module docstring)."""

    inputs: list[AtlasInput]
    source: str  # "lines", "validation", "builtin" or "corpus": where the inputs came from
    layers: dict[str, int]  # kind -> L
    n_heads: int
    values: dict[str, dict[str, np.ndarray]]  # kind -> metric -> (I, L, H), NaN = not counted
    dists: dict[str, np.ndarray] = field(default_factory=dict)  # kind -> (N, N)
    rows: dict[str, int] = field(default_factory=dict)  # kind -> query rows in the distance
    groups: dict[str, list[Group]] = field(default_factory=dict)
    examples: dict[str, Example] = field(default_factory=dict)
    xy: dict[str, np.ndarray] = field(default_factory=dict)  # kind -> (N, 2), made on demand

    @property
    def kinds(self) -> list[str]:
        return list(self.layers)

    @property
    def lines(self) -> list[str]:
        """The inputs used, as text (a translator's source side)."""
        return [i.source for i in self.inputs]

    def metrics(self, kind: str) -> list[str]:
        """The metrics measured for a kind on at least one input, in METRICS order."""
        found = self.values.get(kind, {})
        return [m for m in METRICS if m in found and np.isfinite(found[m]).any()]

    def distance(self, kind: str) -> np.ndarray:
        """(N, N), layer-major: the mean JS distance (natural log, ≤ sqrt(ln 2)) between two
        heads' rows over the same query rows of the same inputs (queries with a choice of two
        keys or more; at most JS_ROWS of them, spread evenly over the inputs and positions);
        symmetric, zero diagonal."""
        if kind not in self.dists:
            raise ValueError(f"no {kind!r} attention in this atlas; it has {self.kinds}")
        return self.dists[kind].copy()

    def embedding(self, kind: str) -> np.ndarray:
        """(N, 2), layer-major: the heads placed by classical MDS of distance(kind) (no random
        start), made once per atlas (two sessions asking at once make the same points)."""
        if kind not in self.xy:
            self.xy[kind] = mds_xy(self.distance(kind))
        return self.xy[kind]

    def summary(self, kind: str, metric: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(mean, std, n), each (L, H), over the inputs where the head was measured."""
        v = self.values[kind][metric]  # (I, L, H)
        ok = np.isfinite(v)
        n = ok.sum(0)
        total = np.where(ok, v, 0.0).sum(0)
        mean = np.where(n > 0, total / np.maximum(n, 1), np.nan)
        dev = np.where(ok, v - mean[None], 0.0)
        std = np.where(n > 0, np.sqrt((dev ** 2).sum(0) / np.maximum(n, 1)), np.nan)
        return mean, std, n

    @property
    def table(self) -> list[dict]:
        """One row per head and metric: kind, layer, head, metric, mean, std, n."""
        out = []
        for kind in self.kinds:
            for metric in self.metrics(kind):
                mean, std, n = self.summary(kind, metric)
                for layer in range(mean.shape[0]):
                    for head in range(mean.shape[1]):
                        if n[layer, head]:
                            out.append({"kind": kind, "layer": layer, "head": head,
                                        "metric": metric, "mean": float(mean[layer, head]),
                                        "std": float(std[layer, head]),
                                        "n": int(n[layer, head])})
        return out

    def departures(self, kind: str, metric: str, layer: int, head: int, top: int = 5
                   ) -> list[tuple[int, float]]:
        """(input index, value) of the corpus inputs where the head's metric lies furthest
        from its mean, furthest first (the induction sequences are not corpus inputs)."""
        if metric == "induction":
            return []
        v = self.values[kind][metric][:, layer, head]
        mean = np.nanmean(v) if np.isfinite(v).any() else np.nan
        idx = [i for i in np.argsort(-np.abs(np.nan_to_num(v - mean, nan=-np.inf)))
               if np.isfinite(v[i])]
        return [(int(i), float(v[i])) for i in idx[:top]]

    def to_json(self) -> dict:
        """Everything but the example attention, as plain JSON types."""
        return {"source": self.source, "lines": self.lines, "n_heads": self.n_heads,
                "layers": dict(self.layers), "table": self.table,
                "distance": {k: np.round(d, 6).tolist() for k, d in self.dists.items()},
                "groups": {k: [{"members": [list(m) for m in g.members], "metric": g.metric,
                                "direction": g.direction, "z": g.z, "label": g.label}
                               for g in gs] for k, gs in self.groups.items()}}

    def to_csv(self) -> str:
        """The table as CSV, with each head's group."""
        where = {(k, m): gi for k, gs in self.groups.items()
                 for gi, g in enumerate(gs) for m in g.members}
        buf = io.StringIO()
        w = csv.writer(buf)
        w.writerow(["kind", "layer", "head", "metric", "mean", "std", "n", "group"])
        for r in self.table:
            w.writerow([r["kind"], r["layer"], r["head"], r["metric"], f"{r['mean']:.6g}",
                        f"{r['std']:.6g}", r["n"],
                        where.get((r["kind"], (r["layer"], r["head"])), "")])
        return buf.getvalue()


# ---- the corpus ------------------------------------------------------------------------------


def pair_inputs(pairs: Sequence, n: int) -> list[AtlasInput]:
    """n pairs (objects with en, ko, align), alternately English → Korean and back."""
    out = []
    for i, p in enumerate(list(pairs)[:n]):
        align = tuple(tuple(a) for a in getattr(p, "align", ()) or ())
        if i % 2 == 0:
            out.append(AtlasInput(p.en, p.ko, "ko", align, True))
        else:
            out.append(AtlasInput(p.ko, p.en, "en", align, False))
    return out


def corpus_inputs(bundle, lines: Sequence[str] | None = None, pairs: Sequence | None = None,
                  n: int = DEFAULT_INPUTS) -> tuple[list[AtlasInput], str]:
    """(inputs, where they came from) by the module docstring's order of preference."""
    if lines is not None:
        if isinstance(lines, str):
            lines = lines.splitlines()
        kept = [" ".join(str(s).split()) for s in lines]
        kept = [s for s in kept if s]
        if not kept:
            raise ValueError("the atlas needs at least one non-empty line")
        if len(kept) > MAX_INPUTS:
            raise ValueError(f"the atlas takes at most {MAX_INPUTS:,} lines; got {len(kept):,}")
        return [AtlasInput(s) for s in kept], "lines"
    n = max(1, min(int(n), MAX_INPUTS))
    translator = is_translator(bundle)
    if translator and pairs:
        return pair_inputs(pairs, n), "validation"
    if not translator and BUILTIN.is_file():
        text = BUILTIN.read_text(encoding="utf-8").splitlines()
        kept = [s.strip() for s in text if s.strip() and not s.startswith("#")][:n]
        if kept:
            return [AtlasInput(s) for s in kept], "builtin"
    # model/ does not import the training room (it builds on model/): the corpus sentences
    # this default drew before are the caller's to pass
    raise ValueError("the atlas needs lines, or a translator's pairs (its val_pairs.tsv, or "
                     f"training.corpus.generate(n, seed={ATLAS_SEED}): this project's corpus)")


def _chunks(inputs: Sequence[AtlasInput], batch: int):
    """(indices, sources, targets or None, target language) per capture: BATCH inputs at a
    time, one target language per capture."""
    for start in range(0, len(inputs), max(1, batch)):
        idx = range(start, min(len(inputs), start + batch))
        for lang in sorted({inputs[i].target_lang or "" for i in idx}):
            group = [i for i in idx if (inputs[i].target_lang or "") == lang]
            targets = [inputs[i].target for i in group]
            yield (group, [inputs[i].source for i in group],
                   None if any(t is None for t in targets) else targets, lang or None)


def estimate_atlas(bundle, inputs: Sequence[AtlasInput], batch: int = BATCH
                   ) -> tuple[Estimate, list[Dims], float]:
    """(peak bytes, the captures' shapes, head-pair cells of the JS loop) of head_atlas on
    these inputs: one chunk's attention capture, plus one input's float64 metric arrays and
    the JS loop's float32 pair block; tokenizes, runs nothing."""
    backend = backend_for(bundle)
    peak, worst, dims_all, cells = 0, None, [], 0.0
    for _, sources, targets, lang in _chunks(inputs, batch):
        d = backend.dims(backend.encode(sources, targets, lang))
        dims_all.append(d)
        work = 0
        for kind, n_layers in d.layers.items():
            q, k = d.qk(kind)
            heads = n_layers * d.heads
            work = max(work, heads * q * k * (8 * 5 + 4 * 3))
            rows = min(q, -(-JS_ROWS // max(1, len(inputs))))  # the JS loop's rows per input
            cells += d.batch * heads * (heads - 1) / 2 * rows * k
        at = estimate(d, {"attn"}).bytes + work
        peak, worst = (at, d) if at > peak else (peak, worst)
    return Estimate(peak, {"one chunk": peak}, worst, "validation"), dims_all, cells


# ---- the measurements ------------------------------------------------------------------------


def spread_rows(rows: np.ndarray, most: int) -> np.ndarray:
    """rows (Q,) bool with at most `most` True, kept evenly spaced over the True ones."""
    where = np.flatnonzero(rows)
    if len(where) <= most:
        return rows
    out = np.zeros_like(rows)
    out[where[np.unique(np.linspace(0, len(where) - 1, most).round().astype(int))]] = True
    return out


def _one(trace: Trace, b: int) -> SimpleNamespace:
    """Sentence b of a trace as a one-sentence trace, for alignment_agreement."""
    return SimpleNamespace(src_tokens=[trace.src_tokens[b]], tgt_tokens=[trace.tgt_tokens[b]],
                           attn={"cross": trace.attn["cross"][:, b:b + 1]})


def induction_rows(bundle, trace: Trace) -> dict[str, np.ndarray]:
    """{self kind: (rows, L, H)}: per repeated random sequence [prefix] r₁…rₙ r₁…rₙ, the mean
    weight from each second-copy rᵢ to r₍ᵢ₊₁₎ of the first copy (the detectors' inputs)."""
    from .detectors import induction_inputs, run_ids

    out: dict[str, list] = {}
    for seed in INDUCTION_SEEDS:
        src, tgt, pre, n = induction_inputs(bundle, trace, seed)
        tr = run_ids(bundle, src, tgt)
        for kind in ("enc_self", "dec_self"):
            if kind not in tr.attn:
                continue
            start = pre.get(query_side(kind), 0)
            q = np.arange(start + n, start + 2 * n)
            a = tr.attn[kind][:, :, :, q, q - n + 1]  # (L, B, H, n)
            out.setdefault(kind, []).append(a.mean(-1).transpose(1, 0, 2))  # (B, L, H)
    return {k: np.concatenate(v) for k, v in out.items()}


def head_atlas(bundle, lines: Sequence[str] | None = None, *, pairs: Sequence | None = None,
               n: int = DEFAULT_INPUTS, batch: int = BATCH, progress: Progress = None,
               induction: bool = True) -> Atlas:
    """The atlas of every head over the corpus (see corpus_inputs). progress(f), f in 0..1,
    is called after each capture; it may raise to stop the run (nothing is kept)."""
    inputs, source = corpus_inputs(bundle, lines, pairs, n)
    n_heads = int(bundle.config.n_heads)
    layers = {k: bundle.n_layers(k) for k in bundle.kinds}
    count = len(inputs)
    values = {k: {} for k in layers}
    js_sum = {k: np.zeros((L * n_heads,) * 2) for k, L in layers.items()}
    js_n = dict.fromkeys(layers, 0)
    examples: dict[str, Example] = {}
    chunks = list(_chunks(inputs, batch))
    steps = len(chunks) + 2
    first = None
    for done, (idx, sources, targets, lang) in enumerate(chunks, 1):
        tr = capture(bundle, sources, targets, target_lang=lang, names=["attn"])
        first = tr if first is None else first
        for kind in tr.attn:
            if kind not in layers:
                continue
            _measure(tr, kind, idx, inputs, values[kind], js_sum[kind], js_n, examples, count,
                     -(-JS_ROWS // count))
        if progress:
            progress(done / steps)
    if first is not None and induction:
        for kind, rows in induction_rows(bundle, first).items():
            if kind in values:
                values[kind]["induction"] = rows
    if progress:
        progress((steps - 1) / steps)
    atlas = Atlas(inputs, source, layers, n_heads, values, rows=js_n, examples=examples)
    for kind in layers:
        d = js_sum[kind] / js_n[kind] if js_n[kind] else np.full_like(js_sum[kind], np.nan)
        np.fill_diagonal(d, 0.0)
        atlas.dists[kind] = d
        names = atlas.metrics(kind)
        means = np.stack([atlas.summary(kind, m)[0].reshape(-1) for m in names], axis=1) \
            if names else np.zeros((d.shape[0], 0))
        atlas.groups[kind] = group_heads(d, means, names, n_heads)
    if progress:
        progress(1.0)
    return atlas


def _measure(tr: Trace, kind: str, idx: Sequence[int], inputs: Sequence[AtlasInput],
             values: dict[str, np.ndarray], js_sum: np.ndarray, js_n: dict[str, int],
             examples: dict[str, Example], count: int, js_per_input: int) -> None:
    """One capture's inputs of one kind into the atlas's per-input values and JS sums."""
    attn = tr.attn[kind]  # (L, B, H, Q, K)
    n_l, _, n_h = attn.shape[:3]
    cross = kind == "cross"
    for b, i in enumerate(idx):
        q_p = list(tr.tokens(query_side(kind))[b])
        k_p = list(tr.tokens(key_side(kind))[b])
        if not q_p or not k_p:
            continue
        a = attn[:, b, :, : len(q_p), : len(k_p)]  # (L, H, Q, K)
        flat = a.reshape(n_l * n_h, len(q_p), len(k_p))  # (N, Q, K) layer-major
        blocked = tr.masks[kind][b, : len(q_p), : len(k_p)]
        for metric, v in input_metrics(flat, blocked, q_p, k_p, cross).items():
            if metric not in values:
                values[metric] = np.full((count, n_l, n_h), np.nan)
            values[metric][i] = v.reshape(n_l, n_h)
        s, r = js_rows(flat, spread_rows((~blocked).sum(-1) >= 2, js_per_input))
        js_sum += s
        js_n[kind] += r
        if kind not in examples:
            examples[kind] = Example(i, q_p, k_p, np.array(a, dtype=np.float32))
        if cross and inputs[i].align and inputs[i].target is not None:
            part = alignment_agreement(_one(tr, b), [inputs[i].align], [inputs[i].src_is_en])
            if "alignment" not in values:
                values["alignment"] = np.full((count, n_l, n_h), np.nan)
            values["alignment"][i] = part
