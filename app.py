"""Attention lab: type sentences, watch a small encoder–decoder Transformer work on them.

main() reads the URL, draws the sidebar, runs the model once per input (cached) and hands the
resulting Trace to the selected view. Each view is one *_ui(ctx) function in VIEW_UI; viz/
builds every figure, model/ does every computation, this file only lays things out. Caches and
state shared by all sessions live in app_runtime.py (Streamlit re-runs this file per rerun).
"""

from __future__ import annotations

import logging
import os
import re
import time
from pathlib import Path
from urllib.parse import urlencode

import streamlit as st

from app_runtime import (  # defined once per process, not on every rerun
    LOOKUP_SAMPLE,
    Ctx,
    Notes,
    cached_alignment,
    cached_bertviz,
    cached_capture,
    cached_head_stats,
    cached_logit_lens,
    cached_translate,
    cached_vocab,
    cached_weights,
    corpus_args,
    load_bundle,
    shared_results,
    validation_pairs,
)
from model import (
    Bundle,
    CheckpointError,
    Trace,
    format_ablate,
    parse_ablate,
)
from model.analysis.ablation import ablation_effect, importance_scan
from model.analysis.heads import METRICS, validation_stats
from model.analysis.rollout import cross_rollout, rollout
from model.hf import resolve_model_ref
from model.inputs import MAX_CHARS, MAX_LINES, clean_lines  # input caps live with the cleaning
from viz import attention as viz_attention
from viz import embeddings as viz_embeddings
from viz import heads as viz_heads
from viz import masks as viz_masks
from viz import positional as viz_positional
from viz import steps as viz_steps
from viz import tokens as viz_tokens
from viz import translation as viz_translation
from viz.bertviz_embed import BertvizTooLarge, bertviz_height
from viz.common import DOWNLOAD_FORMATS, SEQUENTIAL, chart_config

LOG = logging.getLogger("attention_lab")

ROOT = Path(__file__).resolve().parent
MAX_URL_TEXT = 2_000  # longer text is left out of shareable links
PRESETS = {
    "겨울은 추워요. / 감기 조심하세요. (seed 000)": "겨울은 추워요.\n감기 조심하세요.",
    "Winter is cold.": "Winter is cold.",
    "The big dog eats the fish.": "The big dog eats the fish.",
    "My friend reads a book in the park.": "My friend reads a book in the park.",
    "Two English sentences": "The big dog eats the fish.\nWinter is cold.",
}
DEFAULT_TEXT = next(iter(PRESETS.values()))
LANGS = {"auto": "auto (Korean → English, otherwise → Korean)", "ko": "Korean", "en": "English"}
VIEWS = {
    "tokens": "Tokens & padding", "masks": "Masks", "attention": "Attention",
    "bertviz": "bertviz", "steps": "Inside one head", "positional": "Positional encoding",
    "embeddings": "Embeddings by layer", "translation": "Translation",
    "heads": "Heads", "compare": "Compare",
}
KIND_LABELS = {"enc_self": "encoder self-attention", "dec_self": "decoder self-attention",
               "cross": "cross-attention (decoder → encoder)"}
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:=])")


def md(text: object) -> str:
    """Text shown literally inside Streamlit markdown (no formatting, links, LaTeX or emoji)."""
    return _MD_SPECIAL.sub(r"\\\1", str(text))


# ---- inputs and model catalog ------------------------------------------------------------


def clean_input(raw: str) -> tuple[list[str], list[str]]:
    """Text area content -> at most MAX_LINES stripped sentences, and notes on what changed."""
    return clean_lines(raw, MAX_LINES, MAX_CHARS)  # capped before anything is tokenized


def model_folders() -> dict[str, Path]:
    """Every folder with a config.json in ATTN_CHECKPOINTS_DIR, plus those in ATTN_MODELS."""
    root = Path(os.environ.get("ATTN_CHECKPOINTS_DIR", "checkpoints"))
    root = root if root.is_absolute() else ROOT / root
    found: dict[str, Path] = {}

    def add(folder: Path) -> None:
        if (folder / "config.json").is_file() and folder.name not in found:
            found[folder.name] = folder

    def add_all(parent: Path) -> None:
        if parent.is_dir():
            for child in sorted(parent.iterdir()):
                if child.is_dir():
                    add(child)

    add_all(root)
    for extra in filter(None, os.environ.get("ATTN_MODELS", "").split(":")):
        path = Path(extra).expanduser()
        if (path / "config.json").is_file():  # a statement: Streamlit's magic would
            add(path)  # st.write() a bare conditional expression ("None" on the page)
        else:
            add_all(path)
    order = sorted(found, key=lambda n: (n != "paper", n))
    return {name: found[name] for name in order}


def _stamp(folder: Path) -> float:
    """Changes when a checkpoint is rewritten, so the cached model is reloaded."""
    times = [p.stat().st_mtime for p in folder.iterdir() if p.is_file()]
    return max(times, default=0.0)


# ---- URL state ---------------------------------------------------------------------------


def url_once() -> dict[str, str]:
    """The query parameters on the first run of a session; later runs: {} (widgets rule)."""
    if st.session_state.get("_url_read"):
        return {}
    st.session_state["_url_read"] = True
    return {k: st.query_params[k] for k in st.query_params}


def seed(key: str, value: object) -> None:
    """Give a widget its starting value through session state (never through index=)."""
    if key not in st.session_state:
        st.session_state[key] = value


def _copy(src: str, dst: str) -> None:
    st.session_state[dst] = st.session_state[src]


def sticky(widget, key: str, label: str, **kwargs):
    """A widget whose value outlives views that do not draw it (kept under `key`)."""
    shadow = f"_w_{key}"
    st.session_state[shadow] = st.session_state[key]
    return widget(label, key=shadow, on_change=_copy, args=(shadow, key), **kwargs)


