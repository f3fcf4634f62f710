"""Streamlit AppTest helper: runs app.py headless in-process, no server and no browser."""

from streamlit import config
from streamlit.testing.v1 import AppTest

from benchmarks.common import share_script_cache
from tests.conftest import ROOT

APP = ROOT / "app.py"
share_script_cache()  # compile app.py once, not on each of the suite's ~1,000 runs


def run_app(query: dict | None = None, timeout: float = 60) -> AppTest:
    """Run app.py once with the given URL query parameters and return the finished AppTest."""
    at = AppTest.from_file(str(APP), default_timeout=60)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    # .streamlit/config.toml redacts errors for viewers; tests want the real message and trace.
    config.set_option("client.showErrorDetails", "full")
    at.run(timeout=timeout)
    return at
