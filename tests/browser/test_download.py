"""The sidebar's "Download this Trace" in a real browser: the downloaded .npz loads with
Trace.load() and equals, field by field and bit by bit, a capture() of the same input made
the way the app makes it; the .json is the file's trace.json."""

from __future__ import annotations

import json
import zipfile

from playwright.sync_api import TimeoutError as PlaywrightTimeout

from model import Trace, capture, load_checkpoint
from model.trace_io import JSON_MEMBER
from tests.browser.conftest import open_app
from tests.conftest import ROOT
from tests.unit.test_trace_io import assert_same_trace
from ui.runtime import capture_names

TEXT = "겨울은 추워요.\nThe big dog eats the fish."


def test_downloaded_trace_is_the_apps(page, streamlit_server, tmp_path):
    open_app(page, streamlit_server, view="tokens", text=TEXT, ckpt="paper", lang="auto")
    sidebar = page.locator('[data-testid="stSidebar"]')
    sidebar.get_by_text("Download this Trace").click()
    files = {}
    for label, suffix in (("Trace (.npz)", ".npz"), ("Tokens and settings (.json)", ".json")):
        # The tokens view records only what it needs, so the file is a fresh capture through
        # the server's gate. Its wait for the gate is the server's queue timeout, not ours: a
        # heavier run left by an earlier test on this worker's server held the gate past 60 s
        # once in CI (stop 61), so the wait here is longer than any such run, and a refusal
        # (the button's own error line) is named in the failure.
        try:
            with page.expect_download(timeout=180_000) as info:
                sidebar.get_by_role("button", name=label).click()
        except PlaywrightTimeout as e:
            errors = sidebar.locator('[data-testid="stDownloadButtonError"]').all_inner_texts()
            raise AssertionError(f"no {suffix} download; the button said {errors}") from e
        download = info.value
        assert download.suggested_filename == f"trace-paper{suffix}"
        files[suffix] = tmp_path / download.suggested_filename
        download.save_as(files[suffix])
    loaded = Trace.load(files[".npz"])

    bundle = load_checkpoint(ROOT / "checkpoints" / "paper")
    own = capture(bundle, TEXT.split("\n"), target_lang="auto", names=capture_names(bundle))
    assert_same_trace(own, loaded)
    with zipfile.ZipFile(files[".npz"]) as zf:
        inside = json.loads(zf.read(JSON_MEMBER))
    assert json.loads(files[".json"].read_text(encoding="utf-8")) == inside
    assert inside["fields"]["src_tokens"] == own.src_tokens
