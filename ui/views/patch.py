"""Activation patching: which heads, layers and positions carry a clean/corrupted difference.

The clean sentence is the sidebar's (the link's `text=`), the corrupted one this view's box
(the link's `corrupt=`). The result (model.patching.patch) is kept for every session per
checkpoint, inputs and method; a sweep runs once the admission gate admits it, with a progress
bar, and a rerun (new text, another click) stops it between batches. An exact sweep estimated
over ui/cost.ASK_SECONDS waits for a button that shows the estimate; the attribution (one
backward) is shown meanwhile. Both inputs are tokenized once per page run, into one Batch that
says where one was cut and which word keeps the two from lining up piece by piece
(ui/pieces.py), and that the estimates and the patching then read.
"""

from __future__ import annotations

import time

import streamlit as st

from model.backends import capabilities, facts
from model.batch import Batch
from model.dispatch import encode
from model.patching import PARTS, Swap, estimate_patch, minimal_swap, patch, word_swaps
from ui import cost, pieces
from ui.admission import admitted, or_warning
from ui.common import chart, goto
from ui.context import Ctx
from ui.i18n import N_, _
from ui.model_words import embedding_words
from ui.pick import head_chart, kind_maps
from ui.runtime import cached_translate, result_get, result_put
from ui.state import url_value
from ui.sweep import Sweep, chunk_within, stopped
from ui.text import KIND_LABELS, md
from viz import patch as viz_patch

# minimal pairs that translate differently on the shipped checkpoints (clean, corrupted)
PRESETS = (
    ("The cat eats fish.", "The dog eats fish."),
    ("겨울은 추워요.", "여름은 추워요."),
    ("Winter is cold.", "Winter is hot."),
    ("The child drinks water.", "The child drinks milk."),
    ("My friend reads a book.", "My mother reads a book."),
    ("고양이가 생선을 먹어요.", "강아지가 생선을 먹어요."),
)
METHODS = {"exact": N_("exact (one patched run per cell)"),
           "attribution": N_("attribution (gradient estimate: 2 forwards + 1 backward)")}
TOP = 12  # heads offered by the picker, strongest first
# below this clean − corrupted gap (logits) a normalised effect divides noise by almost nothing:
# a gap of 0.06 drew heads at ±0.86 "recovered"; a whole logit is the least that reads safely
MIN_GAP = 1.0
CHUNK = 32  # patched copies per forward (model.patching.patch's default)
# the attribution estimate runs no copies: the clean run's kept activations, the corrupted
# run's graph, its gradients and their float64 products, about four passes held at once
ATTRIBUTION_PASSES = 4


def _use_pair(clean: str, corrupted: str) -> None:
    st.session_state["text"] = clean
    st.session_state["patch_corrupt"] = corrupted


def presets(bundle) -> tuple[tuple[str, str], ...]:
    """The model card's own minimal pairs (card.json "patch_presets"), else the translators'."""
    own = bundle.card.get("patch_presets")
    if isinstance(own, list) and own and all(
            isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) for x in p)
            for p in own):
        return tuple((c, r) for c, r in own)
    return PRESETS


def _default_corrupt(clean: str, pairs: tuple[tuple[str, str], ...]) -> str | None:
    """The link's corrupt=, else the preset partner of the clean sentence (None: neither)."""
    linked = url_value("corrupt")
    if linked is not None:
        return linked
    return next((r for c, r in pairs if c == clean), None)


def _seed_corrupt(ctx: Ctx, clean: str, pairs: tuple[tuple[str, str], ...],
                  lang: str | None) -> None:
    """The corrupted box's first value: the link's, a preset's partner, else the clean sentence
    with one word swapped where this model's tokenizer reads as many, different pieces (the
    sidebar's default line on a model without Korean, e.g. GPT-2, has no preset partner: the
    box used to open equal to it, "nothing differs"). A made-up default follows a new clean
    sentence or another model (whose pieces differ) until the box is typed in or a preset is
    clicked. Kept in the session as (checkpoint key, language, Swap)."""
    state = st.session_state
    if "patch_corrupt" in state:
        kept = state.get("patch_made")
        untouched = isinstance(kept, tuple) and state["patch_corrupt"] == kept[2].corrupted
        if not untouched or _made(ctx, clean, lang) is not None:
            return
    else:
        given = _default_corrupt(clean, pairs)
        if given is not None:
            state["patch_corrupt"] = given
            return
    texts = [*ctx.lines, *(s for pair in pairs for s in pair)]
    made = minimal_swap(ctx.bundle, clean, word_swaps(pairs), texts, lang)
    state["patch_made"] = (ctx.key, lang, made)
    state["patch_corrupt"] = made.corrupted


