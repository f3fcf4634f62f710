"""What a Hugging Face model is, for the sentences a page says about it.

Read off the loaded model and its files, never guessed from its name: the tokenizer's own
specials and vocabulary, the modules the network holds (a token-type embedding, a LayerNorm on
the embeddings, a position table with a pad row), the recorder's mask fill (the dtype's
minimum, as transformers' eager attention adds) and the sentence-transformers files
(model.backends.hf.sentence) where the folder has them.
"""

from __future__ import annotations

import re

import torch

from ...checkpoint import Bundle
from ..base import Capabilities, Facts
from .segments import segment_table

# the tokenizer attribute naming each special and the role it plays
ROLES = (("cls_token", "start"), ("sep_token", "separator"), ("bos_token", "bos"),
         ("eos_token", "eos"), ("pad_token", "pad"), ("unk_token", "unknown"),
         ("mask_token", "mask"))
MARKS = {"sentencepiece": "▁", "byte_bpe": "Ġ", "wordpiece": "##"}
EMBED_NORMS = ("embeddings.LayerNorm", "layernorm_embedding", "embeddings.layer_norm",
               "emb_ln", "embed_layer_norm")
POSITION_TABLES = ("position_embeddings", "wpe", "embed_positions")
HANGUL = re.compile(r"[\uac00-\ud7a3]")  # whole syllables: jamo alone do not make Korean
LATIN = re.compile(r"^(##|▁|Ġ)?[A-Za-z]{2,}$")


def vocabulary_kind(pieces: list[str]) -> str:
    """How a vocabulary marks words, from its pieces (the same reading as the tour's)."""
    counts = {kind: sum(p.startswith(mark) and len(p) > len(mark) for p in pieces)
              for kind, mark in MARKS.items()}
    kind, most = max(counts.items(), key=lambda kv: kv[1])
    return kind if most >= max(3, len(pieces) // 100) else "plain"


def languages(pieces: list[str]) -> tuple[str, ...]:
    """Languages the vocabulary can write in whole pieces: English where it holds many Latin
    words, Korean where it holds Hangul syllables (a few stray jamo are not enough)."""
    found = []
    if sum(bool(LATIN.match(p)) for p in pieces) >= 200:
        found.append("en")
    if sum(bool(HANGUL.search(p)) for p in pieces) >= 200:
        found.append("ko")
    return tuple(found)


def specials(tokenizer) -> tuple[tuple[str, str], ...]:
    out: list[tuple[str, str]] = []
    for attr, role in ROLES:
        piece = getattr(tokenizer, attr, None)
        if isinstance(piece, str) and piece and all(piece != p for p, _r in out):
            out.append((piece, role))
    return tuple(out)


def pad_positions(model: torch.nn.Module, positional: str) -> str:
    """What the pad slots get: transformers numbers every slot 0 … n−1 (pads included) unless
    the position table keeps a row for the pad (RoBERTa's padding_idx), or positions are a
    relative bias between real tokens (T5)."""
    if positional == "relative_bias":
        return "none"
    for name, module in model.named_modules():
        if name.rsplit(".", 1)[-1] in POSITION_TABLES and getattr(module, "padding_idx", None) \
                is not None:
            return "pad_row"
    return "counted"


def hf_facts(bundle: Bundle, caps: Capabilities, pieces: list[str]) -> Facts:
    """model.backends.Facts of a Hugging Face bundle (its capabilities and vocabulary given)."""
    model, cfg, hf = bundle.model, bundle.config, bundle.config.hf
    names = [n for n, _m in model.named_modules()]
    sentence = getattr(bundle, "sentence", None)
    pooling = getattr(sentence, "pooling", "none") if sentence is not None else "none"
    if caps.family == "encoder":
        output = "embedding" if pooling != "none" else "hidden"
    else:
        output = "next_token" if model.get_output_embeddings() is not None else "hidden"
    activation = str(getattr(hf, "hidden_act", None) or getattr(hf, "activation_function", None)
                     or getattr(hf, "hidden_activation", None) or caps.activation or "")
    dtype = next((p.dtype for p in model.parameters() if p.is_floating_point()), torch.float32)
    kind = vocabulary_kind(pieces)
    return Facts(
        tokenizer=kind, word_mark=MARKS.get(kind, ""), specials=specials(bundle.tokenizer),
        languages=languages(pieces), positional=caps.positional,
        pad_positions=pad_positions(model, caps.positional),
        token_types=segment_table(model) is not None,  # two types: RoBERTa's one row is not
        # the lab's recorder blocks cells as transformers' eager path does: the dtype's minimum
        mask_fill="dtype_min", mask_fill_value=float(torch.finfo(dtype).min), norm=caps.norm,
        embedding_norm=any(n.endswith(EMBED_NORMS) for n in names), activation=activation,
        pooling=pooling, normalize=bool(getattr(sentence, "normalize", False)), output=output,
        effect_unit={"next_token": "nats", "embedding": "cosine"}.get(output, "hidden"),
        max_positions=int(cfg.max_len),
        trained_length=getattr(sentence, "max_seq_length", None),
        # Llama, Mistral, Qwen, Gemma, T5: RMSNorm scales without removing the mean
        norm_kind="RMSNorm" if any(_is_rms(m) for m in model.modules()) else "LayerNorm",
        score_softcap=float(cap) if (cap := getattr(hf, "attn_logit_softcapping", None))
        else None)


def _is_rms(module) -> bool:
    """An RMS norm: named so (Llama, Gemma, Qwen), or T5's, which is named T5LayerNorm but
    keeps transformers' RMS-norm attribute variance_epsilon and is no torch LayerNorm."""
    return "RMSNorm" in type(module).__name__ or (
        hasattr(module, "variance_epsilon") and not isinstance(module, torch.nn.LayerNorm))
