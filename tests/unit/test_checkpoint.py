"""Tokenizer round trips and checkpoint loading errors (nothing is unpickled)."""

from __future__ import annotations

import json
import pickle
import shutil

import pytest

from model import CheckpointError, Tokenizer, TokenizerError, load_checkpoint, save_checkpoint


def test_tokenizer_round_trip_both_languages(tokenizer):
    texts = ["Winter is cold.", "겨울은 추워요.", "감기 조심하세요.", "The children read books."]
    for text in texts:
        assert tokenizer.decode(tokenizer.encode(text)) == text
    pieces = tokenizer.pieces("겨울은 추워요.")
    assert pieces[0].startswith("▁")
    # byte fallback: characters never seen in training still round-trip
    for text in ["😀 👩‍👩‍👧", "مرحبا", "</script>"]:
        assert tokenizer.decode(tokenizer.encode(text)) == text
    assert tokenizer.pad_id == 0
    assert set(tokenizer.lang_ids) == {"en", "ko"}


def test_padding_and_specials(tokenizer):
    ids, cut = tokenizer.source_ids("Winter is cold.", "ko", 50)
    assert ids[0] == tokenizer.lang_ids["ko"] and ids[-1] == tokenizer.eos_id and cut == 0
    ids, cut = tokenizer.source_ids("Winter is cold. " * 20, "ko", 10)
    assert len(ids) == 10 and cut > 0
    batch = tokenizer.pad([[5, 6, 7], [5]])
    assert batch.tolist() == [[5, 6, 7], [5, 0, 0]]


def test_corrupt_tokenizer_file(tmp_path):
    bad = tmp_path / "tokenizer.model"
    bad.write_bytes(b"not a model at all")
    with pytest.raises(TokenizerError, match="tokenizer.model"):
        Tokenizer(bad)
    with pytest.raises(TokenizerError, match="cannot read"):
        Tokenizer(tmp_path / "missing.model")


@pytest.fixture()
def saved(bundle, tmp_path):
    return save_checkpoint(bundle.model, bundle.tokenizer, tmp_path / "good", card={"x": 1})


def _copy(saved, tmp_path, name):
    dst = tmp_path / name
    shutil.copytree(saved, dst)
    return dst


def test_faulty_checkpoints(saved, tmp_path, tokenizer):
    assert load_checkpoint(saved).card == {"x": 1}
    cases = {}
    d = _copy(saved, tmp_path, "truncated")
    w = d / "model.safetensors"
    w.write_bytes(w.read_bytes()[: w.stat().st_size // 2])
    cases["truncated"] = (d, "model.safetensors", "truncated")
    d = _copy(saved, tmp_path, "pickle")
    (d / "model.safetensors").write_bytes(pickle.dumps({"a": [1, 2, 3]}))
    cases["pickle"] = (d, "model.safetensors", "not a safetensors")
    d = _copy(saved, tmp_path, "disagree")
    cfg = json.loads((d / "config.json").read_text())
    cfg["d_ff"] = 48
    (d / "config.json").write_text(json.dumps(cfg))
    cases["disagree"] = (d, "model.safetensors", "disagree")
    d = _copy(saved, tmp_path, "badjson")
    (d / "config.json").write_text("{not json")
    cases["badjson"] = (d, "config.json", "invalid JSON")
    d = _copy(saved, tmp_path, "notok")
    (d / "tokenizer.model").unlink()
    cases["notok"] = (d, "tokenizer.model", "missing")
    d = _copy(saved, tmp_path, "othervocab")
    other = Tokenizer.train(["abc def", "ghi jkl", "겨울 여름"] * 50, vocab_size=300)
    other.save(d / "tokenizer.model")
    cases["othervocab"] = (d, "tokenizer.model", "vocab_size")
    cases["nofolder"] = (tmp_path / "nothing", "nothing", "missing")
    for name, (folder, file, reason) in cases.items():
        with pytest.raises(CheckpointError) as info:
            load_checkpoint(folder)
        assert file in str(info.value) and reason in str(info.value), (name, str(info.value))


def test_no_unpickling_anywhere():
    import pathlib
    import re

    root = pathlib.Path(__file__).resolve().parents[2]
    offenders = []
    for path in [*root.glob("model/**/*.py"), *root.glob("viz/**/*.py"), *root.glob("ui/**/*.py"),
                 root / "app.py"]:
        if not path.exists():
            continue
        text = path.read_text(encoding="utf-8")
        for m in re.finditer(r"torch\.load\((.*)", text):
            if "weights_only=True" not in m.group(1):
                offenders.append(f"{path}: {m.group(0)}")
        if re.search(r"^\s*import pickle|pickle\.loads?\(|import dill|joblib\.load", text, re.M):
            offenders.append(f"{path}: pickle")
    assert not offenders