def _made(ctx: Ctx, clean: str, lang: str | None) -> Swap | None:
    """The session's made-up pair where it was made for this model, language and clean line."""
    kept = st.session_state.get("patch_made")
    if isinstance(kept, tuple) and kept[:2] == (ctx.key, lang) and kept[2].clean == clean:
        return kept[2]
    return None


def _made_note(ctx: Ctx, clean: str, corrupted: str, lang: str | None) -> bool:
    """Say how a made-up corrupted sentence differs, in this model's pieces; False where none
    could be made and the box still holds the clean sentence (nothing to run)."""
    made = _made(ctx, clean, lang)
    if made is None:
        return True
    if made.found and corrupted == made.corrupted:
        st.caption(_("The corrupted sentence was made from the clean one by changing "
                     "“{word}” to “{new}”: in this model's pieces, {a} becomes {b}, and each "
                     "sentence is {n} pieces. Type another corrupted sentence to patch a "
                     "different pair.").format(word=md(made.word), new=md(made.replacement),
                                     a=md(" ".join(made.clean_pieces)),
                                     b=md(" ".join(made.corrupted_pieces)), n=made.n_pieces))
        return True
    if made.found or corrupted.strip() != clean.strip():
        return True
    st.info(_("No corrupted sentence could be made from the clean one: none of the {n} "
              "one-word swaps tried (words of the minimal pairs and of the sidebar's "
              "sentences) reads, in this model's pieces, as a sentence of as many pieces that "
              "differs from the clean one. Type a corrupted sentence in the box above: the "
              "clean one with one word changed for another word this model knows, of as many "
              "pieces.").format(n=made.tried))
    return False


def render(ctx: Ctx) -> None:
    caps = capabilities(ctx.bundle)
    if not caps.head_outputs:
        st.info(_("Patching needs each head's context before the output projection; this "
                  "model's attention does not run through the lab's recorder."))
        return
    clean = ctx.lines[ctx.b]
    pairs = presets(ctx.bundle)
    lang = ctx.lang if caps.translates else None
    _seed_corrupt(ctx, clean, pairs, lang)
    st.caption(_("Run the corrupted sentence, copy one activation from the clean run into it, "
                 "and see how much of the clean answer comes back: 0 = the corrupted run, "
                 "1 = the clean run. The clean sentence is the one in the sidebar."))
    with st.expander(_("Minimal pairs")):
        for i, (c, r) in enumerate(pairs):
            st.button(f"{c} → {r}", key=f"patch_preset_{i}", on_click=_use_pair, args=(c, r))
    st.markdown(_("**Clean:** {text}").format(text=md(clean)))
    corrupted = st.text_input(_("Corrupted sentence (same number of pieces)"),
                              key="patch_corrupt")
    if not _made_note(ctx, clean, corrupted, lang):
        return
    method = st.radio(_("Method"), list(METHODS), key="patch_method", horizontal=True,
                      format_func=lambda m: _(METHODS[m]))
    pair = _encoded(ctx, clean, corrupted, lang)
    if pair is not None and not _lined_up(ctx, pair, clean, corrupted):
        return
    source = pair if pair is not None else clean  # what the estimates read
    key = ("patch", ctx.key, clean, corrupted, ctx.lang, ctx.ablate, method)
    stopped("patch")  # the last run's sweep was cancelled: say so once
    found = result_get(key)
    if found is None and method == "exact":
        secs = _exact_seconds(ctx, source, lang)
        if cost.asks_first(secs) and not st.button(
                _("Run exact patching (about {s:.0f} s)").format(s=secs), key="patch_go"):
            st.caption(_("Exact patching runs the corrupted sentence once per patched cell: "
                         "about {s:.0f} s here, so it waits for the button. The attribution "
                         "estimate (two forwards and one backward) is shown meanwhile.")
                       .format(s=secs))
            method, key = "attribution", key[:-1] + ("attribution",)
            found = result_get(key)
    if found is None:
        found = _admitted_run(ctx, source, clean, corrupted, method, key)
        if found is None:
            return
    _show(ctx, *found, inputs=key[:-1])


