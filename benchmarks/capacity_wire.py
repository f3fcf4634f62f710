"""A browser page's Streamlit session without the browser (WireSession): the page's HTTP
requests, then its websocket speaking the app's protobuf messages. bench_capacity's nginx parts
drive their load with it, and tests/cluster/test_fault.py uses it to see a page survive a
replica's death.
"""

from __future__ import annotations

import html
import http.cookies
import json
import time
import urllib.request
from dataclasses import dataclass, field


def _cookie_header(jar: dict[str, str]) -> str:
    return "; ".join(f"{k}={v}" for k, v in jar.items())


@dataclass
class RunResult:
    """What one script run sent to the page."""

    seconds: float = 0.0
    charts: list[list[str]] = field(default_factory=list)  # each plotly chart's first x labels
    exceptions: list[str] = field(default_factory=list)  # st.exception boxes
    errors: list[str] = field(default_factory=list)  # st.error boxes
    query: str = ""  # the URL's query string once the run ended (the app keeps text in it)


class WireSession:
    """One browser page's session without the browser: the page's HTTP requests and then its
    websocket, speaking Streamlit's protobuf messages the way the frontend does (rerun with the
    URL's query string and the widget values changed). Cookies are kept as a browser would, so
    a sticky-session cookie set by nginx sends the websocket to the same replica."""

    def __init__(self, base: str, cookies: dict[str, str] | None = None,
                 charts: bool = True) -> None:
        self.base = base.rstrip("/")
        self.parse_charts = charts  # the benchmark skips decoding figures: client CPU
        self.cookies = dict(cookies or {})
        self.ws = None
        self.widgets: dict[str, object] = {}  # user key -> element proto (last seen)
        self.values: dict[str, str] = {}  # widget id -> string value this page has set
        self.page_hash = ""
        self.query = ""

    def _get(self, path: str) -> bytes:
        req = urllib.request.Request(self.base + path,
                                     headers={"Cookie": _cookie_header(self.cookies)})
        with urllib.request.urlopen(req, timeout=30) as resp:
            for header in resp.headers.get_all("Set-Cookie") or []:
                jar = http.cookies.SimpleCookie()
                jar.load(header)
                self.cookies.update({k: m.value for k, m in jar.items()})
            return resp.read()

    def open(self, query: str = "", timeout: float = 120) -> RunResult:
        """Load the page (index, health: Streamlit's XSRF cookie), connect, run the script."""
        from websockets.sync.client import connect

        self.close()
        self._get("/" + (f"?{query}" if query else ""))
        self._get("/_stcore/health")
        ws_url = "ws" + self.base[len("http"):] + "/_stcore/stream"
        kw = {"subprotocols": ["streamlit", self.cookies["_streamlit_xsrf"]],
              "additional_headers": {"Cookie": _cookie_header(self.cookies),
                                     "Origin": self.base},
              "max_size": None, "open_timeout": 30}
        try:  # websockets >= 16 wants legacy=True for a connection kept outside a `with`
            self.ws = connect(ws_url, legacy=True, **kw)
        except TypeError:
            self.ws = connect(ws_url, **kw)
        self.values.clear()
        self.query = query
        return self.rerun(timeout=timeout)

    def set(self, key: str, value: str, timeout: float = 120) -> RunResult:
        """Change the widget with user key `key` (text box, radio label...) and rerun."""
        self.values[self.widgets[key].id] = value
        return self.rerun(timeout=timeout)

    def options(self, key: str) -> list[str]:
        return list(self.widgets[key].options)

    def rerun(self, timeout: float = 120) -> RunResult:
        """Send a rerun and read until the script is idle again."""
        from streamlit.proto.BackMsg_pb2 import BackMsg
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        msg = BackMsg()
        msg.rerun_script.query_string = self.query
        msg.rerun_script.page_script_hash = self.page_hash
        for wid, value in self.values.items():
            state = msg.rerun_script.widget_states.widgets.add()
            state.id = wid
            state.string_value = value
        res = RunResult()
        t0 = time.perf_counter()
        self.ws.send(msg.SerializeToString())
        finished = False
        deadline = t0 + timeout
        while True:
            fwd = ForwardMsg()
            fwd.ParseFromString(self.ws.recv(timeout=max(0.1, deadline - time.perf_counter())))
            kind = fwd.WhichOneof("type")
            if kind == "new_session":
                self.page_hash = fwd.new_session.main_script_hash
            elif kind == "page_info_changed":
                self.query = fwd.page_info_changed.query_string
            elif kind == "delta" and fwd.delta.WhichOneof("type") == "new_element":
                self._element(fwd.delta.new_element, res)
            elif kind == "script_finished":
                finished = finished or fwd.script_finished == ForwardMsg.FINISHED_SUCCESSFULLY
            elif kind == "session_status_changed" and finished and \
                    not fwd.session_status_changed.script_is_running:
                break
        res.seconds = time.perf_counter() - t0
        res.query = self.query
        return res

    def _element(self, el, res: RunResult) -> None:
        kind = el.WhichOneof("type")
        inner = getattr(el, kind) if kind else None
        wid = getattr(inner, "id", "")
        if wid.startswith("$$ID-") and wid.count("-") >= 2:
            self.widgets[wid.split("-", 2)[2]] = inner
        if kind == "plotly_chart" and not self.parse_charts:
            res.charts.append([])
        elif kind == "plotly_chart":
            spec = json.loads(inner.spec)
            data = spec.get("data") or [{}]
            res.charts.append([html.unescape(str(x)) for x in data[0].get("x") or []])
        elif kind == "exception":
            res.exceptions.append(f"{inner.type}: {inner.message}"[:200])
        elif kind == "alert" and inner.format == inner.ERROR:
            res.errors.append(inner.body[:200])

    def close(self) -> None:
        if self.ws is not None:
            try:
                self.ws.close()
            except Exception:  # noqa: BLE001 - closing a socket the server already dropped
                pass
            self.ws = None
