"""Chart data as a view sent it: the plotly specs of an AppTest run, decoded to numpy.

Plotly 7 serialises numeric arrays as {"dtype": "f4", "bdata": <base64>, "shape": "r, c"}
rather than lists, so a test that reads `fig["data"][0]["z"]` as a list checks nothing. Every
view test that compares drawn numbers with independently computed ones reads them here.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator

import numpy as np


def charts(at) -> list[dict]:
    """Every plotly chart of a finished AppTest, as its JSON spec (in page order)."""
    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")]


def array(value) -> np.ndarray:
    """A plotly array from a spec: a list or a binary `bdata` dict."""
    if isinstance(value, dict) and "bdata" in value:
        raw = base64.b64decode(value["bdata"])
        arr = np.frombuffer(raw, dtype=np.dtype(value["dtype"]))
        shape = value.get("shape")
        if shape:
            arr = arr.reshape([int(s) for s in str(shape).split(",")])
        return arr
    if isinstance(value, dict):
        raise AssertionError(f"not a plotly array: keys {sorted(value)}")
    return np.array(value, dtype=float)  # a list; None (a gap) becomes NaN


def title(fig: dict) -> str:
    """A figure's title text ('' when it has none)."""
    t = fig.get("layout", {}).get("title", {})
    return str(t.get("text", "") if isinstance(t, dict) else t)


def find(figs: list[dict], needle: str) -> dict:
    """The one figure whose title contains needle; a clear failure when none or several do."""
    hits = [f for f in figs if needle in title(f)]
    assert len(hits) == 1, (needle, [title(f) for f in figs])
    return hits[0]


def traces(fig: dict, kind: str | None = None) -> Iterator[dict]:
    """A figure's traces, only those of one plotly type when `kind` is given."""
    return (t for t in fig["data"] if kind is None or t.get("type") == kind)
