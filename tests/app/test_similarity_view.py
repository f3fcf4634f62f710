"""view=similarity on checkpoints/minilm: the drawn matrix, token terms and head maps against
model.embed computed here (with the URL's knocked-out heads), in English and Korean; and the
reason shown on a model without sentence embeddings."""

from __future__ import annotations

import numpy as np
import pytest

from model import embed, load_checkpoint
from model.backends import MINILM_FOLDER
from tests.app.conftest import run_app
from tests.app.test_i18n import HANGUL, untranslated
from tests.app.test_views import texts
from tests.chartdata import array, charts, title
from tests.conftest import ROOT, installed_minilm

LINES = ["A cat sits on the mat.", "A kitten rests on a rug.", "Stock markets fell today."]
TEXT = "\n".join(LINES)
MINILM = ROOT / "checkpoints" / MINILM_FOLDER
OUT = "enc_self:5:11"


@pytest.fixture(scope="module")
def minilm():
    installed_minilm()
    return load_checkpoint(MINILM)


def cosines(v: np.ndarray) -> np.ndarray:
    v = v.astype(np.float64)
    v = v / np.linalg.norm(v, axis=1, keepdims=True)
    return v @ v.T


def test_similarity_view_draws_what_embed_computes(minilm):
    at = run_app({"ckpt": "minilm", "view": "similarity", "text": TEXT, "ablate": OUT},
                 timeout=240)
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, texts(at.error)
    figs = charts(at)
    assert len(figs) == 3, [title(f) for f in figs]
    out = {("enc_self", 5, 11)}
    vectors = embed(minilm, LINES, ablate=out)
    want = cosines(vectors)
    drawn = array(figs[0]["data"][0]["z"]).astype(np.float64)
    np.testing.assert_allclose(drawn, want, atol=1e-5)
    # the knocked-out head matters: without it the matrix differs
    assert np.abs(cosines(embed(minilm, LINES)) - drawn).max() > 1e-4
    terms = array(figs[1]["data"][0]["z"]).astype(np.float64)  # lines 1 and 2 by default
    assert abs(terms.sum() - want[0, 1]) < 1e-4
    exact = array(figs[2]["data"][0]["z"]).astype(np.float64)  # (L, H), NaN: already out
    assert exact.shape == (6, 12) and np.isnan(exact[5, 11])
    for layer, head in [(0, 2), (5, 3)]:
        v = embed(minilm, LINES[:2], ablate=out | {("enc_self", layer, head)})
        assert abs(exact[layer, head] - (float(v[0] @ v[1]) - want[0, 1])) < 1e-4
    page = texts(at.markdown) + texts(at.caption)
    assert f"{want[0, 1]:.4f}" in page
    assert "“cat” ↔ “kitten”" in page  # the words that make the two lines alike


def test_similarity_view_in_korean(minilm):
    at = run_app({"ckpt": "minilm", "view": "similarity", "text": TEXT, "lang_ui": "ko"},
                 timeout=240)
    assert not at.exception, [e.value for e in at.exception]
    assert not untranslated(at), untranslated(at)
    titles = [title(f) for f in charts(at)]
    assert len(titles) == 3 and all(HANGUL.search(t) for t in titles), titles


def test_a_model_without_sentence_embeddings_says_what_it_needs():
    at = run_app({"ckpt": "paper", "view": "similarity", "text": TEXT}, timeout=120)
    assert not at.exception, [e.value for e in at.exception]
    shown = texts(at.info) + texts(at.warning) + texts(at.markdown) + texts(at.caption)
    assert "sentence-embedding model" in shown
    assert not charts(at)


def test_without_the_install_the_page_says_how_to_get_it(tmp_path, monkeypatch):
    (tmp_path / "paper").symlink_to(ROOT / "checkpoints" / "paper")
    monkeypatch.setenv("ATTN_CHECKPOINTS_DIR", str(tmp_path))
    at = run_app({"ckpt": "paper", "view": "similarity", "text": TEXT}, timeout=120)
    assert not at.exception, [e.value for e in at.exception]
    shown = texts(at.info) + texts(at.warning) + texts(at.markdown) + texts(at.caption)
    assert "not installed" in shown and "make run" in shown, shown
    at = run_app({"ckpt": "paper", "view": "tokens", "text": TEXT}, timeout=120)
    assert not at.exception and not at.error  # everything else works


def test_the_pair_comes_from_the_link_and_goes_back_into_it(minilm):
    at = run_app({"ckpt": "minilm", "view": "similarity", "text": TEXT, "pair": "1,3"},
                 timeout=240)
    assert not at.exception, [e.value for e in at.exception]
    v = embed(minilm, LINES)
    terms = array(charts(at)[1]["data"][0]["z"]).astype(np.float64)
    assert abs(terms.sum() - float(v[0] @ v[2])) < 1e-4  # lines 1 and 3, not the default 1, 2
    assert at.query_params["pair"] in ("1,3", ["1,3"])


def test_an_unverified_minilm_is_not_offered(minilm, tmp_path, monkeypatch):
    """A folder unpacked by hand (no marker from make) is left out of the picker, and the page
    says how to get the verified one."""
    (tmp_path / "paper").symlink_to(ROOT / "checkpoints" / "paper")
    copy = tmp_path / MINILM_FOLDER
    copy.mkdir()
    for item in MINILM.iterdir():
        if not item.name.startswith("."):  # everything but the install marker
            (copy / item.name).symlink_to(item)
    monkeypatch.setenv("ATTN_CHECKPOINTS_DIR", str(tmp_path))
    at = run_app({"ckpt": "minilm", "view": "similarity", "text": TEXT}, timeout=120)
    assert not at.exception, [e.value for e in at.exception]
    assert at.query_params["ckpt"] in ("paper", ["paper"])  # the link fell back
    shown = texts(at.info) + texts(at.warning) + texts(at.markdown) + texts(at.caption)
    assert "not installed and verified" in shown and "make run" in shown, shown
