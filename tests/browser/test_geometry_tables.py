"""Tables as Chromium draws them, in both modes (1280 x 800; presenting, 1280 x 720 with the
main column zoomed 1.5x): every grid (st.dataframe) and HTML table (st.table) lies inside the
box Streamlit gives it and inside the window, a grid shows all its columns (no inner scroll),
an HTML table hides nothing, and on lm's tokens view every chart title ends 2 px above its
plot and no chart's top margin is squeezed by plotly. Before: knows' "but" construction drew
845 px of columns in an 818 px grid; presenting, every grid was drawn 1.5x its column (1560
px from x 120 on a 1280 px window); lm's one-row decoder strips (160 px high) got a 44 px top
margin for a 60 px two-line title. The tour's QK-terms table (step 8) and the attention
view's long-mode detectors table were drawn to x 1680 presenting too; lm's training table is
one of those that were "content" wide (capped at the same 1040 px, so a wide one overflowed).

Cost: eight pages on the session server, and a server with a 1-layer rotary model whose 600
pieces open the long mode for one presenting page (about 80 s)."""

from __future__ import annotations

import pytest

from benchmarks.big_models import WORDS, build
from tests.browser.conftest import open_app, wait_for_app
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

CASES = [("paper", {"view": "knows"}), ("lm", {"view": "tokens"}),
         ("paper", {"view": "tour", "step": "8"}), ("lm", {"view": "training"})]
GRIDS = ('[data-testid="stMain"] [data-testid="stDataFrame"], '
         '[data-testid="stMain"] [data-testid="stTable"]')


def drawn_problems(page, min_px: float) -> list[str]:
    """The tables' and charts' faults on the page as drawn (see the module's docstring)."""
    drawn = page.evaluate(TABLES_JS)
    drawn += [p for p in problems(page, min_px) if "dataframe" in p]
    return drawn + titles_over_plots(page.evaluate(TITLES_JS)) + page.evaluate(SQUEEZED_JS)


@pytest.mark.parametrize("ckpt,query", CASES, ids=lambda c: c if isinstance(c, str)
                         else "-".join(c.values()))
def test_tables_fit_their_column(page, streamlit_server, ckpt, query):
    found = []
    where = " ".join(query.values())
    for mode, (viewport, min_px, extra) in MODES.items():
        page.set_viewport_size(viewport)
        open_app(page, streamlit_server, ckpt=ckpt, **query, **extra)
        charts_ready(page)
        found += [f"{ckpt} {where} ({mode}): {p}" for p in drawn_problems(page, min_px)]
        assert page.locator(GRIDS).count(), f"{ckpt} {where} ({mode}): no table drawn"
    assert not found, "\n".join(found)


LONG_PIECES = 600  # above model.LONG_FROM (520): the attention view draws its long mode


@pytest.fixture(scope="module")
def long_server(streamlit_server_factory, tmp_path_factory):
    root = tmp_path_factory.mktemp("tables_long")
    build(root / "tinylong", "llama", layers=1, heads=1, kv=1, hidden=8,
          positions=LONG_PIECES + 8, ffn=8)
    return streamlit_server_factory({"ATTN_MODELS": str(root), "HF_HUB_OFFLINE": "1",
                                     "OMP_NUM_THREADS": "1"})


def test_long_mode_detectors_table_fits_presenting(page, long_server):
    """Presenting only: normal mode's stretched grid was right (820 px in an 820 px column)."""
    viewport, min_px, extra = MODES["presenter"]
    page.set_viewport_size(viewport)
    open_app(page, long_server, ckpt="tinylong", view="attention", text="the cat", **extra)
    page.get_by_text("Long text: paste or upload").click()
    box = page.get_by_label("Long text", exact=True)
    box.fill(" ".join(WORDS[(i * 7) % len(WORDS)] for i in range(LONG_PIECES - 1)))  # + <s>
    box.press("Control+Enter")
    page.get_by_text(f"Long mode: {LONG_PIECES:,} pieces").wait_for()
    page.locator(GRIDS).first.wait_for()
    wait_for_app(page)
    charts_ready(page)
    found = drawn_problems(page, min_px)
    assert not found, "\n".join(found)
