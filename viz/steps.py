"""Inside one head with the real numbers (seed 000's walkthrough), recomputed in numpy.

X → Q = X·W_Q, K, V (this head's columns) → QKᵀ → ÷√d_k → mask (-1e9) → softmax → ·V
→ heads concatenated → ·W_O. The inputs are what the hooks recorded (trace.acts) and the
block's weights (model.analysis.inspect.head_weights); the tests check that every recomputed step
equals what the model itself produced.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from model.capture import key_side, query_side
from model.hooks import attn_prefix
from model.masks import MASK_FILL

from .common import DIVERGING, cell_text, heatmap, style, token_labels
from .i18n import _
from .masks import KIND_NAMES, axis_tokens

ACT_HOOKS = ("hook_in", "hook_context", "hook_out")
MEMORY_HOOK = "encoder.hook_out"  # what cross-attention's keys and values are made from


def act_names(kinds_layers: dict[str, int]) -> list[str]:
    """Raw hook names the steps view needs, for every attention block of a model."""
    names = [f"{attn_prefix(kind, i)}.{hook}" for kind, n in kinds_layers.items()
             for i in range(n) for hook in ACT_HOOKS]
    if "cross" in kinds_layers:
        names.append(MEMORY_HOOK)
    return names


@dataclass(frozen=True)
class Walk:
    """Every intermediate of one head for sentence b (padded positions included)."""

    kind: str
    layer: int
    b: int
    head: int
    batch: int  # bs
    n_heads: int
    d_head: int
    x: np.ndarray  # (n_q, D) what the queries are made from
    x_kv: np.ndarray  # (n_k, D) what keys and values are made from
    q: np.ndarray  # (n_q, Dh) this head's queries
    k: np.ndarray  # (n_k, Dh)
    v: np.ndarray  # (n_k, Dh)
    qk: np.ndarray  # (n_q, n_k) QKᵀ
    scaled: np.ndarray  # (n_q, n_k) QKᵀ/√d_k
    masked: np.ndarray  # (n_q, n_k) blocked cells = -1e9
    blocked: np.ndarray  # (n_q, n_k) bool
    probs: np.ndarray  # (n_q, n_k) softmax, blocked cells 0
    context: np.ndarray  # (n_q, Dh) probs·V for this head
    concat: np.ndarray  # (n_q, D) every head's recorded context, concatenated
    out: np.ndarray  # (n_q, D) concat·W_O + b_O
    n_kv_heads: int = 0  # key/value heads (grouped-query attention); 0: one per query head
    kv_head: int = -1  # the key/value head this query head reads; -1: its own

    @property
    def d_model(self) -> int:  # a walk rebuilt from a trace may have no X but an output
        return self.x.shape[1] or self.out.shape[1]


def walkthrough(trace, weights: dict[str, np.ndarray], kind: str, layer: int, b: int,
                head: int) -> Walk:
    """Recompute one head from its recorded input and the block's weights (float64 numpy)."""
    prefix = attn_prefix(kind, layer)
    need = [f"{prefix}.{h}" for h in ACT_HOOKS] + ([MEMORY_HOOK] if kind == "cross" else [])
    missing = [n for n in need if n not in trace.acts]
    if missing:
        raise ValueError(f"the trace lacks {missing}; capture with names=… including them")
    x = trace.acts[f"{prefix}.hook_in"][b].astype(np.float64)  # (n_q, D)
    x_kv = trace.acts[MEMORY_HOOK][b].astype(np.float64) if kind == "cross" else x
    d_model = x.shape[1]
    recorded = trace.acts[f"{prefix}.hook_context"]  # (B, H, n_q, Dh)
    n_heads, d_head = recorded.shape[1], recorded.shape[3]
    cols = slice(head * d_head, (head + 1) * d_head)

    def project(inp: np.ndarray, name: str) -> np.ndarray:
        return inp @ weights[f"W_{name}"].astype(np.float64) + weights[f"b_{name}"]

    q = project(x, "Q")[:, cols]
    k = project(x_kv, "K")[:, cols]
    v = project(x_kv, "V")[:, cols]
    qk = q @ k.T
    scaled = qk / np.sqrt(d_head)
    blocked = np.asarray(trace.masks[kind][b], dtype=bool)
    masked = np.where(blocked, MASK_FILL, scaled)
    e = np.exp(masked - masked.max(axis=-1, keepdims=True))
    probs = np.where(blocked, 0.0, e / e.sum(axis=-1, keepdims=True))
    context = probs @ v
    concat = recorded[b].transpose(1, 0, 2).reshape(-1, n_heads * d_head).astype(np.float64)
    out = concat @ weights["W_O"].astype(np.float64) + weights["b_O"]
    assert out.shape[1] == d_model
    return Walk(kind=kind, layer=layer, b=b, head=head, batch=int(trace.src_ids.shape[0]),
                n_heads=n_heads, d_head=d_head, x=x, x_kv=x_kv, q=q, k=k, v=v, qk=qk,
                scaled=scaled, masked=masked, blocked=blocked, probs=probs, context=context,
                concat=concat, out=out)


