"""The "why" views in real Chromium on the shipped `paper` checkpoint: activation patching
(view=patch: outputs, metric, layer × head maps, attribution, the head picker, a mismatched
pair, hostile text in corrupt=, the Korean page), Heads › Detectors (ranked table, maps, open
a head) and the steps view's query–key terms bar chart. The harness (conftest.py) fails a test
on a console error, a dialog, an exception box or a request leaving localhost.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import expect

from model import capture, load_checkpoint
from model.analysis import qk_terms
from tests.browser.conftest import wait_for_app
from tests.conftest import ROOT
from ui.i18n import translations
from viz.qkterms import term_name

CLEAN, CORRUPT = "The cat eats fish.", "The dog eats fish."
PATCH = {"ckpt": "paper", "view": "patch", "text": CLEAN}
MAIN = '[data-testid="stMain"]'
OPEN = "Open in the attention view"
PAIR = re.compile(r"(enc_self|dec_self|cross) layer (\d+) head (\d+): ([+-]\d\.\d{3})$")
# the ranked picker adds each kind's chance level: ", chance 0.154"
RANKED = re.compile(r"(enc_self|dec_self|cross) · layer (\d+) · head (\d+) · (\d\.\d{3})"
                    r"(?:, chance \d\.\d{3})?$")
# the pickers name kinds in words (issue 39 item 7); the checks read them back as keys
KIND_WORDS = {"encoder self-attention": "enc_self", "decoder self-attention": "dec_self",
              "cross-attention (decoder → encoder)": "cross"}


def keyed(label: str) -> str:
    """A picker's label with the kind in words replaced by its key (enc_self …)."""
    for words, kind in KIND_WORDS.items():
        label = label.replace(words, kind)
    return label
# every plotly chart on the page as drawn: title, axis titles, tick and bar labels from top to
# bottom as they stand on the screen, and each trace's numbers as plotly computed them for
# drawing (calcdata), which is what the cells and bars show
FIGURES_JS = """() => {
const topDown = els => Array.from(els).map(e => [e.getBoundingClientRect().top, e.textContent])
                                      .sort((a, b) => a[0] - b[0]).map(p => p[1]);
return Array.from(document.querySelectorAll(
    '[data-testid="stPlotlyChart"] .js-plotly-plot')).map(g => ({
  drawn: g.querySelector('svg.main-svg') !== null && (g.calcdata || []).length > 0,
  cells: g.querySelectorAll('.hm image').length,
  title: (g.layout.title || {}).text || '',
  meta: g.layout.meta || null,
  axes: Array.from(g.querySelectorAll('.xtitle, .ytitle')).map(t => t.textContent),
  xticks: Array.from(g.querySelectorAll('.xtick text')).map(t => t.textContent),
  yticks: topDown(g.querySelectorAll('.ytick text')),
  bartext: topDown(g.querySelectorAll('.bartext')),
  traces: (g.calcdata || []).map(c => ({type: c[0].trace.type, name: c[0].trace.name,
                                        z: c[0].z || null, sizes: c.map(p => p.s)})),
}));
}"""
MARKUP_JS = """() => {
  const roots = ['stMain', 'stSidebar'].map(id => document.querySelector(`[data-testid=${id}]`));
  const q = s => roots.filter(Boolean).flatMap(r => Array.from(r.querySelectorAll(s)));
  return {images: q('img').length, scripts: q('script').length, iframes: q('iframe').length,
          handlers: q('[onerror],[onload],[onclick]').length,
          jsLinks: q('a[href^="javascript"]').length,
          bold: q('strong,b').filter(e => e.textContent.trim() === 'bold').length,
          pwned: window.__pwned === undefined ? null : String(window.__pwned)};
}"""
NOTHING_RAN = {"images": 0, "scripts": 0, "iframes": 0, "handlers": 0, "jsLinks": 0, "bold": 0,
               "pwned": None}
HOSTILE = ('<img src=x onerror="window.__pwned=1;alert(1)"></script><script>window.__pwned=2;'
           'alert(2)</script> **bold** 😺👩‍👩‍👧 مرحبا שלום')
TYPED = ('<svg onload="window.__pwned=3;alert(3)"> [link](javascript:alert(4)) \u202eevil\u202c '
         '🇰🇷 </textarea><b>bold</b>')
