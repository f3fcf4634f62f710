"""The operator's settings: every ATTN_* environment variable, read in this one place.

`settings()` returns a frozen `Settings` built from the environment as it is at the call (so a
test's monkeypatched variable is seen), parsed once per distinct set of values. A value that
does not parse, or is out of range, raises `SettingsError` naming the variable; the app shows
that one line instead of the page, and `main()` (run by `make run` before the server starts)
prints it and exits with status 2. An empty value counts as unset.

`settings_table()` renders docs/limits.md's table of settings from the same fields, so the two
cannot drift (tests/unit/test_settings.py ties them).
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Callable, Mapping, MutableMapping
from dataclasses import dataclass, field, fields
from functools import lru_cache
from pathlib import Path
from typing import Any

DEVICES = ("cpu", "cuda", "auto")


class SettingsError(ValueError):
    """An ATTN_* variable with a value the app cannot use; the message names the variable."""

    def __init__(self, name: str, value: str, problem: str) -> None:
        super().__init__(f"{name}={value!r} is not valid: {problem}")
        self.name = name


def _number(kind: type, low: float, *, above: bool = False) -> Callable[[str], Any]:
    """A parser for an int or float that is finite and >= low (> low when above)."""
    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            wanted = "a whole number" if kind is int else "a number"
            raise ValueError(f"expected {wanted}") from None
        if not math.isfinite(value):
            raise ValueError("expected a finite number")
        if value < low or (above and value == low):
            raise ValueError(f"must be {'more than' if above else 'at least'} {low:g}")
        return value
    return parse


def _flag(text: str) -> bool:
    if text not in ("0", "1"):
        raise ValueError("expected 1 (on) or 0 (off)")
    return text == "1"


def _device(text: str) -> str:
    text = text.lower()
    if text not in DEVICES:
        raise ValueError(f"expected one of {', '.join(DEVICES)}")
    return text


def model_entries(spec: str) -> tuple[Path, ...]:
    """ATTN_MODELS' entries: os.pathsep-separated like PATH, blanks around an entry dropped."""
    return tuple(Path(e).expanduser() for e in (p.strip() for p in spec.split(os.pathsep)) if e)


def _setting(env: str, default: Any, parse: Callable[[str], Any], unit: str, doc: str) -> Any:
    """A Settings field: its variable, how its text parses, its unit and one line for the docs."""
    return field(default=default, metadata={"env": env, "parse": parse, "unit": unit, "doc": doc})


@dataclass(frozen=True)
class Settings:
    """The server's settings (defaults sized for a 2-core, 24 GiB machine; docs/limits.md)."""

    checkpoints_dir: Path = _setting(
        "ATTN_CHECKPOINTS_DIR", Path("checkpoints"), Path, "folder",
        "Folder of checkpoint folders the picker offers (relative: from the repository root).")
    models: tuple[Path, ...] = _setting(
        "ATTN_MODELS", (), model_entries, "folders",
        "More models for the picker, `:`-separated like `PATH`: model folders, or folders of them.")
    allow_hub: bool = _setting(
        "ATTN_ALLOW_HUB", False, _flag, "0 or 1",
        "1: a `ckpt` link may name a Hugging Face hub id (downloaded); else the hub stays offline.")
    device: str = _setting(
        "ATTN_DEVICE", "cpu", _device, "cpu, cuda, auto",
        "Where Hugging Face models run; without a GPU, `cuda` and `auto` run on the CPU.")
    trace_cache_mb: float = _setting(
        "ATTN_TRACE_CACHE_MB", 2048.0, _number(float, 0), "MB (2²⁰ bytes)",
        "Bytes of recorded Traces kept for every session (least recently used go first).")
    inflight_mb: float = _setting(
        "ATTN_INFLIGHT_MB", 3072.0, _number(float, 0, above=True), "MB (2²⁰ bytes)",
        "Estimated peak memory of the model runs admitted at once.")
    runs: int = _setting(
        "ATTN_RUNS", 1, _number(int, 1), "runs",
        "Model runs computing at once; torch gets cores ÷ runs threads each.")
    # a class that presses Enter together waits rather than being turned away; queued pages
    # hold no model memory (the budget bounds that), only a place in line
    queue: int = _setting(
        "ATTN_QUEUE", 64, _number(int, 0), "pages",
        "Pages that may wait for the model; one more is told the server is busy.")
    queue_timeout_s: float = _setting(
        "ATTN_QUEUE_TIMEOUT_S", 90.0, _number(float, 0), "seconds",
        "How long a page waits in the queue before it is told the server is busy.")
    spill_dir: str = _setting(
        "ATTN_SPILL_DIR", "", str, "folder",
        "Where long mode writes long texts' queries and keys (blank: the system's temp folder).")

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """Settings from `env` (default os.environ); SettingsError names the first bad variable."""
        env = os.environ if env is None else env
        return _parsed(tuple(env.get(f.metadata["env"]) for f in fields(cls)))


NAMES = tuple(f.metadata["env"] for f in fields(Settings))  # every variable, in table order


def _read(f: Any, text: str | None) -> Any:
    """One field's value from its variable's text (None or blank: the default)."""
    if text is None or not text.strip():
        return f.default
    try:
        return f.metadata["parse"](text.strip())
    except ValueError as exc:
        raise SettingsError(f.metadata["env"], text, str(exc)) from None


@lru_cache(maxsize=16)
def _parsed(values: tuple[str | None, ...]) -> Settings:
    return Settings(**{f.name: _read(f, v) for f, v in zip(fields(Settings), values, strict=True)})


def settings() -> Settings:
    """The settings as the environment holds them now (parsed once per distinct environment)."""
    return Settings.from_env()


settings.cache_clear = _parsed.cache_clear  # type: ignore[attr-defined]


def keep_hub_offline(env: MutableMapping[str, str] | None = None) -> None:
    """Set HF_HUB_OFFLINE=1 unless ATTN_ALLOW_HUB=1; called before transformers is imported.
    A bad ATTN_ALLOW_HUB keeps the hub offline (start-up then reports the value)."""
    env = os.environ if env is None else env
    hub = next(f for f in fields(Settings) if f.name == "allow_hub")
    try:
        allowed = _read(hub, env.get(hub.metadata["env"]))
    except SettingsError:
        allowed = False
    if not allowed:
        env.setdefault("HF_HUB_OFFLINE", "1")


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, tuple):
        return os.pathsep.join(map(str, value)) or "(none)"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value) or "(none)"


def defaults() -> dict[str, str]:
    """Each variable's default as docs/limits.md writes it (e.g. "ATTN_QUEUE": "64")."""
    return {f.metadata["env"]: _shown(f.default) for f in fields(Settings)}


def settings_table() -> str:
    """docs/limits.md's markdown table of every setting: variable, default, unit, meaning."""
    rows = ["| variable | default | unit | what it sets |", "|---|---|---|---|"]
    shown = defaults()
    for f in fields(Settings):
        meta = f.metadata
        rows.append(f"| `{meta['env']}` | {shown[meta['env']]} | {meta['unit']} | {meta['doc']} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    """Check the environment's settings: exit 2 with one line naming a bad one, else print
    them (nothing with --check); --table prints docs/limits.md's table. `make run` checks first."""
    argv = sys.argv[1:] if argv is None else argv
    if argv == ["--table"]:
        print(settings_table())
        return 0
    try:
        current = settings()
    except SettingsError as exc:
        print(f"attention lab: {exc}", file=sys.stderr)
        return 2
    for f in fields(current) if argv != ["--check"] else ():
        print(f"{f.metadata['env']}={_shown(getattr(current, f.name))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
