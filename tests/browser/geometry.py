"""What a person sees on the page, measured in Chromium (issue 59): one script evaluated in the
page does every check, so each view costs one round trip.

    problems(page, min_px) -> list[str]     every failed check, each naming its chart/element
    diverging_tops(page)   -> {chart: colour}  the top colour of every signed (zmid 0) heatmap
    charts_ready(page)     waits until every plotly chart on the page is drawn
    cut_selects(page)      -> list[str]     select boxes (sidebar too) whose chosen text is cut

Checks (sizes are CSS pixels as rendered, zoom included: presenter mode zooms the page 1.5×):
  * every heatmap's image fills >= 80 % of its plot area and lies inside it (the axis ranges
    cover the data: no collapsed strip, no cut-off rows);
  * scatter points, lines and bars span >= COVER of each autoranged axis that has more than
    one value to show (a range widened by a stray shape collapses them into a strip), and
    stay within CUT_PX of the plot area (an axis range that cuts off data);
  * no chart or page text under min_px (9 normally, 16 in presenter mode);
  * no text cut by its container: chart text outside its SVG, an HTML element that hides its
    own overflow (button labels, titles, select boxes), a dataframe wider than its frame, or
    anything past the window's right edge;
  * tick labels along one axis do not overlap;
  * a chart's title is bold exactly once (no bold tspan inside a bold one, issue 59 item 9).
"""

from __future__ import annotations

COVER = 0.5  # scatter and bar marks span at least this share of an autoranged axis
CUT_PX = 8  # a marker may stick out of the plot by its radius, a line or bar by no more