PIECES = {"link": "<0x3C> im g ▁s r c <0x3D>", "typed": "<0x3C> s v g ▁on"}


@pytest.fixture(scope="module")
def server(streamlit_server):
    """The app on the shipped checkpoints (one server for the whole test session)."""
    return streamlit_server


def load(page, base: str, **query) -> None:
    """Open a link and wait for its run (a first exact sweep takes a while on a busy machine)."""
    page.goto(f"{base}/?{urlencode(query)}", timeout=150_000)
    wait_for_app(page, timeout=150)


def settle(page) -> None:
    page.wait_for_timeout(300)  # let the rerun start before waiting for it to end
    wait_for_app(page, timeout=150)


def figures(page, n: int) -> list[dict]:
    """The page's n plotly charts once every one is drawn (plotly's code loads lazily)."""
    page.wait_for_function(
        """n => { const g = document.querySelectorAll('[data-testid="stPlotlyChart"]');
                  return g.length === n && Array.from(g).every(
                      c => c.querySelector('.js-plotly-plot svg.main-svg')); }""",
        arg=n, timeout=120_000)
    figs = page.evaluate(FIGURES_JS)
    assert all(f["drawn"] for f in figs), [f["title"] for f in figs]
    return figs


def query(page) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(page.url).query).items()}


def combo(page, label: str) -> str:
    """The value shown in a selectbox (a combobox input in this Streamlit), kinds as keys."""
    return keyed(page.get_by_role("combobox", name=label).input_value())


def pick(page, label: str, index: int) -> str:
    """Choose option `index` of a selectbox in the main area; the value it shows then."""
    box = page.locator(MAIN).get_by_role("combobox", name=label)
    options = page.get_by_role("listbox", name=label).get_by_role("option")
    for _try in range(3):  # the list closes again if the page moves under it while opening
        box.locator("xpath=..").get_by_role("button").click()  # the chevron opens the list
        try:
            options.nth(index).wait_for(timeout=5_000)
            options.nth(index).click(timeout=5_000)
            break
        except PlaywrightTimeout:
            page.keyboard.press("Escape")
    else:
        raise AssertionError(f"the list of {label!r} did not open")
    settle(page)
    return combo(page, label)


def strongest(traces: list[dict]) -> tuple[str, int, int, float]:
    """(name, layer, head, value) of the largest |z| cell over the heatmaps."""
    cells = [(t["name"], la, h, v) for t in traces for la, row in enumerate(t["z"])
             for h, v in enumerate(row)]
    return max(cells, key=lambda c: abs(c[3]))


def opens_attention_on(page, kind: str, layer: int, head: int) -> None:
    """The button took the page to the attention view on that head, link included."""
    page.get_by_role("button", name=OPEN).click()
    page.wait_for_function("() => new URL(location.href).searchParams.get('view') === "
                           "'attention'", timeout=60_000)
    settle(page)
    got = query(page)
    assert (got["view"], got["kind"], got["layer"], got["head"]) == (
        "attention", kind, str(layer), str(head)), page.url
    assert combo(page, "Layer") == str(layer)
    page.wait_for_selector('[data-testid="stPlotlyChart"] .js-plotly-plot svg.main-svg',
                           timeout=120_000)


