"""Every view on a 12-layer GPT-2-shaped and a 12-layer Llama-shaped (grouped-query, rotary)
random model in real Chromium: no error box, no exception, no console error, nothing fetched
from outside (the page fixture checks those). Models listed through ATTN_MODELS."""

from __future__ import annotations

from urllib.parse import urlencode

import pytest

from tests.app.test_hf_views import MODELS, build
from tests.browser.conftest import wait_for_app
from tests.unit.test_hf import make_tokenizer
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
