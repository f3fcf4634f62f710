"""The combined confidence of a greedy translation, for the unsure notice (issue 58).

model/confidence_signals.py reads six signals; two of them need more decoding: the way back
(the output translated back by the same model) and the partner checkpoint's translation of the
same source. Both go through ui.runtime.cached_translate, so a rerun decodes nothing again.
The partner's opinion of this very output (its piece log-probabilities, one teacher-forced
forward, model.dispatch.piece_logps) feeds the pair alarm; it is cached per text as well.
The way back is decoded without ablation: it checks what the model knows, not the knocked-out
copy. A card without confidence.combined, or a partner folder that is not in the picker,
leaves that part out (model.confidence_signals sets an unread signal to its fitted mean).
"""

from __future__ import annotations

import math

import streamlit as st

from model import Bundle
from model.confidence_signals import Combination, Signals, back_lang, read
from model.dispatch import piece_logps
from ui.catalog import model_folders, open_folder
from ui.i18n import _
from ui.runtime import cached_translate


def _opened(name: str) -> tuple[Bundle, str] | None:
    folder = model_folders().get(name)
    return open_folder(folder) if folder is not None else None


@st.cache_data(max_entries=256, max_size="1MB")
def _opinion(_partner: Bundle, key: str, source: str, output: str, lang: str | None
             ) -> list[float]:
    """The partner's log-probability of each piece of output (key: its folder key)."""
    return piece_logps(_partner, source, output, lang)


def combined_signals(bundle: Bundle, result) -> tuple[Combination, Signals] | None:
    """The card's combination and the signals of result (a Translation); None when the card
    has no combined confidence."""
    comb = Combination.from_card(bundle.card)
    if comb is None:
        return None
    own = _opened(bundle.name)
    back = None
    if own is not None and result.text.strip():
        back = cached_translate(own[0], own[1], (result.text,), back_lang(result.target_lang),
                                "")[0]
    partner, opinion = None, None
    other = _opened(comb.partner) if comb.partner and comb.partner != bundle.name else None
    if other is not None:
        partner = cached_translate(other[0], other[1], (result.source,), result.target_lang,
                                   "")[0]
        if result.text.strip():
            opinion = _opinion(other[0], other[1], result.source, result.text,
                               result.target_lang)
    center = comb.centers.get(result.target_lang or "", 0.0)
    return comb, read(result, bundle.known_words, back, partner, center, opinion)


def reason_text(name: str, sig: Signals, comb: Combination) -> str:
    """One fired signal in words, quoting what it saw."""
    if name == "unknown":
        words = ", ".join(sig.unknown_words)
        if len(sig.unknown_words) > 1:
            return _("unknown words: {words}").format(words=words)
        return _("unknown word: {words}").format(words=words)
    if name == "round_trip":
        return _("the way back reads “{back}”").format(back=sig.back or "")
    if name == "agreement":
        return _("the other checkpoint ({name}) writes “{text}”").format(
            name=comb.partner, text=sig.partner_text or "")
    if name == "partner_logp" and sig.partner_logp is not None:
        return _("the other checkpoint ({name}) gives its pieces {p:.0%} on average").format(
            name=comb.partner, p=math.exp(sig.partner_logp))
    if name == "min_logp":
        return _("its least sure piece had {p:.0%}").format(p=math.exp(sig.min_logp))
    if name == "mean_logp":
        return _("its pieces averaged {p:.0%}").format(p=math.exp(sig.mean_logp))
    if sig.longer:
        return _("it is {x:.1f} times longer than translations in this direction usually are"
                 ).format(x=math.exp(sig.length_gap))
    return _("it is {x:.1f} times shorter than translations in this direction usually are"
             ).format(x=math.exp(sig.length_gap))
