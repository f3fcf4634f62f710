"""The notices the tokens and translation views show above a typed sentence: the words the
training corpus never held (out of the model's vocabulary of words, marked in the sentence and
on its pieces), and a translation the model is unsure of. The knows view lists the corpus.

The word list is the one training saved next to the checkpoint (corpus_words.txt, read once per
checkpoint by ui.corpus_cache.corpus_words); Hugging Face models and folders without it get
nothing.
"""

from __future__ import annotations

import html

import streamlit as st

from model import Bundle
from model.backends import facts, trained_here, word_index
from model.confidence import threshold
from model.specials import is_special
from ui.confidence_check import combined_signals, reason_text
from ui.context import Ctx, key_folder
from ui.corpus_cache import corpus_words
from ui.i18n import _
from ui.text import md

MAX_LISTED = 20  # words named in the notice; the rest are counted
UNKNOWN_STYLE = ("background:#fde2e1;color:#7a1010;border:2px dashed #c62828;"
                 "border-radius:6px;padding:1px 4px")
_CHIP = ("display:inline-block;margin:2px 3px;padding:2px 6px;border-radius:6px;"
         "border:1px solid #8a8a8a;font-family:monospace;white-space:pre")
_SPECIAL = "background:#e8e8e8;color:#333"
_PIECE = "background:#dbe9f6;color:#102a43"
_UNKNOWN_PIECE = "background:#fde2e1;color:#7a1010;border:2px dashed #c62828"


def piece_words(pieces: list[str], n_words: int, mark: str, cut: bool = False
                ) -> list[int | None]:
    """Index of the typed word each piece belongs to (None for tags, </s> and when the pieces
    cannot be matched to the words), grouped by model.backends.word_index with the model's
    word mark (Facts.word_mark).

    ['<2ko>', '▁The', '▁wea', 'ther', '.', '</s>'] with 2 words and "▁" ->
    [None, 0, 1, 1, 1, None]. The count of words must equal n_words (fewer only when the
    sentence was cut)."""
    out = word_index(pieces, mark)
    starts = max((w for w in out if w is not None), default=-1) + 1
    if starts > n_words or (starts < n_words and not cut):
        return [None] * len(pieces)
    return out


def marked_chips_html(pieces: list[str], ids, marked: list[bool]) -> str:
    """Pieces as chips with their ids underneath; marked pieces (of words never seen in
    training) dashed red with a tooltip. Every piece and the tooltip are HTML-escaped."""
    title = html.escape(_("never seen in training"), quote=True)
    chips = []
    for piece, idx, mark in zip(pieces, ids, marked):
        colour = _UNKNOWN_PIECE if mark else (_SPECIAL if is_special(piece) else _PIECE)
        tip = f' title="{title}"' if mark else ""
        chips.append(f'<span style="{_CHIP};{colour}"{tip}>{html.escape(piece)}'
                     f'<sub style="margin-left:4px;color:#555">{int(idx)}</sub></span>')
    return '<div style="line-height:2.2">' + "".join(chips) + "</div>"


def marked_line_html(line: str, flags: list[bool]) -> str:
    """The typed sentence with the words never seen in training marked; all text escaped."""
    title = html.escape(_("never seen in training"), quote=True)
    words = [f'<span style="{UNKNOWN_STYLE}" title="{title}">{html.escape(w)}</span>'
             if flag else html.escape(w) for w, flag in zip(line.split(), flags)]
    return '<div dir="auto" style="line-height:2">' + " ".join(words) + "</div>"


def known_words(ctx: Ctx) -> frozenset[str] | None:
    """The checkpoint's corpus word set, or None (Hugging Face, or no corpus_words.txt)."""
    if not trained_here(ctx.bundle):  # trained on other text than this project's corpus
        return None
    found = key_folder(ctx.key)
    return corpus_words(*found) if found is not None else None


def unknown_in(ctx: Ctx, b: int) -> tuple[list[bool] | None, list[str]]:
    """Per-word flags of sentence b (None when the model has no word list) and the words that
    training never saw."""
    known = known_words(ctx)
    if known is None or b >= len(ctx.lines):
        return None, []
    # imported here: the training corpus modules took 0.6 s of every cold open (issue 40),
    # and only the lab's own checkpoints (with a word list) ever get this far
    from training.knowledge import unknown_flags, unknown_list

    flags = unknown_flags(ctx.lines[b], known)
    return flags, unknown_list(ctx.lines[b], flags)


