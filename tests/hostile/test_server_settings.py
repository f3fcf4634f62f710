"""The shipped server settings: XSRF on, no usage statistics, no tracebacks to viewers, a
bounded websocket message size; and Streamlit reads them as such."""

from __future__ import annotations

import tomllib

from tests.conftest import ROOT


def test_streamlit_config_is_hardened():
    cfg = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    server, client = cfg["server"], cfg["client"]
    assert server["enableXsrfProtection"] is True
    assert server.get("enableCORS", True) is True  # XSRF needs CORS protection left on
    assert cfg["browser"]["gatherUsageStats"] is False
    assert client["showErrorDetails"] in ("none", "type")  # never "full" or "stacktrace"
    assert 16 <= server["maxMessageSize"] <= 500  # MB: the largest input's charts fit
    assert server.get("headless") is True
