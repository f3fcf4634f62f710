"""Every view on a 12-layer GPT-2-shaped and a 12-layer Llama-shaped (grouped-query, rotary)
random model in real Chromium: no error box, no exception, no console error, nothing fetched
from outside (the page fixture checks those). Models listed through ATTN_MODELS."""

from __future__ import annotations

from urllib.parse import urlencode

import pytest

from tests.app.test_hf_views import MODELS, build
from tests.browser.conftest import wait_for_app
from tests.hf_folders import make_tokenizer
from ui.views import VIEWS

TEXT = "the cat eats fish every day .\nwinter is cold"
CHART = '[data-testid="stPlotlyChart"]'


def open_app(page, base: str, **query) -> None:
    """conftest.open_app with room for the first load: the server imports transformers and
    loads the model then, which takes minutes on a busy 2-core machine."""
    page.goto(f"{base}/?{urlencode(query)}", timeout=400_000)
    wait_for_app(page, timeout=400)


@pytest.fixture(scope="module")
def server(streamlit_server_factory, tmp_path_factory):
    root = tmp_path_factory.mktemp("hf_browser")
    for name in MODELS:
        model, template = build(name)
        model.save_pretrained(root / name, safe_serialization=True)
        make_tokenizer(template).save_pretrained(root / name)
    return streamlit_server_factory({"ATTN_MODELS": str(root), "HF_HUB_OFFLINE": "1"})


@pytest.mark.parametrize("name", MODELS)
def test_every_view_draws_without_an_error_box(page, server, name):
    for view in VIEWS:
        open_app(page, server, ckpt=name, view=view, text=TEXT, layer=11, head=11)
        errors = page.locator('[data-testid="stAlertContentError"]').all_inner_texts()
        assert not errors, (view, errors)
        assert not page.locator('[data-testid="stException"]').count(), view
        if view in ("attention", "steps", "positional", "embeddings"):
            page.wait_for_selector(CHART, timeout=120_000)  # plotly's code loads lazily


SIMILAR = "A cat sits on the mat.\nA kitten rests on a rug.\nStock markets fell today."
MATRIX_JS = """() => Array.from(document.querySelectorAll(
    '[data-testid="stPlotlyChart"] .js-plotly-plot')).map(g => ({
  title: ((g.layout.title || {}).text || '').replace(/<[^>]+>/g, ''),
  z: Array.from((g._fullData[0] || {}).z || []).map(r => Array.from(r))}))"""


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_similarity_view_on_minilm(page, server, lang):
    """The same server lists checkpoints/ (minilm there once `make` installed it): the drawn
    cosine matrix is model.embed's, the figures are titled in the page's language."""
    import numpy as np

    from model import embed, load_checkpoint
    from model.backends import MINILM_FOLDER, minilm_status
    from tests.conftest import ROOT, skip_or_fail

    folder = ROOT / "checkpoints" / MINILM_FOLDER
    if minilm_status(folder) is not None:
        skip_or_fail(f"{folder} is not installed (make run / make test install it)")
    open_app(page, server, ckpt="minilm", view="similarity", text=SIMILAR, lang_ui=lang)
    page.wait_for_function(
        "() => document.querySelectorAll('[data-testid=\"stPlotlyChart\"] .js-plotly-plot')"
        ".length >= 3", timeout=300_000)
    assert not page.locator('[data-testid="stAlertContentError"]').count()
    figs = page.evaluate(MATRIX_JS)
    v = embed(load_checkpoint(folder), SIMILAR.splitlines())
    np.testing.assert_allclose(np.array(figs[0]["z"], dtype=float), v @ v.T, atol=1e-4)
    hangul = [any("\uac00" <= c <= "\ud7a3" for c in f["title"]) for f in figs[:3]]
    assert hangul == [lang == "ko"] * 3, [f["title"] for f in figs]
