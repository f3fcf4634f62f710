"""What the soak watches in its own process: resident memory (rss_mb), every cache the app
keeps against its bound (cache_report), and the admission gate's counts (gate_snapshot).
"""

from __future__ import annotations

import gc
import importlib
from pathlib import Path


def rss_mb() -> float:
    """Resident set size of this process (VmRSS), in MB, after a full collection."""
    gc.collect()
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS line")


def runtime_module():
    """The app's runtime module (ui/runtime.py; app_runtime.py before the ui split)."""
    for name in ("ui.runtime", "app_runtime"):
        try:
            return importlib.import_module(name)
        except ImportError:
            continue
    raise ImportError("neither ui.runtime nor app_runtime")


def cache_report(runtime) -> tuple[dict, list[str]]:
    """Every cache the app keeps, its size now and its bound; and the bounds it exceeds."""
    caches: dict[str, dict] = {}
    problems: list[str] = []
    store = runtime.trace_cache()
    with store.lock:
        caches["trace_cache"] = {"entries": len(store.items), "bytes": store.bytes,
                                 "bound": f"{store.max_entries} entries, "
                                          f"{store.max_bytes / 2**20:.0f} MB"}
        if len(store.items) > store.max_entries or (len(store.items) > 1
                                                     and store.bytes > store.max_bytes):
            problems.append(f"trace cache over its bound: {caches['trace_cache']}")
    from streamlit.runtime.caching.cache_data_api import _data_caches

    with _data_caches._caches_lock:  # every st.cache_data function's in-memory store
        stores = [c for per in _data_caches._function_caches.values() for c in per.values()]
    for cache in stores:
        items = cache.storage.get_stats().get("cache_memory_bytes", [])
        name = str(cache.display_name).rsplit(".", 1)[-1]
        entry = {"entries": len(items), "bytes": sum(i.byte_length for i in items),
                 "bound": {"max_entries": cache.max_entries,
                           "max_size": cache.max_size_bytes}}
        if cache.max_entries is not None and entry["entries"] > cache.max_entries:
            problems.append(f"{name}: {entry['entries']} entries > {cache.max_entries}")
        if (cache.max_size_bytes is not None and entry["entries"] > 1
                and entry["bytes"] > cache.max_size_bytes):
            problems.append(f"{name}: {entry['bytes']} bytes > {cache.max_size_bytes}")
        caches[f"cache_data.{name}"] = entry
    results = runtime.shared_results()
    with results.lock:
        caches["shared_results"] = {"entries": len(results.items),
                                    "bound": f"{results.max_entries} entries"}
    return caches, problems


def gate_snapshot() -> dict:
    """The admission gate's running/waiting counts (ui/admission.py), when the app has one."""
    try:
        from ui.admission import server_gate
    except ImportError:
        return {}
    return server_gate().snapshot()


_LIBRARY = r"""
import gc
from pathlib import Path
def rss():
    gc.collect()
    line = next(x for x in Path("/proc/self/status").read_text().splitlines()
                if x.startswith("VmRSS:"))
    return int(line.split()[1]) / 1024
import torch, streamlit, ui.runtime, ui.sidebar, ui.views  # what app.py imports
before = rss()
import transformers.modeling_utils, transformers.models.llama.modeling_llama  # noqa: E401
print(rss() - before)
"""


def library_mb() -> float:
    """RSS that importing transformers (and the Llama code the shipped lm runs) adds to a
    process that already holds the app's imports, measured in a fresh process, in MB."""
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-c", _LIBRARY], cwd=root, check=True, text=True,
                         capture_output=True, timeout=300,
                         env={**os.environ, "PYTHONPATH": str(root)})
    return float(out.stdout.strip().splitlines()[-1])