def test_patch_link_draws_switches_to_attribution_and_opens_a_head(page, server):
    load(page, server, **PATCH, corrupt=CORRUPT)
    figs = figures(page, 6)  # heads; residual enc, dec; attention outputs of three kinds
    shown = page.locator(MAIN).inner_text()
    assert "Clean output: 고양이가 생선을 먹어요." in shown
    assert "Corrupted output: 개가 생선을 먹어요." in shown
    assert re.search(r"Metric: logit\(▁고양이\) − logit\(▁개\) at decoder step 0: "
                     r"clean \+\d+\.\d{3}, corrupted -\d+\.\d{3}\.", shown), shown
    heads = figs[0]
    assert "exact patching" in heads["title"]
    # each kind's map carries a scatter of click targets on top (a click opens the head)
    maps = [t for t in heads["traces"] if t["type"] == "heatmap"]
    assert [t["name"] for t in heads["traces"] if t["type"] != "heatmap"] == ["click targets"] * 3
    assert [(t["type"], t["name"]) for t in maps] == [
        ("heatmap", k) for k in ("enc_self", "dec_self", "cross")]
    assert all(len(t["z"]) == 3 and all(len(r) == 4 for r in t["z"]) for t in maps)
    assert heads["cells"] == 3  # each kind's map painted
    resid = [f for f in figs if "Residual stream" in f["title"]]
    assert [("encoder" in f["title"], "decoder" in f["title"]) for f in resid] == [
        (True, False), (False, True)], [f["title"] for f in figs]
    assert "3:▁cat→▁dog" in resid[0]["xticks"] and "1:<2ko>" in resid[0]["xticks"]

    top = PAIR.fullmatch(combo(page, "Head to open"))  # the picker starts on the strongest
    kind, layer, head, value = strongest(maps)
    assert top and top.groups() == (kind, str(layer), str(head), f"{value:+.3f}")
    exact = [t["z"] for t in maps]

    page.locator(MAIN).locator("label").filter(has_text="attribution (gradient").click()
    settle(page)
    page.locator(MAIN).get_by_text("attribution (gradient estimate: 2 forwards + 1 backward), "
                                   ).last.wait_for()
    figs = figures(page, 6)
    assert "attribution patching" in figs[0]["title"] and figs[0]["cells"] == 3
    attribution = {t["name"]: t["z"] for t in figs[0]["traces"] if t["type"] == "heatmap"}
    assert list(attribution.values()) != exact and len(attribution) == 3
    assert query(page)["corrupt"] == CORRUPT  # the link keeps the corrupted sentence
    # the picker keeps the chosen head and shows its number under the new method
    shown = PAIR.fullmatch(combo(page, "Head to open"))
    assert shown and shown.groups()[:3] == top.groups()[:3], combo(page, "Head to open")
    assert shown[4] == f"{attribution[kind][layer][head]:+.3f}", (shown[0], "not the map's")

    second = PAIR.fullmatch(pick(page, "Head to open", 1))
    assert second, combo(page, "Head to open")
    kind, layer, head = second.group(1), int(second.group(2)), int(second.group(3))
    assert second[4] == f"{attribution[kind][layer][head]:+.3f}"
    opens_attention_on(page, kind, layer, head)


def test_patch_mismatched_pair_is_a_message(page, server):
    load(page, server, **PATCH, corrupt="The big dog eats fish.")
    alert = page.locator(f'{MAIN} [data-testid="stAlert"]').inner_text()
    assert "These two sentences cannot be patched" in alert
    # the hint names the words whose pieces differ (issue 39 item 3)
    assert ("the clean one has 7 where the corrupted one has 8. The corrupted sentence has "
            "“big” (pieces: ▁big), “dog” (pieces: ▁dog) where the clean one has “cat” "
            "(pieces: ▁cat)") in alert, alert
    assert page.locator('[data-testid="stPlotlyChart"]').count() == 0
    box = page.locator(MAIN).get_by_role("textbox", name="Corrupted sentence")
    expect(box).to_have_value("The big dog eats fish.", timeout=10_000)


def test_hostile_corrupt_text_shows_literally_and_never_runs(page, server):
    """HTML, </script>, markdown, emoji with joiners and RTL in corrupt=: through the link,
    then other such text typed into the box of the same tab. The box and the link hold it as
    typed, the message lists its pieces as text, `window.__pwned` stays unset, no dialog."""
    box = page.locator(MAIN).get_by_role("textbox", name="Corrupted sentence")
    load(page, server, **PATCH, corrupt=HOSTILE)
    for how, text in (("link", HOSTILE), ("typed", TYPED)):
        if how == "typed":
            box.fill(text)
            box.press("Enter")
            page.wait_for_function("s => new URL(location.href).searchParams.get('corrupt') "
                                   "=== s", arg=text, timeout=60_000)
            settle(page)
        assert page.evaluate(MARKUP_JS) == NOTHING_RAN, how
        expect(box).to_have_value(text, timeout=10_000)
        assert query(page)["corrupt"] == text, how
        alert = page.locator(f'{MAIN} [data-testid="stAlert"]').inner_text()
        assert "the clean one has 7 where the corrupted one has" in alert, alert
        assert PIECES[how].split()[0] in alert, (how, alert)  # the markup's pieces, as text
        assert page.locator('[data-testid="stPlotlyChart"]').count() == 0, how


