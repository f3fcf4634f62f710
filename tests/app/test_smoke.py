from tests.app.conftest import run_app


def test_app_runs_and_shows_title():
    at = run_app()
    assert not at.exception, [e.value for e in at.exception]
    assert [t.value for t in at.title][:1] == ["Attention lab"]