CHECK_JS = r"""([minPx, COVER, CUT_PX]) => {
  const out = [];
  const vw = document.documentElement.clientWidth;
  const zoom = (el) => (el.currentCSSZoom === undefined ? 1 : el.currentCSSZoom);
  const px = (el) => parseFloat(getComputedStyle(el).fontSize) * zoom(el);
  const shown = (el) => {
    const cs = getComputedStyle(el);
    if (cs.display === 'none' || cs.visibility === 'hidden' || cs.opacity === '0') return false;
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0;
  };
  const clear = (c) => c === 'none' || /^rgba\(.*,\s*0\)$/.test(c);
  const ink = (el) => {  // a mark that shows (the click targets are transparent markers)
    const cs = getComputedStyle(el);
    if (parseFloat(cs.opacity) === 0) return false;
    return (!clear(cs.fill) && parseFloat(cs.fillOpacity) > 0) ||
      (!clear(cs.stroke) && parseFloat(cs.strokeOpacity) > 0 && parseFloat(cs.strokeWidth) > 0);
  };
  const inter = (a, b) =>
    Math.max(0, Math.min(a.right, b.right) - Math.max(a.left, b.left)) *
    Math.max(0, Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top));
  const clean = (s) => (s || '').replace(/<\/?(b|i|br|sup|sub|span)[^>]*>/g, ' ')
    .replace(/\s+/g, ' ').trim();
  const short = (s) => clean(s).slice(0, 60);
  const root = document.querySelector('[data-testid="stMain"]') || document.body;
  const plots = [...root.querySelectorAll('.js-plotly-plot')];
  plots.forEach((g, i) => {
    const name = `chart ${i} "${short(((g.layout || {}).title || {}).text) || '(untitled)'}"`;
    const svg = g.querySelector('.main-svg');
    if (!svg) { out.push(`${name}: not drawn`); return; }
    const frame = svg.getBoundingClientRect();
    // heatmaps: the image against its subplot's plot area
    g.querySelectorAll('.cartesianlayer .subplot').forEach((sp) => {
      const id = [...sp.classList].find((c) => c !== 'subplot');
      const drag = g.querySelector(`.draglayer .${id} .nsewdrag`);
      if (!drag) return;
      const area = drag.getBoundingClientRect();
      sp.querySelectorAll('.hm image').forEach((img) => {
        const r = img.getBoundingClientRect();
        const both = inter(r, area);
        const fill = both / Math.max(1, area.width * area.height);
        const inside = both / Math.max(1, r.width * r.height);
        const pc = (v) => (100 * v).toFixed(0);
        if (fill < 0.8) out.push(`${name} ${id}: heatmap fills ${pc(fill)} % of its plot area`);
        if (inside < 0.98) out.push(`${name} ${id}: its axes show ${pc(inside)} % of it`);
      });
      // scatter points and lines, bars: spread over an autoranged axis, inside the plot area
      const full = g._fullLayout || {};
      const marks = [...sp.querySelectorAll('.scatterlayer .trace .points path, '
        + '.scatterlayer .trace path.js-line, .barlayer .trace .point path')]
        .filter((m) => shown(m) && ink(m))
        .map((m) => m.getBoundingClientRect()).filter((r) => r.width + r.height > 0);
      if (!marks.length) return;
      const box = {left: Math.min(...marks.map((r) => r.left)),
                   right: Math.max(...marks.map((r) => r.right)),
                   top: Math.min(...marks.map((r) => r.top)),
                   bottom: Math.max(...marks.map((r) => r.bottom))};
      const pc = (v) => (100 * v).toFixed(0);
      const letters = id.match(/^(x\d*)(y\d*)$/) || [null, 'x', 'y'];
      [[letters[1], 'width', box.right - box.left, area.width],
       [letters[2], 'height', box.bottom - box.top, area.height]
      ].forEach(([ax, side, span, of]) => {
        const axis = full[ax.replace(/^([xy])/, '$1axis')] || {};
        // one value (a flat line, a single point) has no spread to show
        if (axis.autorange && span >= 2 && span < COVER * of)
          out.push(`${name} ${id}: its marks span ${pc(span / of)} % of the plot's ${side}`);
      });
      const cut = Math.max(area.left - box.left, box.right - area.right,
                           area.top - box.top, box.bottom - area.bottom);
      if (cut > CUT_PX) out.push(`${name} ${id}: marks run ${cut.toFixed(0)} px past its axes`);
    });
    // the title: bold exactly once (Streamlit's chart theme wrapped it in <b> twice)
    const title = g.querySelector('.infolayer .gtitle');
    if (title && (title.textContent || '').trim()) {
      const bold = (el) => /^(bold|bolder|[6-9]00)$/.test(el.style.fontWeight ||
                                                          el.getAttribute('font-weight') || '');
      const walker = document.createTreeWalker(title, NodeFilter.SHOW_TEXT);
      let most = 0;
      for (let n = walker.nextNode(); n; n = walker.nextNode()) {
        if (!n.textContent.trim()) continue;
        let levels = 0;
        for (let a = n.parentElement; a; a = a.parentElement) {
          if (bold(a)) levels += 1;
          if (a === title) break;
        }
        most = Math.max(most, levels);
      }
      if (most !== 1) out.push(`${name}: title bold ${most} times over (once expected)`);
    }
    // chart text: size and inside the chart
    const small = [];
    g.querySelectorAll('svg text').forEach((t) => {
      const text = (t.textContent || '').trim();
      if (!text || !shown(t)) return;
      const size = px(t);
      if (size < minPx - 0.01) small.push([size, text]);
      const r = t.getBoundingClientRect();
      if (r.left < frame.left - 1 || r.right > frame.right + 1)
        out.push(`${name}: text "${short(text)}" cut by the chart's edge`);
    });
    if (small.length) {
      small.sort((a, b) => a[0] - b[0]);
      const [size, text] = small[0];
      out.push(`${name}: ${small.length} texts under ${minPx} px, e.g. "${short(text)}"`
               + ` at ${size.toFixed(1)} px`);
    }
    // tick labels of one axis must not overlap
    g.querySelectorAll('.xaxislayer-above, .yaxislayer-above').forEach((layer) => {
      const isX = layer.classList.contains('xaxislayer-above');
      const ticks = [...layer.querySelectorAll('text')]
        .filter((t) => t.textContent.trim() && shown(t))
        .map((t) => ({t, r: t.getBoundingClientRect(), size: px(t),
                      turned: /rotate\((?!0[ ,)])/.test(t.getAttribute('transform') || '')}));
      ticks.sort((a, b) => (isX ? a.r.left + a.r.right - b.r.left - b.r.right
                                : a.r.top + a.r.bottom - b.r.top - b.r.bottom));
      for (let k = 1; k < ticks.length; k++) {
        const a = ticks[k - 1], b = ticks[k];
        let clash;
        if (a.turned || b.turned) {  // slanted labels: their lines must be a line apart
          const d = isX ? (b.r.left + b.r.right - a.r.left - a.r.right) / 2
                        : (b.r.top + b.r.bottom - a.r.top - a.r.bottom) / 2;
          clash = d < 0.9 * Math.min(a.size, b.size);
        } else {
          clash = isX ? a.r.right - b.r.left > 1 : a.r.bottom - b.r.top > 1;
        }
        if (clash) {
          const [u, v] = [short(a.t.textContent), short(b.t.textContent)];
          out.push(`${name}: axis labels "${u}" and "${v}" overlap`);
          break;
        }
      }
    });
  });
  // page text: size, hidden overflow, the window's edge
  const scopes = [root];
  const side = document.querySelector('[data-testid="stSidebar"]');
  if (side && side.getAttribute('aria-expanded') !== 'false' && shown(side)) scopes.push(side);
  for (const scope of scopes) {
    for (const el of scope.querySelectorAll('*')) {
      if (el.closest('svg') || el.closest('.js-plotly-plot')) continue;
      const own = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
      if (!own || !shown(el)) continue;
      const what = `${el.tagName.toLowerCase()} "${short(el.textContent)}"`;
      const size = px(el);
      if (size < minPx - 0.01) out.push(`page text ${what} at ${size.toFixed(1)} px`);
      const r = el.getBoundingClientRect();
      if (scope === root && r.right > vw + 1)
        out.push(`page text ${what} runs past the window's edge`);
      // an element cut by an ancestor that hides overflow (a button, a select, a title)
      for (let a = el; a && a !== scope; a = a.parentElement) {
        const ox = getComputedStyle(a).overflowX;
        if ((ox === 'hidden' || ox === 'clip') && a.scrollWidth > a.clientWidth + 1 &&
            a.clientWidth > 0) {
          const by = `${a.scrollWidth} > ${a.clientWidth} px`;
          out.push(`page text ${what} cut by its container (${by})`);
          break;
        }
      }
    }
  }
  root.querySelectorAll('[data-testid="stDataFrame"]').forEach((df, i) => {
    const r = df.getBoundingClientRect();
    const sc = df.querySelector('.dvn-scroller');
    if (r.right > vw + 1) out.push(`dataframe ${i} runs past the window's edge`);
    else if (sc && sc.scrollWidth > sc.clientWidth + 1)
      out.push(`dataframe ${i} cuts its columns (${sc.scrollWidth} > ${sc.clientWidth} px)`);
  });
  return [...new Set(out)];
}"""

