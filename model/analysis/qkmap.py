"""One head's queries and keys from many sentences in one 2-D map (after AttentionViz, VIS 2023).

Queries and keys of one head from a few hundred sentences (teacher-forced on their references,
so no decoding) are embedded jointly: PCA (numpy's SVD, pca.py) or scikit-learn's t-SNE after
PCA. As in AttentionViz, queries and keys are scaled by s and 1/s so their mean norms agree (q·k
unchanged), then keys are shifted so their mean equals the queries' mean (q·(k + c) adds the
same q·c to every key of a query, so softmax does not change): then a query lies near the keys
it attends to. One capture serves every head; each head's map is computed once (QKMapCache).

Shape legend: N points (queries + keys), Dh head size.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..capture import KIND_SIDES
from ..dispatch import capture
from .pca import principal_axes

METHODS = ("pca", "tsne")


@dataclass(frozen=True)
class Sentence:
    """One input: its source text, its reference (decoder input) and the target language."""

    source: str
    target: str | None
    target_lang: str | None
    source_lang: str = ""


@dataclass
class QKPoints:
    """Points of one head's map; arrays have one row per point (queries first, then keys)."""

    xy: np.ndarray  # float32 (N, 2)
    is_query: np.ndarray  # bool (N,)
    token: list[str]
    position: np.ndarray  # int (N,), 1-based as the model numbers tokens
    sentence: np.ndarray  # int (N,), index into `texts`
    lang: list[str]  # language of the token's side
    texts: list[str]  # the sentence each token belongs to (source, or target for the decoder)
    method: str
    explained: tuple[float, ...] = ()  # PCA: variance share of each axis


class _Captured:
    """Per-sentence q and k of every kind, layer and head, and the pieces they belong to;
    every list in the order of the sentences given."""

    def __init__(self, bundle, sentences: Sequence[Sentence], batch: int) -> None:
        n = len(sentences)
        self.q: dict[str, list] = {}  # kind -> per sentence (L, H, n, Dh)
        self.k: dict[str, list] = {}
        self.tokens: dict[str, list] = {"src": [None] * n, "tgt": [None] * n}
        self.langs = {"src": [s.source_lang for s in sentences],
                      "tgt": [s.target_lang or "" for s in sentences]}
        self.texts: dict[str, list] = {"src": [s.source for s in sentences], "tgt": [""] * n}
        self.kv_groups = None
        for start in range(0, n, batch):
            idx = range(start, min(n, start + batch))
            for lang in sorted({sentences[i].target_lang or "" for i in idx}):
                group = [i for i in idx if (sentences[i].target_lang or "") == lang]
                targets = [sentences[i].target for i in group]
                tr = capture(bundle, [sentences[i].source for i in group],
                             None if any(t is None for t in targets) else targets,
                             target_lang=lang or None, names=["q", "k"])
                if not tr.q or not tr.k:
                    raise ValueError("the global query–key map needs recorded queries and "
                                     "keys, which this model's trace does not have")
                self.kv_groups = getattr(tr, "kv_groups", None)
                for b, i in enumerate(group):
                    length = {"src": tr.length("src", b), "tgt": tr.length("tgt", b)}
                    for side in ("src", "tgt"):
                        self.tokens[side][i] = list(tr.tokens(side)[b])
                    self.texts["tgt"][i] = tr.targets[b] if tr.targets else ""
                    for kind in tr.q:
                        q_side, k_side = KIND_SIDES[kind]
                        # copies: a view would keep the whole padded batch alive
                        self.q.setdefault(kind, [None] * n)[i] = \
                            tr.q[kind][:, b, :, :length[q_side]].copy()
                        self.k.setdefault(kind, [None] * n)[i] = \
                            tr.k[kind][:, b, :, :length[k_side]].copy()


def embed(x: np.ndarray, method: str, seed: int) -> tuple[np.ndarray, tuple[float, ...]]:
    if method == "pca":  # numpy's SVD: importing scikit-learn costs a server ~120 MB (pca.py)
        mean, axes, shares = principal_axes(x)
        return (x - mean) @ axes.T, tuple(float(v) for v in shares)
    from sklearn.decomposition import PCA
    from sklearn.manifold import TSNE
    from threadpoolctl import threadpool_limits

    reduced = PCA(n_components=min(30, *x.shape), random_state=seed).fit_transform(x)
    perplexity = float(min(30.0, max(2.0, (x.shape[0] - 1) / 3)))
    tsne = TSNE(n_components=2, init="pca", perplexity=perplexity, random_state=seed,
                max_iter=500)
    # one OpenMP thread: on a busy 2-core server, t-SNE's spinning threads took 100× longer
    with threadpool_limits(limits=1):
        return tsne.fit_transform(reduced), ()


