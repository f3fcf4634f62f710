"""A click on a head's panel in the attention grid opens that head (issue 39 item 9).

Streamlit's plotly selection gets no events from heatmap cells; viz/click.py lays invisible
markers over the panels. Here the mouse clicks off-centre inside a panel in real Chromium and
the single-head chart, the head picker and the link move to that head; the keyboard path is
the grid's picker, typed into and confirmed with Enter.
"""

from __future__ import annotations

import re

from tests.browser.conftest import open_app, wait_for_app

CHART = '[data-testid="stPlotlyChart"]'
TEXT = "The big dog eats the fish."

# screen point a quarter of the way into panel (row, col) of a tiled heatmap
_PANEL_POINT = """([el, r, c]) => {
  const gd = el.querySelector('.js-plotly-plot');
  const fl = gd._fullLayout, t = fl.meta.tiles;
  const [c0, c1] = t.col_spans[c], [r0, r1] = t.row_spans[r];
  const box = gd.getBoundingClientRect();
  return [box.left + fl.xaxis._offset + fl.xaxis.l2p(c0 + 0.25 * (c1 - c0)),
          box.top + fl.yaxis._offset + fl.yaxis.l2p(r0 + 0.25 * (r1 - r0))];
}"""


def _grid(page):
    page.wait_for_function(
        "s => document.querySelectorAll(s).length === 3 && "
        "document.querySelectorAll(s)[2].querySelector('.js-plotly-plot')", arg=CHART)
    return page.locator(CHART).nth(2)


def _wait_for_link(page, pattern: str) -> None:
    """Streamlit rewrites the query string without a navigation: poll location.search."""
    page.wait_for_function("p => new RegExp(p).test(location.search)", arg=pattern,
                           timeout=20_000)


def _head_title(page) -> str:
    return page.locator(CHART).first.locator("text.gtitle").text_content()


def test_a_click_on_a_panel_or_the_keyboard_opens_that_head(page, streamlit_server):
    open_app(page, streamlit_server, view="attention", text=TEXT, kind="enc_self", layer=0,
             head=0)
    grid = _grid(page)
    grid.scroll_into_view_if_needed()
    x, y = page.evaluate(_PANEL_POINT, [grid.element_handle(), 2, 3])
    page.mouse.move(x, y)
    page.wait_for_timeout(300)  # plotly's hover (what a click selects) is throttled
    page.mouse.click(x, y)
    _wait_for_link(page, "layer=2&head=3")
    wait_for_app(page)
    assert re.search(r"layer 2\D+head 3", _head_title(page)), _head_title(page)
    picker = page.get_by_role("combobox", name="Open a head from the grid")
    assert picker.input_value() == "layer 2, head 3"
    # the keyboard: the grid's picker, typed into and confirmed
    picker.focus()
    page.keyboard.type("layer 1, head 2")
    page.keyboard.press("Enter")
    _wait_for_link(page, "layer=1&head=2")
    wait_for_app(page)
    assert re.search(r"layer 1\D+head 2", _head_title(page)), _head_title(page)


# screen point of cell (layer, head) in the plotly chart whose layout.meta.kind is `kind`
_CELL_POINT = """([kind, layer, head]) => {
  const gd = [...document.querySelectorAll('.js-plotly-plot')]
    .find(g => g._fullLayout.meta && g._fullLayout.meta.kind === kind);
  gd.scrollIntoView({block: 'center'});
  const fl = gd._fullLayout, box = gd.getBoundingClientRect();
  return [box.left + fl.xaxis._offset + fl.xaxis.l2p(head),
          box.top + fl.yaxis._offset + fl.yaxis.l2p(layer)];
}"""


def test_a_click_on_a_detector_map_cell_opens_that_head(page, streamlit_server):
    """The detectors' maps (Heads › Detectors) take the click the same way."""
    open_app(page, streamlit_server, view="heads", text=TEXT, detector="previous_token")
    page.wait_for_function("() => [...document.querySelectorAll('.js-plotly-plot')]"
                           ".some(g => g._fullLayout && g._fullLayout.meta && "
                           "g._fullLayout.meta.kind === 'enc_self')",
                           timeout=120_000)  # the maps come after the ranking, slow under load
    x, y = page.evaluate(_CELL_POINT, ["enc_self", 1, 2])
    page.mouse.move(x, y)
    page.wait_for_timeout(300)
    page.mouse.click(x, y)
    _wait_for_link(page, "view=attention")
    _wait_for_link(page, "kind=enc_self&layer=1&head=2")
    wait_for_app(page)
    assert re.search(r"layer 1\D+head 2", _head_title(page)), _head_title(page)