def head_state(bundle: Bundle, url: dict[str, str], notes: Notes) -> None:
    """kind/layer/head: from the URL once (checked against the model), then kept valid."""
    state = st.session_state
    kinds = bundle.kinds
    if "kind" not in state:
        state["kind"], state["layer"], state["head"] = kinds[0] if kinds else "", 0, 0
        if "kind" in url:
            if url["kind"] in kinds:
                state["kind"] = url["kind"]
            else:
                notes.warnings.append(f"Unknown attention kind {md(repr(url['kind']))} in the "
                                      f"link; showing {md(state['kind'])}.")
        for name, limit in (("layer", bundle.n_layers(state["kind"]) if kinds else 0),
                            ("head", bundle.config.n_heads)):
            if name in url:
                value = url[name]
                if value.isascii() and value.isdigit() and int(value) < limit:  # not "²"
                    state[name] = int(value)
                else:
                    notes.warnings.append(f"{name} {md(repr(value))} from the link is not "
                                          f"between 0 and {limit - 1}; showing {name} 0.")
    if kinds and state["kind"] not in kinds:
        state["kind"] = kinds[0]
    if kinds and not 0 <= state["layer"] < bundle.n_layers(state["kind"]):
        state["layer"] = 0
    if not 0 <= state["head"] < bundle.config.n_heads:
        state["head"] = 0


def write_url(params: dict[str, str]) -> None:
    """Put the page state into the address bar (only when it changed)."""
    current = {k: st.query_params[k] for k in st.query_params}
    if current != params:
        st.query_params.from_dict(params)


# ---- sidebar -----------------------------------------------------------------------------


def card_line(bundle: Bundle) -> str:
    """variant · layers × heads · d_model · positions · norm · test metrics."""
    cfg, card = bundle.config, bundle.card or {}
    parts = [str(card.get("variant") or bundle.name)]
    try:
        parts += [f"{cfg.n_enc_layers}+{cfg.n_dec_layers} layers × {cfg.n_heads} heads",
                  f"d_model {cfg.d_model}", f"{cfg.pos_encoding} positions",
                  f"{cfg.norm}-LN"]
    except AttributeError:
        pass
    metrics = card.get("metrics") or {}
    for direction in ("en->ko", "ko->en"):
        m = metrics.get(direction)
        if isinstance(m, dict) and "chrf" in m:
            parts.append(f"{direction.replace('->', '→')} chrF {float(m['chrf']):.1f}, "
                         f"exact {float(m.get('exact_match', 0)):.1f}%")
    return " · ".join(parts)


def checkpoint_ui(catalog: dict[str, Path], url: dict[str, str], notes: Notes
                  ) -> tuple[str, Bundle | None, str]:
    """Checkpoint picker; a folder that fails to load falls back to the default one."""
    catalog = {**catalog, **st.session_state.get("_hub_models", {})}
    names = list(catalog)
    default = names[0]
    ref = url.get("ckpt")
    if ref is not None and ref not in names:  # only shipped or listed names; never a path
        try:
            catalog[ref] = resolve_model_ref(ref, catalog)  # a hub id needs ATTN_ALLOW_HUB=1
        except CheckpointError as exc:
            notes.warnings.append(f"Checkpoint {md(repr(ref[:80]))} in the link was refused: "
                                  f"{md(exc.reason)}. Showing {md(default)}.")
        else:
            st.session_state.setdefault("_hub_models", {})[ref] = catalog[ref]
            names.append(ref)
    seed("ckpt", url["ckpt"] if url.get("ckpt") in names else default)
    if st.session_state["ckpt"] not in names:
        st.session_state["ckpt"] = default
    name = st.selectbox("Checkpoint", names, key="ckpt")
    for candidate in [name] + [n for n in names if n != name]:
        folder = catalog[candidate]
        try:
            stamp = _stamp(folder)
            bundle = load_bundle(str(folder), stamp)
        except (CheckpointError, OSError) as exc:
            notes.errors.append(f"Checkpoint {md(candidate)} ({md(folder)}) could not be "
                                f"loaded: {md(exc)}")
            LOG.warning("checkpoint %s failed to load: %s", folder, exc)
            continue
        if candidate != name:
            notes.warnings.append(f"Showing checkpoint {md(candidate)} instead.")
        st.caption(md(card_line(bundle)))
        return candidate, bundle, f"{folder}@{stamp}"
    return name, None, ""


def _set_text(text: str) -> None:
    st.session_state["text"] = text


def preset_buttons(where: str) -> None:
    for i, (label, text) in enumerate(PRESETS.items()):
        st.button(label, key=f"preset_{where}_{i}", on_click=_set_text, args=(text,))


def input_ui(url: dict[str, str], notes: Notes, bundle: Bundle) -> dict:
    """Text, target language, decoder input, ablation, display options, sentence."""
    seed("text", url.get("text", DEFAULT_TEXT))
    text = st.text_area("Sentences (one per line = one batch)", key="text", height=120,
                        help="Ctrl+Enter applies. Up to 16 lines.")
    with st.expander("Examples"):
        preset_buttons("side")
    lang_url = url.get("lang")
    if lang_url is not None and lang_url not in LANGS:
        notes.warnings.append(f"Unknown language {md(repr(lang_url))} in the link; using auto.")
    seed("lang", lang_url if lang_url in LANGS else "auto")
    lang = st.selectbox("Translate into", list(LANGS), key="lang", format_func=LANGS.get)
    mode = st.radio("Decoder input", ["model", "typed"], key="decoder_mode",
                    format_func={"model": "the model's own translation",
                                 "typed": "a typed target (teacher forcing)"}.get)
    typed = None
    if mode == "typed":
        typed = st.text_area("Target sentences, one per source line", key="targets", height=90)
    with st.expander("Knock out heads"):
        seed("ablate", url.get("ablate", ""))
        ablate_raw = st.text_input("Heads to zero (kind:layer:head, comma-separated)",
                                   key="ablate", placeholder="enc_self:0:1,cross:2:3")
    ablate = check_ablate(ablate_raw, bundle, notes)
    st.markdown("**Display**")
    hide_pad = st.checkbox("Hide padding rows and columns", value=True, key="hide_pad")
    numbers = st.checkbox("Numbers on cells (small matrices)", value=True, key="numbers")
    colorscale = st.selectbox("Colour scale (probabilities)", list(SEQUENTIAL), key="cscale")
    fmt = st.selectbox("Chart download format", list(DOWNLOAD_FORMATS), key="fmt",
                       help="The camera button in each chart's toolbar saves this format.")
    return {"text": text, "lang": lang, "typed": typed, "ablate": ablate,
            "hide_pad": hide_pad, "numbers": numbers, "colorscale": colorscale, "fmt": fmt}