@dataclass(frozen=True)
class Step:
    """One labelled matrix of the walkthrough."""

    name: str
    formula: str
    shape: str  # the batched tensor's shape, seed 000 style
    figure: go.Figure


def _dims(n: int) -> list[str]:
    return [str(i) for i in range(n)]


def mask_caption(walk: Walk, trace, fill: str) -> str:
    """The mask step's sentence, naming only what this head's mask blocks in this line.

    A key column blocked for every real query is padding; any other blocked cell is a future
    key when it lies right of its query (a causal mask), else a key the mask hides some other
    way (a sliding window). An encoder line without padding blocks nothing, and saying "pad
    keys, future positions" there described a mask the model does not have."""
    nq = trace.length(query_side(walk.kind), walk.b)
    blocked = np.asarray(walk.blocked, bool)[:nq]  # (real Q, K)
    if not blocked.any():
        return _("Mask: no cell is blocked in this line (no padding key, and every query may "
                 "see every key), so the scores go on unchanged; a blocked cell would hold "
                 "{fill}").format(fill=fill)
    pad_cols = blocked.all(axis=0)  # (K,)
    rest = blocked & ~pad_cols[None, :]
    q_idx, k_idx = np.nonzero(rest)
    future, other = bool((k_idx > q_idx).any()), bool((k_idx <= q_idx).any())
    pads = bool(pad_cols.any())
    if other:
        return _("Mask: blocked cells (the keys this model's mask hides from each query) set "
                 "to {fill}").format(fill=fill)
    if pads and future:
        return _("Mask: blocked cells (pad keys, future positions) set to {fill}").format(
            fill=fill)
    if future:
        return _("Mask: future positions (keys after the query) set to {fill}").format(
            fill=fill)
    return _("Mask: padding keys set to {fill}").format(fill=fill)


