"""Warm start: begin training from an earlier checkpoint whose tokenizer differs.

Shapes: the old checkpoint's token embedding is (V_old, D) and the new model's (V_new, D);
every other tensor must have the same shape in both. A piece that both vocabularies hold keeps
its learned row; a piece new to this vocabulary starts at the mean of the old rows of the
pieces the old tokenizer spells it with, so a new word begins near its parts. The output layer
is tied to the embedding, so it moves with it.
"""

from __future__ import annotations

from pathlib import Path

import torch
from safetensors.torch import load_file

from model.backends.lab.tokenizer import Tokenizer
from model.backends.lab.transformer import Transformer

EMBED = "tok_embed.weight"


def warm_start(model: Transformer, tok: Tokenizer, folder: str | Path) -> dict[str, int]:
    """Load folder's weights into model, remapping token rows by piece; returns counts of
    rows kept (same piece) and rows composed from old pieces."""
    folder = Path(folder)
    old_tok = Tokenizer(folder / "tokenizer.model")
    state = load_file(str(folder / "model.safetensors"))
    old_embed = state.pop(EMBED)  # (V_old, D)
    own = model.state_dict()
    for name, tensor in state.items():
        if name not in own or own[name].shape != tensor.shape:
            raise ValueError(f"{folder}: {name} {tuple(tensor.shape)} does not fit this model")
    old_index = {old_tok.id_to_piece(i): i for i in range(old_tok.vocab_size)}
    embed = own[EMBED].clone()  # (V_new, D)
    kept = composed = 0
    for i in range(tok.vocab_size):
        piece = tok.id_to_piece(i)
        j = old_index.get(piece)
        if j is not None:
            embed[i], kept = old_embed[j], kept + 1
            continue
        parts = [k for k in old_tok.encode(piece.replace("▁", " ")) if k != old_tok.unk_id]
        if parts:
            embed[i], composed = old_embed[parts].mean(0), composed + 1
    state[EMBED] = embed
    missing = set(own) - set(state)
    if missing:
        raise ValueError(f"{folder}: lacks {sorted(missing)[:3]}")
    with torch.no_grad():
        model.load_state_dict(state, strict=True)
    return {"kept": kept, "composed": composed, "vocab": tok.vocab_size}
