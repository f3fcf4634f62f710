"""Head detectors (heads view): a ranked table and a layers × heads map per detector, with the
sink's place (first position, a special piece, punctuation) per head.

Pure functions: model.analysis.detect_heads' {detector: {kind: (L, H)}} in, rows or plotly
Figures out.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from .common import SEQUENTIAL, cell_text, plotly_text, style
from .i18n import N_, _
from .masks import kind_name

DETECTOR_NAMES = {"previous_token": N_("previous token"), "next_token": N_("next token"),
                  "duplicate_token": N_("duplicate token"), "induction": N_("induction"),
                  "punctuation": N_("punctuation"), "sink": N_("attention sink"),
                  "positional": N_("positional")}
DETECTOR_DEFINITIONS = {
    "previous_token": N_("mean weight on the position just before the query"),
    "next_token": N_("mean weight on the position just after the query, over queries whose "
                     "next piece is real (a causal head never sees it)"),
    "duplicate_token": N_("mean weight on other copies of the query's own token (earlier "
                          "copies in causal attention), over queries that have one"),
    "induction": N_("on a repeated random token sequence, mean weight from each token of the "
                    "second copy to the token after its first copy"),
    "punctuation": N_("mean share of attention on punctuation pieces (. , ? ! \" …), over "
                      "queries that see at least one"),
    "sink": N_("largest mean share of attention on one place: the first position, one special "
               "token (BOS, </s>, [SEP] …) or the punctuation pieces together; the table "
               "names the place"),
    "positional": N_("how much of each attention row stays on the same keys when the tokens "
                     "are shuffled and the positions kept, beyond an even spread; attention "
                     "on special tokens or the first position does not count, and a head "
                     "with over half its attention there is a sink head and scores 0: 1 = "
                     "by position alone, 0 = even, on a sink, or following the words"),
}
FIRST, PUNCTUATION = "first position", "punctuation"  # model.analysis.detector_scores' places


def place_label(place: str, first_piece: str = "") -> str:
    """A sink place in words: 'first position ([CLS])', 'punctuation', or the special piece
    itself ('[SEP]')."""
    if place == FIRST:
        return _("first position") + (f" ({first_piece})" if first_piece else "")
    if place == PUNCTUATION:
        return _("punctuation")
    return str(place)


def ranked_rows(scores: dict[str, np.ndarray], top: int | None = None,
                chance: dict[str, float] | None = None, places: dict | None = None,
                first_piece: dict[str, str] | None = None) -> list[dict]:
    """Table rows (attention, layer, head[, chance], score[, place]), highest score first; NaN
    left out. chance: per kind, what a uniform head scores on the same rows (model.analysis.
    detectors.chance_levels), shown beside each score. places: per kind, the sink's (L, H)
    place names (Detected.sink_place), shown after the score."""
    rows = [(kind, layer, head, float(a[layer, head]))
            for kind, a in scores.items() for layer in range(a.shape[0])
            for head in range(a.shape[1]) if np.isfinite(a[layer, head])]
    rows.sort(key=lambda r: -r[3])
    rows = rows[:top] if top else rows
    out = []
    for k, layer, head, s in rows:
        row = {_("attention"): kind_name(k), _("layer"): layer, _("head"): head}
        if chance is not None:
            level = chance.get(k)
            row[_("chance (uniform head)")] = (round(level, 3) if level is not None
                                                and np.isfinite(level) else None)
        row[_("score")] = round(s, 3)
        if places is not None and k in places:
            row[_("place")] = place_label(places[k][layer, head], (first_piece or {}).get(k, ""))
        out.append({**row, "_head": (k, layer, head)})
    return out


def is_empty(scores: np.ndarray) -> bool:
    """True when no head has a score: the detector counted no row of this input for the kind
    (a heat map of it would be an empty frame)."""
    return not np.isfinite(np.asarray(scores, dtype=np.float64)).any()


def chance_note(chance: float | None) -> str:
    """', chance 0.143' for a label, '' when there is no chance level."""
    if chance is None or not np.isfinite(chance):
        return ""
    return _(", chance {level:.3f}").format(level=chance)


def detector_heatmap(scores: np.ndarray, kind: str, detector: str,
                     chance: float | None = None, places: np.ndarray | None = None,
                     first_piece: str = "") -> go.Figure:
    """One kind's (L, H) scores of one detector on a fixed 0..1 scale, the value in each cell;
    the title gives the chance level (a uniform head's score) when known; `places` (the sink's
    (L, H) place names) join each cell's hover.
    meta names the kind and detector, so a clicked cell names its head."""
    z = np.asarray(scores, dtype=np.float64)
    if z.ndim != 2:
        raise ValueError(f"expected a (layers, heads) array, got shape {z.shape}")
    n_l, n_h = z.shape
    name = _(DETECTOR_NAMES.get(detector, detector))
    hover = kind_name(kind) + " " + _("layer") + " %{y} " + _("head") + " %{x}"
    extra = {}
    if places is not None:
        extra["customdata"] = [[plotly_text(place_label(p, first_piece)) for p in row]
                               for row in np.asarray(places)]
        hover += "<br>" + _("place") + ": %{customdata}"
    fig = go.Figure(go.Heatmap(
        z=z, x=np.arange(n_h), y=np.arange(n_l), colorscale=SEQUENTIAL[0], zmin=0.0, zmax=1.0,
        colorbar_title=name, text=cell_text(z), texttemplate="%{text}" if z.size <= 400 else "",
        hovertemplate=hover + f"<br>{name} %{{z:.3f}}<extra></extra>", **extra))
    definition = plotly_text(_(DETECTOR_DEFINITIONS[detector])) \
        if detector in DETECTOR_DEFINITIONS else ""
    level = plotly_text(_("chance (uniform head) {level:.3f}").format(level=chance)) + "; " \
        if chance is not None and np.isfinite(chance) else ""
    style(fig, f"{kind_name(kind)}: {name}<br><sup>{level}{definition}</sup>", _("head"),
          _("layer"), height=max(220, 110 + min(36, 480 // max(n_l, 1)) * n_l))
    fig.update_xaxes(dtick=1 if n_h <= 16 else None)
    fig.update_yaxes(dtick=1 if n_l <= 16 else None, autorange="reversed")
    fig.update_layout(meta={"kind": kind, "detector": detector, "chance": chance})
    return fig
