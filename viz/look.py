"""The charts' look, carried by each figure itself.

Streamlit's own chart theme is not used (the app draws with `theme=None`): Streamlit 1.67's
front end applies it twice to a figure (once when the chart mounts, again in an effect after)
and wraps the title in <b> each time, so every title came out bold inside bold (issue 59).
LOOK gives the figures the look that theme gave them, as Chromium showed it (light theme):
Source Sans, 12 px grey text and 14 px axis titles, 16 px dark titles on the left, white
backgrounds, a light grid across y only. The title is bold once, by its font's weight, never
by markup. LOOK goes under a figure's template, so whatever a figure sets itself still wins
(presenter mode's larger fonts, a figure's own margins).
"""

from __future__ import annotations

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


def has_look(template_layout) -> bool:
    """Whether a template's layout (a dict or plotly object) already carries LOOK."""
    try:
        return (template_layout["font"]["family"] == FONT
                and template_layout["title"]["font"]["weight"] == TITLE_WEIGHT)
    except (KeyError, TypeError, ValueError):
        return False


def themed(fig):
    """fig (a go.Figure or its dict) with LOOK laid over its template's layout, in place, and
    returned. Figures built on viz.common.TEMPLATE have it already and are left alone, so a
    cached figure drawn again costs nothing."""
    if isinstance(fig, dict):
        layout = fig.setdefault("layout", {})
        template = layout.get("template")
        if not isinstance(template, dict):  # a template's name, or none: plotly's default
            name = template if isinstance(template, str) else pio.templates.default
            template = pio.templates[name].to_plotly_json()
        if not has_look(template.get("layout", {})):
            template = {**template, "layout": merged(template.get("layout", {}), LOOK)}
        layout["template"] = template
        return fig
    if not has_look(fig.layout.template.layout):
        fig.layout.template.layout.update(LOOK)
    return fig