TOPS_JS = r"""() => {
  const out = {};
  const clean = (s) => (s || '').replace(/<\/?(b|i|br|sup|sub|span)[^>]*>/g, ' ')
    .replace(/\s+/g, ' ').trim();
  document.querySelectorAll('[data-testid="stMain"] .js-plotly-plot').forEach((g, i) => {
    (g._fullData || []).forEach((t, j) => {
      if (t.type !== 'heatmap' || !Array.isArray(t.colorscale)) return;
      const signed = t.zmid === 0 || (t.zmin < 0 && Math.abs(t.zmin + t.zmax) < 1e-9);
      if (!signed) return;
      const scale = t.colorscale;
      const top = t.reversescale ? scale[0][1] : scale[scale.length - 1][1];
      out[`${clean(((g.layout || {}).title || {}).text)} #${j}`] = top.replace(/\s+/g, '');
    });
  });
  return out;
}"""

COUNT_JS = """() => {
  const charts = [...document.querySelectorAll(
    '[data-testid="stMain"] [data-testid="stPlotlyChart"]')];
  return [charts.length, charts.filter((c) => c.querySelector('.js-plotly-plot .main-svg')).length];
}"""


def charts_ready(page, timeout_s: float = 60) -> None:
    """Wait until every plotly chart the page mounts is drawn: the count of charts and of
    drawn ones unchanged over 1 s (2 s while there is none yet), all drawn (streamlit mounts
    them one by one after the script, plotly draws each later; a busy machine is slow)."""
    last, same = None, 0
    for _ in range(int(timeout_s / 0.2)):
        now = tuple(page.evaluate(COUNT_JS))
        same = same + 1 if now == last and now[0] == now[1] else 0
        if same >= (5 if now[0] else 10):
            return
        last = now
        page.wait_for_timeout(200)
    raise AssertionError(f"charts never settled: {last} (mounted, drawn) on {page.url}")


def problems(page, min_px: float) -> list[str]:
    """Every failed check on the page as it is now (see the module's docstring)."""
    return page.evaluate(CHECK_JS, [min_px, COVER, CUT_PX])


def diverging_tops(page) -> dict[str, str]:
    """The top colour of every signed heatmap on the page, by chart title and trace."""
    return page.evaluate(TOPS_JS)


SELECTS_JS = r"""() => [...document.querySelectorAll('[data-testid="stSelectbox"]')]
  .map((s) => [s.querySelector('label'), s.querySelector('input')])
  .filter(([label, input]) => input && input.scrollWidth > input.clientWidth)
  .map(([label, input]) => `select "${label ? label.innerText : '?'}": "${input.value}" is `
    + `${input.scrollWidth} px wide in a ${input.clientWidth} px box`)"""


def cut_selects(page) -> list[str]:
    """Every select box, sidebar included, whose chosen option is wider than the box that
    shows it (Streamlit clips it mid-glyph, with no ellipsis): label, value and both widths."""
    return page.evaluate(SELECTS_JS)