def check_ablate(raw: str, bundle: Bundle, notes: Notes) -> str:
    """Parse kind:layer:head,… and keep only heads this model has."""
    try:
        heads = parse_ablate(raw or "")
    except ValueError as exc:
        notes.warnings.append(f"Ignoring the heads to knock out: {md(str(exc)[:200])}")
        return ""
    good, bad = set(), []
    for kind, layer, head in sorted(heads):
        if (kind in bundle.kinds and 0 <= layer < bundle.n_layers(kind)
                and 0 <= head < bundle.config.n_heads):
            good.add((kind, layer, head))
        else:
            bad.append(f"{kind}:{layer}:{head}"[:60])
    if bad:  # one note, however many heads a link lists
        more = f" and {len(bad) - 3} more" if len(bad) > 3 else ""
        notes.warnings.append(f"This model has no head {md(', '.join(bad[:3]))}{more}; "
                              "not knocked out.")
    return format_ablate(good)


def sentence_ui(lines: list[str]) -> int:
    if st.session_state.get("sentence", 0) >= len(lines):
        st.session_state["sentence"] = 0
    if len(lines) == 1:
        return 0
    return st.selectbox("Sentence to inspect", list(range(len(lines))), key="sentence",
                        format_func=lambda b: f"{b + 1}: {lines[b][:40]}")


def share_ui(params: dict[str, str]) -> None:
    with st.expander("Share this view"):
        st.caption("Add this to the app's address; it opens exactly this view.")
        st.code("?" + urlencode(params), language=None, wrap_lines=True)
        if "text" not in params:
            st.caption(f"The text is longer than {MAX_URL_TEXT:,} characters, so the link "
                       "leaves it out.")


# ---- views -------------------------------------------------------------------------------


def chart(fig, ctx: Ctx, key: str | None = None) -> None:
    st.plotly_chart(fig, config=chart_config(ctx.fmt), key=key)


def head_picker(ctx: Ctx, kinds: tuple[str, ...] | None = None) -> tuple[str, int, int]:
    """kind / layer / head selectors, shared by the views and kept in the URL."""
    kinds = kinds or ctx.trace.kinds
    state = st.session_state
    if state["kind"] not in kinds:
        state["kind"] = kinds[0]
    c1, c2, c3 = st.columns(3)
    kind = sticky(c1.selectbox, "kind", "Attention", options=list(kinds),
                  format_func=KIND_LABELS.get)
    n_layers = ctx.trace.n_layers(kind)
    if state["layer"] >= n_layers:
        state["layer"] = 0
    layer = sticky(c2.selectbox, "layer", "Layer", options=list(range(n_layers)))
    head = sticky(c3.selectbox, "head", "Head", options=list(range(ctx.bundle.config.n_heads)))
    if (kind, layer, head) in parse_ablate(ctx.ablate):
        st.info("This head is knocked out: its context is zeroed before W_O.")
    return kind, layer, head


def tokens_ui(ctx: Ctx) -> None:
    t = ctx.trace
    st.subheader("Tokens and padding")
    st.caption("Each sentence is cut into SentencePiece pieces (▁ marks a word start), "
               "framed by a target-language tag and </s>, and padded with id "
               f"{t.pad_id} to the longest sentence in the batch.")
    if any(t.src_tokens):  # a decoder-only model (GPT-2) has text on the decoder side only
        for b, pieces in enumerate(t.src_tokens):
            st.markdown(f"**Sentence {b + 1}** · encoder input, {len(pieces)} pieces")
            st.html(viz_tokens.chips_html(pieces, t.src_ids[b, : len(pieces)]))
        chart(viz_tokens.id_matrix_figure(t, "src", ctx.numbers), ctx)
        chart(viz_tokens.positions_figure(t, "src", ctx.numbers), ctx)
    st.dataframe(viz_tokens.lengths_rows(t), hide_index=True)
    if any(t.tgt_tokens):
        st.markdown("**Decoder**: input pieces (shifted right, starting with <s>)"
                    .replace("<", "\\<"))
        for b, pieces in enumerate(t.tgt_tokens):
            st.html(viz_tokens.chips_html(pieces, t.tgt_ids[b, : len(pieces)]))
        chart(viz_tokens.id_matrix_figure(t, "tgt", ctx.numbers), ctx)
        chart(viz_tokens.positions_figure(t, "tgt", ctx.numbers), ctx)
        st.caption(f"Sentence {ctx.b + 1}: what each decoder position reads and predicts")
        st.dataframe(viz_tokens.decoder_rows(t, ctx.b), hide_index=True)


def masks_ui(ctx: Ctx) -> None:
    t = ctx.trace
    st.subheader(f"Masks for sentence {ctx.b + 1}")
    st.caption("True = blocked. Shown with padding, since padding is what the pad masks block.")
    figs = list(viz_masks.mask_figures(t, ctx.b).values())
    for i in range(0, len(figs), 2):
        cols = st.columns(2)
        for col, fig in zip(cols, figs[i: i + 2]):
            with col:
                chart(fig, ctx)
    st.subheader("What a mask does to one head")
    if not t.scores:
        st.info("The scores before masking are recorded only for this project's own models "
                "(hooks inside attention); this model's masks are shown above.")
        return
    kind, layer, head = head_picker(ctx)
    cols = st.columns(3)
    figs = viz_masks.mask_effect_figures(t, kind, layer, ctx.b, head,
                                         colorscale=ctx.colorscale, numbers=ctx.numbers)
    for col, fig in zip(cols, figs):
        with col:
            chart(fig, ctx)


def _open_head(n_heads: int) -> None:
    index = st.session_state["_w_open"]
    st.session_state["layer"], st.session_state["head"] = divmod(int(index), n_heads)