def _admitted_run(ctx: Ctx, source: Batch | str, clean: str, corrupted: str, method: str,
                  key: tuple):
    """The run through the admission gate; None once a refusal or a ValueError is shown.
    source: the pair's Batch (or the clean text where it could not be tokenized)."""
    lang = ctx.lang if capabilities(ctx.bundle).translates else None
    try:
        return or_warning(lambda: admitted(
            estimate_patch(ctx.bundle, source, target_lang=lang,  # the copies it runs
                           chunk=exact_chunk(ctx, source, lang) if method == "exact"
                           else ATTRIBUTION_PASSES),
            lambda: result_get(key), lambda: _run(ctx, source, clean, corrupted, method, key)))
    except ValueError as exc:  # unequal pieces, nothing differs, a bad step or token
        st.warning(_("These two sentences cannot be patched: {reason}").format(
            reason=md(str(exc))))
        return None


def _encoded(ctx: Ctx, clean: str, corrupted: str, lang: str | None) -> Batch | None:
    """The two sentences tokenized once (no model run), or None where one is blank or the
    tokenizer refuses it: patch() then says what is wrong, in its own words."""
    if not clean.strip() or not corrupted.strip():
        return None
    try:
        return encode(ctx.bundle, [clean, corrupted], target_lang=lang)
    except ValueError:
        return None


def _lined_up(ctx: Ctx, pair: Batch, clean: str, corrupted: str) -> bool:
    """Say where an input was cut, and which words keep the two from lining up piece by piece
    (False: nothing to run)."""
    for which, text, kept, cut in zip((_("clean"), _("corrupted")), (clean, corrupted),
                                      pair.pieces, pair.cuts):
        if cut:
            st.warning(_("The {which} sentence ({chars:,} characters) is longer than the "
                         "model's positions: it was cut to {n} pieces, after “{tail}”, and the "
                         "{cut:,} pieces after that are left out of the patching.").format(
                which=which, chars=len(text), n=len(kept), tail=md(pieces.tail(kept)),
                cut=cut))
    found = pieces.mismatches(pair.pieces[0], pair.pieces[1], clean, corrupted,
                              facts(ctx.bundle).word_mark)
    if not found:
        return True
    st.warning(_("These two sentences cannot be patched: they must have the same number of "
                 "pieces, and the clean one has {a} where the corrupted one has {b}. {why} "
                 "Change one word for one word of as many pieces.").format(
        a=len(pair.pieces[0]), b=len(pair.pieces[1]),
        why=" ".join(_mismatch_text(m) for m in found)))
    return False


def _word(w: pieces.Word) -> str:
    return _("“{word}” (pieces: {pieces})").format(word=md(w.text),
                                                   pieces=md(" ".join(w.pieces)))


def _mismatch_text(m: pieces.Mismatch) -> str:
    left, right = ", ".join(map(_word, m.clean)), ", ".join(map(_word, m.corrupted))
    if not m.clean:
        return _("The corrupted sentence adds {words}.").format(words=right)
    if not m.corrupted:
        return _("The corrupted sentence leaves out {words}.").format(words=left)
    return _("The corrupted sentence has {right} where the clean one has {left}.").format(
        right=right, left=left)


def _exact_seconds(ctx: Ctx, source: Batch | str, lang: str | None) -> float:
    """The exact sweep's time from the admission estimate's shapes: one corrupted copy per
    patched cell (heads, attention outputs, residual positions), CHUNK per forward."""
    dims = estimate_patch(ctx.bundle, source, chunk=CHUNK, target_lang=lang).dims
    if dims is None:
        return 0.0
    return cost.sweep_seconds(dims, _exact_rows(ctx, dims), extra_passes=2)


