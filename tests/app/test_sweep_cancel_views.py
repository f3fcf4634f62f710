"""Cancel on the two sweeps over validation pairs (issue 39 item 2): Heads › Statistics'
validation average and the detectors' sink button show ui/sweep.Sweep's bar and Cancel, stop
at the next check, keep nothing, and say so on the next run.

The session's yield check is replaced by one that raises Streamlit's StopException at its
second call (after the first batch of pairs), which is what Cancel, or any rerun, does."""

from __future__ import annotations

from streamlit.runtime.scriptrunner_utils.exceptions import StopException

from tests.app.conftest import run_app
from tests.app.test_views import ok, texts
from tests.conftest import ROOT, needs
from ui import sweep

pytestmark = needs((ROOT / "checkpoints" / "paper" / "config.json").is_file(),
                                reason="needs checkpoints/paper")


class StopAt:
    """A yield check that raises at its n-th call, counting the calls."""

    def __init__(self, n: int) -> None:
        self.n, self.checks = n, 0

    def __call__(self) -> None:
        self.checks += 1
        if self.checks >= self.n:
            raise StopException()


def _stop_second_check(monkeypatch) -> StopAt:
    check = StopAt(2)
    monkeypatch.setattr(sweep, "get_run_yield_check", lambda: check)
    return check


def test_cancel_stops_the_validation_average(monkeypatch):
    from training import corpus
    from ui.views.heads import stats

    sample = corpus.generate(40, seed=5)
    monkeypatch.setattr(stats, "val_split", lambda bundle, key: sample)
    at = run_app({"view": "heads", "text": "The cat is cold."})
    ok(at)
    check = _stop_second_check(monkeypatch)
    at.button(key="hs_val_go").click().run(timeout=120)
    assert check.checks == 2  # stopped after the first batch, not run to the end
    assert "sweep_cancel_val" in [b.key for b in at.button]  # its Cancel was on the page
    monkeypatch.setattr(sweep, "get_run_yield_check", lambda: None)
    at.run(timeout=120)  # the rerun Cancel asks for
    ok(at)
    # nothing kept (another test's average of 6 pairs may be, never these 40)
    assert not any("40 validation" in str(o) for o in at.radio(key="hs_scope").options)
    assert "The sweep was stopped" in texts(at.info)


def test_cancel_stops_the_sink_average(monkeypatch):
    from training import corpus
    from ui.views.heads import detectors

    sample = corpus.generate(40, seed=5)
    monkeypatch.setattr(detectors, "val_split", lambda bundle, key: sample)
    at = run_app({"view": "heads", "text": "Winter is cold again.", "detector": "sink"})
    at.radio(key="_w_heads_part").set_value("detectors").run(timeout=120)
    ok(at)
    check = _stop_second_check(monkeypatch)
    at.button(key="det_sink_go").click().run(timeout=120)
    assert check.checks == 2
    assert "sweep_cancel_sink" in [b.key for b in at.button]
    monkeypatch.setattr(sweep, "get_run_yield_check", lambda: None)
    at.run(timeout=120)
    ok(at)
    assert "typed input only so far" in texts(at.caption)  # nothing kept
    assert "The sweep was stopped" in texts(at.info)
