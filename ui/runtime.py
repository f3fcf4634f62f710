"""The app's process-wide parts: Streamlit caches and the results shared by every session.

Streamlit runs app.py afresh on every rerun; each st.cache_* decorator there would hash its
function's source again (inspect.getsource), about a tenth of a rerun. Defined here, in a
module imported once per server process, they cost nothing per rerun and their caches are the
same objects for every session. (This was app_runtime.py.)

Every cache is bounded, so a server's memory levels off however many different inputs a
class types (benchmarks/bench_soak.py checks it; docs/limits.md "Long sessions (soak)"). The tables
this module keeps itself are one class, ui/bounded.Bounded (TraceCache adds need groups and
merging); the rest are st.cache_* functions with their bounds. Every cache, in one table:

    cache                 where          class            bound
    trace_cache           here           TraceCache       256 entries, ATTN_TRACE_CACHE_MB
    translations          here           Bounded          24 greedy decodes
    norm_shares           here           Bounded          4 attn-sized arrays
    contributions_cache   here           Bounded          32 head contributions
    shared_results        here           Bounded          64 button-started results
    why_cache             here           Bounded          64 score splits and composition sets
    load_bundle           here           cache_resource   6 models
    qkmap_cache           here           cache_resource   4 maps (one per checkpoint)
    cached_logit_lens     here           cache_data       32 entries, 16 MB
    cached_weights        here           cache_data       64 entries, 32 MB
    cached_vocab          here           cache_data       8 entries, 16 MB
    cached_bertviz        here           cache_data       16 entries, 48 MB
    cached_head_stats     here           cache_data       32 entries, 16 MB
    cached_ablation       here           cache_data       32 entries, 16 MB
    cached_embeddings     here           cache_data       32 entries, 8 MB
    cached_head_similarity here          cache_data       32 entries, 4 MB
    lookup_pairs          corpus_cache   cache_resource   2 (~20,000 corpus pairs each)
    validation_pairs      corpus_cache   cache_resource   2 validation splits
    cached_alignment      corpus_cache   cache_data       32 entries, 8 MB
    corpus_words          corpus_cache   cache_resource   6 word sets (~5,000 words)
    cached_knowledge      corpus_cache   cache_resource   1 (the lexicon and constructions)

The Trace cache holds, per input, the groups the views opened so far needed (View.needs): a
view that needs more records only the missing groups and they are merged into the entry.
Views keep no caches of their own (ui/views has no module-level mutable state).

A byte bound evicts least recently used entries until a new value fits; a single value larger
than the bound is kept alone. Nothing is kept per session: a session's state is Streamlit's
and goes with the session (a disconnected one is kept at most 2 minutes, 128 at most).
"""

from __future__ import annotations

from collections.abc import Collection
from contextlib import nullcontext

import streamlit as st

from model import Bundle, Trace, embed, load_checkpoint, translate
from model.analysis import (
    builtin_sentences,
    composition_scores,
    ov_components,
    qk_components,
)
from model.analysis.ablation import ablation_effect
from model.analysis.contributions import head_contributions
from model.analysis.heads import head_stats
from model.analysis.inspect import head_weights
from model.analysis.lens import logit_lens
from model.analysis.qkmap import QKMapCache, Sentence, corpus_sentences, text_sentences
from model.analysis.similarity import head_similarity
from model.backends import EVERYTHING, backend_for, facts, is_translator
from model.batch import Batch
from model.capture import freeze
from model.dispatch import (
    estimate_ablation,
    estimate_contributions,
    estimate_logit_lens,
    estimate_qkmap,
)
from model.dispatch import run as run_lines
from model.settings import settings
from ui.admission import admitted
from ui.bounded import Bounded, TraceCache
from ui.context import key_folder
from ui.corpus_cache import corpus_args, validation_pairs
from ui.i18n import N_, _
from ui.spinning import spinning
from ui.sweep import Sweep
from viz import bertviz_embed


@spinning(N_("Loading the model…"))
@st.cache_resource(max_entries=6, show_spinner=False)
def load_bundle(folder: str, stamp: float) -> Bundle:
    """One model per checkpoint, shared by every session (hooks are per-context)."""
    return load_checkpoint(folder)


