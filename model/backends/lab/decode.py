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


def greedy(model, src: torch.Tensor, *, bos: int, eos: int, pad: int,
           max_steps: int | Sequence[int], top_k: int = 5, never: Sequence[int] = ()
           ) -> tuple[list, list, list, list]:
    """Greedy decoding of a (B, S) batch; the encoder runs once, the decoder once per step on
    the newest position (earlier positions are kept in a PrefixCache). max_steps: one limit
    for every row, or one per row (a row stops at its own limit, unfinished, while the others
    go on).

    Returns per sentence: generated ids, per-step top-k (id, prob), chosen prob, finished
    (ended with eos, not stopped by its limit).
    """
    b = src.size(0)
    limits = [max_steps] * b if isinstance(max_steps, int) else list(max_steps)
    if len(limits) != b:
        raise ValueError(f"{len(limits)} step limits for {b} rows")
    last = torch.tensor(limits, dtype=torch.long)  # (B,) the step count at which a row stops
    never = sorted({pad, bos, *never})
    memory = model.encode(src)  # (B, S, D)
    ys = torch.full((b, 1), bos, dtype=torch.long)  # (B, 1 + steps so far)
    done = torch.zeros(b, dtype=torch.bool)  # (B,) ended or at its limit: nothing more recorded
    ended = torch.zeros(b, dtype=torch.bool)  # (B,) wrote eos
    out: list[list[int]] = [[] for _ in range(b)]
    tops: list[list[list[tuple[int, float]]]] = [[] for _ in range(b)]
    chosen: list[list[float]] = [[] for _ in range(b)]
    past = PrefixCache(len(model.decoder.layers))  # each step runs the new position only
    for step in range(max(limits, default=0)):
        logits = model.project(model.decode(ys, memory, src, past)[:, -1:])[:, 0]  # (B, V)
        logits[:, never] = float("-inf")  # pad, bos and language tags are never generated
        probs = torch.softmax(logits.float(), dim=-1)
        p_top, i_top = probs.topk(min(top_k, probs.size(-1)), dim=-1)  # (B, k)
        nxt = i_top[:, 0]  # (B,)
        ids_k, probs_k, stopped = i_top.tolist(), p_top.tolist(), done.tolist()
        for row in range(b):
            if stopped[row]:
                continue
            tops[row].append(list(zip(ids_k[row], probs_k[row], strict=True)))
            chosen[row].append(probs_k[row][0])
            if ids_k[row][0] != eos:
                out[row].append(ids_k[row][0])
        nxt = nxt.masked_fill(done, pad)  # a stopped row reads pad from now on; never recorded
        ended = ended | nxt.eq(eos)
        done = done | ended | last.le(step + 1)
        ys = torch.cat([ys, nxt.unsqueeze(1)], dim=1)
        if bool(done.all()):
            break
    return out, tops, chosen, ended.tolist()


# Each greedy step runs the decoder on the new position only (K/V kept in a PrefixCache), but
# its attention still reads the whole prefix, so a row's cost grows with its steps². Two limits
# keep a call that never ends (long lines a model never closes) to seconds per 16 such rows,
# and the call's time linear in its rows, without letting one line's room depend on the others
# in the call (a batch-wide budget once gave a 300-row call 14 steps a row):
ROW_STEPS = 256  # the most steps any one row gets (what a single sentence always had)
CHUNK_WORK = 16 * ROW_STEPS ** 2  # rows × steps² one greedy call may hold: 16 rows of the full
# 256 steps, or more rows of shorter room (short sentences keep the speed of one big batch)


def default_max_steps(bundle, src_len: int) -> int:
    """Room for the translation of a source of src_len pieces (specials included): twice the
    source plus a margin, within the position table and ROW_STEPS. The same for a row alone
    and a row among any number of others."""
    return max(1, min(bundle.config.max_len - 2, 2 * src_len + 10, ROW_STEPS))


def chunks(limits: Sequence[int], order: Sequence[int]) -> list[list[int]]:
    """Rows, taken in `order`, cut into greedy calls of at most CHUNK_WORK rows × steps² (the
    call's largest limit): a row's output never depends on the chunk it lands in."""
    out: list[list[int]] = []
    part: list[int] = []
    top = 0
    for i in order:
        grown = max(top, limits[i])
        if part and (len(part) + 1) * grown ** 2 > CHUNK_WORK:
            out.append(part)
            part, grown = [], limits[i]
        part.append(i)
        top = grown
    return out + [part] if part else out


def translate_native(bundle, batch, *, max_len: int | None = None, top_k: int = 5,
                     ablate: Iterable[Head] | str = ()) -> list[Translation]:
    """Greedy translation for the lab's own model of a model.batch.Batch (its sources' ids).
    Each row gets its own step limit (max_len for all, else default_max_steps of its own
    length) and rows are decoded in chunks(), so what a sentence comes out as does not depend
    on how many other sentences share the call."""
    model, tok = bundle.model, bundle.tokenizer
    sources, langs = batch.sources, batch.langs
    src = torch.from_numpy(batch.src_ids)  # (B, S) right-padded to the call's longest row
    lengths = [len(ids) for ids in batch.src_lists]
    if max_len is not None:
        limits = [max(1, min(max_len, bundle.config.max_len - 2))] * len(lengths)
    else:
        limits = [default_max_steps(bundle, n) for n in lengths]
    # rows of similar length share a chunk: less padding, and a chunk stops when its rows do
    order = sorted(range(len(lengths)), key=lengths.__getitem__)
    decoded: dict[int, tuple] = {}
    with torch.inference_mode(), hooks(ablation_hooks(checked_heads(bundle, ablate))):
        for part in chunks(limits, order):
            width = max(1, max(lengths[i] for i in part))
            chunk = src[part, :width]  # (C, S') the chunk's rows, padding beyond them dropped
            got = greedy(model, chunk, bos=tok.bos_id, eos=tok.eos_id, pad=tok.pad_id,
                         max_steps=[limits[i] for i in part], top_k=top_k,
                         never=list(tok.lang_ids.values()))
            for j, i in enumerate(part):
                decoded[i] = tuple(field[j] for field in got)
    result = []
    known = getattr(bundle, "known_words", None)
    for i, text in enumerate(sources):
        ids, tops, chosen, finished = decoded[i]
        named = [[(tok.id_to_piece(t), p) for t, p in step] for step in tops]
        out = tok.decode(ids)
        result.append(Translation(source=text, target_lang=langs[i], text=out,
                                  ids=ids, pieces=tok.ids_to_pieces(ids), steps=named,
                                  probs=chosen, finished=bool(finished),
                                  uncovered=len(uncovered_words(text, out, known))))
    return result