def attention_ui(ctx: Ctx) -> None:
    t = ctx.trace
    kind, layer, head = head_picker(ctx)
    opts = {"hide_pad": ctx.hide_pad, "colorscale": ctx.colorscale}
    chart(viz_attention.head_figure(t, kind, layer, ctx.b, head, numbers=ctx.numbers, **opts),
          ctx)
    chart(viz_attention.layer_figure(t, kind, layer, ctx.b, **opts), ctx)
    n_layers, n_heads = t.n_layers(kind), t.attn[kind].shape[2]
    chart(viz_attention.grid_figure(t, kind, ctx.b, selected=(layer, head), **opts), ctx)
    st.session_state["_w_open"] = layer * n_heads + head
    st.selectbox("Open a head from the grid", list(range(n_layers * n_heads)), key="_w_open",
                 format_func=lambda i: f"layer {i // n_heads}, head {i % n_heads}",
                 on_change=_open_head, args=(n_heads,))


def steps_ui(ctx: Ctx) -> None:
    t = ctx.trace
    st.subheader("Inside one head, with the real numbers")
    if ctx.bundle.kind != "native":
        st.info("This view needs one of this project's own checkpoints: it reads Q, K, V and "
                "the scores from hooks inside each attention layer and the layer's weights, "
                "which a Hugging Face model does not expose. The attention, bertviz, "
                "embeddings and heads views work on this model.")
        return
    kind, layer, head = head_picker(ctx)
    weights = cached_weights(ctx.bundle, ctx.key, kind, layer)
    walk = viz_steps.walkthrough(t, weights, kind, layer, ctx.b, head)
    st.caption("Padding is kept here, as in seed 000, so the -1e9 cells of the mask show.")
    for step in viz_steps.steps(walk, t, hide_pad=False, numbers=ctx.numbers,
                                colorscale=ctx.colorscale):
        left, right = st.columns([1, 3])
        with left:
            st.markdown(f"**{md(step.name)}**")
            st.caption(md(step.formula))
            st.code(step.shape, language=None, wrap_lines=True)
        with right:
            chart(step.figure, ctx)
    st.subheader("One query against every key")
    q_tokens = viz_masks.axis_tokens(t, kind, ctx.b)[0]
    n_q = t.length("src" if kind == "enc_self" else "tgt", ctx.b)
    if st.session_state.get("steps_query", 0) >= n_q:
        st.session_state["steps_query"] = 0
    query = st.selectbox("Query token", list(range(n_q)), key="steps_query",
                         format_func=lambda i: f"{i}: {q_tokens[i]}")
    for fig in viz_steps.query_key_figures(walk, t, query, hide_pad=ctx.hide_pad):
        chart(fig, ctx)


def positional_ui(ctx: Ctx) -> None:
    t = ctx.trace
    max_len, depth = t.pos_table.shape
    kind = getattr(ctx.bundle.config, "pos_encoding", "")
    c1, c2, c3 = st.columns(3)
    n_pos = c1.slider("Positions shown", 2, max_len, min(max_len, 64), key="pos_n")
    dims = c2.multiselect("Dimensions as curves", list(range(depth)),
                          default=[d for d in (0, 1, 2, 3) if d < depth], key="pos_dims")
    metric = c3.radio("Similarity", ["dot", "cosine"], horizontal=True, key="pos_metric")
    chart(viz_positional.table_heatmap(t.pos_table, n_pos,
                                       title=f"Positional table of {ctx.bundle.name} ({kind})"),
          ctx)
    if dims:
        chart(viz_positional.dimension_curves(t.pos_table, dims, n_pos), ctx)
    chart(viz_positional.position_similarity(t.pos_table, n_pos, metric=metric), ctx)
    if ctx.bundle.kind != "native":
        st.info("Token term vs positional term needs this project's own models (hooks on the "
                "two embedding terms).")
        return
    sides = ["enc"] + (["dec"] if t.tgt_tokens else [])
    side = st.radio("Input side", sides, horizontal=True, key="pos_side",
                    format_func={"enc": "encoder", "dec": "decoder"}.get)
    chart(viz_positional.term_sizes(t, ctx.b, side), ctx)


def embeddings_ui(ctx: Ctx) -> None:
    t = ctx.trace
    sides = [s for s in ("enc", "dec") if s in t.hidden]
    c1, c2 = st.columns(2)
    side = c1.radio("Stack", sides, horizontal=True, key="emb_side",
                    format_func={"enc": "encoder", "dec": "decoder"}.get)
    n_layers = t.hidden[side].shape[0] - 1
    layer = c2.slider("Layer (0 = embeddings + positions)", 0, n_layers, n_layers,
                      key=f"emb_layer_{side}")
    chart(viz_embeddings.pca_trajectories(t, side, ctx.b, layer), ctx)
    chart(viz_embeddings.cosine_by_layer(t, side, ctx.b, layer), ctx)
    chart(viz_embeddings.norms_by_layer(t, side, ctx.b), ctx)
    chart(viz_embeddings.layer_change(t, side, ctx.b), ctx)
    if side == "dec":
        if ctx.bundle.kind != "native":
            st.info("The logit lens is not available for this model.")
        else:
            chart(viz_embeddings.logit_lens_figure(
                cached_logit_lens(ctx.bundle, t, trace_key(ctx), ctx.b, k=5)), ctx)


def translation_ui(ctx: Ctx) -> None:
    t = ctx.trace
    if "cross" not in t.attn or ctx.bundle.kind != "native":
        st.info("Step-by-step translation needs one of this project's encoder–decoder models.")
        return
    if ctx.targets is None:
        result = cached_translate(ctx.bundle, ctx.key, ctx.lines, ctx.lang, ctx.ablate)[ctx.b]
        steps = viz_translation.steps_from_translation(result)
        st.markdown("**Translation** (greedy decoding)")
        st.code(result.text or "(empty)", language=None)
        if not result.finished:
            st.warning("Decoding stopped at the length limit before </s>.".replace("<", "\\<"))
    else:
        steps = viz_translation.steps_from_logits(t, ctx.b, cached_vocab(ctx.bundle, ctx.key))
        st.markdown("**Teacher forcing**: each step reads the typed target so far; the chosen "
                    "piece is the typed one, the candidates are the model's.")
        st.code(t.targets[ctx.b] or "(empty)", language=None)
    if not steps:
        st.info("No decoding steps.")
        return
    n_layers, n_heads = t.n_layers("cross"), t.attn["cross"].shape[2]
    c1, c2, c3 = st.columns(3)
    layer = c1.selectbox("Cross-attention layer", list(range(n_layers)), index=n_layers - 1,
                         key="tr_layer")
    head = c2.selectbox("Head", [None, *range(n_heads)], key="tr_head",
                        format_func=lambda h: "mean of heads" if h is None else f"head {h}")
    step = (c3.slider("Step", 0, len(steps) - 1, 0, key="tr_step") if len(steps) > 1 else 0)
    left, right = st.columns(2)
    with left:
        chart(viz_translation.step_bar_figure(steps[step], step), ctx)
    with right:
        chart(viz_translation.cross_row_figure(t, ctx.b, layer, head, step), ctx)
    chart(viz_translation.topk_figure(steps), ctx)
    chart(viz_translation.cross_steps_figure(t, ctx.b, layer, head, steps), ctx)