def capture_names(bundle: Bundle) -> list[str] | None:
    """The capture names of everything any view reads (model.backends decides what they are)."""
    return backend_for(bundle).names(None)


@st.cache_resource
def trace_cache() -> TraceCache:
    """The server's one TraceCache; ATTN_TRACE_CACHE_MB sets its byte budget (default 2048)."""
    return TraceCache(int(settings().trace_cache_mb * 2**20))


def cached_capture(_bundle: Bundle, key: str, lines: tuple[str, ...],
                   targets: tuple[str, ...] | None, lang: str, ablate: str,
                   needs: Collection[str] = EVERYTHING) -> Trace:
    """The one forward pass per input, recording what `needs` names (a view's View.needs);
    a later view that needs more records only the rest. One read-only object shared by all
    sessions: st.cache_data would pickle it on every miss and unpickle it on every rerun (a
    16-line input's Trace is ~600 MB; pickling took the server past 2 GB)."""
    return _cached(_bundle, key, lines, targets, lang, ablate, needs, on_page=True)


def recapture(bundle: Bundle, key: str, lines: tuple[str, ...],
              targets: tuple[str, ...] | None, lang: str, ablate: str) -> Trace:
    """The whole Trace of an input for code that runs off the page (a download button's data
    callable, on its own thread): the same capture through the gate, with no spinner."""
    return _cached(bundle, key, lines, targets, lang, ablate, EVERYTHING, on_page=False)


def _cached(bundle: Bundle, key: str, lines: tuple[str, ...], targets: tuple[str, ...] | None,
            lang: str, ablate: str, needs: Collection[str], on_page: bool) -> Trace:
    store, cache_key, needs = trace_cache(), (key, lines, targets, lang, ablate), frozenset(needs)
    found = store.entry(cache_key)
    if found is not None and found[1] >= needs:  # cached inputs never wait for the gate
        return found[0]
    missing = needs - found[1] if found is not None else needs
    # on the page the greedy decode is shared with the translation and heads views: one they
    # made already is handed in, and one made here is kept for them
    decodes = targets is None and is_translator(bundle)
    shared = on_page and decodes
    tkey = (key, lines, lang, ablate)
    # a decode another view (or page run) made is reused off the page too: the download's
    # Trace does not decode the lines a second time
    known = translations().get(tkey) if decodes else None

    def admit(cost, work):
        def run() -> Trace:
            with st.spinner(_("Running the model…")) if on_page else nullcontext():
                trace, decoded = work()
            if decoded is not None:
                translations().put(tkey, decoded)
            return store.put(cache_key, freeze(trace), missing)

        # its peak memory, from the shapes, is what it asks of the gate (ui/admission.py)
        return admitted(cost, lambda: store.get(cache_key, needs), run)

    # the backend tokenizes the lines once and takes them forward to the capture
    return run_lines(bundle, lines, targets, lang, missing, ablate, admit=admit,
                     decoded=known, decode=shared)


@st.cache_resource
def translations() -> Bounded:
    """Greedy translations (top-5 per step) per (checkpoint, lines, language, ablation), for
    every session: the translation, tokens and heads views and the capture's decode share
    them."""
    return Bounded(24)


def cached_translate(bundle: Bundle, key: str, lines: tuple[str, ...], lang: str,
                     ablate: str, batch: Batch | None = None) -> list:
    """Greedy translation of the lines, kept in translations(); `batch`: the lines already
    tokenized (encode(bundle, lines, target_lang=lang)), decoded without tokenizing again."""
    tkey = (key, lines, lang, ablate)
    hit = translations().get(tkey)
    if hit is None:
        with st.spinner(_("Decoding step by step…")):
            hit = translations().put(tkey, translate(
                bundle, batch if batch is not None else list(lines), lang, top_k=5,
                ablate=ablate))
    return hit


@st.cache_data(max_entries=32, max_size="16MB")
def cached_logit_lens(_bundle: Bundle, _trace: Trace, tkey: tuple, b: int, k: int = 5) -> dict:
    """The decoder's logit lens for sentence b: a vocabulary projection per layer, so cached
    like the Trace it reads (a 512-piece typed target is ~0.5 GFLOP). A new one asks the
    admission gate first; a cached one never runs this body, so never waits."""
    return admitted(estimate_logit_lens(_bundle, _trace, b), lambda: None,
                    lambda: logit_lens(_bundle, _trace, b, k=k))


