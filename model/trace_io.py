"""Save a Trace to one .npz file and read it back, without pickle.

The file is an ordinary NumPy .npz (a zip of .npy arrays, readable with
`np.load(path, allow_pickle=False)`) with one more member, `trace.json`: the tokens, sentences,
settings and the layout of every field, in plain JSON. Nothing is ever unpickled, and object
arrays are refused on both sides.

The encoding walks the dataclass fields generically, so a field added to Trace later round-trips
without touching this module, as long as it is built from arrays, dicts with string keys,
lists, tuples, sets, frozensets, str, int, float, bool and None.

JSON layout: {"format": "attention-lab-trace", "version": 1, "fields": {name: value}} where a
value is a JSON scalar or list, or a tagged object: {"$array": member}, {"$dict": {...}},
{"$tuple": [...]}, {"$frozenset": [...]}, {"$set": [...]}.
"""

from __future__ import annotations

import dataclasses
import io
import json
import re
import zipfile
from pathlib import Path
from typing import IO, Any

import numpy as np

FORMAT = "attention-lab-trace"
VERSION = 1
JSON_MEMBER = "trace.json"
_SAFE_NAME = re.compile(r"^[A-Za-z0-9_.\-]+$")
_TAGS = ("$array", "$dict", "$tuple", "$frozenset", "$set")


class TraceFileError(ValueError):
    """A file that is not a Trace this module wrote (or was damaged on the way)."""


class _Writer:
    """Collects the arrays of one Trace under unique .npz member names."""

    def __init__(self) -> None:
        self.arrays: dict[str, np.ndarray] = {}

    def name_for(self, path: list[str]) -> str:
        # readable names (attn/enc_self) where every part is plain, a counter otherwise
        name = "/".join(path) if all(_SAFE_NAME.match(p) for p in path) else ""
        if not name or name in self.arrays or name == JSON_MEMBER:
            name = f"array_{len(self.arrays)}"
        return name

    def encode(self, value: Any, path: list[str]) -> Any:
        if isinstance(value, np.ndarray):
            if value.dtype.hasobject:
                raise TypeError(f"{'/'.join(path)}: object arrays cannot be saved without pickle")
            name = self.name_for(path)
            self.arrays[name] = value
            return {"$array": name}
        if isinstance(value, np.generic):
            return value.item()
        if value is None or isinstance(value, bool | int | float | str):
            return value
        if isinstance(value, dict):
            if not all(isinstance(k, str) for k in value):
                raise TypeError(f"{'/'.join(path)}: only dicts with string keys can be saved")
            return {"$dict": {k: self.encode(v, [*path, k]) for k, v in value.items()}}
        if isinstance(value, list):
            return [self.encode(v, [*path, str(i)]) for i, v in enumerate(value)]
        if isinstance(value, tuple):
            return {"$tuple": [self.encode(v, [*path, str(i)]) for i, v in enumerate(value)]}
        if isinstance(value, frozenset | set):
            tag = "$frozenset" if isinstance(value, frozenset) else "$set"
            items = [self.encode(v, [*path, str(i)]) for i, v in enumerate(value)]
            return {tag: sorted(items, key=lambda x: json.dumps(x, sort_keys=True))}
        raise TypeError(f"{'/'.join(path)}: cannot save a {type(value).__name__}")


def encode_trace(trace: Any) -> tuple[dict, dict[str, np.ndarray]]:
    """(JSON document, arrays by member name) for any dataclass instance, field by field."""
    writer = _Writer()
    fields = {f.name: writer.encode(getattr(trace, f.name), [f.name])
              for f in dataclasses.fields(trace)}
    return {"format": FORMAT, "version": VERSION, "fields": fields}, writer.arrays


