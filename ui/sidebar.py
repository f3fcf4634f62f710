"""The sidebar: checkpoint picker, input box and examples, decoder input, heads to knock out,
display options, sentence picker and the share link."""

from __future__ import annotations

import logging
from pathlib import Path
from urllib.parse import urlencode

import streamlit as st

from model import Bundle, CheckpointError, format_ablate, parse_ablate
from model.backends import (
    capabilities,
    facts,
    is_translator,
    resolve_model_ref,
)
from ui.catalog import open_folder
from ui.context import Notes
from ui.i18n import N_, Labels, _
from ui.model_words import kinds_help
from ui.state import MAX_URL_TEXT, seed
from ui.text import md
from viz.common import DOWNLOAD_FORMATS, SEQUENTIAL

LOG = logging.getLogger("attention_lab")
PRESETS = {  # label (translated when shown) -> text
    N_("겨울은 추워요. / 감기 조심하세요. (seed 000)"): "겨울은 추워요.\n감기 조심하세요.",
    "Winter is cold.": "Winter is cold.",
    "The big dog eats the fish.": "The big dog eats the fish.",
    "My friend reads a book in the park.": "My friend reads a book in the park.",
    N_("Two English sentences"): "The big dog eats the fish.\nWinter is cold.",
}
DEFAULT_TEXT = next(iter(PRESETS.values()))
# a model whose vocabulary has no Korean (model.backends.Facts.languages) starts in English:
# two lines that mean nearly the same, then lines that differ
ENGLISH_PRESETS = {
    N_("A cat on a mat, said twice"): "The cat sat on the mat.\nA cat was sitting on the rug.",
    "Winter is cold.": "Winter is cold.",
    "The big dog eats the fish.": "The big dog eats the fish.",
    "My friend reads a book in the park.": "My friend reads a book in the park.",
    N_("Two English sentences"): "The big dog eats the fish.\nWinter is cold.",
}


def presets_for(bundle: Bundle | None) -> dict[str, str]:
    """The examples offered for this model: its card's own first ("examples": label -> text,
    chosen for it, e.g. the language model's repeated line), then Korean ones only where its
    vocabulary has Korean."""
    own = (bundle.card or {}).get("examples") if bundle is not None else None
    own = own if isinstance(own, dict) and all(
        isinstance(k, str) and isinstance(v, str) for k, v in own.items()) else {}
    if bundle is not None and "ko" not in facts(bundle).languages:
        return {**own, **ENGLISH_PRESETS}
    return {**own, **PRESETS}
LANGS = Labels(auto=N_("auto (Korean ↔ English)"), ko=N_("Korean"),
               en=N_("English"))


def card_line(bundle: Bundle) -> str:
    """variant · layers × heads · d_model · positions · norm · test metrics."""
    cfg, card = bundle.config, bundle.card or {}
    parts = [str(card.get("variant") or bundle.name)]
    if cfg is not None:  # every model's shape, from its own config and facts
        caps, f = capabilities(bundle), facts(bundle)
        if cfg.n_enc_layers and cfg.n_dec_layers:  # the translators: encoder + decoder
            layers = _("{enc}+{dec} layers × {heads} heads").format(
                enc=cfg.n_enc_layers, dec=cfg.n_dec_layers, heads=cfg.n_heads)
        else:  # one stack (the shipped lm is decoder-only: "0+2" said nothing true)
            layers = _("{layers} layers × {heads} heads").format(
                layers=cfg.n_enc_layers or cfg.n_dec_layers, heads=cfg.n_heads)
        norm = f"{f.norm}-LN" if f.norm_kind == "LayerNorm" else f"{f.norm}-{f.norm_kind}"
        parts += [layers, f"d_model {cfg.d_model}",
                  _("{kind} positions").format(kind=caps.positional), norm]
    metrics = card.get("metrics") or {}
    for direction in ("en->ko", "ko->en"):
        m = metrics.get(direction)
        if isinstance(m, dict) and "chrf" in m:
            parts.append(_("{direction} chrF {chrf:.1f}, exact {exact:.1f}%").format(
                direction=direction.replace("->", "→"), chrf=float(m["chrf"]),
                exact=float(m.get("exact_match", 0))))
    if card.get("device"):  # Hugging Face folders: where and in what precision they run
        parts.append(f"{card['device']}, {card.get('dtype', '')}".rstrip(", "))
    if card.get("device_note"):
        parts.append(str(card["device_note"]))
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
            notes.warnings.append(_("Checkpoint {ref} in the link was refused: {reason}. "
                                    "Showing {default}.").format(
                ref=md(repr(ref[:80])), reason=md(exc.reason), default=md(default)))
        else:
            st.session_state.setdefault("_hub_models", {})[ref] = catalog[ref]
            names.append(ref)
    seed("ckpt", url["ckpt"] if url.get("ckpt") in names else default)
    if st.session_state["ckpt"] not in names:
        st.session_state["ckpt"] = default
    name = st.selectbox(_("Checkpoint"), names, key="ckpt")
    for candidate in [name] + [n for n in names if n != name]:
        folder = catalog[candidate]
        try:
            bundle, key = open_folder(folder)
        except (CheckpointError, OSError) as exc:
            notes.errors.append(_("Checkpoint {name} ({folder}) could not be loaded: {reason}")
                                .format(name=md(candidate), folder=md(folder), reason=md(exc)))
            LOG.warning("checkpoint %s failed to load: %s", folder, exc)
            continue
        if candidate != name:
            notes.warnings.append(_("Showing checkpoint {name} instead.").format(
                name=md(candidate)))
        st.caption(md(card_line(bundle)))
        return candidate, bundle, key
    return name, None, ""