NOT_NATIVE = ("{what} is not supported for this model: it runs this project's own encoder–decoder "
              "with hooks on each head, so it needs one of the shipped translation checkpoints.")
VAL_SIZES = (100, 250, 500, 1000)  # validation sentences the statistics can be averaged over


def trace_key(ctx: Ctx) -> tuple:
    """What identifies ctx.trace in a cache: checkpoint, input, language, ablation."""
    return ctx.key, ctx.lines, ctx.targets, ctx.lang, ctx.ablate


def _goto(view: str, head: tuple[str, int, int] | None = None) -> None:
    """Button callback: switch view (and head) before the next run draws the view radio."""
    state = st.session_state
    state["view"] = view
    if head is not None:
        state["kind"], state["layer"], state["head"] = head


def side_tokens(trace: Trace, kind: str, b: int) -> tuple[list[str], list[str]]:
    """Unpadded (query, key) pieces of sentence b for an attention kind."""
    q_side, k_side = {"enc_self": ("src", "src"), "dec_self": ("tgt", "tgt"),
                      "cross": ("tgt", "src")}[kind]
    pieces = {"src": trace.src_tokens[b], "tgt": trace.tgt_tokens[b]}
    return list(pieces[q_side]), list(pieces[k_side])


def result_get(key: tuple):
    store = shared_results()
    with store["lock"]:
        return store["items"].get(key)


def result_put(key: tuple, value, max_items: int = 64) -> None:
    store = shared_results()
    with store["lock"]:
        store["items"][key] = value
        store["items"].move_to_end(key)
        while len(store["items"]) > max_items:
            store["items"].popitem(last=False)


def progress_bar(text: str):
    """st.progress and a callback that moves it (fractions 0..1)."""
    bar = st.progress(0.0, text=text)
    return bar, lambda f: bar.progress(min(1.0, max(0.0, float(f))), text=text)


# ---- bertviz view ------------------------------------------------------------------------


def bertviz_ui(ctx: Ctx) -> None:
    t = ctx.trace
    st.subheader(f"bertviz, sentence {ctx.b + 1}")
    n_layers = min(t.n_layers(k) for k in t.attn)
    c1, c2 = st.columns([1, 2])
    view = c1.radio("bertviz view", ["head", "model"], horizontal=True, key="bv_view",
                    format_func={"head": "head view", "model": "model view"}.get)
    seed("bv_layers", list(range(n_layers)))
    if any(not 0 <= i < n_layers for i in st.session_state["bv_layers"]):
        st.session_state["bv_layers"] = list(range(n_layers))
    layers = sorted(c2.multiselect("Layers", list(range(n_layers)), key="bv_layers"))
    st.caption("Choose Encoder / Decoder / Cross inside the page. Head view: hover a token to "
               "see where it attends, double-click a colour to show one head. Model view: every "
               "layer × head; click a thumbnail to enlarge it. Padding is left out and values "
               "are rounded to 3 decimals; everything is drawn locally, nothing is downloaded.")
    if not layers:
        st.info("Choose at least one layer.")
        return
    try:
        html = cached_bertviz(t, trace_key(ctx), ctx.b, view, tuple(layers))
    except BertvizTooLarge as exc:
        st.info(md(exc))
        st.button("Open the attention view", key="bv_to_attention", on_click=_goto,
                  args=("attention",))
        return
    except ValueError as exc:  # e.g. a sentence with an empty side
        st.info(f"bertviz cannot show this sentence: {md(exc)}")
        return
    st.iframe(html, height=bertviz_height(t, ctx.b, view, layers))


# ---- heads view --------------------------------------------------------------------------

HEADS_PARTS = {"stats": "Statistics", "ablation": "Knock out heads",
               "scan": "Importance scan", "rollout": "Attention rollout"}


def heads_ui(ctx: Ctx) -> None:
    seed("heads_part", "stats")
    part = sticky(st.radio, "heads_part", "Part", options=list(HEADS_PARTS), horizontal=True,
                  format_func=HEADS_PARTS.get, label_visibility="collapsed")
    {"stats": stats_ui, "ablation": ablation_ui, "scan": scan_ui,
     "rollout": rollout_ui}[part](ctx)


def _translator(bundle: Bundle) -> bool:
    return bundle.kind == "native" and "cross" in bundle.kinds


def validation_button(ctx: Ctx) -> None:
    """The button that averages the statistics over validation sentences, with progress."""
    if not _translator(ctx.bundle):
        st.caption("Averages over validation sentences need one of this project's translation "
                   "checkpoints (the corpus they were trained on).")
        return
    c1, c2 = st.columns([1, 2])
    n = c1.select_slider("Validation sentences", VAL_SIZES, value=VAL_SIZES[1], key="hs_val_n")
    c2.caption("Teacher-forced on the reference translations, both directions (so twice as "
               "many forward passes), and with gold alignments for cross attention.")
    if c2.button("Average over validation sentences", key="hs_val_go"):
        bar, report = progress_bar(f"Running {n} validation pairs in both directions…")
        pairs = validation_pairs(*corpus_args(ctx.bundle))[:n]
        stats = validation_stats(ctx.bundle, pairs, progress=report)
        bar.empty()
        result_put(("val", ctx.key), (len(pairs), stats))
        st.session_state["_hs_show_val"] = True  # the scope radio above is already drawn
        st.rerun()


