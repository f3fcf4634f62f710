"""view=atlas in real Chromium (issue 56): the scatter is drawn with a point per head, and a
click on one point opens that head in the attention view (the link and the head's chart)."""

from __future__ import annotations

import re

from tests.browser.conftest import open_app, wait_for_app
from tests.conftest import ROOT, skip_or_fail

CHART = '[data-testid="stPlotlyChart"]'

# screen point of the atlas point whose customdata names (layer, head), and how many points
_POINT = """([layer, head]) => {
  const gd = [...document.querySelectorAll('.js-plotly-plot')]
    .find(g => g.data && g.data.some(t => t.type === 'scatter' && t.customdata));
  gd.scrollIntoView({block: 'center'});
  let n = 0, hit = null;
  for (const t of gd.data) {
    if (!t.customdata) continue;
    t.customdata.forEach((c, i) => {
      n += 1;
      if (c[0] === layer && c[1] === head) hit = [t.x[i], t.y[i]];
    });
  }
  const fl = gd._fullLayout, box = gd.getBoundingClientRect();
  return [box.left + fl.xaxis._offset + fl.xaxis.l2p(hit[0]),
          box.top + fl.yaxis._offset + fl.yaxis.l2p(hit[1]), n];
}"""


def test_a_click_on_a_head_point_opens_it_in_the_attention_view(page, streamlit_server):
    if not (ROOT / "checkpoints" / "paper" / "model.safetensors").is_file():
        skip_or_fail("checkpoints/paper is not shipped here")
    open_app(page, streamlit_server, ckpt="paper", view="atlas", n=50, place="metrics",
             x="entropy", y="prev_token", colour="layer")
    page.wait_for_function(
        "() => [...document.querySelectorAll('.js-plotly-plot')]"
        ".some(g => g.data && g.data.some(t => t.type === 'scatter' && t.customdata))",
        timeout=180_000)  # the atlas is built first (seconds; longer under load)
    x, y, n = page.evaluate(_POINT, [1, 2])
    assert n == 12  # 3 layers × 4 heads of the first attention kind
    page.mouse.move(x, y)
    page.wait_for_timeout(300)  # plotly's hover (what a click selects) is throttled
    page.mouse.click(x, y)
    page.wait_for_function("() => /view=attention/.test(location.search) && "
                           "/layer=1&head=2/.test(location.search)", timeout=30_000)
    wait_for_app(page)
    title = page.locator(CHART).first.locator("text.gtitle").text_content()
    assert re.search(r"layer 1\D+head 2", title), title