def _set_text(text: str) -> None:
    st.session_state["text"] = text


def preset_buttons(where: str, bundle: Bundle | None = None) -> None:
    for i, (label, text) in enumerate(presets_for(bundle).items()):
        st.button(_(label), key=f"preset_{where}_{i}", on_click=_set_text, args=(text,))


def input_ui(url: dict[str, str], notes: Notes, bundle: Bundle) -> dict:
    """Text, target language, decoder input, ablation, display options, sentence."""
    seed("text", url.get("text", next(iter(presets_for(bundle).values()))))
    text = st.text_area(_("Sentences (one per line = one batch)"), key="text", height=120,
                        help=_("Ctrl+Enter applies. Up to 16 lines."))
    with st.expander(_("Examples")):
        preset_buttons("side", bundle)
    lang_url = url.get("lang")
    if lang_url is not None and lang_url not in LANGS:
        notes.warnings.append(_("Unknown language {value} in the link; using auto.").format(
            value=md(repr(lang_url))))
    seed("lang", lang_url if lang_url in LANGS else "auto")
    # translation controls only where they mean something: the direction for the lab's
    # bilingual checkpoints, the decoder input for any encoder–decoder model
    lang = st.session_state["lang"]
    if is_translator(bundle):
        lang = st.selectbox(_("Translate into"), list(LANGS), key="lang", format_func=LANGS.get)
    mode = "model"
    if "cross" in bundle.kinds:
        mode = st.radio(_("Decoder input"), ["model", "typed"], key="decoder_mode",
                        format_func=Labels(model=N_("the model's own translation"),
                                           typed=N_("a typed target (teacher forcing)")).get)
    typed = None
    if mode == "typed":
        typed = st.text_area(_("Target sentences, one per source line"), key="targets",
                             height=90)
    with st.expander(_("Knock out heads")):
        seed("ablate", url.get("ablate", ""))
        ablate_raw = st.text_input(_("Heads to zero (kind:layer:head, comma-separated)"),
                                   key="ablate",
                                   placeholder=",".join(f"{k}:0:1" for k in bundle.kinds),
                                   help=kinds_help(bundle.kinds))
    ablate = check_ablate(ablate_raw, bundle, notes)
    st.markdown(_("**Display**"))
    hide_pad = st.checkbox(_("Hide padding rows and columns"), value=True, key="hide_pad")
    numbers = st.checkbox(_("Numbers on cells (small matrices)"), value=True, key="numbers")
    colorscale = st.selectbox(_("Colour scale (probabilities)"), list(SEQUENTIAL), key="cscale")
    fmt = st.selectbox(_("Chart download format"), list(DOWNLOAD_FORMATS), key="fmt",
                       help=_("The camera button in each chart's toolbar saves this format."))
    return {"text": text, "lang": lang, "typed": typed, "ablate": ablate,
            "hide_pad": hide_pad, "numbers": numbers, "colorscale": colorscale, "fmt": fmt}


def check_ablate(raw: str, bundle: Bundle, notes: Notes) -> str:
    """Parse kind:layer:head,… and keep only heads this model has."""
    try:
        heads = parse_ablate(raw or "")
    except ValueError as exc:
        notes.warnings.append(_("Ignoring the heads to knock out: {reason}").format(
            reason=md(str(exc)[:200])))
        return ""
    good, bad = set(), []
    for kind, layer, head in sorted(heads):
        if (kind in bundle.kinds and 0 <= layer < bundle.n_layers(kind)
                and 0 <= head < bundle.config.n_heads):
            good.add((kind, layer, head))
        else:
            bad.append(f"{kind}:{layer}:{head}"[:60])
    if bad:  # one note, however many heads a link lists
        more = _(" and {n} more").format(n=len(bad) - 3) if len(bad) > 3 else ""
        notes.warnings.append(_("This model has no head {heads}{more}; not knocked out.")
                              .format(heads=md(", ".join(bad[:3])), more=more))
    return format_ablate(good)


def sentence_ui(lines: list[str]) -> int:
    if st.session_state.get("sentence", 0) >= len(lines):
        st.session_state["sentence"] = 0
    if len(lines) == 1:
        return 0
    return st.selectbox(_("Sentence to inspect"), list(range(len(lines))), key="sentence",
                        format_func=lambda b: f"{b + 1}: {lines[b][:40]}")


def share_ui(params: dict[str, str]) -> None:
    with st.expander(_("Share this view")):
        st.caption(_("Add this to the app's address; it opens exactly this view."))
        st.code("?" + urlencode(params), language=None, wrap_lines=True)
        if "text" not in params:
            st.caption(_("The text is longer than {n:,} characters, so the link leaves it "
                         "out.").format(n=MAX_URL_TEXT))
