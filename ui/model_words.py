"""Sentences about the model on screen, chosen from its facts (model.backends.Facts).

A view, the tour or the app asks here rather than writing one model's words: the tokenizer
and its word mark, the specials framing a sentence, what the mask adds, what pads get, what
an effect is measured in, and the notes on typed text (cut at the position limit, longer
than the model was trained for, in a language its vocabulary lacks).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from model import Bundle, Trace
from model.backends import Facts, facts
from model.segments import is_pair
from ui.i18n import N_, _
from ui.text import KIND_LABELS

TOKENIZERS = {  # Facts.tokenizer -> how its pieces are named
    "sentencepiece": N_("SentencePiece pieces (▁ marks a word start)"),
    "wordpiece": N_("WordPiece pieces (## marks a piece that continues a word)"),
    "byte_bpe": N_("byte-level BPE pieces (Ġ stands for the space before a word)"),
}
ROLES = {"start": N_("start"), "separator": N_("separator"), "bos": N_("beginning"),
         "eos": N_("end"), "language": N_("target-language tag"), "pad": N_("padding"),
         "unknown": N_("unknown piece"), "mask": N_("masked-out piece")}
HANGUL = re.compile(r"[\uac00-\ud7a3]")
JAMO = re.compile(r"^(##)?[\u1100-\u11ff\u3130-\u318f]$")


def fill_label(f: Facts) -> str:
    """The mask's fill as a cell shows it: -1e9, or the dtype's minimum (-3.4e38)."""
    if f.mask_fill == "-1e9":
        return "-1e9"
    mantissa, exp = f"{f.mask_fill_value:.1e}".split("e")
    return f"{mantissa}e{int(exp)}"


def fill_words(f: Facts) -> str:
    """What blocked cells are set to, in words."""
    if f.mask_fill == "-1e9":
        return "-1e9"
    return _("the dtype's minimum ({value})").format(value=fill_label(f))


def pieces_caption(bundle: Bundle, trace: Trace) -> str:
    """How a sentence becomes pieces on this model: tokenizer, framing specials, padding."""
    f = facts(bundle)
    what = _(TOKENIZERS[f.tokenizer]) if f.tokenizer in TOKENIZERS else _("pieces")
    roles = dict(f.specials)
    first = next((p for p in trace.src_tokens if p), None) or next(
        (p for p in trace.tgt_tokens if p), [])
    ends = [p for p in (first[:1] + first[-1:]) if p in roles] if first else []
    if len(ends) == 2 and ends[0] != ends[1]:
        frame = _(", framed by {a} ({ra}) and {b} ({rb})").format(
            a=ends[0], ra=_(ROLES.get(roles[ends[0]], roles[ends[0]])),
            b=ends[1], rb=_(ROLES.get(roles[ends[1]], roles[ends[1]])))
    elif ends:
        frame = _(", with {a} ({ra})").format(a=ends[0],
                                              ra=_(ROLES.get(roles[ends[0]], roles[ends[0]])))
    else:
        frame = ""
    return _("Each sentence is cut into {what}{frame}, and padded with id {pad} to the longest "
             "sentence in the batch.").format(what=what, frame=frame, pad=trace.pad_id)


def pads_sentence(f: Facts) -> str:
    """What the pad slots get as positions."""
    if f.pad_positions == "counted" and f.positional in ("learned", "sinusoidal"):
        return _("Pad slots are numbered on like every other slot (this model adds a position "
                 "row to them too); the mask keeps every query from reading them.")
    if f.pad_positions == "counted":  # rotary: their keys are turned by those positions
        return _("Pad slots are numbered on like every other slot; the mask keeps every query "
                 "from reading them.")
    if f.pad_positions == "pad_row":
        return _("Pad slots read the position table's reserved pad row; the mask keeps every "
                 "query from reading them.")
    return _("Pad slots get no position (−1 in the chart): the mask keeps every query from "
             "reading them.")


def separator_piece(f: Facts) -> str | None:
    """The piece that separates a pair's two segments ([SEP]), where the model types them."""
    if not f.token_types:
        return None
    return next((p for p, role in f.specials if role == "separator"), None)


def pair_sentence(f: Facts, pairs: Sequence[int]) -> str | None:
    """How a pair is typed and what its segments get; `pairs`: 1-based lines typed as pairs."""
    sep = separator_piece(f)
    if sep is None:
        return None
    if pairs:
        return _("Line(s) {lines} hold a pair “A {sep} B”: the model adds token-type row 0 to "
                 "A's pieces and the first {sep}, row 1 to B's and the last {sep} (the chart "
                 "row above); every other line is one segment, all 0.").format(
            lines=", ".join(map(str, pairs)), sep=sep)
    return _("Token-type (segment) ids: 0 for every piece of these lines, each read as one "
             "segment (the chart row above). Type “A {sep} B” in one line to encode a pair: "
             "B's pieces then get 1.").format(sep=sep)