def stats_ui(ctx: Ctx) -> None:
    t = ctx.trace
    kinds = [k for k in t.kinds if k in t.attn]
    seed("hs_kind", st.session_state["kind"])
    if st.session_state["hs_kind"] not in kinds:
        st.session_state["hs_kind"] = kinds[0]
    validation = result_get(("val", ctx.key))
    scopes = {"sentence": f"sentence {ctx.b + 1}", "batch": "every sentence of the input"}
    if validation is not None:
        scopes["validation"] = f"{validation[0]} validation pairs (both directions)"
    c1, c2 = st.columns(2)
    kind = c1.radio("Attention", kinds, key="hs_kind", format_func=KIND_LABELS.get)
    seed("hs_scope", "sentence")
    if st.session_state.pop("_hs_show_val", False) and "validation" in scopes:
        st.session_state["hs_scope"] = "validation"
    if st.session_state["hs_scope"] not in scopes:
        st.session_state["hs_scope"] = "sentence"
    scope = c2.radio("Average over", list(scopes), key="hs_scope", format_func=scopes.get)
    validation_button(ctx)
    if scope == "validation":
        stats = dict(validation[1].get(kind, {}))
    else:
        stats = dict(cached_head_stats(t, trace_key(ctx), kind,
                                       ctx.b if scope == "sentence" else None))
        if kind == "cross" and _translator(ctx.bundle):
            line = ctx.lines[ctx.b]
            align = cached_alignment(ctx.bundle, ctx.key, line, ctx.lang)
            if align is not None:
                stats["alignment"] = align
                st.caption(f"Sentence {ctx.b + 1} is a corpus sentence, so its gold word "
                           "alignment is known: see the alignment map (teacher-forced on the "
                           "corpus reference).")
            else:
                st.caption("Alignment agreement: the selected sentence is not among the corpus "
                           f"sentences searched (the seed sentences and {LOOKUP_SAMPLE:,} "
                           "generated pairs); the validation average includes it.")
    if not stats:
        st.info("No statistics for this attention kind.")
        return
    st.markdown("\n".join(f"- **{md(m)}**: {md(METRICS.get(m, ''))}" for m in stats))
    figs = viz_heads.stats_heatmaps(stats, kind)
    for i in range(0, len(figs), 2):
        for col, fig in zip(st.columns(2), figs[i:i + 2]):
            with col:
                chart(fig, ctx)
    n_layers, n_heads = t.n_layers(kind), t.attn[kind].shape[2]
    st.markdown("**Open a head** (a cell of the maps above) in the attention view")
    c1, c2, c3 = st.columns(3, vertical_alignment="bottom")
    layer = c1.selectbox("Layer", list(range(n_layers)), key="hs_open_layer")
    head = c2.selectbox("Head", list(range(n_heads)), key="hs_open_head")
    c3.button("Open in the attention view", key="hs_open", on_click=_goto,
              args=("attention", (kind, layer, head)))


def _set_ablate(spec: str) -> None:
    st.session_state["ablate"] = spec


def _toggle_head(key: str, head: tuple[str, int, int], spec: str) -> None:
    heads = set(parse_ablate(spec))
    if st.session_state[key]:
        heads.add(head)
    else:
        heads.discard(head)
    _set_ablate(format_ablate(heads))


@st.cache_data(max_entries=32, show_spinner="Translating with and without those heads…")
def cached_ablation(_bundle: Bundle, key: str, lines: tuple[str, ...], lang: str,
                    ablate: str) -> dict:
    return ablation_effect(_bundle, list(lines), ablate, target_lang=lang)


def ablation_ui(ctx: Ctx) -> None:
    bundle = ctx.bundle
    if not _translator(bundle):
        st.info(NOT_NATIVE.format(what="Knocking out heads"))
        return
    current = parse_ablate(ctx.ablate)
    st.caption("Tick a head to zero its output (its context vector, before W_O) and rerun. The "
               "choice belongs to this browser session; it is also in the link (ablate=…) and "
               "in the sidebar's “Knock out heads” box. Every view shows the model with these "
               "heads knocked out.")
    n_heads = bundle.config.n_heads
    for kind in bundle.kinds:
        st.markdown(f"**{KIND_LABELS[kind]}**")
        for layer in range(bundle.n_layers(kind)):
            cols = st.columns(n_heads + 1)
            cols[0].markdown(f"layer {layer}")
            for h in range(n_heads):
                key = f"abl:{kind}:{layer}:{h}"
                st.session_state[key] = (kind, layer, h) in current
                cols[h + 1].checkbox(f"head {h}", key=key, on_change=_toggle_head,
                                     args=(key, (kind, layer, h), ctx.ablate))
    st.button("Clear all", key="abl_clear", on_click=_set_ablate, args=("",),
              disabled=not current)
    b = ctx.b
    if not current:
        result = cached_translate(bundle, ctx.key, ctx.lines, ctx.lang, "")[b]
        st.markdown(f"**Translation of sentence {b + 1}** (no head knocked out)")
        st.code(result.text or "(empty)", language=None)
        return
    effect = cached_ablation(bundle, ctx.key, ctx.lines, ctx.lang, ctx.ablate)
    left, right = st.columns(2)
    with left:
        st.markdown(f"**Before**: sentence {b + 1} with every head")
        st.code(effect["before"][b].text or "(empty)", language=None)
    with right:
        st.markdown(f"**After**: without {md(effect['ablate_spec'])}")
        st.code(effect["after"][b].text or "(empty)", language=None)
    changed = sum(effect["changed"])
    c1, c2 = st.columns(2)
    c1.metric("Loss (mean NLL per target token, whole input)", f"{effect['loss_after']:.3f}",
              delta=f"{effect['loss_change']:+.3f} nats", delta_color="inverse")
    c2.metric("Translations changed", f"{changed} of {len(effect['changed'])}")
    chart(viz_heads.ablation_figure(effect, b), ctx)


def scan_ui(ctx: Ctx) -> None:
    if not _translator(ctx.bundle):
        st.info(NOT_NATIVE.format(what="The importance scan"))
        return
    line = ctx.lines[ctx.b]
    st.caption(f"Sentence {ctx.b + 1}: each head is knocked out alone (all kinds) and the loss "
               "of the un-ablated greedy translation is measured again; red = the loss rose "
               "without the head. One batched forward pass per 64 heads; results are kept per "
               "checkpoint and sentence for every session.")
    key = ("scan", ctx.key, line, ctx.lang)
    if st.button("Scan every head", key="scan_go"):
        bar, report = progress_bar("Knocking out one head at a time…")
        start = time.monotonic()
        scan = importance_scan(ctx.bundle, line, ctx.lang, progress=report)
        result_put(key, (scan, time.monotonic() - start))
        bar.empty()
    found = result_get(key)
    if found is None:
        st.info("Press “Scan every head” to measure how much the model needs each head.")
        return
    scan, seconds = found
    st.caption(f"Scan took {seconds:.2f} s.")
    chart(viz_heads.importance_figure(scan), ctx)


