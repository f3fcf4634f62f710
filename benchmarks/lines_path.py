"""Follow the typed lines from app.py's run_model to the capture (issue 23): every call, in
this repository's code, that receives the lines in some form (a line, the list or tuple of
them, or a Batch of them), in call order, until the capture (capture_native/capture_hf) has
returned.

    python -m benchmarks.lines_path [view]        # in a checkout; prints stops, files, returns

A stop is one such call; a return is a stop in a file that the path had left before (the
previous stop was in another file) — whether the file was left by a call or by returning.
"""

from __future__ import annotations

import inspect
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LINES = ("The cat eats fish.", "겨울은 추워요.")
ENDS = {"capture_native", "capture_hf"}


def _carries(value) -> bool:
    if isinstance(value, str):
        return value in LINES
    if isinstance(value, list | tuple) and value:
        return any(isinstance(v, str) and v in LINES for v in value)
    sources = getattr(value, "sources", None)  # a Batch, or a Trace
    return isinstance(sources, tuple | list) and tuple(sources) == LINES and \
        type(value).__name__ == "Batch"


def follow(view: str = "attention") -> list[str]:
    """'file:function' of each stop, the capture last."""
    import app
    from model import load_checkpoint

    bundle = load_checkpoint(ROOT / "checkpoints" / "paper")
    stops: list[str] = []
    done = False

    def profile(frame, event, _arg):
        nonlocal done
        if event == "return" and frame.f_code.co_name in ENDS:
            done = True  # the capture has run: the path ends where it returns
        if event != "call" or done:
            return
        path = Path(frame.f_code.co_filename)
        if ROOT not in path.parents or ".venv" in path.parts:
            return
        values = [frame.f_locals.get(n) for n in
                  frame.f_code.co_varnames[:frame.f_code.co_argcount
                                           + frame.f_code.co_kwonlyargcount]]
        if any(_carries(v) for v in values):
            stops.append(f"{path.relative_to(ROOT)}:{frame.f_code.co_name}")

    args = [bundle, "lines-path", list(LINES), None, {"lang": "auto", "ablate": ""}]
    if "needs" in inspect.signature(app.run_model).parameters:
        from ui.views import view_needs

        args.append(view_needs(view, {}, {}))
    sys.setprofile(profile)
    try:
        app.run_model(*args)
    finally:
        sys.setprofile(None)
    return stops


def returns(stops: list[str]) -> list[str]:
    """The stops in a file the path had left before (the previous stop was elsewhere)."""
    files = [s.split(":")[0] for s in stops]
    return [stop for i, (stop, file) in enumerate(zip(stops, files, strict=True))
            if i > 0 and files[i - 1] != file and file in files[:i]]


def summary(stops: list[str]) -> list[str]:
    """The stops numbered, then the files and the returns."""
    files = [s.split(":")[0] for s in stops]
    out, seen, back = [], [], 0
    for i, (stop, file) in enumerate(zip(stops, files, strict=True)):
        here = i > 0 and files[i - 1] != file and file in seen
        back += here
        seen.append(file)
        out.append(f"{i + 1:2d}. {stop}" + ("   <- return" if here else ""))
    out.append(f"{len(stops)} stops in {len(set(files))} files, {back} returns")
    return out


if __name__ == "__main__":
    print("\n".join(summary(follow(*sys.argv[1:]))))