def test_patch_page_in_korean(page, server):
    load(page, server, **PATCH, corrupt=CORRUPT, lang_ui="ko")
    figs = figures(page, 6)
    ko = translations("ko").gettext
    assert page.locator(f"{MAIN} h1").first.inner_text().strip() == "어텐션 실험실"
    assert figs[0]["axes"] == ["헤드", "층"]
    titles = page.locator('[data-testid="stPlotlyChart"]').first.locator(
        ".annotation-text").all_text_contents()
    assert titles == ["인코더 셀프 어텐션", "디코더 (마스크드) 셀프 어텐션", "인코더-디코더 어텐션"]
    assert figs[1]["axes"] == ["위치", "층"]
    # the view's own labels as the Korean catalogue has them (English until it holds them)
    for label in ("Corrupted sentence (same number of pieces)", "Head to open", OPEN):
        assert page.locator(MAIN).get_by_text(ko(label), exact=True).count() >= 1, ko(label)


def detector_maps(page, n: int, detector: str) -> dict[str, list[list[float]]]:
    """The n drawn maps of one detector, by attention kind (from each figure's meta)."""
    figs = figures(page, n)
    assert [f["meta"]["detector"] for f in figs] == [detector] * n
    assert [f["cells"] for f in figs] == [1] * n and [f["axes"] for f in figs] == [
        ["head", "layer"]] * n
    return {f["meta"]["kind"]: f["traces"][0]["z"] for f in figs}


def test_detectors_rank_draw_and_open_a_head(page, server):
    load(page, server, ckpt="paper", view="heads", text=CLEAN)
    page.locator(MAIN).locator("label").filter(has_text="Detectors").first.click()
    settle(page)
    maps = detector_maps(page, 2, "previous_token")  # the two self-attention kinds
    assert list(maps) == ["enc_self", "dec_self"]
    table = page.locator(f'{MAIN} [data-testid="stDataFrame"] canvas').first
    table.wait_for()
    box = table.bounding_box()
    assert box and box["width"] > 200 and box["height"] > 100, box  # ranked rows painted
    kind, layer, head, value = strongest([{"name": k, "z": z} for k, z in maps.items()])
    top = RANKED.fullmatch(combo(page, "Head (ranked)"))
    assert top and top.groups() == (kind, str(layer), str(head), f"{value:.3f}")

    # another detector: the maps change and the picker's number is that detector's
    page.locator(MAIN).locator("label").filter(has_text="attention sink").first.click()
    settle(page)
    sink = detector_maps(page, 3, "sink")
    shown = RANKED.fullmatch(combo(page, "Head (ranked)"))
    assert shown, combo(page, "Head (ranked)")
    k, la, h = shown[1], int(shown[2]), int(shown[3])
    assert shown[4] == f"{sink[k][la][h]:.3f}", (shown[0], "not the sink map's")

    third = RANKED.fullmatch(pick(page, "Head (ranked)", 2))
    assert third and third[4] == f"{sink[third[1]][int(third[2])][int(third[3])]:.3f}"
    opens_attention_on(page, third[1], int(third[2]), int(third[3]))


def test_steps_draws_the_query_key_terms(page, server):
    """The bars are model.analysis.qk_terms' terms of the first query and key of encoder layer
    0 head 0 (the link's defaults), in order, with their values printed on them."""
    load(page, server, ckpt="paper", view="steps", text=CLEAN, kind="enc_self", layer=0, head=0)
    figs = figures(page, 15)
    terms = figs[-1]
    paper = load_checkpoint(ROOT / "checkpoints" / "paper")
    trace = capture(paper, [CLEAN], target_lang="auto")
    want = qk_terms(paper, trace, "enc_self", 0, 0, 0, 0)
    score = float(trace.scores["enc_self"][0, 0, 0, 0, 0])
    assert "Why query “<2ko>” scores " + f"{score:.3f}" + " on key “<2ko>”" in terms[
        "title"].replace("&lt;", "<").replace("&gt;", ">"), terms["title"]
    assert [t["type"] for t in terms["traces"]] == ["bar"]
    assert terms["yticks"] == [term_name(t) for t in want]
    assert terms["bartext"] == [f"{v:+.3f}" for v in want.values()]
    bars = terms["traces"][0]["sizes"]
    assert max(abs(a - b) for a, b in zip(bars, want.values(), strict=True)) < 1e-5, bars
    assert abs(sum(bars) - score) < 1e-4  # they add up to the recorded score
