"""Attention lab: type sentences, watch a small encoder–decoder Transformer work on them.

main() reads the URL, draws the sidebar, runs the model once per input (cached) and hands the
resulting Trace to the selected view. Each view is one *_ui(ctx) function in VIEW_UI; viz/
builds every figure, model/ does every computation, this file only lays things out.
"""

from __future__ import annotations

import logging
import os
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode

import streamlit as st

from model import (
    Bundle,
    CheckpointError,
    Trace,
    capture,
    format_ablate,
    load_checkpoint,
    parse_ablate,
    translate,
)
from model.capture import GROUPS
from model.inspect import head_weights
from viz import attention as viz_attention
from viz import masks as viz_masks
from viz import steps as viz_steps
from viz import tokens as viz_tokens
from viz import translation as viz_translation
from viz.common import DOWNLOAD_FORMATS, SEQUENTIAL, chart_config

try:
    from viz import positional as viz_positional
except ImportError:  # written by another change; the view says so until it lands
    viz_positional = None
try:
    from viz import embeddings as viz_embeddings
except ImportError:
    viz_embeddings = None
try:
    from model.lens import logit_lens
except ImportError:
    logit_lens = None

LOG = logging.getLogger("attention_lab")

ROOT = Path(__file__).resolve().parent
MAX_LINES = 16  # sentences per batch
MAX_CHARS = 20_000  # cap before tokenizing
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
EMBED_HOOKS = ("encoder.hook_tok", "encoder.hook_pos", "decoder.hook_tok", "decoder.hook_pos")
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:=])")


def md(text: object) -> str:
    """Text shown literally inside Streamlit markdown (no formatting, links, LaTeX or emoji)."""
    return _MD_SPECIAL.sub(r"\\\1", str(text))


# ---- inputs and model catalog ------------------------------------------------------------


@dataclass
class Notes:
    """Messages collected while reading the URL and the inputs, shown above the view."""

    warnings: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def show(self) -> None:
        for text in self.errors:
            st.error(text)
        for text in self.warnings:
            st.warning(text)


def clean_input(raw: str) -> tuple[list[str], list[str]]:
    """Text area content -> at most MAX_LINES stripped sentences, and notes on what changed."""
    notes = []
    if len(raw) > MAX_CHARS:
        notes.append(f"The text has {len(raw):,} characters; only the first {MAX_CHARS:,} "
                     "are used.")
        raw = raw[:MAX_CHARS]
    raw = raw.replace("\r\n", "\n").replace("\r", "\n")
    kept = "".join(c for c in raw if c in "\n\t" or unicodedata.category(c) != "Cc")
    if len(kept) != len(raw):
        notes.append(f"{len(raw) - len(kept)} control character(s) were removed from the text.")
    lines = [line.strip() for line in kept.split("\n") if line.strip()]
    if len(lines) > MAX_LINES:
        notes.append(f"{len(lines)} lines were given; only the first {MAX_LINES} are used "
                     "(one sentence per line, one batch).")
        lines = lines[:MAX_LINES]
    return lines, notes


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
        add(path) if (path / "config.json").is_file() else add_all(path)
    order = sorted(found, key=lambda n: (n != "paper", n))
    return {name: found[name] for name in order}


def _stamp(folder: Path) -> float:
    """Changes when a checkpoint is rewritten, so the cached model is reloaded."""
    times = [p.stat().st_mtime for p in folder.iterdir() if p.is_file()]
    return max(times, default=0.0)


@st.cache_resource(max_entries=6, show_spinner="Loading the model…")
def load_bundle(folder: str, stamp: float) -> Bundle:
    """One model per checkpoint, shared by every session (hooks are per-context)."""
    return load_checkpoint(folder)


def capture_names(bundle: Bundle) -> list[str] | None:
    """Everything any view reads, so one capture serves them all."""
    if bundle.kind != "native":
        return None
    known = set(bundle.model.hook_names())
    raw = [n for n in EMBED_HOOKS if n in known]
    raw += viz_steps.act_names({k: bundle.n_layers(k) for k in bundle.kinds})
    return list(GROUPS) + [n for n in raw if n in known]