@st.cache_data(max_entries=64, max_size="32MB")  # a 768-wide layer's weights are ~9 MB
def cached_weights(_bundle: Bundle, key: str, kind: str, layer: int) -> dict:
    return head_weights(_bundle, kind, layer)


@st.cache_data(max_entries=8, max_size="16MB")
def cached_vocab(_bundle: Bundle, key: str) -> list[str]:
    """Every piece of the model's tokenizer, by id."""
    return backend_for(_bundle).vocabulary()


@st.cache_resource
def norm_shares() -> Bounded:
    """Traces with attn replaced by weighted-norm shares (ui/views/measure.py), one per recent
    input: each costs one attn-sized array beside the cached Trace."""
    return Bounded(4)


@st.cache_resource
def contributions_cache() -> Bounded:
    """Head contributions per (checkpoint, sentence, target, language, step)."""
    return Bounded(32)


def cached_contributions(bundle: Bundle, key: str, source: str, target: str | None,
                         lang: str, step: int, knockout: bool = True, chunk: int = 64):
    """model.analysis.contributions.head_contributions, cached for every session; a new one
    asks the admission gate first (its knock-out sweep runs heads + 1 copies of the sentence).
    knockout False: the direct attribution alone, unless the full result is kept already."""
    store, ckey = contributions_cache(), (key, source, target, lang, step, knockout)
    hit = store.get(ckey[:-1] + (True,)) or store.get(ckey)  # a kept sweep first
    if hit is not None:
        return hit

    def run():
        if not knockout:
            with st.spinner(_("Attributing the logit to each head…")):
                return store.put(ckey, head_contributions(
                    bundle, source, target, target_lang=lang, step=step, knockout=False))
        # the sweep: a bar and Cancel; a stop raises out before the put (nothing kept)
        with Sweep("contrib", _("Knocking out each head in turn…")) as sweep:
            return store.put(ckey, head_contributions(
                bundle, source, target, target_lang=lang, step=step, chunk=chunk,
                progress=sweep.report))

    # the direct attribution alone is one pass: asking room for 64 knock-out copies refused
    # it on a 512-piece line of the GPT-2-small shape (31 GB for a 0.5 GB run)
    return admitted(estimate_contributions(bundle, source, target, target_lang=lang,
                                           chunk=chunk if knockout else 1),
                    lambda: store.get(ckey), run)


QKMAP_SEED = 11  # the query–key map's sentences for models without a validation split


@st.cache_resource(max_entries=4, show_spinner=False)
def qkmap_cache(_bundle: Bundle, key: str, n: int) -> QKMapCache:
    """One QKMapCache per checkpoint (ui/views/qkmap.py): q/k of n validation sentences
    captured once, through the admission gate (cached_qkmap), each head embedded once."""
    if is_translator(_bundle):
        return QKMapCache(_bundle, corpus_sentences(val_split(_bundle, key), n))
    if "ko" not in facts(_bundle).languages and "en" in builtin_sentences.available():
        # a vocabulary without Korean: the built-in English set, not jamo-split corpus Korean
        lines = builtin_sentences.sentences("en")[:n]
        return QKMapCache(_bundle, [Sentence(s, None, None, "en") for s in lines])
    from training.corpus import generate  # any other model: corpus sentences, read alone

    return QKMapCache(_bundle, text_sentences(generate(n, seed=QKMAP_SEED), n))


def cached_qkmap(bundle: Bundle, key: str, n: int) -> QKMapCache:
    """qkmap_cache's map with its q/k captured: a first build asks the admission gate."""
    cache = qkmap_cache(bundle, key, n)
    if cache.built:
        return cache
    return admitted(estimate_qkmap(bundle, cache.sentences, cache.batch),
                    lambda: cache if cache.built else None, lambda: (cache.data(), cache)[1])


@st.cache_resource
def shared_results() -> Bounded:
    """Results of button-started work (validation average, importance scan, patching,
    detectors), for every session: st.cache_data cannot drive a live progress bar."""
    return Bounded(64)


