"""viz.i18n: the translator lives only inside its block and only in its own thread/context."""

from __future__ import annotations

import threading

import pytest

from viz.i18n import N_, _, translated


def test_identity_outside_a_block_and_restored_after_one():
    assert _("layer {layer}") == "layer {layer}"
    assert N_("head") == "head"
    with translated({"layer {layer}": "{layer}층"}.get):
        assert _("layer {layer}").format(layer=2) == "2층"
        with translated(str.upper):  # nested: the inner one wins, the outer comes back
            assert _("head") == "HEAD"
        assert _("layer {layer}") == "{layer}층"
    assert _("layer {layer}") == "layer {layer}"


def test_restored_after_an_error():
    with pytest.raises(RuntimeError), translated(str.upper):
        raise RuntimeError
    assert _("head") == "head"


def test_each_thread_sees_its_own_translator():
    """Two sessions' script threads draw at once, one Korean and one English."""
    seen: dict[str, str] = {}
    inside = threading.Barrier(2)

    def session(name: str, fn) -> None:
        with translated(fn):
            inside.wait()  # both blocks are open at the same time
            seen[name] = _("head")

    threads = [threading.Thread(target=session, args=("ko", {"head": "헤드"}.get)),
               threading.Thread(target=session, args=("en", lambda m: m))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == {"ko": "헤드", "en": "head"}
    assert _("head") == "head"  # nothing leaked into this thread
