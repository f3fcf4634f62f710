"""The views, in the order of the view bar: name -> View(label, render, applies, needs).

A view is a module ui/views/<name>.py with render(ctx); register it in VIEWS below. The view
bar and app.py's dispatch both read VIEWS, and the name is the `view=` URL parameter.
applies(bundle) returns None, or a short reason why the view has nothing to show for that
model; the page then shows the reason instead of the view.

`needs` are the hook groups the view reads (model.backends.NEED_GROUPS: the Trace's field
groups, and "embed", "steps", "tour" for raw hooks), or a function of (session state, link
parameters) giving them when they depend on a widget (the norms toggle, the tour's step).
The app records only those for the view on screen (ui/runtime.cached_capture).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from model import Bundle
from model.backends import EVERYTHING, capabilities, is_translator
from ui.context import Ctx
from ui.i18n import N_, _
from ui.state import link_int
from ui.views import (
    atlas,
    attention,
    bertviz,
    cache,
    compare,
    contrib,
    embeddings,
    flow,
    generate,
    heads,
    knows,
    masks,
    measure,
    patch,
    positional,
    qkmap,
    similarity,
    steps,
    tokens,
    tour,
    training,
    translation,
    why,
)
from ui.views.tour.steps import NEEDS as TOUR_NEEDS
from ui.views.tour.steps import STEPS as TOUR_STEPS


def every_model(bundle: Bundle) -> str | None:
    """Applies to every model (the view says inside itself what a model lacks)."""
    return None


def translates(bundle: Bundle) -> str | None:
    """Greedy decoding step by step with top-k needs the lab's own translators."""
    if is_translator(bundle):
        return None
    caps = capabilities(bundle)
    what = {"decoder": N_("a decoder-only model continues text rather than translating"),
            "encoder": N_("an encoder-only model writes no text")}.get(
        caps.family if caps.teacher_forced else "", N_("its decoding is transformers' generate()"))
    if caps.family == "encoder" and caps.teacher_forced:  # it writes nothing to step through
        return _("This view steps through what this project's encoder–decoder checkpoints "
                 "write (top-k at each step, with that step's cross-attention); an encoder-only "
                 "model writes no text. The heads view's “Knock out heads” shows how its last "
                 "hidden states change without heads.")
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
    needs: frozenset[str] | Callable[[Mapping, Mapping], frozenset[str]] = EVERYTHING


def with_norms(*groups: str) -> Callable[[Mapping, Mapping], frozenset[str]]:
    """These groups, and the weighted norms only while the α / ‖αf(x)‖ toggle is on."""
    def needs(state: Mapping, link: Mapping) -> frozenset[str]:
        return frozenset(groups) | ({"norms"} if measure.wants_norms(state, link) else set())
    return needs


def tour_needs(state: Mapping, link: Mapping) -> frozenset[str]:
    """What the tour's current step reads (ui/views/tour/steps.NEEDS)."""
    ids = list(TOUR_STEPS)
    i = state.get(tour.STATE_KEY)
    if i is None:  # not opened yet: the step the link names (tour.step_from_link checks it)
        raw = str(link.get("step", "1"))
        number = link_int(raw)
        i = number - 1 if number is not None else 0
    return TOUR_NEEDS[ids[min(len(ids) - 1, max(0, int(i)))]]


HEAD = frozenset({"attn"})  # head_picker reads the layers and heads from the attention

VIEWS: dict[str, View] = {
    "tokens": View(N_("Tokens & padding"), tokens.render, needs=frozenset()),
    "masks": View(N_("Masks"), masks.render, needs=frozenset({"attn", "scores"})),
    "attention": View(N_("Attention"), attention.render, needs=with_norms("attn")),
    "bertviz": View(N_("bertviz"), bertviz.render, needs=with_norms("attn")),
    "steps": View(N_("Inside one head"), steps.render,
                  needs=frozenset({"attn", "scores", "q", "k", "v", "steps"})),
    "positional": View(N_("Positional encoding"), positional.render,
                       needs=frozenset({"scores", "embed"})),
    "embeddings": View(N_("Embeddings by layer"), embeddings.render,
                       needs=frozenset({"hidden"})),
    "translation": View(N_("Translation"), translation.render, translates,
                        needs=frozenset({"attn", "logits"})),
    "knows": View(N_("What this model knows"), knows.render, knows.applies,
                  needs=frozenset()),
    "heads": View(N_("Heads"), heads.render, needs=HEAD),
    "compare": View(N_("Compare"), compare.render, needs=HEAD),
    "contrib": View(N_("Head contributions"), contrib.render, contrib.applies, needs=HEAD),
    "flow": View(N_("Information flow"), flow.render, flow.applies,
                 needs=frozenset({"hidden", "norms"})),
    "qkmap": View(N_("Query–key map"), qkmap.render, needs=HEAD),
    "patch": View(N_("Patching"), patch.render, needs=frozenset()),
    "why": View(N_("Why this head attends"), why.render, why.applies,
                needs=frozenset({"attn", "scores", "v", "hidden"})),
    "tour": View(N_("Guided tour"), tour.render, needs=tour_needs),
    "generate": View(N_("Generation"), generate.render, generate.applies, needs=frozenset()),
    "cache": View(N_("KV cache"), cache.render, cache.applies, needs=frozenset()),
    "training": View(N_("Training"), training.render, training.applies, needs=frozenset()),
    "atlas": View(N_("Head atlas"), atlas.render, needs=frozenset()),
    "similarity": View(N_("Sentence similarity"), similarity.render, similarity.applies,
                       needs=frozenset({"hidden"})),
}


def view_needs(name: str, state: Mapping, link: Mapping) -> frozenset[str]:
    """The hook groups view `name` reads now (its needs, resolved against the widgets)."""
    needs = VIEWS[name].needs
    return needs(state, link) if callable(needs) else needs


def view_label(name: str) -> str:
    """The view bar's label for a view name, in the session's language."""
    return _(VIEWS[name].label)
