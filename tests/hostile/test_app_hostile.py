"""Every hostile input through the app (AppTest): no exception, no traceback, a message where
input was cut or refused, user text never rendered as markup, and the next normal input works
in the same session.

Typed cases go, one after another, into the sentence box of one long-lived session on the
tokens view (the cheap one); link cases each open a fresh session. The representative subset
(EVERY_VIEW) is then typed into a fresh session and shown on every view in turn.
"""

from __future__ import annotations

import html
import json
import re

import pytest
from streamlit import config
from streamlit.testing.v1 import AppTest

from model.inputs import clean_lines
from tests.app.conftest import APP
from tests.hostile.inputs import CASES, EVERY_VIEW, NORMAL, Hostile

VIEWS = ["tokens", "masks", "attention", "bertviz", "steps", "positional", "embeddings",
         "translation", "heads", "compare"]
CHART_VIEWS = {"tokens", "masks", "attention", "steps", "positional", "embeddings",
               "translation"}  # views that draw plotly charts for NORMAL on this model
MARKDOWN_TYPES = ("markdown", "caption", "warning", "info", "error", "success", "title",
                  "header", "subheader", "toast")
MD_SPECIAL = set("\\`*_{}[]()#+-.!|<>~$:=")
MAX_WARNINGS = 8  # a link listing 3,000 bad heads still gets one note, not 3,000
TRACEBACK_SIGNS = ("Traceback (most recent call last)", 'File "/', "site-packages/")


TYPED = [c for c in CASES if c.text is not None]
LINKS = [c for c in CASES if c.text is None]


def fresh(view: str, query: dict | None = None) -> AppTest:
    """A new session opened from a link (one AppTest = one browser tab)."""
    at = AppTest.from_file(str(APP), default_timeout=90)
    for key, value in {"view": view, **(query or {})}.items():
        at.query_params[key] = value
    config.set_option("client.showErrorDetails", "full")  # tests want the real message
    at.run()
    return at


def start(case: Hostile) -> AppTest:
    return fresh("tokens", case.query)


def messages(at: AppTest) -> str:
    """Warnings, infos and errors as shown (markdown escapes removed)."""
    shown = list(at.warning) + list(at.info) + list(at.error)
    return " ".join(str(e.value) for e in shown).replace("\\", "")


def strings(value) -> list[str]:
    """Every string inside a plotly figure spec."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return []


def literals(case: Hostile) -> list[str]:
    """User text that would change if read as markdown or HTML."""
    lines, _ = clean_lines(case.source)
    found = [case.literal] if case.literal else []
    found += [line for line in lines[:2] if 3 <= len(line) <= 200 and MD_SPECIAL & set(line)]
    return found


def check_page(at: AppTest, case: Hostile, view: str, tokenizer=None) -> None:
    """What every hostile page must satisfy. With the checkpoint's tokenizer, the tokens view
    must also show the first sentence's pieces (so the checks below saw rendered text)."""
    where = f"{case.name} on {view}"
    assert not at.exception, (where, [e.value for e in at.exception])
    assert [t.value for t in at.title][:1] == ["Attention lab"], where
    assert not at.error, (where, messages(at))  # a view or the model failing shows here
    for node in at:
        proto = getattr(node, "proto", None)
        if proto is not None and node.type != "plotly_chart":
            text = str(proto)
            for sign in TRACEBACK_SIGNS:
                assert sign not in text, (where, sign, text[:300])
    assert len(at.warning) <= MAX_WARNINGS, (where, "a wall of warnings", len(at.warning))
    if case.note:
        assert case.note in messages(at), (where, case.note, messages(at))
    assert_no_raw_markup(at, case, where)
    lines, _ = clean_lines(at.text_area(key="text").value or "")
    if tokenizer is not None and view == "tokens" and lines:
        # the first sentence in the box really reached the page: its pieces, as the tokenizer
        # cuts them, are the chips' text once the HTML escapes are undone (cut at max_len,
        # never empty). A link's text over Streamlit's limit never reaches the box.
        want = tokenizer.pieces(lines[0])
        chips = at.get("html")[0].proto.body
        shown = [html.unescape(p) for p in re.findall(r">([^<>]*)<sub", chips)]
        body = shown[1:-1] if shown[:1] and shown[0].startswith("<2") else shown[:-1]
        assert shown[-1:] == ["</s>"] and body == want[: len(body)], (where, shown, want)
        assert body or not want, (where, "the sentence's pieces are not on the page", shown)
    if case.literal and case.text is not None:  # shown literally where the user typed it
        assert case.literal in at.text_area(key="text").value


@pytest.fixture(scope="module")
def normal_pieces(hostile_tokenizer) -> list[str]:
    return hostile_tokenizer.pieces(NORMAL)


def check_normal_input(at: AppTest, view: str, pieces: list[str]) -> None:
    """The next ordinary sentence, typed into the same session, gives an ordinary page."""
    at.text_area(key="text").input(NORMAL).run()
    assert not at.exception, (view, [e.value for e in at.exception])
    assert not at.error, (view, messages(at))
    assert at.session_state["text"] == NORMAL
    if view in CHART_VIEWS:
        assert at.get("plotly_chart"), view
    if view == "tokens":
        chips = at.get("html")[0].proto.body  # the first sentence's encoder pieces
        shown = re.findall(r">([^<>]*)<sub", chips)
        assert [html.unescape(p) for p in shown[1:-1]] == pieces, (shown, pieces)


@pytest.fixture(scope="module")
def session(checkpoints) -> AppTest:
    """One browser tab's session, reused: every typed case, then a normal sentence, in turn."""
    return fresh("tokens")


@pytest.mark.parametrize("case", TYPED, ids=str)
def test_typed_hostile_input(session, normal_pieces, hostile_tokenizer, case):
    """Typed into the sentence box of a session that has already seen the cases before it."""
    session.radio(key="view").set_value("tokens")
    session.text_area(key="text").input(case.wire_text).run()
    check_page(session, case, "tokens", hostile_tokenizer)
    check_normal_input(session, "tokens", normal_pieces)


@pytest.mark.parametrize("case", LINKS, ids=str)
def test_hostile_link(checkpoints, normal_pieces, hostile_tokenizer, case):
    """Opened from a link in a fresh session; then a normal sentence in the same session."""
    at = start(case)
    check_page(at, case, at.radio(key="view").value, hostile_tokenizer)
    at.radio(key="view").set_value("tokens")
    check_normal_input(at, "tokens", normal_pieces)


@pytest.mark.parametrize("case", EVERY_VIEW, ids=str)
def test_hostile_input_on_every_view(checkpoints, normal_pieces, hostile_tokenizer, case):
    """Typed into the box (the widget path), then every view in turn, then a normal input."""
    at = fresh("tokens")
    at.text_area(key="text").input(case.wire_text).run()
    for view in VIEWS:
        at.radio(key="view").set_value(view).run()
        check_page(at, case, view, hostile_tokenizer)
    at.radio(key="view").set_value("tokens").run()
    check_normal_input(at, "tokens", normal_pieces)


def assert_no_raw_markup(at, case, where) -> None:
    """No literal the user typed reaches markdown, HTML or a chart's markup strings unescaped."""
    rendered = [str(e.value) for typ in MARKDOWN_TYPES for e in at.get(typ)]
    rendered += [el.proto.body for el in at.get("html")]
    rendered += [s for el in at.get("plotly_chart") for s in strings(json.loads(el.proto.spec))
                 if "<" in s or "&" in s]
    for text in literals(case):
        for body in rendered:
            assert text not in body, (where, "user text reached markup unescaped", text, body)