def to_bytes(trace: Any) -> bytes:
    """The .npz file's bytes: every array, plus trace.json (what the app's download serves)."""
    doc, arrays = encode_trace(trace)
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    with zipfile.ZipFile(buf, "a", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(JSON_MEMBER, json.dumps(doc, ensure_ascii=False, indent=1))
    return buf.getvalue()


def json_text(trace: Any) -> str:
    """The trace.json document alone: tokens, sentences and settings, arrays by member name."""
    return json.dumps(encode_trace(trace)[0], ensure_ascii=False, indent=1)


def save_trace(trace: Any, path: str | Path) -> Path:
    """Write trace to `path` (".npz" appended when missing); returns the path written."""
    path = Path(path)
    if path.suffix != ".npz":
        path = path.with_name(path.name + ".npz")
    path.write_bytes(to_bytes(trace))
    return path


class _Reader:
    def __init__(self, npz) -> None:
        self.npz = npz
        self.members = set(npz.files)

    def decode(self, value: Any) -> Any:
        if isinstance(value, list):
            return [self.decode(v) for v in value]
        if not isinstance(value, dict):
            return value
        if len(value) != 1 or next(iter(value)) not in _TAGS:
            raise TraceFileError(f"unexpected object in {JSON_MEMBER}: keys {sorted(value)[:5]}")
        tag, inner = next(iter(value.items()))
        if tag == "$array":
            if not isinstance(inner, str) or inner not in self.members:
                raise TraceFileError(f"array {str(inner)[:80]!r} is missing from the file")
            arr = self.npz[inner]
            if not isinstance(arr, np.ndarray):
                raise TraceFileError(f"member {inner!r} is not a .npy array")
            return arr
        if tag == "$dict":
            if not isinstance(inner, dict):
                raise TraceFileError("a $dict entry is not an object")
            return {k: self.decode(v) for k, v in inner.items()}
        if not isinstance(inner, list):
            raise TraceFileError(f"a {tag} entry is not a list")
        items = [self.decode(v) for v in inner]
        if tag == "$tuple":
            return tuple(items)
        return frozenset(items) if tag == "$frozenset" else set(items)


def _read_doc(npz) -> dict:
    if JSON_MEMBER not in npz.files:
        raise TraceFileError(f"no {JSON_MEMBER} inside: not a Trace file")
    raw = npz[JSON_MEMBER]
    try:
        doc = json.loads(raw.decode("utf-8") if isinstance(raw, bytes) else str(raw))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise TraceFileError(f"{JSON_MEMBER} is not valid JSON: {exc}") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise TraceFileError(f"{JSON_MEMBER} is not an {FORMAT} document")
    if doc.get("version") != VERSION:
        raise TraceFileError(f"unsupported Trace file version {doc.get('version')!r}")
    if not isinstance(doc.get("fields"), dict):
        raise TraceFileError(f"{JSON_MEMBER} has no fields object")
    return doc


def load_trace(source: str | Path | bytes | IO[bytes], cls: type) -> Any:
    """Read a file written by save_trace/to_bytes back into `cls` (the Trace dataclass).

    Fields the file lacks keep their defaults (a file from before a field existed); fields
    this version does not know are ignored. Arrays come back writeable and unshared.
    """
    if isinstance(source, bytes | bytearray):
        source = io.BytesIO(source)
    try:
        npz = np.load(source, allow_pickle=False)
    except (OSError, ValueError, zipfile.BadZipFile) as exc:
        raise TraceFileError(f"not an .npz file: {exc}") from None
    if not isinstance(npz, np.lib.npyio.NpzFile):
        raise TraceFileError("a single .npy array, not a Trace .npz file")
    with npz:
        doc = _read_doc(npz)
        reader = _Reader(npz)
        known = {f.name: f for f in dataclasses.fields(cls)}
        values: dict[str, Any] = {}
        for name, raw in doc["fields"].items():
            if name in known:
                try:
                    values[name] = reader.decode(raw)
                except ValueError as exc:  # e.g. an object array refused by allow_pickle
                    if isinstance(exc, TraceFileError):
                        raise
                    raise TraceFileError(f"field {name}: {exc}") from None
    missing = [n for n, f in known.items() if n not in values
               and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
    if missing:
        raise TraceFileError(f"the file lacks required fields {missing}")
    return cls(**values)
