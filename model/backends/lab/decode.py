"""The lab's greedy decoding with per-step top-k probabilities, and its source batches."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import torch

from ...confidence import uncovered_words
from ...decode import Translation, checked_heads
from ...hooks import Head, ablation_hooks, hooks
from .transformer import PrefixCache


def source_batch(bundle, sources: Sequence[str], langs: Sequence[str | None]
                 ) -> tuple[torch.Tensor, list[list[int]], list[int]]:
    """Padded (B, S) source ids, the unpadded lists, and how many pieces were cut per sentence."""
    limit = bundle.config.max_len - 1  # row 0 of the position table is reserved for pad
    lists, cuts = [], []
    for text, lang in zip(sources, langs, strict=True):
        ids, cut = bundle.tokenizer.source_ids(text, lang, limit)
        lists.append(ids)
        cuts.append(cut)
    return torch.from_numpy(bundle.tokenizer.pad(lists)), lists, cuts


def greedy(model, src: torch.Tensor, *, bos: int, eos: int, pad: int, max_steps: int,
           top_k: int = 5, never: Sequence[int] = ()) -> tuple[list, list, list, list]:
    """Greedy decoding of a (B, S) batch; the encoder runs once, the decoder once per step on
    the newest position (earlier positions are kept in a PrefixCache).

    Returns per sentence: generated ids, per-step top-k (id, prob), chosen prob, finished.
    """
    b = src.size(0)
    never = sorted({pad, bos, *never})
    memory = model.encode(src)  # (B, S, D)
    ys = torch.full((b, 1), bos, dtype=torch.long)
    done = torch.zeros(b, dtype=torch.bool)
    out: list[list[int]] = [[] for _ in range(b)]
    tops: list[list[list[tuple[int, float]]]] = [[] for _ in range(b)]
    chosen: list[list[float]] = [[] for _ in range(b)]
    past = PrefixCache(len(model.decoder.layers))  # each step runs the new position only
    for _ in range(max_steps):
        logits = model.project(model.decode(ys, memory, src, past)[:, -1:])[:, 0]  # (B, V)
        logits[:, never] = float("-inf")  # pad, bos and language tags are never generated
        probs = torch.softmax(logits.float(), dim=-1)
        p_top, i_top = probs.topk(min(top_k, probs.size(-1)), dim=-1)  # (B, k)
        nxt = i_top[:, 0]
        ids_k, probs_k, finished = i_top.tolist(), p_top.tolist(), done.tolist()
        for row in range(b):
            if finished[row]:
                continue
            tops[row].append(list(zip(ids_k[row], probs_k[row], strict=True)))
            chosen[row].append(probs_k[row][0])
            if ids_k[row][0] != eos:
                out[row].append(ids_k[row][0])
        nxt = nxt.masked_fill(done, pad)
        done = done | nxt.eq(eos)
        ys = torch.cat([ys, nxt.unsqueeze(1)], dim=1)
        if bool(done.all()):
            break
    return out, tops, chosen, done.tolist()

MAX_DECODE_WORK = 256 * 256  # batch rows × steps²: each greedy step runs the decoder on the new
# position only (K/V kept in a PrefixCache), but its attention still reads the whole prefix, so
# cost still grows with rows × steps². This budget keeps the worst case (16 long lines a trained
# model never ends) to seconds.


def default_max_steps(bundle, src_len: int, rows: int = 1) -> int:
    """Room for a translation: twice the source plus a margin, within the position table and
    the decoding budget (256 steps for one sentence, 64 for a batch of 16)."""
    budget = int((MAX_DECODE_WORK / max(1, rows)) ** 0.5)
    return max(1, min(bundle.config.max_len - 2, 2 * src_len + 10, budget))


def translate_native(bundle, batch, *, max_len: int | None = None, top_k: int = 5,
                     ablate: Iterable[Head] | str = ()) -> list[Translation]:
    """Greedy translation for the lab's own model of a model.batch.Batch (its sources' ids)."""
    model, tok = bundle.model, bundle.tokenizer
    sources, langs = batch.sources, batch.langs
    src = torch.from_numpy(batch.src_ids)
    rows, src_len = src.shape
    steps = max_len if max_len is not None else default_max_steps(bundle, src_len, rows)
    steps = max(1, min(steps, bundle.config.max_len - 2))
    with torch.inference_mode(), hooks(ablation_hooks(checked_heads(bundle, ablate))):
        ids, tops, chosen, finished = greedy(model, src, bos=tok.bos_id, eos=tok.eos_id,
                                             pad=tok.pad_id, max_steps=steps, top_k=top_k,
                                             never=list(tok.lang_ids.values()))
    result = []
    for i, text in enumerate(sources):
        named = [[(tok.id_to_piece(t), p) for t, p in step] for step in tops[i]]
        out = tok.decode(ids[i])
        known = getattr(bundle, "known_words", None)
        result.append(Translation(source=text, target_lang=langs[i], text=out,
                                  ids=ids[i], pieces=tok.ids_to_pieces(ids[i]), steps=named,
                                  probs=chosen[i], finished=bool(finished[i]),
                                  uncovered=len(uncovered_words(text, out, known))))
    return result
