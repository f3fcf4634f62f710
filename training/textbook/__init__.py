"""The first-year textbook's grammar (Korean 1, both semesters), one module per area.

Each area module exposes MAKERS: (weight, construction name, maker) with weights summing to 1
within the area; a maker takes a random.Random and returns a Pair or raises Reject. Here each
area gets its share of the textbook part of the corpus (corpus.py gives that part its share).
"""

from __future__ import annotations

from . import clauses, copy_through, degree, glue, modal, numbers, polite, speech

# area -> share of the textbook part of the corpus
# glue and copy-through (issue 42) come on top of the first six's 1.0: the others keep their
# relative shares
AREAS = ((speech, 0.16), (polite, 0.22), (clauses, 0.22), (degree, 0.15), (modal, 0.15),
         (numbers, 0.10), (glue, 0.14), (copy_through, 0.05))


def _scaled() -> tuple:
    out = []
    for module, share in AREAS:
        total = sum(w for w, _, _ in module.MAKERS) or 1.0
        out += [(share * w / total, name, fn) for w, name, fn in module.MAKERS]
    return tuple(out)


MAKERS = _scaled()
# sentences an area must get right whatever the draw (the examples): always in train
ANCHORS = tuple(p for module, _ in AREAS for p in getattr(module, "TEXTBOOK_ANCHORS", ()))