def warn_unknown(words: list[str]) -> None:
    """One warning naming the words training never saw (nothing when there are none)."""
    if not words:
        return
    listed = ", ".join(f"\u2068{md(w)}\u2069" for w in words[:MAX_LISTED])  # bidi-isolated
    if len(words) > MAX_LISTED:
        listed += " " + _("… ({n} in all)").format(n=len(words))
    text = _("Never seen in training: {words}").format(words=listed)
    st.warning(text + "  \n" + _("The training corpus never contained these words, so "
                                 "the model has no learned meaning for them: a bad "
                                 "translation here is an unknown word, not a model error. "
                                 "See the “What this model knows” view."), icon=":material/search:")


def unknown_notice(ctx: Ctx, b: int) -> list[bool] | None:
    """Warn which words of sentence b training never saw; returns the per-word flags."""
    flags, words = unknown_in(ctx, b)
    warn_unknown(words)
    return flags


def piece_marks(ctx: Ctx, b: int, flags: list[bool] | None) -> list[bool] | None:
    """Which encoder pieces of sentence b belong to a word never seen (None: none marked)."""
    if not flags or not any(flags) or b >= len(ctx.trace.src_tokens):
        return None
    pieces = list(ctx.trace.src_tokens[b])
    words = piece_words(pieces, len(flags), facts(ctx.bundle).word_mark,
                        cut=bool(ctx.trace.src_cut[b]))
    return [w is not None and flags[w] for w in words]


def confidence_notice(bundle: Bundle, result, *, say_when_sure: bool = False) -> bool:
    """Say so when a greedy translation's confidence is below the checkpoint's calibrated
    threshold: its attention then shows a guess, not knowledge. With a combined confidence
    in the card (issue 58, ui/confidence_check.py) it also rings when both checkpoints
    together are unsure of the output (the pair alarm), and names the signals that fired;
    otherwise it reads the geometric mean of model/confidence.py. say_when_sure: when the
    notice stays quiet, print the confidence and the threshold it cleared in a caption, so
    the view shows every output's confidence (the cards' AUROC ranks outputs this way:
    Combination.rank). True when it rang."""
    combined = combined_signals(bundle, result)
    if combined is not None:
        comb, sig = combined
        if comb.margin(sig) >= 0:  # neither alarm: the old measure nor the pair measure
            if say_when_sure:
                st.caption(_("Confidence {c:.0%}: at or above the {t:.0%} that this "
                             "checkpoint's exactly right translations reach, so no unsure "
                             "notice.").format(c=result.confidence, t=comb.old_threshold))
            return False
        # the three signals pulling the score down most, in words
        why = "; ".join(reason_text(n, sig, comb) for n in comb.fired(sig)[:3])
        pair = comb.pair(sig)
        if pair is None or comb.pair_threshold <= 0:  # no partner here: the model alone
            text = _("The model is unsure of this translation: confidence {c:.0%}, below the "
                     "{t:.0%} that its exactly right translations reach. Why: {why}. Read "
                     "its attention as a guess.").format(c=result.confidence,
                                                         t=comb.old_threshold, why=why)
        else:
            text = _("The model is unsure of this translation: confidence {c:.0%} where its "
                     "exactly right translations reach {t:.0%}, and {k:.0%} with the other "
                     "checkpoint's opinion where they reach {kt:.0%}. Why: {why}. Read its "
                     "attention as a guess.").format(c=result.confidence, t=comb.old_threshold,
                                                     k=pair, kt=comb.pair_threshold, why=why)
        st.warning(md(text),
                   icon=":material/help:")
        return True
    limit = threshold(bundle.card)
    if result.confidence >= limit:
        # the sentence names the checkpoint's own calibration, so only where the card has one
        card = bundle.card.get("confidence") if isinstance(bundle.card, dict) else None
        if say_when_sure and isinstance(card, dict) and card.get("threshold") == limit:
            st.caption(_("Confidence {c:.0%}: at or above the {t:.0%} that this "
                         "checkpoint's exactly right translations reach, so no unsure "
                         "notice.").format(c=result.confidence, t=limit))
        return False
    st.warning(_("The model is unsure of this translation: confidence {c:.0%}, below the "
                 "{t:.0%} that its exactly right translations reach. The sentence probably "
                 "uses grammar or words beyond what it was trained on, so read its attention "
                 "as a guess.").format(c=result.confidence, t=limit), icon=":material/help:")
    return True