def head_vectors(data: _Captured, kind: str, layer: int, head: int
                 ) -> tuple[np.ndarray, np.ndarray, list[np.ndarray], list[np.ndarray]]:
    """One head's queries (Nq, Dh) and keys (Nk, Dh), shifted and scaled as described above,
    and the raw per-sentence arrays they came from."""
    if kind not in data.q:
        raise ValueError(f"no {kind!r} attention in this model; it has {sorted(data.q)}")
    n_layers, n_heads = data.q[kind][0].shape[:2]
    if not (0 <= layer < n_layers and 0 <= head < n_heads):
        raise ValueError(f"layer must be in 0..{n_layers - 1} and head in 0..{n_heads - 1}")
    kv = head if data.kv_groups is None else int(data.kv_groups[head])
    qs = [q[layer, head] for q in data.q[kind]]  # per sentence (n, Dh)
    ks = [k[layer, kv] for k in data.k[kind]]
    q_all = np.concatenate(qs).astype(np.float64)
    k_all = np.concatenate(ks).astype(np.float64)
    if not len(q_all) or not len(k_all):
        raise ValueError("the sentences have no tokens")
    scale = np.sqrt(np.linalg.norm(k_all, axis=1).mean() /
                    max(np.linalg.norm(q_all, axis=1).mean(), 1e-12))
    q_all, k_all = q_all * scale, k_all / max(scale, 1e-12)  # q·k unchanged
    return q_all, k_all - k_all.mean(0) + q_all.mean(0), qs, ks  # softmax ignores this shift


def head_points(data: _Captured, kind: str, layer: int, head: int, method: str = "pca",
                seed: int = 0) -> QKPoints:
    """The joint 2-D map of one head's queries and keys over every captured sentence."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}")
    q_all, k_all, qs, ks = head_vectors(data, kind, layer, head)
    q_side, k_side = KIND_SIDES[kind]
    xy, explained = embed(np.concatenate([q_all, k_all]), method, seed)
    tokens, positions, sentences, langs = [], [], [], []
    for side, parts in ((q_side, qs), (k_side, ks)):
        for s, part in enumerate(parts):
            pieces = data.tokens[side][s]
            tokens += pieces[: len(part)]
            positions += range(1, len(part) + 1)
            sentences += [s] * len(part)
            langs += [data.langs[side][s]] * len(part)
    n_q = len(q_all)
    texts = [f"{a} → {b}" if b else a for a, b in zip(data.texts["src"], data.texts["tgt"])]
    return QKPoints(xy=xy.astype(np.float32),
                    is_query=np.arange(len(xy)) < n_q, token=tokens,
                    position=np.asarray(positions), sentence=np.asarray(sentences),
                    lang=langs, texts=texts, method=method, explained=explained)


class QKMapCache:
    """One capture of q/k for a sentence set, and each head's map computed once.

    Thread-safe: a Streamlit server shares one instance between sessions.
    """

    def __init__(self, bundle, sentences: Sequence[Sentence], batch: int = 64) -> None:
        self.bundle, self.sentences, self.batch = bundle, list(sentences), batch
        self._data: _Captured | None = None
        self._maps: dict[tuple, QKPoints] = {}
        self._lock = threading.Lock()

    @property
    def built(self) -> bool:
        """Whether the sentences' q and k have been captured (data() returns at once)."""
        return self._data is not None

    def data(self) -> _Captured:
        with self._lock:
            if self._data is None:
                self._data = _Captured(self.bundle, self.sentences, self.batch)
            return self._data

    def get(self, kind: str, layer: int, head: int, method: str = "pca") -> QKPoints:
        key = (kind, int(layer), int(head), method)
        with self._lock:
            hit = self._maps.get(key)
        if hit is not None:
            return hit
        points = head_points(self.data(), kind, layer, head, method)
        with self._lock:
            self._maps[key] = points
        return points


def text_sentences(pairs: Sequence, n: int = 300) -> list[Sentence]:
    """n sentences of corpus pairs, alternately English and Korean, each read alone: the set
    for a model that does not translate (a language model or an encoder)."""
    return [Sentence(p.en, None, None, "en") if i % 2 == 0 else Sentence(p.ko, None, None, "ko")
            for i, p in enumerate(list(pairs)[:n])]


def corpus_sentences(pairs: Sequence, n: int = 300) -> list[Sentence]:
    """n pairs of a corpus split, alternately English→Korean and Korean→English."""
    out = []
    for i, p in enumerate(list(pairs)[:n]):
        if i % 2 == 0:
            out.append(Sentence(p.en, p.ko, "ko", "en"))
        else:
            out.append(Sentence(p.ko, p.en, "en", "ko"))
    return out
