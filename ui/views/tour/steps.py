"""The guided tour's steps: seed 000's path on the typed sentence, with the model's numbers.

The tour view (ui/views/tour/__init__.py) shows one of these steps per screen. Each step
draws a title, two or three sentences, the tensor shapes in the seeds' notation (bs,
n_enc_seq …) with the sizes under the model's own config names (where.Names: n_embd,
hidden_size, num_attention_heads …) and figures from viz/. Every sentence is chosen from
what the model is (where.Facts: capabilities and the Trace), so nothing is said that
the model cannot back. A step a model cannot show (a Hugging Face model records no W_O input
or FFN; a decoder-only model has no encoder) says so in a note and keeps its number, so
`step=7` means the same step for every model.

    where.py    Where (the walked stack, one head's walk, its figures by name) and Facts
    inputs.py   steps 1–6: pieces, padding, embedding, positions, their sum, the mask
    head.py     steps 7–13: Q, K, V, QKᵀ, scaling, masking, softmax, ·V, W_O
    layers.py   steps 14–19: residual, FFN, the next layer, decoder mask, cross, output
"""

from __future__ import annotations

from collections.abc import Callable

from ui.i18n import N_
from ui.views.tour import head, inputs, layers
from ui.views.tour.where import Where

Draw = Callable[[Where], None]

STEPS: dict[str, tuple[str, Draw]] = {  # id -> (title, renderer); titles translated when shown
    "pieces": (N_("Pieces and ids"), inputs.pieces),
    "padding": (N_("Padding"), inputs.padding),
    "embedding": (N_("Embedding lookup"), inputs.embedding),
    "positional": (N_("Positions"), inputs.positional),
    "sum": (N_("What the first layer reads"), inputs.embedding_sum),
    "pad_mask": (N_("The attention mask"), inputs.pad_mask),
    "qkv": (N_("Q, K and V of one head"), head.qkv),
    "qk": (N_("QKᵀ"), head.scores),
    "scale": (N_("Scaling the scores"), head.scale),
    "mask": (N_("Masking the blocked cells"), head.mask_fill),
    "softmax": (N_("Softmax"), head.softmax),
    "context": (N_("·V"), head.context),
    "concat": (N_("Heads concatenated, ·W_O"), head.concat),
    "residual": (N_("Residual and normalisation"), layers.residual),
    "ffn": (N_("FFN and its activation"), layers.ffn),
    "next": (N_("The next layer"), layers.next_layer),
    "subsequent": (N_("Decoder: the subsequent mask"), layers.subsequent),
    "cross": (N_("Cross-attention"), layers.cross),
    "output": (N_("Output softmax and the predicted piece"), layers.output),
}

# The hook groups each step reads (the app records only these; model.backends.NEED_GROUPS).
# Every step reads attention and hidden states through Where.dims and Where.head.
_BASE = frozenset({"attn", "hidden"})
_HEAD_STEPS = _BASE | {"q", "k", "v", "scores", "steps"}  # one head's walk, step by step
NEEDS: dict[str, frozenset[str]] = {
    "pieces": _BASE, "padding": _BASE, "embedding": _BASE | {"embed"},
    "positional": _BASE, "sum": _BASE | {"embed"}, "pad_mask": _BASE,
    **dict.fromkeys(("qkv", "qk", "scale", "mask", "softmax", "context", "concat"), _HEAD_STEPS),
    # residual and ffn rebuild layer 0 from the weights on a Hugging Face model: v too
    "residual": _HEAD_STEPS | {"tour"}, "ffn": _BASE | {"v", "tour"}, "next": _BASE,
    "subsequent": _BASE, "cross": _BASE, "output": _BASE | {"logits"},
}

__all__ = ["NEEDS", "STEPS", "Where"]