def result_get(key: tuple):
    return shared_results().get(key)


def result_put(key: tuple, value) -> None:
    shared_results().put(key, value, replace=True)


@st.cache_resource
def why_cache() -> Bounded:
    """The why view's results, for every session: score splits (qk_components) and what a
    head writes (ov_components), each a forward over the sentence, per (Trace, head,
    positions); composition scores (weights only) per checkpoint."""
    return Bounded(64)


def cached_qk_components(bundle: Bundle, trace: Trace, tkey: tuple, kind: str, layer: int,
                         head: int, query: int, key: int, b: int):
    """model.analysis.qk_components of the Trace that tkey names (ui.context.trace_key), kept
    in why_cache(); a ValueError (a stream the backend cannot split) propagates, not kept."""
    ckey = ("qk", tkey, kind, layer, head, query, key, b)
    hit = why_cache().get(ckey)
    if hit is None:
        hit = why_cache().put(ckey, qk_components(bundle, trace, kind, layer, head, query, key,
                                                  batch=b))
    return hit


def cached_ov_components(bundle: Bundle, trace: Trace, tkey: tuple, kind: str, layer: int,
                         head: int, query: int, b: int):
    """model.analysis.ov_components, kept in why_cache() like cached_qk_components."""
    ckey = ("ov", tkey, kind, layer, head, query, b)
    hit = why_cache().get(ckey)
    if hit is None:
        hit = why_cache().put(ckey, ov_components(bundle, trace, kind, layer, head, query,
                                                  batch=b))
    return hit


def kept_composition(key: str):
    """The composition scores of checkpoint `key` if computed already, else None."""
    return why_cache().get(("composition", key))


def cached_composition(bundle: Bundle, key: str):
    """model.analysis.composition_scores of the checkpoint, computed once per server."""
    hit = kept_composition(key)
    if hit is None:
        hit = why_cache().put(("composition", key), composition_scores(bundle))
    return hit


@spinning(N_("Building the bertviz page…"))
@st.cache_data(max_entries=16, max_size="48MB",  # pages are at most 8 MB (bertviz_embed)
               show_spinner=False)
def cached_bertviz(_trace: Trace, tkey: tuple, b: int, view: str, layers: tuple[int, ...]
                   ) -> str:
    # looked up on the module at call time, so a test can replace it
    return bertviz_embed.bertviz_html(_trace, b, view, layers=list(layers))


@st.cache_data(max_entries=32, max_size="16MB")
def cached_head_stats(_trace: Trace, tkey: tuple, kind: str, b: int | None) -> dict:
    return head_stats(_trace, kind, b)


@spinning(N_("Translating with and without those heads…"))
@st.cache_data(max_entries=32, max_size="16MB", show_spinner=False)
def cached_ablation(_bundle: Bundle, key: str, lines: tuple[str, ...], lang: str,
                    ablate: str) -> dict:
    """ablation_effect, through the admission gate when not cached (cached: never waits)."""
    return admitted(estimate_ablation(_bundle, list(lines), target_lang=lang), lambda: None,
                    lambda: ablation_effect(_bundle, list(lines), ablate, target_lang=lang))


@st.cache_data(max_entries=32, max_size="8MB", show_spinner=False)
def cached_embeddings(_bundle: Bundle, key: str, lines: tuple[str, ...], ablate: str):
    """(B, D) sentence embeddings of the typed lines (model.embed), heads knocked out."""
    return embed(_bundle, list(lines), ablate)


@spinning(N_("Knocking out each head in turn…"))
@st.cache_data(max_entries=32, max_size="4MB", show_spinner=False)
def cached_head_similarity(_bundle: Bundle, key: str, line_a: str, line_b: str, ablate: str):
    """model.analysis.similarity.head_similarity of one pair (exact and attribution)."""
    return head_similarity(_bundle, line_a, line_b, ablate)


def val_split(bundle: Bundle, key: str) -> list:
    """validation_pairs of the checkpoint behind a catalog key ('folder@stamp')."""
    folder, when = key_folder(key) or ("", 0.0)  # no folder: generate the split
    return validation_pairs(folder, when, *corpus_args(bundle))
