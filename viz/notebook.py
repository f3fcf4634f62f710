"""The lab's views in Jupyter: `from viz import show; show(trace, "attention", layer=1, head=2)`.

`figures(trace, view, …)` builds the same plotly figures the app shows for one view (a list);
`show(…)` returns them in a list that draws itself inline when it is a cell's last value
(IPython's `_ipython_display_`), so nothing is shown twice and `figs = show(…)` keeps them.

Views: tokens, masks, attention, steps, positional, embeddings, translation, heads, bertviz.
`steps` and `translation` also need the Bundle the trace came from (`bundle=`): the steps read
the block's weights, the translation view the vocabulary. Nothing here runs the model.
"""

from __future__ import annotations

import html
from collections.abc import Callable

import plotly.graph_objects as go

VIEWS = ("tokens", "masks", "attention", "steps", "positional", "embeddings", "translation",
         "heads", "bertviz")


class HtmlPage:
    """A self-contained HTML page (bertviz) shown in a sandboxed iframe inside the notebook."""

    def __init__(self, page: str, height: int = 600) -> None:
        self.page, self.height = page, height

    def _repr_html_(self) -> str:
        return (f'<iframe sandbox="allow-scripts" style="width:100%;border:0" '
                f'height="{int(self.height)}" srcdoc="{html.escape(self.page, quote=True)}">'
                "</iframe>")


class Shown(list):
    """Figures (and HTML pages) of one view; a notebook cell ending in it draws every item."""

    def _ipython_display_(self) -> None:
        from IPython.display import display

        for item in self:
            display(item)


def all_names(bundle) -> list[str] | None:
    """capture(names=…) that records what every view reads (hooks inside attention included)."""
    from model.backends import backend_for, capabilities
    from model.capture import GROUPS

    if not capabilities(bundle).raw_hooks:
        return None  # Hugging Face models: the default groups are all there is
    return backend_for(bundle).names({*GROUPS, "embed", "steps"})


def _pick_kind(trace, kind: str | None) -> str:
    kinds = [k for k in trace.kinds if k in trace.attn]
    if not kinds:
        raise ValueError("the trace has no attention recorded (capture with names=None)")
    if kind is None:
        return kinds[0]
    if kind not in kinds:
        raise ValueError(f"attention kind {kind!r} is not in this trace; it has {kinds}")
    return kind


def _check(value: int, limit: int, what: str) -> int:
    if not 0 <= value < limit:
        raise ValueError(f"{what} {value} is out of range 0..{limit - 1}")
    return value


def _tokens(trace, o: dict) -> list:
    from . import tokens

    sides = [s for s, toks in (("src", trace.src_tokens), ("tgt", trace.tgt_tokens)) if any(toks)]
    return [f(trace, side, o["numbers"]) for side in sides
            for f in (tokens.id_matrix_figure, tokens.positions_figure)]


def _masks(trace, o: dict) -> list:
    from . import masks

    figs = list(masks.mask_figures(trace, o["b"]).values())
    if o["kind"] in trace.scores:
        figs += masks.mask_effect_figures(trace, o["kind"], o["layer"], o["b"], o["head"],
                                          colorscale=o["colorscale"], numbers=o["numbers"])
    return figs


def _attention(trace, o: dict) -> list:
    from . import attention

    k, layer, b, head = o["kind"], o["layer"], o["b"], o["head"]
    style = {"hide_pad": o["hide_pad"], "colorscale": o["colorscale"]}
    return [attention.head_figure(trace, k, layer, b, head, numbers=o["numbers"], **style),
            attention.layer_figure(trace, k, layer, b, **style),
            attention.grid_figure(trace, k, b, selected=(layer, head), **style)]


def _steps(trace, o: dict) -> list:
    from model.analysis.inspect import head_weights

    from . import steps

    if o["bundle"] is None:
        raise ValueError("the steps view needs bundle= (the block's weights)")
    weights = head_weights(o["bundle"], o["kind"], o["layer"])
    walk = steps.walkthrough(trace, weights, o["kind"], o["layer"], o["b"], o["head"])
    return [s.figure for s in steps.steps(walk, trace, hide_pad=o["hide_pad"],
                                          numbers=o["numbers"], colorscale=o["colorscale"])]


