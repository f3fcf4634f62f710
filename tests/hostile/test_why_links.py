"""Hostile values in the why-views' link parameters and inputs (AppTest, issue 41): `corrupt=`
on view=patch, `detector=` on view=heads, the training and generation views on a model that
has neither, and hostile text typed into each of them. Every page: no exception, no
traceback, a clear message where the value was refused or cut, user text never rendered as
markup, nothing executed, and the next ordinary input works in the same session.
"""

from __future__ import annotations

import pytest

from tests.hostile.inputs import EVERY_VIEW, LONG_PAGE, NORMAL, THOUSAND_LINES, Hostile, from_url
from tests.hostile.test_app_hostile import check_page, fresh, messages

MARKER = "/tmp/attention_lab_pwned"  # a payload that ran would create this file
RUNS = f"__import__('os').system('touch {MARKER}')"

CORRUPT = [  # corrupt= on view=patch, beside the default clean text
    Hostile("corrupt_script", query={"corrupt": "<script>alert(1)</script>"},
            literal="<script>alert(1)</script>"),
    Hostile("corrupt_markdown", query={"corrupt": "**bold** [x](javascript:alert(1))"}),
    Hostile("corrupt_python", query={"corrupt": RUNS}),
    Hostile("corrupt_format", query={"corrupt": "{0.__class__.__mro__} %s %(x)s ${7*7}"}),
    Hostile("corrupt_100k", query={"corrupt": LONG_PAGE}, note="cannot be patched"),
    Hostile("corrupt_1000_lines", query={"corrupt": THOUSAND_LINES}, note="cannot be patched"),
    Hostile("corrupt_empty", query={"corrupt": ""}),
    Hostile("corrupt_controls", query={"corrupt": "Win\x00ter\x1b[31m is\x7f cold."}),
    from_url("corrupt_bad_utf8", "view=patch&corrupt=%ED%A0%80%FF%FE%20cold"),
    from_url("corrupt_repeated", "view=patch&corrupt=a&corrupt=%3Cb%3Eb%3C%2Fb%3E"),
]
DETECTOR = [  # detector= on view=heads
    Hostile("detector_unknown", query={"detector": "nonsense"}, note="Unknown detector"),
    Hostile("detector_script", query={"detector": "<script>alert(1)</script>"},
            note="Unknown detector"),
    Hostile("detector_python", query={"detector": RUNS}, note="Unknown detector"),
    Hostile("detector_empty", query={"detector": ""}, note="Unknown detector"),
    Hostile("detector_case", query={"detector": "INDUCTION"}, note="Unknown detector"),
    Hostile("detector_huge", query={"detector": "induction" * 20_000}, note="Unknown detector"),
    from_url("detector_bad_utf8", "view=heads&detector=%ED%A0%80", note="Unknown detector"),
    from_url("detector_repeated", "view=heads&detector=sink&detector=%3Cb%3E",
             note="Unknown detector"),
]


@pytest.fixture(autouse=True)
def _nothing_ran():
    """A payload that was executed leaves MARKER behind."""
    import os

    if os.path.exists(MARKER):
        os.remove(MARKER)
    yield
    assert not os.path.exists(MARKER), "a link's value was executed"


def shown_corrupt(at) -> str:
    return at.text_input(key="patch_corrupt").value or ""


@pytest.mark.parametrize("case", CORRUPT, ids=str)
def test_hostile_corrupt_link(checkpoints, hostile_tokenizer, case):
    at = fresh("patch", case.query)
    check_page(at, case, "patch")
    if case.literal:  # shown in the box as typed, never drawn as markup
        assert shown_corrupt(at) == case.literal
    at.text_area(key="text").input(NORMAL).run()
    at.text_input(key="patch_corrupt").input("The big cat eats the fish.").run()
    assert not at.exception and not at.error, messages(at)


@pytest.mark.parametrize("case", DETECTOR, ids=str)
def test_hostile_detector_link(checkpoints, hostile_tokenizer, case):
    at = fresh("heads", case.query)
    check_page(at, case, "heads")
    for w in at.warning:  # the note quotes at most 80 characters of the value
        assert len(str(w.value)) < 400, str(w.value)[:200]
    assert at.session_state["det_detector"] == "previous_token"
    at.text_area(key="text").input(NORMAL).run()
    assert not at.exception and not at.error, messages(at)


@pytest.mark.parametrize("view", ["why"])
def test_hostile_head_links_on_the_why_view(checkpoints, view):
    """view=why with every head parameter out of range or hostile: notes, then a page."""
    at = fresh(view, {"kind": "<script>x</script>", "layer": "99", "head": "-1",
                      "detector": RUNS, "corrupt": RUNS})
    assert not at.exception and not at.error, messages(at)
    assert "Unknown attention kind" in messages(at)


@pytest.mark.parametrize("view", ["training", "generate"])
def test_training_and_generation_say_why_on_a_translator(checkpoints, view):
    """A translator keeps no snapshots and does not continue text: a reason, not an error,
    also with hostile link values beside it."""
    at = fresh(view, {"detector": "<b>x</b>", "corrupt": RUNS, "step": "-1", "snapshot": "../x"})
    assert not at.exception and not at.error, messages(at)
    assert at.info or at.warning, "the view says why it has nothing to show"


@pytest.mark.parametrize("case", EVERY_VIEW, ids=str)
def test_hostile_text_on_the_why_views(checkpoints, hostile_tokenizer, case):
    """Typed into the box, then patching (clean = the hostile text), heads › detectors, why
    this head attends and the two views the translator does not have, in turn."""
    at = fresh("tokens", {"detector": "induction"})
    at.text_area(key="text").input(case.wire_text).run()
    for view in ("patch", "heads", "why", "training", "generate"):
        at.radio(key="view").set_value(view).run()
        check_page(at, case, view, hostile_tokenizer)
    at.text_area(key="text").input(NORMAL).run()
    assert not at.exception and not at.error, messages(at)