def steps(walk: Walk, trace, *, hide_pad: bool = True, numbers: bool = True,
          colorscale: str = "Viridis", fill: str = "-1e9") -> list[Step]:
    """The walkthrough as labelled figures, with the batched shapes written beside each;
    `fill` names what the model puts in blocked cells (the lab's -1e9, a dtype minimum)."""
    q_tok, k_tok = axis_tokens(trace, walk.kind, walk.b)
    nq, nk = walk.qk.shape
    if hide_pad:
        nq = trace.length(query_side(walk.kind), walk.b)
        nk = trace.length(key_side(walk.kind), walk.b)
    qs, ks = token_labels(q_tok[:nq]), token_labels(k_tok[:nk])
    bs, h, dh, d = walk.batch, walk.n_heads, walk.d_head, walk.d_model
    nq_all, nk_all = walk.qk.shape
    sig = dict(colorscale=DIVERGING, zmid=0, numbers=numbers)
    tag = _("{kind} · layer {layer} · head {head}").format(
        kind=_(KIND_NAMES[walk.kind]), layer=walk.layer, head=walk.head)
    model_dim, head_dim, q_token, k_token = (_("model dimension"), _("head dimension"),
                                             _("query token"), _("key token"))
    key, query = _("key"), _("query")
    own_columns = _("{formula}, this head's columns")

    def mat(z, rows, cols, title, x_title, y_title, **kw) -> go.Figure:
        bound = float(np.nanmax(np.abs(z))) if z.size else 1.0
        opts = {**sig, "zmin": -bound or -1, "zmax": bound or 1, **kw}
        return heatmap(z, cols, rows, title=title, x_title=x_title, y_title=y_title, **opts)

    kv_side = _("encoder output (memory)") if walk.kind == "cross" else "X"
    h_kv = walk.n_kv_heads or h
    kv_name = "n_kv_head" if h_kv != h else "n_head"

    def kv_title(what: str) -> str:
        own = (_("K for head {head}") if what == "K" else _("V for head {head}")).format(
            head=walk.head)
        if h_kv == h:
            return own
        return _("{title} (key/value head {kv} of {n}, shared)").format(
            title=own, kv=walk.kv_head, n=h_kv)

    shown_masked = np.where(walk.blocked, np.nan, walk.masked)[:nq, :nk]
    masked_text = (cell_text(walk.masked[:nq, :nk], fill=fill)
                   if numbers and max(nq, nk) <= 40 else None)
    out = [
        Step("X", _("input to the attention block (queries)") if walk.kind == "cross"
             else _("input to the attention block (queries, keys and values)"),
             f"(bs, n_q_seq, d_model) = ({bs}, {nq_all}, {d})",
             mat(walk.x[:nq], qs, _dims(d), _("X: attention input · {where}").format(where=tag),
                 model_dim, q_token)),
        Step("Q", own_columns.format(formula="Q = X·W_Q + b_Q"),
             f"(bs, n_head, n_q_seq, d_head) = ({bs}, {h}, {nq_all}, {dh})",
             mat(walk.q[:nq], qs, _dims(dh), _("Q for head {head}").format(head=walk.head),
                 head_dim, q_token)),
        Step("K", own_columns.format(formula=f"K = {kv_side}·W_K + b_K"),
             f"(bs, {kv_name}, n_k_seq, d_head) = ({bs}, {h_kv}, {nk_all}, {dh})",
             mat(walk.k[:nk], ks, _dims(dh), kv_title("K"), head_dim, k_token)),
        Step("V", own_columns.format(formula=f"V = {kv_side}·W_V + b_V"),
             f"(bs, {kv_name}, n_k_seq, d_head) = ({bs}, {h_kv}, {nk_all}, {dh})",
             mat(walk.v[:nk], ks, _dims(dh), kv_title("V"), head_dim, k_token)),
        Step("QKᵀ", _("MatMul Q, Kᵀ"),
             f"(bs, n_head, n_q_seq, n_k_seq) = ({bs}, {h}, {nq_all}, {nk_all})",
             mat(walk.qk[:nq, :nk], qs, ks, "QKᵀ", key, query)),
        Step("÷√d_k", _("Scale: divide by √d_k = √{dh} = {root}").format(
                 dh=dh, root=f"{np.sqrt(dh):.3f}"),
             f"(bs, n_head, n_q_seq, n_k_seq) = ({bs}, {h}, {nq_all}, {nk_all})",
             mat(walk.scaled[:nq, :nk], qs, ks, "QKᵀ / √d_k", key, query)),
        Step("masked", mask_caption(walk, trace, fill),
             f"(bs, n_head, n_q_seq, n_k_seq) = ({bs}, {h}, {nq_all}, {nk_all})",
             mat(shown_masked, qs, ks, _("masked scores (blank cells hold {fill})").format(
                 fill=fill), key, query,
                 text=masked_text, numbers=False,
                 zmin=-float(np.abs(walk.scaled).max() or 1),
                 zmax=float(np.abs(walk.scaled).max() or 1))),
        Step("softmax", _("Softmax over keys: each row sums to 1, blocked cells are 0"),
             f"(bs, n_head, n_q_seq, n_k_seq) = ({bs}, {h}, {nq_all}, {nk_all})",
             heatmap(walk.probs[:nq, :nk], ks, qs, title=_("attention probabilities"),
                     x_title=key, y_title=query, colorscale=colorscale, zmin=0, zmax=1,
                     numbers=numbers)),
        Step("·V", _("context = softmax · V for this head"),
             f"(bs, n_head, n_q_seq, d_head) = ({bs}, {h}, {nq_all}, {dh})",
             mat(walk.context[:nq], qs, _dims(dh),
                 _("context of head {head}").format(head=walk.head), head_dim, q_token)),
        Step("concat", _("every head's context side by side (transpose and reshape)"),
             f"(bs, n_q_seq, n_head·d_head) = ({bs}, {nq_all}, {h * dh})",
             mat(walk.concat[:nq], qs, [f"h{i // dh}·{i % dh}" for i in range(h * dh)],
                 _("heads concatenated (columns: head·dimension)"), _("head·dimension"),
                 q_token)),
        Step("·W_O", _("output = concat · W_O + b_O: what the block adds to the residual "
                       "stream"),
             f"(bs, n_q_seq, d_model) = ({bs}, {nq_all}, {d})",
             mat(walk.out[:nq], qs, _dims(d), _("attention block output"), model_dim,
                 q_token)),
    ]
    return out


