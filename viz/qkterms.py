"""The query–key decomposition (steps view, tour): model.analysis.qk_terms' terms as a bar
chart and as table rows. Pure: numbers in, a plotly Figure or rows out."""

from __future__ import annotations

import plotly.graph_objects as go

from .common import plotly_text, style
from .i18n import N_, _

TERM_NAMES = {"token·token": N_("token·token"), "token·position": N_("token·position"),
              "position·token": N_("position·token"),
              "position·position": N_("position·position"),
              "layers·embedding": N_("earlier layers·embedding"),
              "embedding·layers": N_("embedding·earlier layers"),
              "layers·layers": N_("earlier layers·earlier layers"), "bias": N_("bias"),
              "content q·k": N_("content q·k"),
              "relative-position bias": N_("relative-position bias"),
              "not rotated": N_("not rotated")}


def term_name(term: str) -> str:
    """A term's name in the interface language (frequency bands keep their θ/λ label)."""
    return _(TERM_NAMES[term]) if term in TERM_NAMES else term


def terms_rows(terms: dict[str, float], score: float) -> list[dict]:
    """Rows (term, value, share of |terms|) and a last row with their sum and the score."""
    total = sum(abs(v) for v in terms.values()) or 1.0
    rows = [{_("term"): term_name(t), _("value"): round(v, 4), _("share"): f"{abs(v) / total:.0%}"}
            for t, v in terms.items()]
    rows.append({_("term"): _("sum (recorded score {score:.4f})").format(score=score),
                 _("value"): round(sum(terms.values()), 4), _("share"): ""})
    return rows


def terms_bar(terms: dict[str, float], score: float, query: str, key: str) -> go.Figure:
    """One bar per term (blue adds to the score, red takes from it), in the order given."""
    names = [term_name(t) for t in terms]
    values = list(terms.values())
    value = _("value")
    fig = go.Figure(go.Bar(
        x=values, y=names, orientation="h",
        marker={"color": ["#2166ac" if v >= 0 else "#b2182b" for v in values]},
        text=[f"{v:+.3f}" for v in values], textposition="auto",
        hovertemplate="%{y}<br>" + value + " %{x:.4f}<extra></extra>"))
    title = _("Why query “{q}” scores {score:.3f} on key “{k}”: the terms add up to the "
              "score").format(q=plotly_text(query), k=plotly_text(key), score=score)
    style(fig, title, _("contribution to the score"), "", height=140 + 28 * len(values))
    fig.update_yaxes(autorange="reversed")
    return fig
