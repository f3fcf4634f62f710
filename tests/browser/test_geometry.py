"""What the page draws, as Chromium renders it (issue 59): on the views of `paper`, `lm`, a
GPT-2-small-shaped random folder and the real BERT (checkpoints/minilm, on the session
server), at 1280 × 800 and in presenter mode at 1280 × 720, every heatmap fills its plot,
scatter and bar marks spread over their axes, no text is under 9 px (16 px presenting),
nothing is cut by its container, tick labels do not overlap, every chart title is bold once
(tests/browser/geometry.py does the measuring), and a signed heatmap's top colour is red and
the same in both modes. On paper, lm and minilm every number drawn on a heatmap cell is inside
its cell with a px to spare, and presenting, the attention view's single heatmaps (one heatmap,
alone or under click targets) are no taller than the screen below the header. On every view
each chart's title ends 2 px above its plot area, and gpt2-small's 12-head statistics maps
draw the x ticks 0 ... 11.

Cost: one server per model (paper and lm share the default one), each view opened once per
mode; the views are sampled so that every figure builder the app has is drawn at least once
(the tour's steps reuse the views' builders: 6, 7 and 17 are among those issue 59 found;
the patch page's residual chart is drawn on lm). minilm adds about 27 s (six views); the
sidebar's select boxes about 10 s; lm's attention view presenting about 8 s; paper's
positional and embeddings views (both modes, for their diverging scales and scatter/bar
charts) about 30 s (4 of its 13 visits; 91 s in all); paper's attention, heads and masks
views presenting (for the titles and the grid's cap) about 27 s more (118 s measured)."""

from __future__ import annotations

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from model.backends import MINILM_FOLDER, minilm_status
from tests.browser.conftest import open_app, wait_for_app
from tests.browser.geometry import charts_ready, cut_selects, diverging_tops, problems
from tests.conftest import ROOT, needs

MODES = {"normal": ({"width": 1280, "height": 800}, 9.0, {}),
         "presenter": ({"width": 1280, "height": 720}, 16.0, {"present": "1"})}


def views(*names: str) -> list[dict]:
    """Queries from names: "tour:7" is the tour's step 7, "heads>Detectors" the heads view
    after a click on its "Detectors" part (a radio no link names)."""
    out = []
    for n in names:
        view, _sep, click = n.partition(">")
        query = {"view": "tour", "step": view[5:]} if view.startswith("tour:") else {"view": view}
        out.append({**query, "click": click} if click else query)
    return out


# per model and mode, the views opened (about 8 s each on a busy machine): every figure
# builder at least once, presenter mode where its 1.5x fonts and 720 px height bite
SAMPLE = {
    "paper": {"normal": views("masks", "steps", "heads", "tour:6", "tour:7", "positional",
                              "embeddings", "translation"),
              "presenter": views("steps", "attention", "heads", "heads>Detectors", "masks",
                                 "tour:7", "tour:17", "positional", "embeddings", "translation")},
    "lm": {"normal": views("training", "attention", "patch", "generate", "cache"),
           "presenter": views("training", "attention", "patch", "cache")},  # 25 x 25 map
    "gpt2-small": {"normal": views("attention", "heads", "steps"),
                   "presenter": views("heads", "cache")},  # cache: "7:." met "8:the"
    # the real pretrained BERT (checkpoints/minilm), on the session server that lists it
    "minilm": {"normal": views("tokens", "attention", "similarity", "heads"),
               "presenter": views("attention", "similarity")},
}


# every heatmap of the page (plotly.js's .hm group: its calcdata's grid, its image's box) and
# the boxes of the numbers drawn on it, in client px; the chart's data and drawn height
CELL_BOXES_JS = r"""() => [...document.querySelectorAll('[data-testid="stMain"] .js-plotly-plot')]
  .map((g) => ({
    title: (((g.layout || {}).title || {}).text || '').replace(/<[^>]*>/g, ' ').slice(0, 60),
    single: (g.data || []).filter((t) => t.type === 'heatmap').length === 1 &&
      (g.data || []).every((t) => t.type === 'heatmap' || t.type === 'scatter'),
    height: g.getBoundingClientRect().height,
    maps: [...g.querySelectorAll('.hm')].map((hm) => {
      const z = (((hm.__data__ || [])[0]) || {}).z || [[]];
      const img = hm.querySelector('image');
      const b = img ? img.getBoundingClientRect() : null;
      return {rows: z.length, cols: (z[0] || []).length,
              box: b && [b.left, b.top, b.right, b.bottom],
              labels: [...hm.querySelectorAll('.heatmap-label text')]
                .filter((t) => (t.textContent || '').trim()).map((t) => {
                  const r = t.getBoundingClientRect();
                  return [t.textContent, r.left, r.top, r.right, r.bottom];
                })};
    })}))"""