def query_key_figures(walk: Walk, trace, query: int, *, hide_pad: bool = True
                      ) -> list[go.Figure]:
    """One query token against every key: q and each k, the products q∘k, the scores."""
    q_tok, k_tok = axis_tokens(trace, walk.kind, walk.b)
    nk = trace.length(key_side(walk.kind), walk.b) if hide_pad \
        else walk.k.shape[0]
    ks = token_labels(k_tok[:nk])
    q = walk.q[query]
    k = walk.k[:nk]
    qlabel = token_labels(q_tok)[query]
    dims = [str(i) for i in range(walk.d_head)]
    head_dim, key, score = _("head dimension"), _("key"), _("score")
    dim_hover = "%{y}<br>" + _("dimension") + " %{x}<br>"
    vectors = np.vstack([q[None, :], k])
    bound = float(np.abs(vectors).max()) or 1.0
    f1 = heatmap(vectors, dims, [f"q: {qlabel}"] + [f"k: {t}" for t in ks],
                 title=_("Query vector q ({query}) and every key vector k, head {head}").format(
                     query=qlabel, head=walk.head),
                 x_title=head_dim, y_title=_("vector"), colorscale=DIVERGING,
                 zmin=-bound, zmax=bound, zmid=0,
                 hover=dim_hover + _("value") + ": %{z:.4f}<extra></extra>")
    prod = q[None, :] * k  # (n_k, Dh)
    pb = float(np.abs(prod).max()) or 1.0
    f2 = heatmap(prod, dims, [f"q∘k: {t}" for t in ks],
                 title=_("Elementwise products q∘k (each row sums to q·k)"),
                 x_title=head_dim, y_title=key, colorscale=DIVERGING,
                 zmin=-pb, zmax=pb, zmid=0,
                 hover=dim_hover + _("product") + ": %{z:.4f}<extra></extra>")
    scores = prod.sum(axis=1) / np.sqrt(walk.d_head)
    blocked = walk.blocked[query, :nk]
    probs = walk.probs[query, :nk]
    probability = _("probability")
    f3 = make_subplots(rows=1, cols=2, subplot_titles=(
        _("score q·k/√d_k (blocked keys hatched)"), _("softmax probability")))
    f3.add_trace(go.Bar(x=ks, y=scores, name=score,
                        marker={"color": np.where(blocked, "#bbbbbb", "#2166ac").tolist(),
                                "pattern": {"shape": np.where(blocked, "/", "").tolist()}},
                        hovertemplate=key + " %{x}<br>" + score + " %{y:.4f}<extra></extra>"),
                 1, 1)
    f3.add_trace(go.Bar(x=ks, y=probs, name=probability, marker={"color": "#1b7837"},
                        hovertemplate=key + " %{x}<br>" + probability +
                        " %{y:.4f}<extra></extra>"), 1, 2)
    f3.update_xaxes(type="category")
    f3.update_yaxes(range=[0, 1], row=1, col=2)
    style(f3, _("Scores and weights for query {query}").format(query=qlabel), key, score,
          height=360)
    f3.update_layout(showlegend=False)
    return [f1, f2, f3]
