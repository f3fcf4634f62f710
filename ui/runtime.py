"""The app's process-wide parts: Streamlit caches and the results shared by every session.

Streamlit runs app.py afresh on every rerun; each st.cache_* decorator there would hash its
function's source again (inspect.getsource), about a tenth of a rerun. Defined here, in a
module imported once per server process, they cost nothing per rerun and their caches are the
same objects for every session. (This was app_runtime.py.)

Every cache here is bounded, so a server's memory levels off however many different inputs a
class types (benchmarks/bench_soak.py checks it; README "Limits and deployment"):

    cache                   entries  bytes (pickled for st.cache_data)
    trace_cache             256      ATTN_TRACE_CACHE_MB (default 2048); the newest always kept
    load_bundle             6        one model each (the catalog's checkpoints)
    translations            24       greedy decodes    cached_logit_lens   32   16 MB
    cached_weights          64       32 MB    cached_vocab         8   16 MB
    cached_bertviz          16       48 MB    cached_head_stats   32   16 MB
    cached_ablation         32       16 MB    cached_alignment    32    8 MB
    lookup_pairs            2        ~20,000 corpus pairs each
    validation_pairs        2        one validation split each
    shared_results          64       button-started results (validation average, scan)
    norm_shares             4        one attn-sized array each (the α / ‖αf(x)‖ toggle)
    contributions_cache     32       head contributions (view=contrib), a few hundred kB each
    qkmap_cache             4        one map per checkpoint: q/k of its validation sentences
    corpus_words            6        one checkpoint's training word set each (~5,000 words)
    cached_knowledge        1        the lexicon and constructions (knows view)

The Trace cache holds, per input, the groups the views opened so far needed (View.needs): a
view that needs more records only the missing groups and they are merged into the entry.
Views keep no caches of their own (ui/views has no module-level mutable state).

A byte bound evicts least recently used entries until a new value fits; a single value larger
than the bound is kept alone. Nothing is kept per session: a session's state is Streamlit's
and goes with the session (a disconnected one is kept at most 2 minutes, 128 at most).
"""

from __future__ import annotations

import functools
import threading
from collections import OrderedDict
from collections.abc import Callable, Collection
from contextlib import nullcontext
from pathlib import Path
from typing import TypeVar

import streamlit as st

from model import Bundle, Trace, load_checkpoint, translate
from model.analysis.ablation import ablation_effect
from model.analysis.contributions import head_contributions
from model.analysis.heads import alignment_for_input, head_stats
from model.analysis.inspect import head_weights
from model.analysis.lens import logit_lens
from model.analysis.qkmap import QKMapCache, corpus_sentences, text_sentences
from model.backends import EVERYTHING, backend_for, is_translator
from model.capture import freeze, merge, nbytes
from model.dispatch import (
    estimate_ablation,
    estimate_contributions,
    estimate_logit_lens,
    estimate_qkmap,
)
from model.heap import trim_heap
from model.settings import settings
from ui.admission import admitted
from ui.context import key_folder
from ui.i18n import N_, _
from viz import bertviz_embed

F = TypeVar("F", bound=Callable)


def spinning(message: str) -> Callable[[F], F]:
    """Show `message` in the session's interface language while the cached function below runs.

    st.cache_*'s own show_spinner text is fixed when this module loads, so it would be English
    for every session. Like it, this shows nothing on a hit: st.spinner waits 0.5 s first.
    """
    def wrap(cached: F) -> F:
        @functools.wraps(cached)
        def call(*args, **kwargs):
            with st.spinner(_(message)):
                return cached(*args, **kwargs)

        call.clear = cached.clear  # the cache stays reachable, as st.cache_* gives it
        return call  # type: ignore[return-value]
    return wrap


LOOKUP_SAMPLE = 20_000  # corpus pairs searched for a typed sentence's gold alignment


@spinning(N_("Loading the model…"))
@st.cache_resource(max_entries=6, show_spinner=False)
def load_bundle(folder: str, stamp: float) -> Bundle:
    """One model per checkpoint, shared by every session (hooks are per-context)."""
    return load_checkpoint(folder)


def capture_names(bundle: Bundle) -> list[str] | None:
    """The capture names of everything any view reads (model.backends decides what they are)."""
    return backend_for(bundle).names(None)


