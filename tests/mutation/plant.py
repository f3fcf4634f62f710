"""A pytest plugin that plants one wrong result at a public library function.

    ATTN_PLANT=<name> python -m pytest -p tests.mutation.plant <one view test>

Each plant is an error a reader of the page could not see: the view would draw a plausible
but wrong picture. tests/mutation/test_mutations.py runs the view test named for each plant
under it, in a fresh process (so no Streamlit cache or session holds an honest result), and
requires that test to fail. With ATTN_PLANT unset the plugin does nothing.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import replace

import numpy as np
import pytest

ENV = "ATTN_PLANT"
PLANTED = pytest.StashKey[str]()


def composition_qk_swapped() -> tuple[object, str, Callable]:
    """Q- and K-composition exchanged (each computed as the other)."""
    from model.analysis import composition

    honest = composition.pair_scores
    swap = {"q": "k", "k": "q"}

    def planted(earlier, later, sides=("q", "k", "v")):
        got = honest(earlier, later, tuple(swap.get(s, s) for s in sides))
        return {swap.get(s, s): v for s, v in got.items()}

    return composition, "pair_scores", planted


def previous_token_q_minus_2() -> tuple[object, str, Callable]:
    """The previous-token detector reads key q − 2 instead of q − 1."""
    import importlib
    import importlib.util

    from model.analysis import detectors  # noqa: F401  (binds previous_token where it is used)
    from model.capture import query_side

    home = next(m for m in (importlib.import_module(f"model.analysis.{n}") for n in (
        "detector_scores", "detectors") if importlib.util.find_spec(f"model.analysis.{n}"))
        if hasattr(m, "previous_token"))

    def planted(trace, kind):
        attn = trace.attn[kind]  # (L, B, H, Q, K)
        total, rows = np.zeros((attn.shape[0], attn.shape[2])), 0
        for b, pieces in enumerate(trace.tokens(query_side(kind))):
            q = np.arange(2, len(pieces))
            total += attn[:, b][:, :, q, q - 2].astype(np.float64).sum(-1)
            rows += len(q)
        return total, rows

    return home, "previous_token", planted


def long_last_key_pixel_missing() -> tuple[object, str, Callable]:
    """The pooled long-mode maps lose their last key pixel (its column reads 0)."""
    from model.long.reduce import LayerReducer

    honest = LayerReducer.pooled_mean

    def planted(self):
        out = honest(self)  # (H, P, P)
        out[..., -1] = 0.0
        return out

    return LayerReducer, "pooled_mean", planted


def patch_layers_flipped() -> tuple[object, str, Callable]:
    """Activation patching's per-head effects with the layers in reverse order."""
    import model.patching as patching

    honest = patching.patch

    def planted(*args, **kwargs):
        p = honest(*args, **kwargs)
        return replace(p, heads={k: np.ascontiguousarray(v[::-1]) for k, v in p.heads.items()})

    return patching, "patch", planted


def history_loss_one_probe_late() -> tuple[object, str, Callable]:
    """The training history's held-out loss shifted one probe later (an off-by-one)."""
    from training.lm import history

    honest = history.read_history

    def planted(folder):
        h = honest(folder)
        if h is not None:
            loss = h.series["val_loss"]
            h.series["val_loss"] = np.concatenate([loss[:1], loss[:-1]])
        return h

    return history, "read_history", planted


def dla_heads_reversed() -> tuple[object, str, Callable]:
    """Direct logit attribution with each layer's heads in reverse order (same total)."""
    from model.analysis import contributions

    honest = contributions.head_contributions

    def planted(*args, **kwargs):
        c = honest(*args, **kwargs)
        if c.dla:
            c = replace(c, dla={k: np.ascontiguousarray(v[:, ::-1]) for k, v in c.dla.items()})
        return c

    return contributions, "head_contributions", planted


PLANTS: dict[str, Callable[[], tuple[object, str, Callable]]] = {
    "composition_qk_swapped": composition_qk_swapped,
    "previous_token_q_minus_2": previous_token_q_minus_2,
    "long_last_key_pixel_missing": long_last_key_pixel_missing,
    "patch_layers_flipped": patch_layers_flipped,
    "history_loss_one_probe_late": history_loss_one_probe_late,
    "dla_heads_reversed": dla_heads_reversed,
}


def plant(name: str) -> None:
    """Replace the function everywhere it is bound: its own module or class, and any module
    already imported that took it by `from … import`."""
    owner, attr, planted = PLANTS[name]()
    honest = getattr(owner, attr)
    setattr(owner, attr, planted)
    for module in list(sys.modules.values()):
        for key, value in list(getattr(module, "__dict__", {}).items()):
            if value is honest:
                setattr(module, key, planted)


def pytest_configure(config) -> None:
    name = os.environ.get(ENV)
    if name:
        plant(name)
        config.stash[PLANTED] = name


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    """One line naming the plant, shown even under -q (test_mutations reads it)."""
    name = config.stash.get(PLANTED, None)
    if name:
        terminalreporter.write_line(f"planted error: {name}")

