"""The charts' look, carried by each figure itself.

Streamlit's own chart theme is not used (the app draws with `theme=None`): Streamlit 1.67's
front end applies it twice to a figure (once when the chart mounts, again in an effect after)
and wraps the title in <b> each time, so every title came out bold inside bold (issue 59).
LOOK gives the figures the look that theme gave them, as Chromium showed it (light theme):
Source Sans, 12 px grey text and 14 px axis titles, 16 px dark titles on the left, white
backgrounds, a light grid across y only. The title is bold once, by its font's weight, never
by markup. LOOK is part of TEMPLATE, the one template every figure gets (base_layout in
viz/common.py sets it, `themed` gives it to the rest), so whatever a figure sets itself still
wins (presenter mode's larger fonts, a figure's own margins).
"""

from __future__ import annotations

import copy
from functools import cache

import plotly.graph_objects as go
import plotly.io as pio

FONT = '"Source Sans", sans-serif'  # the page's own font (Streamlit serves it)
TEXT = "#808495"  # ticks, axis titles, hover text: Streamlit's chart grey
HEADING = "#2F2D2B"  # titles: the page's heading colour
LEGEND = "#262730"  # legend entries: the page's body text
GRID = "#e6eaf1"
BACKGROUND = "#FFFFFF"
TITLE_WEIGHT = "bold"

_TICKS = {"family": FONT, "color": TEXT}
LOOK: dict = {
    "font": {"family": FONT, "size": 12, "color": TEXT},
    "title": {"font": {"family": FONT, "size": 16, "color": HEADING, "weight": TITLE_WEIGHT},
              "x": 0.0, "xanchor": "left", "pad": {"l": 4}},
    # no sizes on legends and ticks: they follow the figure's font (1.5x in presenter mode)
    "legend": {"font": {"color": LEGEND}, "borderwidth": 0, "valign": "top",
               "title": {"font": {"color": TEXT}, "side": "top"}},
    "paper_bgcolor": BACKGROUND,
    "plot_bgcolor": BACKGROUND,
    "margin": {"pad": 8, "l": 0, "r": 0},  # a figure's own margins win
    "hoverlabel": {"bgcolor": BACKGROUND, "bordercolor": "#DCD8D4",
                   "font": {"family": FONT, "size": 12, "color": TEXT}},
    "xaxis": {"showgrid": False, "zeroline": False, "gridcolor": GRID, "zerolinecolor": GRID,
              "tickcolor": GRID, "tickfont": _TICKS, "automargin": True,
              "title": {"font": {"size": 14, "color": TEXT}, "standoff": 20}},
    "yaxis": {"gridcolor": GRID, "zerolinecolor": GRID, "tickcolor": GRID, "tickfont": _TICKS,
              "ticklabelposition": "outside", "automargin": True,
              "title": {"font": {"size": 14, "color": TEXT}, "standoff": 24}},
    "coloraxis": {"colorbar": {"thickness": 16, "len": 0.75, "y": 0.5745,
                               "outlinewidth": 0, "ticklabelposition": "outside"}},
}


def merged(base: dict, over: dict) -> dict:
    """base with over laid on it, nested dicts merged key by key (new dicts, inputs kept)."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merged(out[key], value)
        else:
            out[key] = value
    return out


def _compact_template() -> dict:
    """plotly's default look, kept to the parts these figures use, with LOOK laid over it.

    The full default template carries defaults for two dozen trace types; it is copied into
    every figure and sent with it, which was a fifth of a rerun's server time.
    """
    full = pio.templates["plotly"].to_plotly_json()
    cartesian = ("autotypenumbers", "colorway", "font", "hovermode", "hoverlabel",
                 "paper_bgcolor", "plot_bgcolor", "coloraxis", "xaxis", "yaxis",
                 "shapedefaults", "annotationdefaults", "title")  # no polar/3-D/geo/scales
    data = {k: full["data"][k] for k in ("scatter", "bar")}
    # heatmaps always name their colour scale; only the colour bar's look is kept
    data["heatmap"] = [{"type": "heatmap", "colorbar": full["data"]["heatmap"][0]["colorbar"]}]
    layout = {k: full["layout"][k] for k in cartesian if k in full["layout"]}
    return {"layout": merged(layout, LOOK), "data": data}


TEMPLATE = _compact_template()  # every figure's template (viz.common.base_layout sets it)


@cache
def _built() -> go.layout.Template:
    """TEMPLATE as a plotly object, made once: assigning it to a figure costs ~7 ms, where
    merging LOOK into a figure's own template cost ~130 ms (plotly validates every key)."""
    return go.layout.Template(TEMPLATE)


def has_look(template_layout) -> bool:
    """Whether a template's layout (a dict or plotly object) already carries LOOK."""
    try:
        return (template_layout["font"]["family"] == FONT
                and template_layout["title"]["font"]["weight"] == TITLE_WEIGHT)
    except (KeyError, TypeError, ValueError):
        return False


def themed(fig):
    """fig (a go.Figure or its dict), in place and returned, with TEMPLATE (LOOK) as its
    template where it has another (plotly_white, plotly's or Streamlit's default): every chart
    then looks the same; what the figure sets itself still wins. Figures built on TEMPLATE are
    left alone, so a cached figure drawn again costs nothing."""
    if isinstance(fig, dict):
        layout = fig.setdefault("layout", {})
        template = layout.get("template")
        if not (isinstance(template, dict) and has_look(template.get("layout", {}))):
            layout["template"] = copy.deepcopy(TEMPLATE)  # a spec may be changed later
        return fig
    if not has_look(fig.layout.template.layout):
        fig.layout.template = _built()
    return fig