class TraceCache:
    """Recent Traces, newest last, bounded by count and by bytes; shared by every session.

    st.cache_resource bounds only the number of entries, and a Trace ranges from kilobytes
    to ~600 MB (16 lines of 519 pieces), so 24 entries could have held ~14 GB. The bytes are
    the bound that matters; the count (256) only caps what nbytes leaves out (each entry's
    token lists, a few kB). With 24 a class's short sentences (a few MB each) left most of the
    budget unused while repeats were recomputed. The newest entry is always kept, whatever its
    size: a session is reading it.

    Each entry also holds the need groups it was recorded with (model.backends.NEED_GROUPS):
    a view that needs more records only the rest, merged into the entry (model.capture.merge).
    """

    def __init__(self, max_bytes: int, max_entries: int = 256) -> None:
        self.max_bytes, self.max_entries = max_bytes, max_entries
        self.lock = threading.Lock()
        self.items: OrderedDict[tuple, tuple[Trace, int]] = OrderedDict()
        self.needs: dict[tuple, frozenset[str]] = {}  # key -> the groups its Trace holds
        self.bytes = 0

    def entry(self, key: tuple) -> tuple[Trace, frozenset[str]] | None:
        """(Trace, the need groups it holds), or None."""
        with self.lock:
            item = self.items.get(key)
            if item is None:
                return None
            self.items.move_to_end(key)
            return item[0], self.needs.get(key, EVERYTHING)

    def get(self, key: tuple, needs: Collection[str] = ()) -> Trace | None:
        """The cached Trace if it holds every group of `needs`, else None."""
        found = self.entry(key)
        return found[0] if found is not None and found[1] >= frozenset(needs) else None

    def put(self, key: tuple, trace: Trace, needs: Collection[str] = EVERYTHING) -> Trace:
        """Store trace (merged into what another capture of this input stored first) and
        return the entry's Trace."""
        needs = frozenset(needs)
        with self.lock:
            old = self.items.get(key)
            if old is not None:
                self.items.move_to_end(key)
                had = self.needs.get(key, EVERYTHING)
                if needs <= had:
                    return old[0]
                self.bytes -= old[1]
                try:
                    trace, needs = freeze(merge(old[0], trace)), had | needs
                except ValueError:  # another decoder input (a nondeterministic generate()):
                    pass  # the new capture replaces the entry; its groups alone are held
            size = nbytes(trace)
            self.items[key], self.needs[key] = (trace, size), needs
            self.bytes += size
            evicted = 0
            while len(self.items) > 1 and (self.bytes > self.max_bytes
                                           or len(self.items) > self.max_entries):
                gone, (_trace, gone_size) = self.items.popitem(last=False)  # the Trace goes
                self.needs.pop(gone, None)
                self.bytes -= gone_size
                evicted += 1
        if evicted:  # their small arrays lived in malloc's heaps: give those pages back
            trim_heap()
        return trace


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
    shared = on_page and targets is None and is_translator(bundle)
    tkey = (key, lines, lang, ablate)
    known = translations().get(tkey) if shared else None

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
    return backend_for(bundle).run(lines, targets, lang, missing, ablate, admit=admit,
                                   decoded=known, decode=shared)


@st.cache_resource
def translations() -> Lru:
    """Greedy translations (top-5 per step) per (checkpoint, lines, language, ablation), for
    every session: the translation, tokens and heads views and the capture's decode share
    them."""
    return Lru(24)


