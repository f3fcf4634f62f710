"""Cross attention against gold word alignments: which source word each target word looks at."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..backends import word_index

# Gold word alignments exist only for the project's corpus, read by the lab's translators,
# whose SentencePiece pieces open a word with this mark (their Facts.word_mark)
MARK = "▁"


def alignment_agreement(trace, align: Sequence[Sequence[tuple[int, int]]],
                        src_is_en: Sequence[bool], weights: np.ndarray | None = None
                        ) -> np.ndarray:
    """(L, H) share of aligned target words whose attention argmax lands on a gold source word.

    For target word w, the rows are the decoder positions that predict w's pieces; attention is
    summed over each source word's pieces and averaged over those rows. `weights`: any
    (L, B, H, T, S) map to score instead of trace.attn["cross"], e.g. trace.norms["cross"].
    """
    cross = trace.attn["cross"] if weights is None else weights  # (L, B, H, T, S)
    n_l, _, n_h = cross.shape[:3]
    hits = np.zeros((n_l, n_h))
    total = 0
    for b, pairs in enumerate(align):
        src_w = word_index(trace.src_tokens[b], MARK)
        out_pieces = trace.tgt_tokens[b][1:] + ["</s>"]  # position t predicts input t+1
        tgt_w = word_index(out_pieces, MARK)
        n_src_words = max((w for w in src_w if w is not None), default=-1) + 1
        onehot = np.zeros((len(src_w), n_src_words))
        for i, w in enumerate(src_w):
            if w is not None:
                onehot[i, w] = 1.0
        gold: dict[int, set[int]] = {}
        for en_i, ko_i in pairs:
            s_i, t_i = (en_i, ko_i) if src_is_en[b] else (ko_i, en_i)
            gold.setdefault(t_i, set()).add(s_i)
        for t_word, s_words in gold.items():
            rows = [t for t, w in enumerate(tgt_w) if w == t_word]
            if not rows:
                continue
            a = cross[:, b][:, :, rows, : len(src_w)].mean(axis=2)  # (L, H, S_b)
            per_word = a @ onehot  # (L, H, words)
            hits += np.isin(per_word.argmax(-1), list(s_words))
            total += 1
    return hits / max(total, 1)


def alignment_metrics(alpha: np.ndarray, norms: np.ndarray) -> dict:
    """card.json entries for (L, H) agreement shares of the weights α and of ‖αf(x)‖:
    per-head tables in percent and the best head of each."""
    out: dict = {}
    for suffix, table in (("", alpha), ("_norms", norms)):
        best = np.unravel_index(int(table.argmax()), table.shape)
        out[f"alignment{suffix}_per_head"] = [[round(float(x) * 100, 1) for x in row]
                                              for row in table]
        out[f"best_alignment{suffix}_head"] = {"layer": int(best[0]), "head": int(best[1]),
                                               "agreement": round(float(table[best]) * 100, 1)}
    return out
