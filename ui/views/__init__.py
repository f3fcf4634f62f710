"""The views, in the order of the view bar: name -> View(label, render, applies).

A view is a module ui/views/<name>.py with render(ctx); register it in VIEWS below. The view
bar and app.py's dispatch both read VIEWS, and the name is the `view=` URL parameter.
applies(bundle) returns None, or a short reason why the view has nothing to show for that
model; the page then shows the reason instead of the view.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from model import Bundle
from ui.context import Ctx
from ui.i18n import N_, _
from ui.views import (
    attention,
    bertviz,
    compare,
    contrib,
    embeddings,
    flow,
    heads,
    knows,
    masks,
    positional,
    qkmap,
    steps,
    tokens,
    tour,
    translation,
)


def every_model(bundle: Bundle) -> str | None:
    """Applies to every model (the view says inside itself what a model lacks)."""
    return None


def translates(bundle: Bundle) -> str | None:
    """Greedy decoding step by step with top-k needs the lab's own translators."""
    if bundle.kind == "native" and "cross" in bundle.kinds:
        return None
    what = {"decoder": N_("a decoder-only model continues text rather than translating"),
            "encoder": N_("an encoder-only model writes no text")}.get(
        getattr(bundle.config, "family", ""), N_("its decoding is transformers' generate()"))
    return _("Step-by-step translation (top-k at each step, with that step's cross-attention) "
             "is drawn for this project's encoder–decoder checkpoints; {what}. The heads view's "
             "“Knock out heads” shows what this model writes with and without heads.").format(
                 what=_(what))


@dataclass(frozen=True)
class View:
    """One entry of the view bar."""

    label: str
    render: Callable[[Ctx], None]
    applies: Callable[[Bundle], str | None] = every_model


VIEWS: dict[str, View] = {
    "tokens": View(N_("Tokens & padding"), tokens.render),
    "masks": View(N_("Masks"), masks.render),
    "attention": View(N_("Attention"), attention.render),
    "bertviz": View(N_("bertviz"), bertviz.render),
    "steps": View(N_("Inside one head"), steps.render),
    "positional": View(N_("Positional encoding"), positional.render),
    "embeddings": View(N_("Embeddings by layer"), embeddings.render),
    "translation": View(N_("Translation"), translation.render, translates),
    "knows": View(N_("What this model knows"), knows.render, knows.applies),
    "heads": View(N_("Heads"), heads.render),
    "compare": View(N_("Compare"), compare.render),
    "contrib": View(N_("Head contributions"), contrib.render, contrib.applies),
    "flow": View(N_("Information flow"), flow.render, flow.applies),
    "qkmap": View(N_("Query–key map"), qkmap.render, qkmap.applies),
    "tour": View(N_("Guided tour"), tour.render),
}


def view_label(name: str) -> str:
    """The view bar's label for a view name, in the session's language."""
    return _(VIEWS[name].label)
