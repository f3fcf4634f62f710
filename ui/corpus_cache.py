"""The corpus-side caches of ui/runtime.py's table (their bounds are listed there): corpus
sentences for gold alignments, a checkpoint's validation split, its training word set, the
lexicon and constructions, each read or generated once per server process."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from model import Bundle
from model.analysis.heads import alignment_for_input
from ui.i18n import N_
from ui.spinning import spinning

LOOKUP_SAMPLE = 20_000  # corpus pairs searched for a typed sentence's gold alignment


@spinning(N_("Loading corpus sentences for the gold alignments…"))
@st.cache_resource(max_entries=2, show_spinner=False)
def lookup_pairs(seed: int) -> list:
    """The corpus's seed sentences and LOOKUP_SAMPLE generated pairs (seconds, once)."""
    from training import corpus

    return list(corpus.SEED_PAIRS) + corpus.generate(LOOKUP_SAMPLE, seed=seed)


@spinning(N_("Generating the validation split (10–20 s, once)…"))
@st.cache_resource(max_entries=2, show_spinner=False)
def validation_pairs(folder: str, stamp: float, seed: int, n_train: int, n_val: int,
                     n_test: int) -> list:
    """The validation split the checkpoint was trained beside: its val_pairs.tsv, written by
    training, or else training.corpus.splits again (that draws the 200,000 training
    pairs first; reading the file saves the wait and ~170 MB the server kept afterwards)."""
    from training import corpus

    path = Path(folder) / corpus.VAL_FILE
    if path.is_file():
        return corpus.read_pairs_file(path)
    return corpus.splits(seed=seed, n_train=n_train, n_val=n_val, n_test=n_test)["val"]


@spinning(N_("Checking the gold alignment…"))
@st.cache_data(max_entries=32, max_size="8MB", show_spinner=False)
def cached_alignment(_bundle: Bundle, key: str, text: str, lang: str) -> object:
    pairs = lookup_pairs(corpus_args(_bundle)[0])
    return alignment_for_input(_bundle, text, pairs, target_lang=lang)


@st.cache_resource(max_entries=6)
def corpus_words(folder: str, stamp: float) -> frozenset[str] | None:
    """The words a lab checkpoint's training corpus contained (its corpus_words.txt, written
    by training), read once per checkpoint version; None without the file (Hugging Face)."""
    from training.knowledge import read_corpus_words

    return read_corpus_words(folder)


@spinning(N_("Listing the lexicon and constructions…"))
@st.cache_resource(max_entries=1, show_spinner=False)
def cached_knowledge() -> dict:
    """training.knowledge.knowledge(): the lexicon and constructions (~1 s, once)."""
    from training.knowledge import knowledge

    return knowledge()


def corpus_args(bundle: Bundle) -> tuple[int, int, int, int]:
    """(seed, n_train, n_val, n_test) of the corpus in the checkpoint's card (training defaults)."""
    card = bundle.card or {}
    return (int(card.get("corpus_seed", 0)), int(card.get("train_pairs_requested", 200_000)),
            int(card.get("val_pairs_requested", 1_000)),
            int(card.get("test_pairs_per_direction", 2_000)))
