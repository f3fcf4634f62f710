"""Trace.save / Trace.load: one .npz (arrays + trace.json), no pickle, every field round-trips."""

from __future__ import annotations

import dataclasses
import io
import json
import zipfile

import numpy as np
import pytest

from model import Trace, capture
from model.norms import LazyNorms
from model.trace_io import JSON_MEMBER, TraceFileError, json_text, to_bytes

from .test_hf import bundles, model_root  # noqa: F401  (tiny random HF folders)


def assert_same(a, b, path: str = "") -> None:
    """Equal values of the same types all the way down (arrays: dtype, shape and bits)."""
    # a capture's norms are a LazyNorms (weighed on first read); a loaded Trace's a dict
    ta, tb = (dict if isinstance(x, LazyNorms) else type(x) for x in (a, b))
    assert ta is tb, f"{path}: {type(a).__name__} vs {type(b).__name__}"
    if isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape, f"{path}: {a.dtype}{a.shape}"
        assert a.tobytes() == b.tobytes(), f"{path}: values differ"
    elif isinstance(a, dict):
        assert list(a) == list(b), f"{path}: keys {list(a)} vs {list(b)}"
        for k in a:
            assert_same(a[k], b[k], f"{path}/{k}")
    elif isinstance(a, list | tuple):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{path}/{i}")
    else:
        assert a == b, f"{path}: {a!r} vs {b!r}"


def assert_same_trace(a: Trace, b: Trace) -> None:
    for f in dataclasses.fields(Trace):
        assert_same(getattr(a, f.name), getattr(b, f.name), f.name)


@pytest.fixture(scope="module")
def trace(bundle):
    from viz.steps import act_names

    names = ["attn", "scores", "q", "k", "v", "hidden", "logits",
             *act_names({k: bundle.n_layers(k) for k in bundle.kinds})]
    return capture(bundle, ["the cat eats fish .", "겨울은 추워요."], ablate="enc_self:0:1",
                   names=names)


def test_round_trip_is_identical_for_every_field(trace, tmp_path):
    path = trace.save(tmp_path / "t")
    assert path.name == "t.npz"
    back = Trace.load(path)
    assert_same_trace(trace, back)
    assert back.ablate == frozenset({("enc_self", 0, 1)})
    assert back.acts and back.masks["dec_self"].dtype == bool
    # the same bytes load from memory and from a file object (what a download gives)
    raw = path.read_bytes()
    assert_same_trace(trace, Trace.load(raw))
    assert_same_trace(trace, Trace.load(io.BytesIO(raw)))


def test_every_field_is_in_the_file(trace):
    doc = json.loads(json_text(trace))
    assert set(doc["fields"]) == {f.name for f in dataclasses.fields(Trace)}
    assert doc["fields"]["src_tokens"] == trace.src_tokens  # tokens readable as plain JSON


def test_file_is_a_plain_npz_without_pickle(trace, tmp_path):
    path = trace.save(tmp_path / "t.npz")
    with np.load(path, allow_pickle=False) as npz:
        assert JSON_MEMBER in npz.files
        arr = npz["attn/enc_self"]
        np.testing.assert_array_equal(arr, trace.attn["enc_self"])
    with zipfile.ZipFile(path) as zf:
        names = zf.namelist()
        assert all(n.endswith(".npy") for n in names if n != JSON_MEMBER)
        assert not any(b"pickle" in zf.read(n)[:200] for n in names)


def test_new_dataclass_fields_round_trip_generically(trace):
    """A field added to Trace later (kv_groups, norms …) needs no change to trace_io."""
    extra = [("kv_groups_x", np.ndarray, dataclasses.field(
                 default_factory=lambda: np.zeros(0, np.int64))),
             ("norms_x", dict, dataclasses.field(default_factory=dict)),
             ("settings_x", dict, dataclasses.field(default_factory=dict)),
             ("maybe_x", object, None)]
    cls = dataclasses.make_dataclass("TraceX", extra, bases=(Trace,), frozen=True)
    base = {f.name: getattr(trace, f.name) for f in dataclasses.fields(Trace)}
    x = cls(**base, kv_groups_x=np.array([0, 0, 1, 1]),
            norms_x={"enc_self": np.arange(6, dtype=np.float32).reshape(2, 3)},
            settings_x={"lang": "ko", "n": 3, "pair": (1, "a"), "s": frozenset({2, 1})},
            maybe_x=None)
    back = cls.load(to_bytes(x))
    for f in dataclasses.fields(cls):
        assert_same(getattr(x, f.name), getattr(back, f.name), f.name)
    # a file written before a field existed loads with the field's default
    old = Trace.load(to_bytes(trace))
    assert_same(cls.load(to_bytes(old)).norms_x, {})


def test_decoder_only_hf_trace_round_trips(bundles):  # noqa: F811
    t = capture(bundles["gpt2"], ["the cat eats fish", "winter is cold"])
    assert_same_trace(t, Trace.load(to_bytes(t)))


def test_object_arrays_are_refused_on_save(trace):
    bad = dataclasses.replace(trace, acts={"x": np.array([{"a": 1}], dtype=object)})
    with pytest.raises(TypeError, match="object arrays"):
        to_bytes(bad)


def _rewrite(raw: bytes, member: str, data: bytes | None) -> bytes:
    src = zipfile.ZipFile(io.BytesIO(raw))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        for name in src.namelist():
            if name != member:
                zf.writestr(name, src.read(name))
        if data is not None:
            zf.writestr(member, data)
    return out.getvalue()


def test_pickled_or_broken_files_are_refused(trace):
    raw = to_bytes(trace)
    buf = io.BytesIO()
    np.save(buf, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    pickled = _rewrite(raw, "attn/enc_self.npy", buf.getvalue())
    cases = {
        "not a zip": b"hello",
        "no json": _rewrite(raw, JSON_MEMBER, None),
        "bad json": _rewrite(raw, JSON_MEMBER, b"{nope"),
        "other format": _rewrite(raw, JSON_MEMBER, b'{"format": "x"}'),
        "missing array": _rewrite(raw, "attn/enc_self.npy", None),
        "pickled array": pickled,
        "missing field": _rewrite(raw, JSON_MEMBER, json.dumps(
            {"format": "attention-lab-trace", "version": 1, "fields": {}}).encode()),
    }
    for name, data in cases.items():
        with pytest.raises(TraceFileError):
            Trace.load(data)
            pytest.fail(f"{name}: loaded")