def cached_translate(bundle: Bundle, key: str, lines: tuple[str, ...], lang: str,
                     ablate: str) -> list:
    """Greedy translation of the lines, kept in translations()."""
    tkey = (key, lines, lang, ablate)
    hit = translations().get(tkey)
    if hit is None:
        with st.spinner(_("Decoding step by step…")):
            hit = translations().put(tkey, translate(bundle, list(lines), lang, top_k=5,
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


class Lru:
    """A small thread-safe least-recently-used table of results shared by every session."""

    def __init__(self, max_items: int) -> None:
        self.max_items = max_items
        self.lock = threading.Lock()
        self.items: OrderedDict[tuple, object] = OrderedDict()

    def get(self, key: tuple):
        with self.lock:
            hit = self.items.get(key)
            if hit is not None:
                self.items.move_to_end(key)
            return hit

    def put(self, key: tuple, value):
        """Store value (or keep what another session stored first) and return it."""
        with self.lock:
            if key in self.items:
                self.items.move_to_end(key)
                return self.items[key]
            self.items[key] = value
            while len(self.items) > self.max_items:
                self.items.popitem(last=False)
            return value


@st.cache_resource
def norm_shares() -> Lru:
    """Traces with attn replaced by weighted-norm shares (ui/views/measure.py), one per recent
    input: each costs one attn-sized array beside the cached Trace."""
    return Lru(4)


@st.cache_resource
def contributions_cache() -> Lru:
    """Head contributions per (checkpoint, sentence, target, language, step)."""
    return Lru(32)


def cached_contributions(bundle: Bundle, key: str, source: str, target: str | None,
                         lang: str, step: int, knockout: bool = True):
    """model.analysis.contributions.head_contributions, cached for every session; a new one
    asks the admission gate first (its knock-out sweep runs heads + 1 copies of the sentence).
    knockout False: the direct attribution alone, unless the full result is kept already."""
    store, ckey = contributions_cache(), (key, source, target, lang, step, knockout)
    hit = store.get(ckey[:-1] + (True,)) or store.get(ckey)  # a kept sweep first
    if hit is not None:
        return hit

    def run():
        with st.spinner(_("Knocking out each head in turn…") if knockout
                        else _("Attributing the logit to each head…")):
            found = head_contributions(bundle, source, target, target_lang=lang, step=step,
                                       knockout=knockout)
        return store.put(ckey, found)

    return admitted(estimate_contributions(bundle, source, target, target_lang=lang),
                    lambda: store.get(ckey), run)


QKMAP_SEED = 11  # the query–key map's sentences for models without a validation split


@st.cache_resource(max_entries=4, show_spinner=False)
def qkmap_cache(_bundle: Bundle, key: str, n: int) -> QKMapCache:
    """One QKMapCache per checkpoint (ui/views/qkmap.py): q/k of n validation sentences
    captured once, through the admission gate (cached_qkmap), each head embedded once."""
    if is_translator(_bundle):
        return QKMapCache(_bundle, corpus_sentences(val_split(_bundle, key), n))
    from model.training.corpus import generate  # any other model: corpus sentences, read alone

    return QKMapCache(_bundle, text_sentences(generate(n, seed=QKMAP_SEED), n))


def cached_qkmap(bundle: Bundle, key: str, n: int) -> QKMapCache:
    """qkmap_cache's map with its q/k captured: a first build asks the admission gate."""
    cache = qkmap_cache(bundle, key, n)
    if cache.built:
        return cache
    return admitted(estimate_qkmap(bundle, cache.sentences, cache.batch),
                    lambda: cache if cache.built else None, lambda: (cache.data(), cache)[1])


@st.cache_resource
def shared_results() -> dict:
    """Results of button-started work (validation average, importance scan), for every session.

    st.cache_data cannot drive a live progress bar, so these are kept here, newest last.
    """
    return {"lock": threading.Lock(), "items": OrderedDict()}


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


@spinning(N_("Loading corpus sentences for the gold alignments…"))
@st.cache_resource(max_entries=2, show_spinner=False)
def lookup_pairs(seed: int) -> list:
    """The corpus's seed sentences and LOOKUP_SAMPLE generated pairs (seconds, once)."""
    from model.training import corpus

    return list(corpus.SEED_PAIRS) + corpus.generate(LOOKUP_SAMPLE, seed=seed)


@spinning(N_("Generating the validation split (10–20 s, once)…"))
@st.cache_resource(max_entries=2, show_spinner=False)
def validation_pairs(folder: str, stamp: float, seed: int, n_train: int, n_val: int,
                     n_test: int) -> list:
    """The validation split the checkpoint was trained beside: its val_pairs.tsv, written by
    training, or else model.training.corpus.splits again (that draws the 200,000 training
    pairs first; reading the file saves the wait and ~170 MB the server kept afterwards)."""
    from model.training import corpus

    path = Path(folder) / corpus.VAL_FILE
    if path.is_file():
        return corpus.read_pairs_file(path)
    return corpus.splits(seed=seed, n_train=n_train, n_val=n_val, n_test=n_test)["val"]


def val_split(bundle: Bundle, key: str) -> list:
    """validation_pairs of the checkpoint behind a catalog key ('folder@stamp')."""
    folder, when = key_folder(key) or ("", 0.0)  # no folder: generate the split
    return validation_pairs(folder, when, *corpus_args(bundle))


@spinning(N_("Checking the gold alignment…"))
@st.cache_data(max_entries=32, max_size="8MB", show_spinner=False)
def cached_alignment(_bundle: Bundle, key: str, text: str, lang: str) -> object:
    pairs = lookup_pairs(corpus_args(_bundle)[0])
    return alignment_for_input(_bundle, text, pairs, target_lang=lang)


@st.cache_resource(max_entries=6)
def corpus_words(folder: str, stamp: float) -> frozenset[str] | None:
    """The words a lab checkpoint's training corpus contained (its corpus_words.txt, written
    by training), read once per checkpoint version; None without the file (Hugging Face)."""
    from model.training.knowledge import read_corpus_words

    return read_corpus_words(folder)


@spinning(N_("Listing the lexicon and constructions…"))
@st.cache_resource(max_entries=1, show_spinner=False)
def cached_knowledge() -> dict:
    """model.training.knowledge.knowledge(): the lexicon and constructions (~1 s, once)."""
    from model.training.knowledge import knowledge

    return knowledge()


def corpus_args(bundle: Bundle) -> tuple[int, int, int, int]:
    """(seed, n_train, n_val, n_test) of the corpus in the checkpoint's card (training defaults)."""
    card = bundle.card or {}
    return (int(card.get("corpus_seed", 0)), int(card.get("train_pairs_requested", 200_000)),
            int(card.get("val_pairs_requested", 1_000)),
            int(card.get("test_pairs_per_direction", 2_000)))