def _positional(trace, o: dict) -> list:
    from . import positional

    n = min(o["n_positions"], trace.pos_table.shape[0])
    dims = [d for d in (0, 1, 2, 3) if d < trace.pos_table.shape[1]]
    figs = [positional.table_heatmap(trace.pos_table, n),
            positional.dimension_curves(trace.pos_table, dims, n),
            positional.position_similarity(trace.pos_table, n)]
    if "encoder.hook_tok" in trace.acts:
        figs.append(positional.term_sizes(trace, o["b"], "enc"))
    return figs


def _embeddings(trace, o: dict) -> list:
    from . import embeddings

    side = o.get("side") or ("enc" if "enc" in trace.hidden else "dec")
    if side not in trace.hidden:
        raise ValueError(f"the trace has no hidden states for side {side!r}")
    b, last = o["b"], trace.hidden[side].shape[0] - 1
    return [embeddings.pca_trajectories(trace, side, b, last),
            embeddings.cosine_by_layer(trace, side, b, last),
            embeddings.norms_by_layer(trace, side, b),
            embeddings.layer_change(trace, side, b)]


def _translation(trace, o: dict) -> list:
    from . import translation

    if "cross" not in trace.attn:
        raise ValueError("the translation view needs an encoder–decoder trace")
    if o["bundle"] is None:
        raise ValueError("the translation view needs bundle= (for the vocabulary)")
    tok = o["bundle"].tokenizer
    vocab = [tok.id_to_piece(i) for i in range(tok.vocab_size)]
    steps = translation.steps_from_logits(trace, o["b"], vocab)
    layer = o["layer"] if o["layer"] < trace.n_layers("cross") else 0
    return [translation.topk_figure(steps),
            translation.cross_steps_figure(trace, o["b"], layer, o["head"], steps)]


def _heads(trace, o: dict) -> list:
    from model.analysis.heads import head_stats
    from model.analysis.rollout import rollout

    from . import heads

    figs = heads.stats_heatmaps(head_stats(trace, o["kind"], o["b"]), o["kind"])
    kind = "enc_self" if "enc_self" in trace.attn else "dec_self"
    toks = trace.src_tokens[o["b"]] if kind == "enc_self" else trace.tgt_tokens[o["b"]]
    if toks:
        figs.append(heads.rollout_figure(rollout(trace, o["b"], kind, True), toks, toks,
                                         "attention rollout"))
    return figs


def _bertviz(trace, o: dict) -> list:
    from . import bertviz_embed

    view = o.get("bertviz_view", "head")
    return [HtmlPage(bertviz_embed.bertviz_html(trace, o["b"], view),
                     bertviz_embed.bertviz_height(trace, o["b"], view))]


_BUILDERS: dict[str, Callable[[object, dict], list]] = {
    "tokens": _tokens, "masks": _masks, "attention": _attention, "steps": _steps,
    "positional": _positional, "embeddings": _embeddings, "translation": _translation,
    "heads": _heads, "bertviz": _bertviz,
}


def figures(trace, view: str = "attention", *, kind: str | None = None, layer: int = 0,
            head: int = 0, b: int = 0, bundle=None, hide_pad: bool = True,
            numbers: bool = True, colorscale: str = "Viridis", n_positions: int = 64,
            **extra) -> list[go.Figure | HtmlPage]:
    """The figures of one view for sentence b (and one head where the view has one)."""
    if view not in _BUILDERS:
        raise ValueError(f"unknown view {view!r}; choose one of {VIEWS}")
    _check(b, len(trace.src_tokens), "sentence b")
    opts = dict(b=b, bundle=bundle, hide_pad=hide_pad, numbers=numbers, colorscale=colorscale,
                n_positions=n_positions, kind=None, layer=layer, head=head, **extra)
    if view not in ("tokens", "positional", "embeddings", "bertviz"):
        opts["kind"] = "cross" if view == "translation" else _pick_kind(trace, kind)
        if view != "translation":
            _check(layer, trace.n_layers(opts["kind"]), "layer")
            _check(head, trace.attn[opts["kind"]].shape[2], "head")
    return _BUILDERS[view](trace, opts)


def show(trace, view: str = "attention", **options) -> Shown:
    """figures(), drawn inline when it is the last value of a notebook cell."""
    return Shown(figures(trace, view, **options))
