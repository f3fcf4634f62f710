"""The hostile suite through the app (AppTest) on other model families and on the shipped
checkpoints: decoder-only GPT-2 (12 x 12 heads, and a copy with no pad token), encoder-only
BERT and encoder-decoder Marian (tests/hostile/families.py), in the tokens, attention and heads
views.

- every typed case in one long-lived session per family, on the tokens view, then a normal
  sentence in the same session;
- every link case in a fresh session per family;
- the representative cases (EVERY_VIEW) plus the zero-token and over-the-position-table ones on
  the tokens, attention and heads views, per model (the no-pad GPT-2 too), and on
  checkpoints/paper and seed001.

A page passes when it has no exception and no traceback, user text never reaches markup, the
notes the input calls for are shown, and the only error is the clear "no tokens" refusal when
the model's own tokenizer (the oracle) turns a line into nothing.
"""

from __future__ import annotations

import pytest
from streamlit import config
from streamlit.testing.v1 import AppTest

from model.inputs import clean_lines
from tests.app.conftest import APP
from tests.conftest import ROOT, needs
from tests.hostile.families import ALL_FOLDERS, FAMILIES, POSITIONS
from tests.hostile.inputs import CASES, NORMAL, ZERO_TOKEN_NAMES, Hostile
from tests.hostile.test_app_hostile import (
    MAX_WARNINGS,
    TRACEBACK_SIGNS,
    assert_no_raw_markup,
    messages,
)

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

VIEWS = ("tokens", "attention", "heads")
TYPED = [c for c in CASES if c.text is not None]
LINKS = [c for c in CASES if c.text is None]
EXTRA = {"over_positions", *ZERO_TOKEN_NAMES}
VIEW_CASES = [c for c in CASES if c.every_view or c.name in EXTRA]
# Known failures, marked strict so that a fix shows up: found by this suite, not ours to fix.
SHIPPED = [name for name in ("paper", "seed001")
           if (ROOT / "checkpoints" / name / "config.json").is_file()]


@pytest.fixture(scope="module")
def family_env(checkpoints, hf_families):
    """ATTN_MODELS -> the family folders (beside the tiny native "paper" of `checkpoints`)."""
    parent = next(iter(hf_families.values())).parent
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ATTN_MODELS", str(parent))
        yield hf_families


@pytest.fixture(scope="module")
def tokenizers(family_env) -> dict:
    from transformers import AutoTokenizer

    return {name: AutoTokenizer.from_pretrained(folder, local_files_only=True)
            for name, folder in family_env.items()}


def open_session(query: dict) -> AppTest:
    """A new session from a link (one AppTest = one browser tab)."""
    at = AppTest.from_file(str(APP), default_timeout=120)
    for key, value in query.items():
        at.query_params[key] = value
    config.set_option("client.showErrorDetails", "full")  # tests want the real message
    at.run()
    return at


def expectations(case: Hostile, tok) -> tuple[bool, bool]:
    """(some line is no tokens for this tokenizer, some line is longer than its positions)."""
    typed = case.wire_text  # what a browser sends: a lone surrogate arrives as U+FFFD
    lines, _ = clean_lines(typed if typed is not None else case.source)
    if tok is None:
        return False, "too long" in case.note
    ids = [tok(line)["input_ids"] for line in lines]
    return any(not x for x in ids), any(len(x) > POSITIONS for x in ids)


def check(at: AppTest, case: Hostile, where: str, tok) -> None:
    """What every hostile page must satisfy, whatever the model family."""
    zero, cut = expectations(case, tok)
    assert not at.exception, (where, [e.value for e in at.exception])
    assert [t.value for t in at.title][:1] == ["Attention lab"], where
    errors = [str(e.value) for e in at.error]
    if zero:
        assert errors and all("no tokens" in e for e in errors), (where, errors)
    else:
        assert not errors, (where, errors)
    for node in at:
        proto = getattr(node, "proto", None)
        if proto is not None and node.type != "plotly_chart":
            for sign in TRACEBACK_SIGNS:
                assert sign not in str(proto), (where, sign, str(proto)[:300])
    assert len(at.warning) <= MAX_WARNINGS, (where, "a wall of warnings", len(at.warning))
    shown = messages(at)
    if case.note and case.note != "too long":  # notes from cleaning the text: any model
        assert case.note in shown, (where, case.note, shown)
    if cut and not zero:  # cut to the position table: the page says so
        assert "too long" in shown, (where, shown)
    assert_no_raw_markup(at, case, where)


def check_normal(at: AppTest, where: str) -> None:
    at.text_area(key="text").input(NORMAL).run()
    assert not at.exception and not at.error, (where, messages(at))
    assert at.session_state["text"] == NORMAL


@pytest.fixture(scope="module")
def sessions(family_env) -> dict:
    """One long-lived session per family, reused by every typed case in turn."""
    return {name: open_session({"ckpt": name, "view": "tokens"}) for name in FAMILIES}


@pytest.mark.parametrize("case", TYPED, ids=str)
@pytest.mark.parametrize("name", FAMILIES)
def test_typed_case_on_family(sessions, tokenizers, name, case):
    at = sessions[name]
    assert at.query_params["ckpt"] == name
    at.radio(key="view").set_value("tokens")
    at.text_area(key="text").input(case.wire_text).run()
    check(at, case, f"{case.name} on {name}", tokenizers[name])
    check_normal(at, f"after {case.name} on {name}")


@pytest.mark.parametrize("case", LINKS, ids=str)
@pytest.mark.parametrize("name", FAMILIES)
def test_link_case_on_family(family_env, tokenizers, name, case):
    query = {"ckpt": name, **case.query}
    at = open_session(query)
    chosen = at.query_params["ckpt"]  # a link naming another checkpoint may fall back
    check(at, case, f"{case.name} on {name}", tokenizers.get(chosen))
    at.radio(key="view").set_value("tokens")
    check_normal(at, f"after {case.name} on {name}")


@pytest.mark.parametrize("case", VIEW_CASES, ids=str)
@pytest.mark.parametrize("name", ALL_FOLDERS)
def test_views_on_family(family_env, tokenizers, name, case):
    at = open_session({"ckpt": name, "view": "tokens"})
    at.text_area(key="text").input(case.wire_text).run()
    for view in VIEWS:
        at.radio(key="view").set_value(view).run()
        check(at, case, f"{case.name} on {name}, {view} view", tokenizers[name])
    at.radio(key="view").set_value("tokens").run()
    check_normal(at, f"after {case.name} on {name}")


@pytest.fixture(scope="module")
def shipped_env():
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ATTN_CHECKPOINTS_DIR", str(ROOT / "checkpoints"))
        mp.delenv("ATTN_MODELS", raising=False)
        yield


@needs(SHIPPED, reason="no shipped checkpoints in checkpoints/")
@pytest.mark.parametrize("case", VIEW_CASES, ids=str)
@pytest.mark.parametrize("name", SHIPPED)
def test_views_on_shipped_checkpoint(shipped_env, name, case):
    at = open_session({"ckpt": name, "view": "tokens"})
    assert at.query_params["ckpt"] == name
    at.text_area(key="text").input(case.wire_text).run()
    for view in VIEWS:
        at.radio(key="view").set_value(view).run()
        check(at, case, f"{case.name} on {name}, {view} view", None)
    at.radio(key="view").set_value("tokens").run()
    check_normal(at, f"after {case.name} on {name}")
