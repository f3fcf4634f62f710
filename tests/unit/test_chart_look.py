"""The charts carry their own look (viz.look, issue 59 item 9): the app draws every figure
through one helper with Streamlit's chart theme off, whose front end bolded titles twice."""

from __future__ import annotations

import ast
import json

import plotly.graph_objects as go

from tests.conftest import ROOT
from viz.common import TEMPLATE, heatmap
from viz.look import FONT, LOOK, TITLE_WEIGHT, has_look, themed


def _plotly_calls() -> list[tuple[str, ast.Call]]:
    """(file, call) of every `….plotly_chart(...)` in app.py and ui/."""
    files = [ROOT / "app.py", *sorted((ROOT / "ui").rglob("*.py"))]
    out = []
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr == "plotly_chart":
                out.append((str(path.relative_to(ROOT)), node))
    return out


def test_one_helper_draws_every_chart_with_the_theme_off():
    calls = _plotly_calls()
    assert [f for f, _c in calls] == ["ui/common.py"], calls  # ui.common.chart, nowhere else
    theme = [k.value for _f, c in calls for k in c.keywords if k.arg == "theme"]
    assert len(theme) == 1 and isinstance(theme[0], ast.Constant) and theme[0].value is None


def test_figures_built_on_the_shared_template_have_the_look_already():
    assert has_look(TEMPLATE["layout"])
    fig = heatmap([[0.1, 0.9]], ["a", "b"], ["q"], title="T", x_title="k", y_title="q")
    before = fig.to_json()
    assert themed(fig) is fig and fig.to_json() == before  # nothing to do, nothing done


def test_other_templates_get_the_look_under_what_the_figure_sets():
    fig = go.Figure(go.Scatter(x=[0, 1], y=[1, 2]))
    fig.update_layout(template="plotly_white", title={"text": "Plain", "font": {"size": 30}})
    assert not has_look(fig.layout.template.layout)
    themed(fig)
    tpl = fig.layout.template.layout
    assert tpl.font.family == FONT and tpl.title.font.weight == TITLE_WEIGHT
    assert tpl.paper_bgcolor == LOOK["paper_bgcolor"] == tpl.plot_bgcolor
    assert fig.layout.title.text == "Plain"  # bold by weight, never by markup
    assert fig.layout.title.font.size == 30  # the figure's own setting still wins
    once = fig.to_json()
    themed(fig)
    assert fig.to_json() == once  # a cached figure drawn again is not changed again


def test_a_figure_dict_gets_the_look_too():
    spec = go.Figure(go.Bar(x=["a"], y=[1]), layout={"template": "plotly_white"}).to_dict()
    themed(spec)
    layout = spec["layout"]["template"]["layout"]
    assert layout["font"]["family"] == FONT and layout["title"]["font"]["weight"] == "bold"
    assert layout["xaxis"]["showgrid"] is False  # LOOK laid over plotly_white's own axes
    bare = themed({"data": []})  # no template: plotly's default one, with the look
    assert has_look(bare["layout"]["template"]["layout"])
    assert json.dumps(bare)  # still plain JSON for st.plotly_chart
