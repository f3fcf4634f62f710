"""The Setup of a clean/corrupted pair for the lab's own Transformer (any of its shapes).

Encoder–decoder: both sources in the clean source's target language, the decoder fed the
clean target (given, or the clean greedy translation) up to the metric's step, teacher-forced
in both runs. Decoder-only: the text is the decoder input, the metric at its last position.
Encoder-only: the readout is the mean of the encoder output over positions.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from ...batch import Batch
from ...hooks import Head
from ...pairs import (
    Setup,
    check_same_length,
    checked_step,
    first_difference,
    nothing_differs,
    pair_batch,
    pair_decoded,
)
from .langs import target_langs


def lab_setup(backend, clean: str, corrupted: str, *, target: str | None, step: int | None,
              target_lang: str | None, ablate: frozenset[Head],
              encoded: Batch | None = None, decoded: Sequence | None = None) -> Setup:
    """Tokenise (or read `encoded`, the pair's Batch made in the clean sentence's target
    language), decode (or read `decoded`, the pair's greedy translation with these heads
    knocked out), check and decide where the metric is read; nothing patched yet."""
    bundle = backend.bundle
    model, tok, cfg = bundle.model, bundle.tokenizer, bundle.config
    if model.training:
        model.eval()
    has_enc, has_dec = model.encoder is not None, model.decoder is not None
    limit = cfg.max_len - 1
    if target is not None and not (has_enc and has_dec):
        raise ValueError("target= is for encoder–decoder models (the text to teacher-force)")
    pieces = tok.ids_to_pieces
    outputs = ("", "")
    position, chosen = -1, None
    sides = {}
    if has_enc:
        lang = target_langs(bundle, [clean], target_lang)[0]
        batch = pair_batch(encoded, clean, corrupted, (lang, lang)) \
            or backend.encode([clean, corrupted], None, lang)  # tokenized once, for both uses
        src_c, src_r = (list(ids) for ids in batch.src_lists)
        check_same_length(src_c, src_r, pieces, "sentences")
        ids_c, ids_r = src_c, src_r
        sides["enc"] = len(model.encoder.layers)
    if has_dec:
        sides["dec"] = len(model.decoder.layers)
    if has_enc and has_dec:
        done = pair_decoded(decoded, clean, corrupted, (lang, lang)) \
            or backend.translate(batch, ablate=ablate)
        body = done[0].ids if target is None else tok.encode(target)
        body = list(body)[: limit - 1]
        chosen = checked_step(step, first_difference(done[0].ids, done[1].ids), len(body))
        dec_c = dec_r = [tok.bos_id, *body][: chosen + 1]
        position = chosen
        outputs = (done[0].text, done[1].text)
    elif has_dec:  # decoder-only: the typed text itself is the decoder input
        given = pair_batch(encoded, clean, corrupted)
        if given is not None and given.tgt_lists is not None:  # the text as decoder input
            dec_c, dec_r = (list(ids) for ids in given.tgt_lists)
        else:
            dec_c, _ = tok.target_ids(clean, limit)
            dec_r, _ = tok.target_ids(corrupted, limit)
        check_same_length(dec_c, dec_r, pieces, "sentences")
        ids_c, ids_r = dec_c, dec_r
        position = len(dec_c) - 1
    if ids_c == ids_r:
        raise nothing_differs(pieces(ids_c))

    def tensor(clean_ids: Sequence[int], corr_ids: Sequence[int], which: Sequence[str]
               ) -> torch.Tensor:
        return torch.tensor([list(clean_ids if w == "clean" else corr_ids) for w in which],
                            dtype=torch.long)  # (R, n)

    def run(which: Sequence[str], grad: bool) -> torch.Tensor:
        """(R, V) logits at the metric's position, or (R, D) the mean encoder output."""
        with torch.enable_grad() if grad else torch.no_grad():
            if not has_dec:
                return model.encode(tensor(ids_c, ids_r, which)).mean(dim=1)
            memory = src = None
            if has_enc:
                src = tensor(ids_c, ids_r, which)
                memory = model.encode(src)
            dec = tensor(dec_c, dec_c if has_enc else dec_r, which)
            return model.project(model.decode(dec, memory, src)[:, position])

    lengths = {}
    shown, shown_r = {}, {}
    if has_enc:
        lengths["enc"] = len(ids_c)
        shown["enc"], shown_r["enc"] = pieces(ids_c), pieces(ids_r)
    if has_dec:
        lengths["dec"] = len(dec_c)
        shown["dec"], shown_r["dec"] = pieces(dec_c), pieces(dec_r)
    return Setup(run=run, kinds={k: bundle.n_layers(k) for k in bundle.kinds}, sides=sides,
                 lengths=lengths, n_heads=cfg.n_heads, clean_ids=list(ids_c),
                 corrupted_ids=list(ids_r), position=position, pieces=shown,
                 corrupted_pieces=shown_r, outputs=outputs, step=chosen, lm=has_dec,
                 id_to_piece=tok.id_to_piece, token_id=lambda s: _piece_id(tok, s),
                 never=(tok.pad_id, tok.bos_id, *tok.lang_ids.values()))


def _piece_id(tok, text: str) -> int:
    """A piece ('▁고양이') or a word that is one piece ('고양이') -> its id."""
    i = tok.sp.piece_to_id(text)
    if i != tok.unk_id or text == tok.id_to_piece(tok.unk_id):
        return int(i)
    ids = tok.encode(text)
    if len(ids) != 1:
        raise ValueError(f"{text!r} is {len(ids)} pieces ({' '.join(tok.ids_to_pieces(ids))}); "
                         "answer and wrong must be one piece each")
    return int(ids[0])