def rollout_ui(ctx: Ctx) -> None:
    t, b = ctx.trace, ctx.b
    residual = st.checkbox("Count the residual connection (A′ = 0.5·A + 0.5·I)", value=True,
                           key="ro_residual")
    st.caption("Attention rollout (Abnar & Zuidema, 2020): each layer's attention, averaged "
               "over heads, multiplied through the layers; a row says which input tokens the "
               "output token's information comes from.")
    kind = "enc_self" if "enc_self" in t.attn else "dec_self"
    tokens = side_tokens(t, kind, b)[0]
    if not tokens:
        st.info("This sentence has no tokens on that side.")
        return
    r = rollout(t, b, kind, residual)
    chart(viz_heads.rollout_figure(r, tokens, tokens,
                                   f"Rollout of the {KIND_LABELS[kind]}, sentence {b + 1}"), ctx)
    if st.session_state.get("ro_query", 0) >= len(tokens):
        st.session_state["ro_query"] = 0
    query = st.selectbox("Query token", list(range(len(tokens))), key="ro_query",
                         format_func=lambda i: f"{i + 1}: {tokens[i]}")
    chart(viz_heads.rollout_bars(r, tokens, query), ctx)
    if "cross" in t.attn and t.tgt_tokens[b] and t.src_tokens[b]:
        x = cross_rollout(t, b, residual)
        chart(viz_heads.rollout_figure(x, t.tgt_tokens[b], t.src_tokens[b],
                                       "Decoder → source rollout through cross attention, "
                                       f"sentence {b + 1}"), ctx)


# ---- compare view ------------------------------------------------------------------------

COMPARE_MODES = {"inputs": "two inputs, same checkpoint",
                 "checkpoints": "two checkpoints, same input"}


def pair_head_picker(kinds: list[str], n_layers: dict[str, int], n_heads: int
                     ) -> tuple[str, int, int]:
    """kind / layer / head valid for both sides, kept in the shared (URL) state."""
    state = st.session_state
    if state["kind"] not in kinds:
        state["kind"] = kinds[0]
    c1, c2, c3 = st.columns(3)
    kind = sticky(c1.selectbox, "kind", "Attention", options=kinds, format_func=KIND_LABELS.get)
    if state["layer"] >= n_layers[kind]:
        state["layer"] = 0
    layer = sticky(c2.selectbox, "layer", "Layer", options=list(range(n_layers[kind])))
    if state["head"] >= n_heads:
        state["head"] = 0
    head = sticky(c3.selectbox, "head", "Head", options=list(range(n_heads)))
    return kind, layer, head


def other_checkpoint(name: str, folder: Path) -> tuple[Bundle, str] | None:
    try:
        stamp = _stamp(folder)
        return load_bundle(str(folder), stamp), f"{folder}@{stamp}"
    except (CheckpointError, OSError) as exc:
        st.error(f"Checkpoint {md(name)} could not be loaded: {md(exc)}")
        return None


def compare_ui(ctx: Ctx) -> None:
    mode = st.radio("Compare", list(COMPARE_MODES), key="cmp_mode", horizontal=True,
                    format_func=COMPARE_MODES.get)
    sides = compare_inputs(ctx) if mode == "inputs" else compare_checkpoints(ctx)
    if sides is None:
        return
    (name_a, trace_a, b_a, bundle_a), (name_b, trace_b, b_b, bundle_b) = sides
    kinds = [k for k in trace_a.kinds if k in trace_a.attn and k in trace_b.attn]
    if not kinds:
        st.info("The two sides have no attention kind in common.")
        return
    n_layers = {k: min(trace_a.n_layers(k), trace_b.n_layers(k)) for k in kinds}
    n_heads = min(trace_a.attn[kinds[0]].shape[2], trace_b.attn[kinds[0]].shape[2])
    kind, layer, head = pair_head_picker(kinds, n_layers, n_heads)
    q_a, k_a = side_tokens(trace_a, kind, b_a)
    q_b, k_b = side_tokens(trace_b, kind, b_b)
    a = trace_a.attn[kind][layer, b_a, head, :len(q_a), :len(k_a)]
    z = trace_b.attn[kind][layer, b_b, head, :len(q_b), :len(k_b)]
    chart(viz_heads.compare_figure(a, z, q_a, k_a, q_b, k_b, titles=(
        name_a, name_b, f"{KIND_LABELS[kind]}, layer {layer}, head {head}")), ctx)
    if mode == "checkpoints" and viz_positional is not None:
        rows = min(trace_a.pos_table.shape[0], trace_b.pos_table.shape[0])
        n_pos = st.slider("Positions shown", 2, max(rows, 2), min(rows, 64), key="cmp_pos_n")
        chart(viz_positional.compare_tables(trace_a.pos_table, trace_b.pos_table,
                                            (bundle_a.name, bundle_b.name), n_pos), ctx)


def compare_inputs(ctx: Ctx) -> tuple | None:
    others = [line for i, line in enumerate(ctx.lines) if i != ctx.b]
    seed("cmp_text", others[0] if others else ctx.lines[ctx.b])
    raw = st.text_input("Second input (one sentence)", key="cmp_text")
    lines, notes = clean_input(raw)
    for note in notes:
        st.warning(md(note))
    if not lines:
        st.info("Type a second sentence to compare with.")
        return None
    trace_b = cached_capture(ctx.bundle, ctx.key, (lines[0],), None, ctx.lang, ctx.ablate)
    st.caption(f"Left: sentence {ctx.b + 1} of the input; right: the second input. Same "
               "checkpoint, same heads knocked out.")
    return ((f"sentence {ctx.b + 1}", ctx.trace, ctx.b, ctx.bundle),
            ("second input", trace_b, 0, ctx.bundle))


