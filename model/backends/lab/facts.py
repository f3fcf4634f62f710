"""What the lab's own Transformers are, for the sentences a page says about them.

Everything is read off the checkpoint (its config and SentencePiece model) or the network's
own code (model.masks.MASK_FILL), so a retrained or differently configured lab model
is described as it is.
"""

from __future__ import annotations

from ...checkpoint import Bundle
from ...masks import MASK_FILL
from ..base import Facts
from .tokenizer import LANG_TAGS


def lab_facts(bundle: Bundle, translates: bool) -> Facts:
    """model.backends.Facts of a lab checkpoint."""
    cfg, tok = bundle.config, bundle.tokenizer
    specials = [(tok.id_to_piece(tok.pad_id), "pad"), (tok.id_to_piece(tok.bos_id), "bos"),
                (tok.id_to_piece(tok.eos_id), "eos")]
    specials += [(tag, "language") for tag in LANG_TAGS.values()]
    return Facts(
        tokenizer="sentencepiece", word_mark="▁", specials=tuple(specials),
        # the lab's translators are trained on the project's English and Korean corpus
        languages=tuple(LANG_TAGS), positional=cfg.pos_encoding,
        pad_positions="pad_row",  # positions count from 1; row 0 belongs to the pad (seed 000)
        token_types=False, mask_fill="-1e9", mask_fill_value=float(MASK_FILL), norm=cfg.norm,
        embedding_norm=False,  # embeddings × √d_model + positions go straight into layer 0
        activation=cfg.activation, pooling="none", normalize=False,
        output="translation" if translates else "hidden",
        effect_unit="nats" if translates else "hidden",
        max_positions=int(cfg.max_len) - 1, trained_length=None)
