"""Admission control: what a model run will cost in memory, and a gate that lets runs in while
the sum of their costs fits a budget.

The estimate is a pure function of the model's shape and the batch's (B sentences, S source and
T target positions), worked out before anything is allocated; tokenizing is cheap and runs
first to know S and T. The gate (model/gate.py) is plain threading (no
streamlit), shared by every session of a server process. Sizes are bytes; float32 everywhere
(4 bytes), masks bool (1 byte).

Shape legend: B batch, S source / T target positions (padded), L layers of a kind, H heads,
Hkv key/value heads, Dh head size, D model size, F feed-forward size, V vocabulary.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace

from .capture import GROUPS

F32 = 4
MB = 2**20
GROUPS_QUAD = ("attn", "scores", "norms")  # (L, B, H, Q, K) per kind
# Every forward keeps, per attention call, one (B, H, Q, K) beyond the recorded ones: the masked
# copy of recorded scores (the lab's `masked`, the recorder's scores + additive mask), or the
# scores themselves when they are not recorded (then masked in place, HookPoint.watched); how
# many more it keeps is the backend's, in Dims' forward-cost fields.
TRANSIENT_QUADS = 1
ACTIVATION_ROWS = 6  # (B, n, D)-sized temporaries alive in one layer (residual, norm, W_O out…)

@dataclass(frozen=True)
class Dims:
    """The shapes a run will have: the model's and this batch's."""

    batch: int
    src: int  # S padded source positions (0: no encoder side)
    tgt: int  # T padded target positions (0: no decoder side)
    layers: dict[str, int]  # attention kind -> L
    heads: int
    d_head: int
    d_model: int
    d_ff: int
    vocab: int
    kv_heads: int = 0  # 0: as many as heads
    max_len: int = 0  # rows of the position table
    decode_steps: int = 0  # greedy steps run before the capture (0: targets given)
    logit_rows: int = -1  # positions given logits (-1: the target positions)
    # the forward computes one logit row when logits are not recorded (transformers'
    # logits_to_keep, model/hf/record.py); otherwise all logit_rows, recorded or not
    lm_trim: bool = False
    logit_copies: int = 1  # (B, n, V) tensors alive at once at the LM head (2: a bias added)
    # how the backend's forward spends memory beyond the Trace (each backend's forward_costs;
    # the defaults are the lab's: model/backends/lab/transformer.py's MultiHeadAttention.forward)
    attn_copies: int = 2  # (B, H, Q, K) temporaries when attn is not recorded (lab: softmax's
    # output and the masked probabilities, unless a recorder slab takes them)
    float_masks: bool = False  # a float mask (B, 1, Q, K) per kind alive during the forward
    hidden_copies: int = 1  # copies of the hidden states alive when the capture ends
    lm_head: bool = False  # the LM head's (B, n, V) output is computed whether recorded or not

    def qk(self, kind: str) -> tuple[int, int]:
        """(Q, K) positions of one attention kind."""
        return {"enc_self": (self.src, self.src), "dec_self": (self.tgt, self.tgt),
                "cross": (self.tgt, self.src)}[kind]

    @property
    def hkv(self) -> int:
        return self.kv_heads or self.heads


@dataclass(frozen=True)
class Estimate:
    """Peak bytes of one run, and what they are made of (for messages and tests)."""

    bytes: int
    parts: dict[str, int] = field(default_factory=dict)
    dims: Dims | None = None
    run: str = "capture"  # capture, ablation, scan, lens or validation (picks the advice)

    @property
    def mb(self) -> float:
        return self.bytes / MB


# ---- the estimate ------------------------------------------------------------------------


def quad_bytes(d: Dims, kind: str) -> int:
    """One (L, B, H, Q, K) float32 group of one kind."""
    q, k = d.qk(kind)
    return d.layers[kind] * d.batch * d.heads * q * k * F32


def _largest_quad(d: Dims) -> int:
    """One layer's (B, H, Q, K) float32 tensor of the largest kind: what a forward holds
    transiently inside one attention call."""
    return max((d.batch * d.heads * q * k * F32 for q, k in map(d.qk, d.layers)), default=0)


def _rows(d: Dims) -> int:
    return d.batch * max(d.src, d.tgt)


def _raw_bytes(d: Dims, name: str) -> int:
    """A raw hook asked for by name (the lab's model): its tensor's bytes, copied once."""
    side_n = d.src if name.startswith("encoder.") else d.tgt
    kind = ("cross" if ".cross_attn." in name else "enc_self" if name.startswith("encoder.")
            else "dec_self")
    hook = name.rsplit(".", 1)[-1]
    if ("_attn." in name) and kind in d.layers:
        q, k = d.qk(kind)
        if hook in ("hook_scores", "hook_masked", "hook_probs"):
            return d.batch * d.heads * q * k * F32
        if hook in ("hook_k", "hook_v"):
            return d.batch * d.hkv * k * d.d_head * F32
        return d.batch * q * d.d_model * F32  # hook_in, hook_q, hook_context, hook_out
    if hook == "hook_hidden":
        return d.batch * side_n * d.d_ff * F32
    return d.batch * side_n * d.d_model * F32  # embeddings, residual stream, stack outputs


def trace_parts(d: Dims, groups: Collection[str], raw: Sequence[str] = ()) -> dict[str, int]:
    """Bytes of each recorded group of the Trace these shapes make (what a cache will hold)."""
    parts: dict[str, int] = {}
    for g in GROUPS_QUAD:
        if g in groups:
            parts[g] = sum(quad_bytes(d, kind) for kind in d.layers)
    for g in ("q", "k", "v"):
        if g in groups:
            total = 0
            for kind, n in d.layers.items():
                q, k = d.qk(kind)
                # k/v one row per key/value head, as both recorders store them
                heads, pos = (d.heads, q) if g == "q" else (d.hkv, k)
                total += n * d.batch * heads * pos * d.d_head * F32
            parts[g] = total
    if "hidden" in groups:
        enc = d.layers.get("enc_self", 0)
        dec = d.layers.get("dec_self", 0)
        parts["hidden"] = ((enc + 1) * d.src * bool(enc) + (dec + 1) * d.tgt * bool(dec)
                           ) * d.batch * d.d_model * F32
    rows = d.tgt if d.logit_rows < 0 else d.logit_rows
    if "logits" in groups and rows:
        parts["logits"] = d.batch * rows * d.vocab * F32
    parts["masks"] = sum(d.batch * q * k for q, k in map(d.qk, d.layers))
    if raw:
        parts["acts"] = sum(_raw_bytes(d, n) for n in raw)
    return parts


def _decode_peak(d: Dims) -> int:
    """Greedy decoding before the capture (the lab's model): the encoder pass holds four
    (B, H, S, S) tensors in one attention call; the prefix cache keeps K/V per layer."""
    if not d.decode_steps:
        return 0
    quads = 4 * d.batch * d.heads * d.src * d.src * F32
    kv = 2 * d.layers.get("dec_self", 0) * d.batch * d.d_model * (d.src + d.decode_steps) * F32
    return quads + kv + ACTIVATION_ROWS * d.batch * d.src * max(d.d_model, d.d_ff) * F32


def estimate(d: Dims, groups: Collection[str], raw: Sequence[str] = ()) -> Estimate:
    """Peak bytes of a capture with these shapes: the Trace it builds, plus what is held on top
    of it at the worst moment (one layer's activations and transient attention tensors during
    the forward, or the norms computed after it), or the greedy decode before it if larger."""
    groups = set(groups)
    kept = set(groups)
    if "norms" in groups:  # computed from attn and v, which are recorded for it
        groups |= {"attn", "v"}
    parts = trace_parts(d, groups, raw)
    quad = _largest_quad(d)
    acts = ACTIVATION_ROWS * _rows(d) * max(d.d_model, d.d_ff) * F32
    lm_head = 0
    # the attention's probabilities are their own tensors unless a recorder slab takes them
    # (HookPoint.buffer); the backend says how many copies of them it keeps
    extra = TRANSIENT_QUADS + d.attn_copies * ("attn" not in groups)
    if d.float_masks:
        acts += sum(d.batch * q * k * F32 for q, k in map(d.qk, d.layers))
    if d.hidden_copies > 1 and "hidden" in parts:
        parts["hidden (model's copy)"] = parts["hidden"] * (d.hidden_copies - 1)
    if d.lm_head:
        rows = d.tgt if d.logit_rows < 0 else d.logit_rows
        if "logits" not in groups and not d.lm_trim and rows:
            # the LM head's (B, n, V) output, computed anyway and held by the model's output
            # until the capture returns (an encoder–decoder model without logits_to_keep)
            parts["logits (unrecorded)"] = d.batch * rows * d.vocab * F32
        if "logits" in groups or not d.lm_trim:
            # BART/Marian add final_logits_bias to the LM head's output: two (B, n, V) at once
            lm_head = (d.logit_copies - 1) * d.batch * rows * d.vocab * F32
    forward = extra * quad + acts
    # model/norms.py writes attn × ‖f(v)‖ into the norms in place; per layer it holds v per
    # query head and its product with the heads' Gram matrices, (B, H, K, Dh) float64 each
    after = 2 * d.batch * d.heads * max(d.src, d.tgt) * d.d_head * 8
    # (the lab's capture computes no logits it does not record: model/backends/lab/capture.py)
    parts["transient"] = max(forward, after if "norms" in groups else 0, lm_head)
    for g in groups - kept:  # recorded for the norms, dropped from the Trace after
        parts[f"{g} (for norms)"] = parts.pop(g)
    total = sum(parts.values())
    decode = _decode_peak(d)
    if decode > total:
        parts = {"decode": decode}
        total = decode
    return Estimate(total, parts, d)


# ---- the other model runs (model/dispatch.estimate_ablation, _scan, _logit_lens, _validation)

PLAIN_QUADS = 4  # a forward that records nothing: scores, masked, softmax's output and probs
LOGP_BYTES = 4 + 8 + 8  # per (B, T, V) cell: logits, their float64 copy, log_softmax's output
ROW_SUM_BYTES = 8 + 1 + 8 + 8  # per attention cell in _row_sums: float64, attn > 0, logs, product


def _plain_forward(d: Dims) -> int:
    """A forward that records nothing (ablation hooks only) at its worst moment: one attention
    call's four (B, H, Q, K) beside (B, n, D) activations, a feed-forward's (B, n, F) ones, or
    the output's log-probabilities (a backend's forced_values); these phases never overlap."""
    attn = PLAIN_QUADS * _largest_quad(d) + ACTIVATION_ROWS * _rows(d) * d.d_model * F32
    rows = d.tgt if d.logit_rows < 0 else d.logit_rows
    masks = sum(d.batch * q * k for q, k in map(d.qk, d.layers))
    return max(attn, ACTIVATION_ROWS * _rows(d) * d.d_ff * F32,
               LOGP_BYTES * d.batch * rows * d.vocab) + masks


def _greedy(d: Dims) -> int:
    """Greedy decoding (the lab's model): the encoder pass, then K/V kept per decoder layer."""
    kv = 2 * d.layers.get("dec_self", 0) * d.batch * d.d_model * (d.src + 2 * d.decode_steps)
    return _plain_forward(replace(d, tgt=0)) + kv * F32


def ablation_estimate(d: Dims) -> Estimate:
    """ablation_effect: two greedy decodes, then two forced passes over the longest output."""
    parts = {"decode": _greedy(d), "forced pass": _plain_forward(d)}
    return Estimate(max(parts.values()), parts, d, "ablation")


def scan_estimate(d: Dims, rows: int) -> Estimate:
    """importance_scan: a decode, then passes of `rows` copies one at a time (peak: one)."""
    parts = {"decode": _greedy(d), "one pass": _plain_forward(replace(d, batch=rows))}
    return Estimate(max(parts.values()), parts, replace(d, batch=rows), "scan")


def lens_estimate(d: Dims) -> Estimate:
    """logit_lens of one sentence: (L+1, T, D) states copied and normed, logits and softmax."""
    per = 2 * (d.layers.get("dec_self", 0) + 1) * d.tgt * F32  # two (L+1, T, ·) arrays of each
    parts = {"hidden": per * d.d_model, "logits": per * d.vocab}
    return Estimate(sum(parts.values()), parts, d, "lens")


def validation_estimate(chunks: Sequence[Dims]) -> Estimate:
    """validation_stats: attention captures chunk by chunk, each while the previous Trace is
    held, then _row_sums in float64 on it; the peak is the largest moment, not a sum."""
    peak, worst, before = 0, None, 0
    for d in chunks:
        trace = sum(trace_parts(d, {"attn"}).values())
        cells = max((quad_bytes(d, kind) // F32 for kind in d.layers), default=0)
        at = max(estimate(d, {"attn"}).bytes + before, trace + ROW_SUM_BYTES * cells)
        peak, worst = (at, d) if at > peak else (peak, worst)
        before = trace
    return Estimate(peak, {"one chunk": peak}, worst, "validation")


# ---- shapes from a bundle and the typed text (model/dispatch.estimate_capture) -------------


def groups_of(names: Collection[str] | None) -> tuple[set[str], list[str]]:
    """capture()'s `names` -> (recorded groups, raw hook names)."""
    names = list(GROUPS) if names is None else list(names)
    groups = {n for n in names if n in GROUPS or n in GROUPS_QUAD}
    return groups, [n for n in names if n not in groups]


def lines_that_fit(est: Estimate, budget: int) -> int:
    """How many of these lines (at this length) would fit the budget: 0 when not even one."""
    d = est.dims
    if d is None or est.run not in ("capture", "ablation"):  # the others are not per line
        return 0
    groups = {g for g in est.parts if g in (*GROUPS_QUAD, "q", "k", "v", "hidden", "logits")}
    again = ablation_estimate if est.run == "ablation" else lambda x: estimate(x, groups)
    fit = 0
    for b in range(1, d.batch + 1):
        if again(replace(d, batch=b)).bytes > budget:
            break
        fit = b
    return fit


TOO_LARGE = {  # ui/admission.py marks the same texts for translation
    "lines": "This input needs about {mb} MB to run, more than this server's whole budget for "
             "model runs ({budget} MB). Use fewer lines or shorter lines: at most {fit} of these "
             "lines at a time.",
    "line": "This input needs about {mb} MB to run, more than this server's whole budget for "
            "model runs ({budget} MB). Use fewer lines or shorter lines: fewer or shorter lines "
            "(each line alone is too long).",
    "sentence": "This sentence needs about {mb} MB for this, more than this server's whole "
                "budget for model runs ({budget} MB). Use a shorter sentence.",
    "validation": "The validation average needs about {mb} MB at a time, more than this "
                  "server's whole budget for model runs ({budget} MB); it cannot run here.",
}


def too_large_advice(est: Estimate, budget: int) -> tuple[str, dict[str, str | int]]:
    """Which TOO_LARGE text fits this refusal, and the values it is formatted with."""
    values: dict[str, str | int] = {"mb": f"{est.mb:,.0f}", "budget": f"{budget / MB:,.0f}",
                                    "fit": 0}
    if est.run in ("scan", "lens"):
        return "sentence", values
    if est.run == "validation":
        return "validation", values
    values["fit"] = lines_that_fit(est, budget)
    return ("lines" if values["fit"] else "line"), values


def too_large_message(est: Estimate, budget: int) -> str:
    """Why a run is refused outright, and how to make it fit (ui/admission.py: translated)."""
    key, values = too_large_advice(est, budget)
    return TOO_LARGE[key].format(**values)