def compare_checkpoints(ctx: Ctx) -> tuple | None:
    catalog = model_folders()
    names = list(catalog)
    if "paper" in names and "seed001" in names:
        pair = ("paper", "seed001")
    else:
        rest = [n for n in names if n != ctx.bundle.name]
        pair = (ctx.bundle.name if ctx.bundle.name in names else names[0],
                rest[0] if rest else names[0])
    for key, default in zip(("cmp_a", "cmp_b"), pair):
        seed(key, default)
        if st.session_state[key] not in names:
            st.session_state[key] = default
    c1, c2 = st.columns(2)
    name_a = c1.selectbox("Left checkpoint", names, key="cmp_a")
    name_b = c2.selectbox("Right checkpoint", names, key="cmp_b")
    if ctx.ablate:
        st.caption("Knocked-out heads are not applied when comparing checkpoints.")
    out = []
    for name in (name_a, name_b):
        loaded = other_checkpoint(name, catalog[name])
        if loaded is None:
            return None
        bundle, key = loaded
        try:
            trace = cached_capture(bundle, key, ctx.lines, ctx.targets, ctx.lang, "")
        except ValueError as exc:
            st.info(f"Checkpoint {md(name)} cannot run on this input: {md(exc)}")
            return None
        out.append((name, trace, ctx.b, bundle))
    return tuple(out)


VIEW_UI = {
    "tokens": tokens_ui, "masks": masks_ui, "attention": attention_ui,
    "bertviz": bertviz_ui, "steps": steps_ui, "positional": positional_ui,
    "embeddings": embeddings_ui, "translation": translation_ui,
    "heads": heads_ui, "compare": compare_ui,
}


def _control_flow(exc: BaseException) -> bool:
    """st.rerun()/st.stop() work by raising; those must pass through the error box."""
    return type(exc).__name__ in {"RerunException", "StopException"}


def render_view(view: str, ctx: Ctx) -> None:
    """Draw one view; an unexpected failure becomes a short message, the trace goes to the log."""
    try:
        VIEW_UI[view](ctx)
    except Exception as exc:
        if _control_flow(exc):
            raise
        LOG.exception("view %s failed", view)
        st.error(f"The {VIEWS[view]} view could not be drawn ({type(exc).__name__}: "
                 f"{md(str(exc)[:200])}). The details are in the server log.")


def empty_prompt() -> None:
    st.info("Type one or more sentences in the sidebar (one per line), or start from an example:")
    preset_buttons("main")


def main() -> None:
    st.set_page_config(page_title="Attention lab", layout="wide")
    st.title("Attention lab")
    notes = Notes()
    url = url_once()
    catalog = model_folders()
    if not catalog:
        st.error("No checkpoint found. Train one (python -m model.training.train) or point "
                 "ATTN_CHECKPOINTS_DIR at a folder of checkpoints.")
        return
    with st.sidebar:
        name, bundle, key = checkpoint_ui(catalog, url, notes)
        if bundle is None:
            notes.show()
            return
        inputs = input_ui(url, notes, bundle)
    if inputs["ablate"] and bundle.kind != "native":
        notes.warnings.append("Knocking out heads is not supported for this model (it needs one "
                              "of this project's checkpoints); every head is left in.")
        inputs["ablate"] = ""
    if url.get("view", "tokens") not in VIEWS:
        notes.warnings.append(f"Unknown view {md(repr(url['view']))} in the link; showing "
                              "tokens.")
    seed("view", url.get("view") if url.get("view") in VIEWS else "tokens")
    view = st.radio("View", list(VIEWS), key="view", horizontal=True, format_func=VIEWS.get,
                    label_visibility="collapsed")
    head_state(bundle, url, notes)
    lines, input_notes = clean_input(inputs["text"])
    notes.warnings += [md(n) for n in input_notes]
    targets = None
    if inputs["typed"] is not None:
        typed, _ = clean_input(inputs["typed"])
        if len(typed) == len(lines):
            targets = tuple(typed)
        elif lines:
            notes.warnings.append(f"Teacher forcing needs one target line per sentence "
                                  f"({len(typed)} for {len(lines)}); using the model's own "
                                  "translation instead.")
    with st.sidebar:
        b = sentence_ui(lines) if lines else 0
    notes.show()
    try:
        if not lines:
            empty_prompt()
            return
        trace = run_model(bundle, key, lines, targets, inputs)
        if trace is not None:
            render_view(view, Ctx(bundle=bundle, key=key, trace=trace, lines=tuple(lines),
                                  targets=targets, lang=inputs["lang"], ablate=inputs["ablate"],
                                  b=b, hide_pad=inputs["hide_pad"], numbers=inputs["numbers"],
                                  colorscale=inputs["colorscale"], fmt=inputs["fmt"]))
    finally:  # views may change kind/layer/head, so the link is written last
        params = link_params(name, inputs, view)
        write_url(params)
        with st.sidebar:
            share_ui(params)


def run_model(bundle: Bundle, key: str, lines: list[str], targets: tuple[str, ...] | None,
              inputs: dict) -> Trace | None:
    """The cached capture, with cut sentences reported; a failure is a message, not a page."""
    try:
        trace = cached_capture(bundle, key, tuple(lines), targets, inputs["lang"],
                               inputs["ablate"])
    except Exception as exc:
        if _control_flow(exc):
            raise
        LOG.exception("capture failed")
        st.error(f"The model could not run on this input ({type(exc).__name__}: "
                 f"{md(str(exc)[:200])}).")
        return None
    for i, cut in enumerate(trace.src_cut):
        if cut:
            st.warning(f"Sentence {i + 1} was too long: {cut} piece(s) were cut to fit the "
                       f"model's {bundle.config.max_len - 1} positions.")
    return trace


def link_params(name: str, inputs: dict, view: str) -> dict[str, str]:
    """The URL query parameters that reopen exactly this page."""
    state = st.session_state
    params = {"ckpt": name}
    if len(inputs["text"]) <= MAX_URL_TEXT:
        params["text"] = inputs["text"]
    params.update(lang=inputs["lang"], view=view, kind=state["kind"], layer=str(state["layer"]),
                  head=str(state["head"]))
    if inputs["ablate"]:
        params["ablate"] = inputs["ablate"]
    return params


if __name__ == "__main__":
    main()
