"""Tables as Chromium draws them, in both modes (1280 x 800; presenting, 1280 x 720 with the
main column zoomed 1.5x): every grid (st.dataframe) and HTML table (st.table) lies inside the
box Streamlit gives it and inside the window, a grid shows all its columns (no inner scroll),
an HTML table hides nothing, and on lm's tokens view every chart title ends 2 px above its
plot and no chart's top margin is squeezed by plotly. Before: knows' "but" construction drew
845 px of columns in an 818 px grid; presenting, every grid was drawn 1.5x its column (1560
px from x 120 on a 1280 px window); lm's one-row decoder strips (160 px high) got a 44 px top
margin for a 60 px two-line title.

Cost: four pages on the session server (about 30 s)."""

from __future__ import annotations

import pytest

from tests.browser.conftest import open_app
from tests.browser.geometry import charts_ready, problems
from tests.browser.test_geometry import MODES, TITLES_JS, titles_over_plots

# each grid and HTML table against its element container (the width Streamlit lays it out
# in) and the window; a grid's scroller and a table's wrapper against what they hold
TABLES_JS = r"""() => {
  const vw = document.documentElement.clientWidth;
  const out = [];
  const sel = '[data-testid="stMain"] [data-testid="stDataFrame"], '
    + '[data-testid="stMain"] [data-testid="stTable"]';
  document.querySelectorAll(sel).forEach((el, i) => {
    const kind = el.getAttribute('data-testid');
    const r = el.getBoundingClientRect();
    const box = el.parentElement.getBoundingClientRect();
    const name = `${kind} ${i}`;
    const right = r.right.toFixed(0);
    if (r.right > box.right + 1)
      out.push(`${name}: drawn to x ${right}, its box ends at ${box.right.toFixed(0)}`);
    if (r.right > vw + 1) out.push(`${name}: drawn to x ${right} in a ${vw} px window`);
    const grid = kind === 'stDataFrame';
    const inner = grid ? el.querySelector('.dvn-scroller') : el.querySelector('table');
    const holder = grid ? inner : el;
    if (inner && holder && inner.scrollWidth > holder.clientWidth + 1)
      out.push(`${name}: ${inner.scrollWidth} px of columns in ${holder.clientWidth} px`);
  });
  return out;
}"""

# charts whose top margin plotly.js drew smaller than the figure asks: it does so when the plot
# area would fall under its 64 px floor (minreducedheight), and the title's room goes with it
SQUEEZED_JS = r"""() => [...document.querySelectorAll('[data-testid="stMain"] .js-plotly-plot')]
  .map((g) => g._fullLayout).filter((l) => l && l._size.t < l.margin.t - 0.5)
  .map((l) => `'${(l.title.text || '').slice(0, 50)}': top margin ${l._size.t} of ${l.margin.t} px`
    + ` (plot area ${l._size.h} px)`)"""

CASES = [("paper", "knows"), ("lm", "tokens")]


@pytest.mark.parametrize("ckpt,view", CASES)
def test_tables_fit_their_column(page, streamlit_server, ckpt, view):
    found = []
    for mode, (viewport, min_px, extra) in MODES.items():
        page.set_viewport_size(viewport)
        open_app(page, streamlit_server, ckpt=ckpt, view=view, **extra)
        charts_ready(page)
        drawn = page.evaluate(TABLES_JS)
        drawn += [p for p in problems(page, min_px) if "dataframe" in p]
        drawn += titles_over_plots(page.evaluate(TITLES_JS)) + page.evaluate(SQUEEZED_JS)
        found += [f"{ckpt} {view} ({mode}): {p}" for p in drawn]
        tables = page.locator('[data-testid="stMain"] [data-testid="stDataFrame"], '
                              '[data-testid="stMain"] [data-testid="stTable"]').count()
        assert tables, f"{ckpt} {view} ({mode}): no table drawn"
    assert not found, "\n".join(found)