def _exact_rows(ctx: Ctx, dims) -> int:
    """Copies of the exact sweep: the two unpatched runs and one per patched cell."""
    bundle = ctx.bundle
    n = {"enc_self": dims.src, "dec_self": dims.tgt, "cross": dims.tgt}
    parts = _parts(ctx, "exact")
    rows = 2 + sum(bundle.n_layers(k) * bundle.config.n_heads for k in bundle.kinds)
    if "attn_out" in parts:
        rows += sum(bundle.n_layers(k) * n[k] for k in bundle.kinds)
    if "resid" in parts:
        rows += sum((bundle.n_layers(k) + 1) * n[k] for k in ("enc_self", "dec_self")
                    if k in bundle.kinds)
    return rows


def exact_chunk(ctx: Ctx, source: Batch | str, lang: str | None) -> int:
    """Patched copies per forward of the exact sweep: CHUNK, fewer where a forward of CHUNK
    would outlast a Cancel check (ui/sweep.chunk_within)."""
    dims = estimate_patch(ctx.bundle, source, chunk=CHUNK, target_lang=lang).dims
    if dims is None:
        return CHUNK
    return chunk_within(_exact_seconds(ctx, source, lang), _exact_rows(ctx, dims), CHUNK)


def _run(ctx: Ctx, source: Batch | str, clean: str, corrupted: str, method: str,
         key: tuple) -> tuple:
    """patch() with a progress bar and Cancel; a rerun or a closed page stops it (between two
    forwards of about half a second each) before anything is kept."""
    lang = ctx.lang if capabilities(ctx.bundle).translates else None
    chunk = exact_chunk(ctx, source, lang) if method == "exact" else CHUNK
    pair = source if isinstance(source, Batch) else None
    # a translator's greedy decode of the pair, kept with the page's translations: the other
    # method, the button and a later visit read it instead of decoding again
    decoded = cached_translate(ctx.bundle, ctx.key, (clean, corrupted), ctx.lang, ctx.ablate,
                               batch=pair) if lang is not None and pair is not None else None
    # the bar is shown only while the work runs: never above a refusal
    with Sweep("patch", _("Patching…")) as sweep:
        start = time.monotonic()
        result = patch(ctx.bundle, clean, corrupted, method=method, ablate=ctx.ablate,
                       target_lang=lang, progress=sweep.report, parts=_parts(ctx, method),
                       chunk=chunk, encoded=pair, decoded=decoded)
        found = (result, time.monotonic() - start)
        result_put(key, found)
    return found


def _parts(ctx: Ctx, method: str) -> tuple[str, ...]:
    """Everything, except that exact patching of a long input on a large model patches heads
    only: one run per position and layer would be many times the heads' runs."""
    if method != "exact":
        return PARTS
    bundle, b = ctx.bundle, ctx.b
    layers = sum(bundle.n_layers(k) for k in bundle.kinds)
    n = max(len(ctx.trace.src_tokens[b]), len(ctx.trace.tgt_tokens[b]), 1)
    return PARTS if 2 * layers * n <= 4 * layers * bundle.config.n_heads else ("heads",)