def token_types_sentence(f: Facts, tokens: Sequence[Sequence[str]]) -> str | None:
    """The token-type (segment) ids this model adds to the lines' pieces (`tokens`, one list
    per line), or None without a token-type embedding."""
    sep = separator_piece(f)
    if sep is None:
        return None
    pairs = [b + 1 for b, pieces in enumerate(tokens) if is_pair(pieces, sep)]
    if pairs:
        return _("Token-type (segment) ids: line(s) {lines} hold a pair “A {sep} B”, so the "
                 "model adds its token-type row 0 to A's pieces and the first {sep} and row 1 "
                 "to B's; every piece of the other lines gets row 0.").format(
            lines=", ".join(map(str, pairs)), sep=sep)
    return _("Token-type (segment) ids: 0 for every piece of these {n} line(s), each read as "
             "one segment; the model adds its token-type embedding row 0 to every piece (a "
             "pair “A {sep} B” typed in one line would give B's pieces 1).").format(
        n=len(tokens), sep=sep)


def kinds_help(kinds: Sequence[str]) -> str:
    """The attention kinds this model has, as the link writes them."""
    parts = ", ".join(f"{k} = {_(KIND_LABELS[k])}" for k in kinds if k in KIND_LABELS)
    return _("The kinds as the link writes them: {kinds}.").format(kinds=parts)


POOLED = {  # Facts.pooling -> what one sentence's vector is
    "mean": N_("the mean of its last-layer piece vectors"),
    "cls": N_("the first piece's last-layer vector"),
    "max": N_("the largest value of each dimension over its last-layer piece vectors"),
}


def embedding_words(f: Facts) -> str:
    """What a sentence-embedding model outputs, in a phrase: its pooling and normalisation."""
    how = _(POOLED[f.pooling]) if f.pooling in POOLED else _("one pooled vector")
    return _("one vector per line, {how}{normalised}").format(
        how=how, normalised=_(", then scaled to length 1") if f.normalize else "")


def effect_words(f: Facts) -> dict[str, str]:
    """Labels of a knock-out's effect: log-probability in nats for a model that writes pieces,
    a change in cosine for a sentence-embedding model, the relative change of the last hidden
    states for another encoder."""
    if f.effect_unit == "nats":
        return {"unit": "nats", "delta": _("Δ loss (nats)"), "short": _("Δ loss")}
    if f.effect_unit == "cosine":
        return {"unit": "", "delta": _("Δ cosine"), "short": _("Δ cosine")}
    return {"unit": "", "delta": _("‖Δh‖/‖h‖"), "short": _("relative change")}


def input_notes(bundle: Bundle, trace: Trace, lines: Sequence[str]) -> list[str]:
    """Warnings on the typed text: pieces cut at the position limit, lines longer than the
    model was trained for, and Korean typed into a vocabulary without it."""
    f = facts(bundle)
    notes = []
    for i, cut in enumerate(trace.src_cut):
        if cut:
            notes.append(_("Sentence {i} was too long: {cut} piece(s) were cut to fit the "
                           "model's {n} positions.").format(i=i + 1, cut=cut,
                                                            n=f.max_positions))
    if f.trained_length:
        long = [i + 1 for i, p in enumerate(trace.src_tokens) if len(p) > f.trained_length]
        if long:
            notes.append(_("Sentence(s) {lines} hold more than the {n} pieces this model was "
                           "trained on (its position limit is {m}): it reads them, but past "
                           "piece {n} it is outside what it learned.").format(
                lines=", ".join(map(str, long)), n=f.trained_length, m=f.max_positions))
    if "ko" not in f.languages and any(HANGUL.search(x) for x in lines):
        notes.append(korean_note(f, trace, lines))
    return notes


def korean_note(f: Facts, trace: Trace, lines: Sequence[str]) -> str:
    """How Korean fares in a vocabulary without Korean: pieces that are [UNK] or one jamo."""
    unknown = {p for p, role in f.specials if role == "unknown"}
    korean = [b for b, line in enumerate(lines) if HANGUL.search(line)]
    pieces = [p for b in korean if b < len(trace.src_tokens) for p in trace.src_tokens[b]]
    lost = sum(p in unknown or bool(JAMO.match(p)) for p in pieces)
    return _("This model's vocabulary has no Korean: of the {m} pieces of the line(s) with "
             "Korean, {n} are {unk}single letters (jamo). Its attention on them says little; "
             "type English for this model.").format(
        m=len(pieces), n=lost, unk=_("unknown ({p}) or ").format(p=", ".join(sorted(unknown)))
        if unknown else "")