SPARE_PX = 1.0  # a drawn number's box is at least this much narrower and shorter than its cell


def cell_overflows(charts: list[dict]) -> list[str]:
    """Numbers whose text box is not inside the cell under its centre with SPARE_PX to spare
    across and down (the cell: the heatmap image's box over its grid)."""
    out = []
    for chart in charts:
        for m in chart["maps"]:
            if not m["labels"]:
                continue
            if not m["box"]:
                out.append(f"'{chart['title']}': numbers drawn on no heatmap image")
                continue
            left, top, right, bottom = m["box"]
            cw, ch = (right - left) / max(1, m["cols"]), (bottom - top) / max(1, m["rows"])
            for text, x0, y0, x1, y1 in m["labels"]:
                # the top left corner of the cell under the number's centre
                cx = left + cw * (((x0 + x1) / 2 - left) // cw)
                cy = top + ch * (((y0 + y1) / 2 - top) // ch)
                inside = x0 >= cx and x1 <= cx + cw and y0 >= cy and y1 <= cy + ch
                if not inside or x1 - x0 > cw - SPARE_PX or y1 - y0 > ch - SPARE_PX:
                    out.append(f"'{chart['title']}': '{text}' drawn {x1 - x0:.1f} x "
                               f"{y1 - y0:.1f} px in a {cw:.1f} x {ch:.1f} px cell")
                    break  # one a map is enough to name it
    return out


# every drawn chart of the page: its title's text box bottom and its plot area's top (the
# main svg's top + gd._fullLayout._size.t, scaled to client px), in client px; its meta and
# its x axis's drawn tick labels
TITLES_JS = r"""() => [...document.querySelectorAll('[data-testid="stMain"] .js-plotly-plot')]
  .map((g) => {
    const svg = g.querySelector('.main-svg');
    const box = svg ? svg.getBoundingClientRect() : {top: 0, height: 0};
    const full = g._fullLayout || {};
    const scale = box.height / Math.max(1, full.height || box.height);
    const text = g.querySelector('.g-gtitle .gtitle');
    const drawn = text && (text.textContent || '').trim() && text.getBoundingClientRect();
    return {title: (text ? text.textContent : '').slice(0, 60), shown: box.height > 0,
            bottom: drawn ? drawn.bottom : null,
            plot_top: box.top + ((full._size || {}).t || 0) * scale,
            meta: (g.layout || {}).meta || null,
            xticks: [...g.querySelectorAll('.xtick text')].map((t) => t.textContent)};
  })"""
TITLE_GAP_PX = 2.0  # a title's text box ends at least this far above its plot area


def titles_over_plots(charts: list[dict]) -> list[str]:
    """Charts whose title's text box does not end TITLE_GAP_PX above the plot area's top
    (presenting, the heads view's wrapped definitions ran 34-52 px over the top row)."""
    return [f"'{c['title']}': title box ends {c['bottom'] - c['plot_top']:+.1f} px from the "
            f"plot's top" for c in charts if c["shown"] and c["bottom"] is not None
            and c["bottom"] > c["plot_top"] - TITLE_GAP_PX]


def numbers_drawn(charts: list[dict]) -> list[int]:
    """How many numbers each chart of the page draws on its heatmaps."""
    return [sum(len(m["labels"]) for m in c["maps"]) for c in charts]


def visit(page, base: str, ckpt: str, cells: dict | None = None, titles: dict | None = None
          ) -> tuple[list[str], dict]:
    """Every problem on the sampled views of one model in both modes, each prefixed with the
    view and mode (a chart's title over its plot area among them); and the signed heatmaps'
    top colours per (mode, view). titles: where given, it gets each (mode, view)'s charts as
    TITLES_JS reads them. cells: where given,
    the numbers on heatmap cells are checked too (each inside its cell, with SPARE_PX to
    spare; presenting, the attention view's single heatmap no taller than the screen below
    the header), and it gets each (mode, view)'s charts as CELL_BOXES_JS reads them."""
    found, tops = [], {}
    for mode, (viewport, min_px, extra) in MODES.items():
        page.set_viewport_size(viewport)
        for query in SAMPLE[ckpt][mode]:
            link = {k: v for k, v in query.items() if k != "click"}
            open_app(page, base, ckpt=ckpt, **link, **extra)
            if "click" in query:
                page.get_by_text(query["click"], exact=True).first.click()
                wait_for_app(page)
            charts_ready(page)
            where = " ".join(query.values())
            found += [f"{ckpt} {where} ({mode}): {p}" for p in problems(page, min_px)]
            tops[mode, where] = diverging_tops(page)
            drawn = page.evaluate(TITLES_JS)
            found += [f"{ckpt} {where} ({mode}): {p}" for p in titles_over_plots(drawn)]
            if titles is not None:
                titles[mode, where] = drawn
            if cells is not None:
                charts = cells[mode, where] = page.evaluate(CELL_BOXES_JS)
                found += [f"{ckpt} {where} ({mode}): {p}" for p in cell_overflows(charts)]
                if mode == "presenter" and query["view"] == "attention":
                    found += [f"{ckpt} {where} ({mode}): {p}" for p in too_tall(page, charts)]
    return found, tops


def too_tall(page, charts: list[dict]) -> list[str]:
    """The single heatmaps of the page (one heatmap, alone or under click targets) drawn
    taller than the viewport below Streamlit's header (the presenter cap of 600 px was drawn
    900 px high on a 720 px screen; the every-layer grid, uncapped, 976 px); or that there is
    none."""
    room = page.evaluate("() => innerHeight - document.querySelector("
                         "'[data-testid=\"stHeader\"]').getBoundingClientRect().bottom")
    single = [c for c in charts if c["single"]]
    if not single:
        return ["no single heatmap to measure"]
    return [f"'{c['title']}' drawn {c['height']:.0f} px high, {room:.0f} px below the header"
            for c in single if c["height"] > room + 0.5]


def same_tops(tops: dict) -> list[str]:
    """Views drawn in both modes whose signed heatmaps differ in top colour, or are not red
    at the top (the pages say "red = ..." for the high end)."""
    out = []
    for (mode, where), normal in tops.items():
        if mode != "normal" or ("presenter", where) not in tops:
            continue
        presenter = tops["presenter", where]
        both = [name for name in normal if name in presenter]  # drawn in both modes
        if (normal or presenter) and (not both or any(normal[n] != presenter[n] for n in both)):
            out.append(f"{where}: top colours {normal} normally, {presenter} presenting")
        for name, top in normal.items():
            red, _g, blue = (int(float(v)) for v in top[top.index("(") + 1:-1].split(",")[:3])
            if red <= blue:
                out.append(f"{where}: {name} is not red at the top ({top})")
    return out


@pytest.fixture(scope="module")
def gpt2_small(streamlit_server_factory, tmp_path_factory) -> str:
    """A server listing a random GPT-2-small-shaped folder (768 wide, 12 layers × 12 heads of
    64): the head sizes and grid of the real one, over the tests' word vocabulary."""
    from tests import word_models
    from tests.hf_folders import make_tokenizer

    root = tmp_path_factory.mktemp("geometry_gpt2")
    model, template = word_models.gpt2(768, 12, 12, 1024)
    model.save_pretrained(root / "gpt2-small", safe_serialization=True)
    make_tokenizer(template).save_pretrained(root / "gpt2-small")
    return streamlit_server_factory({"ATTN_MODELS": str(root), "HF_HUB_OFFLINE": "1"})


def test_paper_is_legible_in_both_modes(page, streamlit_server):
    found, tops = visit(page, streamlit_server, "paper", cells={})
    both = ("steps", "tour 7", "positional", "embeddings")  # positional and embeddings drew
    signed = [t for (mode, where), t in tops.items() if where in both and t]  # plotly's RdBu
    if len(signed) != 2 * len(both):  # the colour check must see signed heatmaps in both modes
        found.append(f"signed heatmaps on {', '.join(both)} in both modes: {tops}")
    found += same_tops(tops)
    assert not found, "\n".join(found)


def test_lm_is_legible_in_both_modes(page, streamlit_server):
    """And its attention view's 25 x 25 map writes a number on every cell in normal mode (0.6
    of the font a character took its 25.2 px cells for too narrow: none was drawn)."""
    cells: dict = {}
    found, _tops = visit(page, streamlit_server, "lm", cells=cells)
    first = (cells.get(("normal", "attention")) or [{"maps": []}])[0]
    grid = sum(m["rows"] * m["cols"] for m in first["maps"])
    if not grid or numbers_drawn([first]) != [grid]:
        found.append(f"lm attention (normal): {numbers_drawn([first])} numbers drawn on its "
                     f"first chart's {grid} cells")
    assert not found, "\n".join(found)


def test_gpt2_small_is_legible_in_both_modes(page, gpt2_small):
    """And on its heads view the 12-head statistics maps draw the head numbers 0 ... 11 as x
    tick labels, in both modes (plotly padded the axis for the click targets: -1 ... 12)."""
    titles: dict = {}
    found, tops = visit(page, gpt2_small, "gpt2-small", titles=titles)
    heads = [str(h) for h in range(12)]
    for mode in MODES:
        maps = [c for c in titles.get((mode, "heads"), [])
                if c["shown"] and (c["meta"] or {}).get("metric")]
        if not maps:  # the check must see the statistics maps
            found.append(f"gpt2-small heads ({mode}): no statistics map drawn")
        found += [f"gpt2-small heads ({mode}): '{c['title']}' x ticks {c['xticks']}"
                  for c in maps if c["xticks"] != heads]
    assert not found + same_tops(tops), "\n".join(found + same_tops(tops))


@needs(minilm_status(ROOT / "checkpoints" / MINILM_FOLDER) is None,
       reason="checkpoints/minilm is not installed (make run / make test install it)")
def test_minilm_is_legible_in_both_modes(page, streamlit_server):
    found, tops = visit(page, streamlit_server, "minilm", cells={})
    assert not found + same_tops(tops), "\n".join(found + same_tops(tops))


def test_sidebar_selects_show_their_whole_choice_in_both_languages(page, streamlit_server):
    """The translator's "Translate into" box at the sidebar's default width: its auto option
    was cut mid-glyph in Korean (245 px of text in a 206 px box) and in English (273 px)."""
    found = []
    for lang in ("ko", "en"):
        open_app(page, streamlit_server, ckpt="paper", view="attention", lang_ui=lang)
        labels = page.locator('[data-testid="stSidebar"] [data-testid="stSelectbox"] label')
        try:  # the sidebar may draw after the main page settles (seen after other tests)
            labels.nth(1).wait_for(timeout=60_000)
        except PlaywrightTimeout:
            pass
        if labels.count() < 2:  # the check must see the sidebar's select boxes
            found.append(f"{lang}: only {labels.count()} select boxes in the sidebar")
        found += [f"{lang}: {p}" for p in cut_selects(page)]
    assert not found, "\n".join(found)


# every drawn cell number of the page's heatmaps: its text, its font size and width in CSS
# px (zoom included), and its chart's title and cell size (the heatmap image over its grid)
CELL_LABELS_JS = r"""() => [...document.querySelectorAll('[data-testid="stMain"] .js-plotly-plot')]
  .map((g) => {
    const img = g.querySelector('.hm image');
    const z = ((g._fullData || [])[0] || {}).z || [[]];
    const box = img ? img.getBoundingClientRect() : {width: 0, height: 0};
    return {title: ((g.layout || {}).title || {}).text || '',
            cell: [box.width / Math.max(1, z[0].length), box.height / Math.max(1, z.length)],
            labels: [...g.querySelectorAll('.heatmap-label text')].map((t) => {
              const r = t.getBoundingClientRect();
              const zoom = t.currentCSSZoom === undefined ? 1 : t.currentCSSZoom;
              return [t.textContent, parseFloat(getComputedStyle(t).fontSize) * zoom, r.width];
            })};
  })"""


@needs(minilm_status(ROOT / "checkpoints" / MINILM_FOLDER) is None,
       reason="checkpoints/minilm is not installed (make run / make test install it)")
def test_one_line_token_maps_draw_their_numbers_in_both_modes(page, streamlit_server):
    """The tokens view on one line (viz.common.fit_cell_numbers took its 64 px rows for 10 px
    and dropped them): the ids Hugging Face's tokenizer gives, BERT's positions 0 … n−1 and
    token types 0 are written on the cells, at 12 px (18 px presenting), each inside its
    cell. About 16 s on the session server."""
    from transformers import AutoTokenizer

    from ui.presenter import MIN_PX
    from viz.common import CELL_FONT_PX

    text = "The cat sat."
    ids = [str(i) for i in AutoTokenizer.from_pretrained(
        str(ROOT / "checkpoints" / MINILM_FOLDER))(text)["input_ids"]]
    want = {"input ids": ids, "Position ids": [str(p) for p in range(len(ids))],
            "Token-type": ["0"] * len(ids)}
    found = []
    for mode, size in (("normal", CELL_FONT_PX), ("presenter", MIN_PX)):
        viewport, _min_px, extra = MODES[mode]
        page.set_viewport_size(viewport)
        open_app(page, streamlit_server, ckpt="minilm", view="tokens", text=text, **extra)
        charts_ready(page)
        drawn = page.evaluate(CELL_LABELS_JS)
        for needle, numbers in want.items():
            hits = [c for c in drawn if needle in c["title"]]
            if len(hits) != 1:
                found.append(f"{mode}: {len(hits)} charts titled '{needle}'")
                continue
            labels, (cell_w, _cell_h) = hits[0]["labels"], hits[0]["cell"]
            if [t for t, _px, _w in labels] != numbers:
                found.append(f"{mode} {needle}: drew {[t for t, _p, _w in labels]}, "
                             f"the tokenizer says {numbers}")
            found += [f"{mode} {needle}: '{t}' at {px:.1f} px, {w:.0f} px wide in a "
                      f"{cell_w:.0f} px cell" for t, px, w in labels
                      if abs(px - size) > 0.5 or w > cell_w]
    assert not found, "\n".join(found)


# every drawn point label of the atlas's scatter: its text, the name (layer.head) its point's
# customdata gives, and its box on screen; and how many head points the scatter has
ATLAS_LABELS_JS = r"""() => {
  const gd = [...document.querySelectorAll('.js-plotly-plot')]
    .find((g) => g.data && g.data.some((t) => t.type === 'scatter' && t.customdata));
  if (!gd) return null;
  const labels = [];
  gd.querySelectorAll('.scatterlayer .trace').forEach((tr) => {
    const trace = ((tr.__data__ || [])[0] || {}).trace || {};
    tr.querySelectorAll('.textpoint').forEach((p, k) => {
      const t = p.querySelector('text');
      const text = t ? (t.textContent || '').trim() : '';
      if (!text) return;
      const i = (p.__data__ || {}).i === undefined ? k : p.__data__.i;
      const c = (trace.customdata || [])[i];
      const r = t.getBoundingClientRect();
      labels.push([text, c ? `${c[0]}.${c[1]}` : null, r.left, r.top, r.right, r.bottom]);
    });
  });
  return {labels, points: gd.data.reduce((n, t) => n + (t.customdata || []).length, 0)};
}"""


@pytest.mark.parametrize("ckpt, server", [("lm", "streamlit_server"),
                                          ("gpt2-small", "gpt2_small")])
def test_atlas_point_labels_do_not_overlap_in_both_modes(page, request, ckpt, server):
    """view=atlas, MDS placement, on lm and on the 12 × 12 GPT-2-small-shaped folder (their
    heads cluster; with every label drawn they overlapped): each drawn label names its own
    point, no two drawn labels' boxes meet, and the caption's "k of n" is what was drawn.
    About 20 s a model (the servers are the module's)."""
    import re

    base = request.getfixturevalue(server)
    found = []
    for mode, (viewport, _min_px, extra) in MODES.items():
        page.set_viewport_size(viewport)
        open_app(page, base, ckpt=ckpt, view="atlas", n=50, **extra)
        page.wait_for_function(
            "() => [...document.querySelectorAll('.js-plotly-plot')]"
            ".some(g => g.data && g.data.some(t => t.type === 'scatter' && t.customdata))",
            timeout=180_000)  # the atlas is built first
        charts_ready(page)
        drawn = page.evaluate(ATLAS_LABELS_JS)
        labels = drawn["labels"]
        if not labels:
            found.append(f"{mode}: no point label drawn of {drawn['points']}")
        found += [f"{mode}: label '{t}' on the point of {name}" for t, name, *_r in labels
                  if t != name]
        for k, (t, _n, left, top, right, bottom) in enumerate(labels):
            for u, _m, left2, top2, right2, bottom2 in labels[k + 1:]:
                if min(right, right2) - max(left, left2) > 1 and \
                        min(bottom, bottom2) - max(top, top2) > 1:
                    found.append(f"{mode}: labels '{t}' and '{u}' overlap")
        captions = page.locator('[data-testid="stCaptionContainer"]').all_inner_texts()
        said = re.search(r"labels do not overlap \((\d+) of (\d+)\)", " ".join(captions))
        if not said or (int(said[1]), int(said[2])) != (len(labels), drawn["points"]):
            found.append(f"{mode}: caption says {said and said.groups()}, drawn "
                         f"{len(labels)} of {drawn['points']}")
    assert not found, "\n".join(found)





# each chart of the page: its figure as the app sent it (each heatmap's z as its shape, from
# plotly's own full data; the layout without the width Streamlit sets to the column's), the
# plot area (w, h) and width Chromium drew, and its heatmaps' drawn cell numbers
DRAWN_FIGURES_JS = r"""() => [...document.querySelectorAll(
    '[data-testid="stMain"] .js-plotly-plot')].map((g) => {
    const full = g._fullData || [];
    const data = (g.data || []).map((t, i) => {
      const z = ((full[i] || {}).z) || [[]];
      return Object.assign({}, t, {customdata: null,
        z: t.type === 'heatmap' ? {shape: `${z.length},${(z[0] || []).length}`} : null});
    });
    const layout = Object.assign({}, g.layout || {});
    delete layout.width;
    const size = (g._fullLayout || {})._size || {};
    return {figure: {data, layout}, plot: [size.w, size.h], width: (g._fullLayout || {}).width,
            labels: [...g.querySelectorAll('.heatmap-label text')].map((t) => t.textContent)};
  })"""


def test_the_fitted_width_is_the_drawn_width_in_both_modes(page, streamlit_server):
    """The width the cell-number fitting assumes in each mode (viz.common.SCREEN_W normally,
    ui.presenter.PLOT_WIDTH presenting) gives, through viz.plot_area, a plot within 3 % as
    wide as the one Chromium drew for paper's attention view's full-width heatmap (850 and
    1200 gave 5 % and 19 % more). And presenting, each of the heads view's 3 × 4 maps (two
    to a row) writes its numbers where its drawn cells hold an 18 px one (62 px rows: fitted
    at the layout's height they were taken for 21 px rows and dropped). About 20 s."""
    from ui.presenter import MIN_PX, PLOT_WIDTH
    from viz.common import SCREEN_W, cell_font_px
    from viz.plot_area import plot_area

    found = []
    for mode, width in (("normal", SCREEN_W), ("presenter", PLOT_WIDTH)):
        viewport, _min_px, extra = MODES[mode]
        page.set_viewport_size(viewport)
        open_app(page, streamlit_server, ckpt="paper", view="attention", **extra)
        charts_ready(page)
        full = [c for c in page.evaluate(DRAWN_FIGURES_JS)
                if any(t.get("type") == "heatmap" for t in c["figure"]["data"])]
        if not full:
            found.append(f"{mode}: no heatmap on the attention view")
            continue
        est, drawn = plot_area(full[0]["figure"], width)[0], full[0]["plot"][0]
        if abs(est - drawn) > 0.03 * drawn:
            found.append(f"{mode}: fitted at {width} px the plot is {est:.0f} px wide, drawn "
                         f"{drawn:.0f} px (the chart {full[0]['width']:.0f} px)")
    open_app(page, streamlit_server, ckpt="paper", view="heads", **MODES["presenter"][2])
    charts_ready(page)
    maps = [c for c in page.evaluate(DRAWN_FIGURES_JS) if c["figure"]["data"] and
            c["figure"]["data"][0].get("type") == "heatmap"]
    if len(maps) < 2:
        found.append(f"presenting: {len(maps)} statistic maps on the heads view")
    written = 0
    for c in maps:
        trace = c["figure"]["data"][0]
        rows, cols = (int(n) for n in trace["z"]["shape"].split(","))
        text = [str(v) for row in trace.get("text") or [] for v in row]
        longest = max((len(v) for v in text), default=4)
        fits = cell_font_px(c["plot"][0] / cols, c["plot"][1] / rows, longest, size=MIN_PX,
                            min_px=MIN_PX) is not None
        written += fits
        if fits and (not text or sorted(c["labels"]) != sorted(text)):
            found.append(f"presenting: a {rows} x {cols} map in {c['plot'][0]:.0f} x "
                         f"{c['plot'][1]:.0f} px drew {len(c['labels'])} of its "
                         f"{len(text)} numbers")
    if not written:  # the check must see maps with room for their numbers
        found.append(f"presenting: no map's drawn cells hold an {MIN_PX} px number")
    assert not found, "\n".join(found)