@st.cache_data(max_entries=24, show_spinner="Running the model…")
def cached_capture(_bundle: Bundle, key: str, lines: tuple[str, ...],
                   targets: tuple[str, ...] | None, lang: str, ablate: str) -> Trace:
    """The one forward pass per input; every view reads this Trace."""
    return capture(_bundle, list(lines), list(targets) if targets is not None else None,
                   target_lang=lang, ablate=ablate, names=capture_names(_bundle))


@st.cache_data(max_entries=24, show_spinner="Decoding step by step…")
def cached_translate(_bundle: Bundle, key: str, lines: tuple[str, ...], lang: str,
                     ablate: str) -> list:
    return translate(_bundle, list(lines), lang, top_k=5, ablate=ablate)


@st.cache_data(max_entries=64)
def cached_weights(_bundle: Bundle, key: str, kind: str, layer: int) -> dict:
    return head_weights(_bundle, kind, layer)


@st.cache_data(max_entries=8)
def cached_vocab(_bundle: Bundle, key: str) -> list[str]:
    tok = _bundle.tokenizer
    return [tok.id_to_piece(i) for i in range(tok.vocab_size)]


@dataclass
class Ctx:
    """Everything a view needs: the model, its Trace and the display options."""

    bundle: Bundle
    key: str  # cache key of the checkpoint
    trace: Trace
    lines: tuple[str, ...]
    targets: tuple[str, ...] | None
    lang: str
    ablate: str
    b: int
    hide_pad: bool
    numbers: bool
    colorscale: str
    fmt: str


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
                if value.isdigit() and int(value) < limit:
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
    names = list(catalog)
    default = names[0]
    if "ckpt" in url and url["ckpt"] not in names:
        notes.warnings.append(f"Unknown checkpoint {md(repr(url['ckpt']))} in the link; "
                              f"showing {md(default)}.")
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
        notes.warnings.append(f"Ignoring the heads to knock out: {md(exc)}")
        return ""
    good = set()
    for kind, layer, head in heads:
        if (kind in bundle.kinds and 0 <= layer < bundle.n_layers(kind)
                and 0 <= head < bundle.config.n_heads):
            good.add((kind, layer, head))
        else:
            notes.warnings.append(f"This model has no head {md(f'{kind}:{layer}:{head}')}; "
                                  "it is not knocked out.")
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
    for b, pieces in enumerate(t.src_tokens):
        st.markdown(f"**Sentence {b + 1}** · encoder input, {len(pieces)} pieces")
        st.html(viz_tokens.chips_html(pieces, t.src_ids[b, : len(pieces)]))
    chart(viz_tokens.id_matrix_figure(t, "src", ctx.numbers), ctx)
    chart(viz_tokens.positions_figure(t, "src", ctx.numbers), ctx)
    st.dataframe(viz_tokens.lengths_rows(t), hide_index=True)
    if t.tgt_tokens:
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
    if viz_positional is None:
        st.info("The positional view is coming soon.")
        return
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
    sides = ["enc"] + (["dec"] if t.tgt_tokens else [])
    side = st.radio("Input side", sides, horizontal=True, key="pos_side",
                    format_func={"enc": "encoder", "dec": "decoder"}.get)
    chart(viz_positional.term_sizes(t, ctx.b, side), ctx)


def embeddings_ui(ctx: Ctx) -> None:
    if viz_embeddings is None:
        st.info("The embeddings view is coming soon.")
        return
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
        if logit_lens is None or ctx.bundle.kind != "native":
            st.info("The logit lens is not available for this model.")
        else:
            chart(viz_embeddings.logit_lens_figure(logit_lens(ctx.bundle, t, ctx.b, k=5)), ctx)


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


def placeholder_ui(name: str):
    def ui(ctx: Ctx) -> None:
        st.info(f"The {name} view is coming in a later change.")

    return ui


VIEW_UI = {
    "tokens": tokens_ui, "masks": masks_ui, "attention": attention_ui,
    "bertviz": placeholder_ui("bertviz"), "steps": steps_ui, "positional": positional_ui,
    "embeddings": embeddings_ui, "translation": translation_ui,
    "heads": placeholder_ui("heads"), "compare": placeholder_ui("compare"),
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
        st.error("No checkpoint found. Train one (python -m model.train) or point "
                 "ATTN_CHECKPOINTS_DIR at a folder of checkpoints.")
        return
    with st.sidebar:
        name, bundle, key = checkpoint_ui(catalog, url, notes)
        if bundle is None:
            notes.show()
            return
        inputs = input_ui(url, notes, bundle)
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