def _show(ctx: Ctx, p, seconds: float, inputs: tuple = ()) -> None:
    if p.outputs != ("", ""):
        left, right = st.columns(2)
        left.markdown(_("**Clean output:** {text}").format(text=md(p.outputs[0])))
        right.markdown(_("**Corrupted output:** {text}").format(text=md(p.outputs[1])))
    if p.metric == "logit_diff":
        where = (_("decoder step {step}").format(step=p.step) if p.step is not None
                 else _("the next token after the text"))
        st.markdown(_("Metric: logit({answer}) − logit({wrong}) at {where}: clean "
                      "{clean:+.3f}, corrupted {corrupted:+.3f}.").format(
            answer=md(p.answer), wrong=md(p.wrong), where=where, clean=p.clean_metric,
            corrupted=p.corrupted_metric))
    elif p.metric == "pooled_cosine":
        st.markdown(_("Metric: this model's output is {what}; each run's vector is compared "
                      "with the clean line's by cosine: clean {clean:.3f}, corrupted "
                      "{corrupted:.3f} (the two lines' cosine).").format(
            what=embedding_words(facts(ctx.bundle)), clean=p.clean_metric,
            corrupted=p.corrupted_metric))
    else:
        st.markdown(_("Metric (encoder-only model): the mean last hidden state, projected on "
                      "the direction from the corrupted run to the clean one: clean "
                      "{clean:.3f}, corrupted {corrupted:.3f}.").format(
            clean=p.clean_metric, corrupted=p.corrupted_metric))
    gap = p.clean_metric - p.corrupted_metric
    if p.metric == "logit_diff" and abs(gap) < MIN_GAP:
        st.warning(_("The clean and corrupted runs differ by only {gap:+.3f} in this metric. "
                     "Every effect below is divided by that gap, so noise reads as a large "
                     "effect: these numbers mean little. Choose a pair whose outputs differ "
                     "more.").format(gap=gap))
    st.caption(_("{method}, {s:.2f} s.").format(method=_(METHODS[p.method]), s=seconds))
    # a click on a cell opens that head (of that map's kind) in the attention view
    head_chart(kind_maps(viz_patch.heads_figure(p), list(p.heads)), ctx, key="patch_heads",
               kind=next(iter(p.heads)))
    _picker(ctx, p, inputs)
    if not p.resid:
        st.caption(_("Exact patching of this input patches heads only (one run per layer and "
                     "position would take many times longer); attribution draws the residual "
                     "stream and the attention outputs."))
    for side in p.resid:
        chart(viz_patch.resid_figure(p, side), ctx, key=f"patch_resid_{side}")
    if p.attn_out:
        with st.expander(_("Attention outputs per position")):
            for kind in p.attn_out:
                chart(viz_patch.attn_out_figure(p, kind), ctx, key=f"patch_attn_{kind}")
    st.download_button(_("Download the effects (.csv)"), data=viz_patch.patch_csv(p),
                       file_name="patching.csv", mime="text/csv", key="patch_csv",
                       on_click="ignore")


def _picker(ctx: Ctx, p, inputs: tuple) -> None:
    """The strongest heads; the chosen one opens in the attention view. A new pair of inputs
    (a preset clicked, a sentence typed) opens on its own strongest head: the choice made
    under the last pair never carries over (issue 59 showed L5 H5 at +0.037 under a new
    result whose top head was L5 H11 at 0.49). Another method on the same pair keeps it."""
    ranked = sorted(((float(v), kind, layer, head) for kind, grid in p.heads.items()
                     for (layer, head), v in _cells(grid)), key=lambda t: -abs(t[0]))[:TOP]
    if not ranked:
        return
    options = [(kind, layer, head) for _v, kind, layer, head in ranked]
    values = {(k, la, h): v for v, k, la, h in ranked}
    state = st.session_state
    if state.get("patch_pick_inputs") != inputs:
        state["patch_pick_inputs"] = inputs
        state["patch_pick"] = options[0]
    elif state.get("patch_pick") in values:
        # written back so the page shows its number under this result: the browser keeps a
        # keyed selectbox's old label (the other method's value) while the value still fits
        st.session_state["patch_pick"] = st.session_state["patch_pick"]
    left, right = st.columns([2, 1])  # [3, 1] cut the button's label in presenter mode
    chosen = left.selectbox(
        _("Head to open"), options, key="patch_pick",
        format_func=lambda t: _("{kind} layer {layer} head {head}: {value:+.3f}").format(
            kind=KIND_LABELS.get(t[0], t[0]), layer=t[1], head=t[2], value=values[t]))
    right.button(_("Open in the attention view"), key="patch_goto", on_click=goto,
                 args=("attention", chosen))


def _cells(grid):
    for layer in range(grid.shape[0]):
        for head in range(grid.shape[1]):
            yield (layer, head), grid[layer, head]
