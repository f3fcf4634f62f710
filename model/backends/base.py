"""The contract every model kind implements: text in, Batch, estimate, Trace, translation out.

Shape legend: B sentences, S source / T target positions, L layers, H heads.

A backend wraps one loaded Bundle. Views, analyses and the app hold a backend (or call the
public model.capture / model.translate, which route through one) and ask its `caps`; they
never compare a kind string. The registry in model/backends/__init__.py maps a Bundle's kind
to its backend class and lets each class claim a checkpoint folder.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Protocol, runtime_checkable

from ..batch import Batch
from ..budget import Dims, Estimate
from ..capture import Trace
from ..checkpoint import Bundle
from ..decode import Translation
from ..forced import Forced, StepAttribution
from ..hooks import Head, HookFn
from ..long.trace import LongTrace
from ..pairs import Setup

# Hook groups a view may need: the Trace's field groups (model.capture.GROUPS) and named sets
# of raw hooks that only some backends have ("embed": token and position terms; "steps":
# every attention block's intermediates; "tour": layer 0's residual, LayerNorm and FFN).
NEED_GROUPS = ("attn", "scores", "q", "k", "v", "hidden", "logits", "norms",
               "embed", "steps", "tour")
EVERYTHING: frozenset[str] = frozenset(NEED_GROUPS)
# the caller's gate around a run: admit(estimate, work) calls work() once admitted (or returns
# what the caller already has); work() -> (Trace, decoded Translations or None)
Admit = Callable[[Estimate, Callable[[], "tuple[Trace, list[Translation] | None]"]], Any]


@dataclass(frozen=True)
class Capabilities:
    """What a loaded model can do, so views and analyses branch on abilities, not kinds."""

    lab: bool  # one of this project's own Transformers (checkpoints/ or save_checkpoint)
    translates: bool  # greedy translation through model.translate (the lab's encoder–decoders)
    kinds: tuple[str, ...]  # attention kinds present: enc_self, dec_self, cross
    family: str  # "seq2seq", "decoder" (decoder-only) or "encoder" (encoder-only)
    positional: str  # "sinusoidal" | "learned" | "rotary" | "relative_bias" | "none"
    norm: str  # "pre" or "post" LayerNorm: logit attribution is exact only for "pre"
    grouped_kv: bool  # query heads share key/value heads (GQA/MQA)
    head_outputs: bool  # per-head context and W_O are known (norms, contributions, patching)
    ablates: bool  # heads can be knocked out through the recorder
    logit_attribution: bool  # direct logit attribution is possible (pre-LN with a final norm)
    raw_hooks: bool = False  # every intermediate has a named hook (steps view, tour, embed)
    activation: str = ""  # the FFN's activation where the model says ("gelu", "relu"…)
    d_ff: int = 0  # the FFN's hidden width where known (0: unknown)
    weighted_norms: bool = False  # ‖α·f(x)‖ computable: each layer's output projection known
    teacher_forced: bool = True  # greedy/forced/forced_values run: ablation, the scan
    logit_lens: bool = False  # unembed() reads every decoder layer out (the logit lens)
    generates: bool = False  # generate(): greedy continuation of a decoder-only model
    pad_row: bool = False  # row 0 of the position table belongs to the pad (positions from 1)
    long_context: bool = False  # capture_long(): self-attention over one long text, reduced
    components: bool = False  # circuit_weights, qk_parts, ov_parts, direct_logits answer
    embeds: bool = False  # embed(): one pooled vector per line (a sentence-transformers model)



@dataclass(frozen=True)
class Facts:
    """What a model is, in the words a page may say about it: every model-dependent sentence
    (tokens, padding, masks, the tour, effect units) is chosen from these, never written for
    one model. Each backend answers for its own models (Backend.facts)."""

    tokenizer: str  # "sentencepiece" | "wordpiece" | "byte_bpe" | "word" | "plain"
    word_mark: str  # "▁" (starts a word), "Ġ" (a space before), "##" (continues a word) or ""
    specials: tuple[tuple[str, str], ...]  # (piece, role): role "start", "end", "separator",
    #                                        "pad", "unknown", "mask", "language", "bos", "eos"
    languages: tuple[str, ...]  # scripts its vocabulary covers, as language codes ("en", "ko")
    positional: str  # Capabilities.positional
    pad_positions: str  # "none" (pads get no position), "counted" (pads take the next rows,
    #                     BERT), "pad_row" (pads read a reserved row, the lab's row 0)
    token_types: bool  # a token-type (segment) embedding is added (BERT)
    mask_fill: str  # "-1e9" (the lab's seeds) or "dtype_min" (the dtype's most negative value)
    mask_fill_value: float  # the number itself
    norm: str  # "pre" or "post" LayerNorm
    embedding_norm: bool  # a LayerNorm right after the embeddings (BERT), before layer 0
    activation: str  # the FFN's activation ("gelu", "relu", "silu"…; "" unknown)
    pooling: str  # "none", "mean", "cls" or "max": how one vector per sentence is made
    normalize: bool  # that vector is scaled to length 1 (sentence-transformers' Normalize)
    output: str  # "translation", "next_token" (a distribution over pieces), "hidden" (last
    #              hidden states only) or "embedding" (one pooled vector per sentence)
    effect_unit: str  # what a knock-out's effect is measured in: "nats" (log-probability of
    #                   the model's own output), "hidden" (change of the last hidden state) or
    #                   "cosine" (change of a cosine between sentence embeddings)
    max_positions: int  # the most pieces one input may hold (the position limit)
    trained_length: int | None  # the longest input it was trained for, where it says (or None)
    norm_kind: str = "LayerNorm"  # the norm's name: "LayerNorm" or "RMSNorm" (no mean removed)
    score_softcap: float | None = None  # scores pass through c · tanh(s / c) before the mask
    #                                     (Gemma 2's attn_logit_softcapping), else None

@runtime_checkable
class Backend(Protocol):
    """One model kind behind one interface (see docs/layout.md, "Backends")."""

    kind: ClassVar[str]  # the Bundle.kind it serves; only model/backends/ reads it
    forward_costs: ClassVar[dict]  # budget.Dims fields: how its forward spends memory
    bundle: Bundle

    @classmethod
    def claims(cls, folder: Path, raw_config: Any) -> bool:
        """Whether a checkpoint folder (its parsed config.json) is this kind's."""

    @classmethod
    def load(cls, folder: Path, raw_config: Any) -> Bundle:
        """Load a claimed folder; problems raise CheckpointError naming the file."""

    @property
    def caps(self) -> Capabilities:
        """model.backends.Capabilities of this bundle (cheap, cached)."""

    @property
    def facts(self) -> Facts:
        """model.backends.Facts of this bundle: what pages may say about it (cheap)."""

    def encode(self, lines: Sequence[str], targets: Sequence[str] | None = None,
               target_lang: str | None = None) -> Batch:
        """Tokenize the lines (and teacher-forced targets) once into a Batch."""

    def dims(self, batch: Batch, forced: bool = False) -> Dims:
        """The shapes a capture of this batch will have (forced: a teacher-forced pass over
        the model's longest possible output, for ablation and scans)."""

    def estimate(self, batch: Batch, needs: Collection[str] | None = None) -> Estimate:
        """Peak bytes of capture(batch, needs), from the shapes alone."""

    def names(self, needs: Collection[str] | None) -> list[str] | None:
        """The capture names (field groups and raw hooks) that give these need groups."""

    def capture(self, batch: Batch, needs: Collection[str] | None = None,
                ablate: Iterable[Head] | str = (), *,
                decoded: Sequence[Translation] | None = None) -> Trace:
        """One recorded forward pass; `needs` None records everything."""

    def translate(self, batch: Batch, *, max_len: int | None = None, top_k: int = 5,
                  ablate: Iterable[Head] | str = ()) -> list[Translation]:
        """Greedy translation with per-step top-k (ValueError where caps.translates is False)."""

    def patch_setup(self, clean: str, corrupted: str, *, target: str | None,
                    step: int | None, target_lang: str | None,
                    ablate: frozenset[Head], encoded: Batch | None = None,
                    decoded: Sequence[Translation] | None = None) -> Setup:
        """A clean/corrupted pair ready for model.patching: tokenized once and checked (same
        piece counts, something differs), the metric's position chosen, and a `run(which,
        grad)` that feeds rows of either input with the hooks in force (model/pairs.py).
        `encoded`: the pair's Batch where the caller made it (pairs.pair_batch says when it
        serves), read instead of tokenizing again; `decoded`: a translator's greedy output
        for the pair, read instead of decoding again (pairs.pair_decoded)."""

    def forward(self, src: Any, src_mask: Any, tgt: Any, tgt_mask: Any) -> Any:
        """One forward on given ids, torch (B, S) source and (B, T) decoder input on the
        model's device (either side (B, 0) where the model has none), with their masks (1 = a
        real token), under the hooks the caller installed (model.hooks); the output is the
        model's own. The analyses that run the model on ids, not text, go through this."""

    def greedy(self, sources: Sequence[str], target_lang: str | None = None,
               ablate: Iterable[Head] | str = ()) -> list[Translation]:
        """What the model writes for each source by itself (translation, continuation, or
        nothing), with heads knocked out: the before/after of ablation."""

    def forced(self, sources: Sequence[str], target_lang: str | None = None, *,
               outputs: Sequence[Sequence[int]] | None = None,
               target: str | None = None) -> Forced:
        """The teacher-forced batch (model.forced.Forced) that ablation, the importance scan
        and the knock-out score: `outputs` are greedy() ids to force, `target` a text (one
        sentence); neither: what the model writes by itself."""

    def forced_values(self, forced: Forced, fns: dict[str, HookFn]) -> Any:
        """(B, T) float64 log-probability of each output id (0 where not valid), or for
        forced.measure "hidden" the (B, T, D) last hidden states; hooks `fns` attached."""

    def attribution(self, source: str, target: str | None, target_lang: str | None,
                    step: int | None, token_id: int | None, k: int) -> StepAttribution:
        """One decoder step of one sentence explained (model.forced.StepAttribution): its
        logits, the one-row input `step_logits` knocks heads out on, and the direct logit
        attribution per head where caps.logit_attribution (ValueError where the model cannot
        explain a step at all)."""

    def step_logits(self, inputs: dict[str, Any], step: int, fns: dict[str, HookFn]) -> Any:
        """float64 numpy (R, V): logits at `step` of R rows of attribution().inputs, with the
        hooks `fns` attached (the knock-out sweep)."""

    def qk_terms(self, trace: Trace, kind: str, layer: int, head: int, query: int, key: int,
                 batch: int = 0) -> dict[str, float]:
        """{term: value} adding up to trace.scores[kind][layer, batch, head, query, key], the
        terms chosen by how the model knows positions (indices already checked; ValueError
        where no decomposition exists). model/qkparts.py holds the shared algebra."""

    def head_weights(self, kind: str, layer: int) -> dict[str, Any]:
        """W_Q, W_K, W_V, W_O (D, D) in the x @ W convention and b_Q … b_O (D,) of one block,
        float32 copies (the steps view; ValueError where caps.raw_hooks is False)."""

    def circuit_weights(self, kind: str, layer: int) -> dict[str, Any]:
        """One layer's heads as float64 numpy, x @ W form: W_Q, W_K, W_V (H, D, Dh) (grouped
        key/value heads repeated per query head), W_O (H, Dh, D), b_Q, b_K, b_V (H, Dh),
        b_O (D,) (zeros where none), kv_groups (H,); norm_q,
        norm_k, norm_v: γ (D,) of the pre-norm each side reads through (None: none, post-LN);
        centred: that norm removes the mean (LayerNorm, not RMSNorm) (composition scores,
        query–key components; ValueError for a layout it cannot split)."""

    def qk_parts(self, trace: Trace, kind: str, layer: int, head: int, query: int, key: int,
                 batch: int = 0) -> tuple[dict[str, Any], dict[str, Any], float, float]:
        """(query parts, key parts, scale, constant): the head's query and key at those
        positions as float64 (Dh,) vectors per upstream component (embedding, position,
        "L{l}H{h}", "MLP {l}", "bias"), norms frozen at their actual scale, rotation applied,
        adding up to q and k; score = scale · q·k + constant (T5's relative position bias;
        0 elsewhere) (model.analysis.qk_components; ValueError where the stream cannot be
        split)."""

    def ov_parts(self, trace: Trace, kind: str, layer: int, head: int, keys: Sequence[int],
                 batch: int = 0) -> dict[str, Any]:
        """{component: float64 (len(keys), Dh)}: the head's value vector at each key position
        split by upstream component as in qk_parts (norms frozen at each key's actual scale,
        b_V in "bias"), adding up to the recorded values (model.analysis.ov_components;
        ValueError where the stream cannot be split)."""

    def direct_logits(self, trace: Trace, kind: str, layer: int, query: int, write: Any,
                      batch: int = 0) -> Any:
        """float64 (V,) (or (n, V) for rows (n, D)): what `write`, added to the stream after
        (kind, layer)'s attention at position `query`, adds to the logits there along the
        direct path, every later norm frozen at its actual scale (ValueError where the stream
        that head writes into reaches no logits, or the path is not linear)."""

    def capture_long(self, batch: Batch, pixels: int, qk_dtype: str,
                     qk_store: str = "memory") -> LongTrace:
        """The first line's self-attention in long mode (model/long/): chunked over queries,
        reduced as computed, Q and K kept in qk_dtype, in memory or on disk (qk_store;
        only where caps.long_context)."""

    def unembed(self, states: Any) -> Any:
        """(…, D) torch residual states -> (…, V) logits through the final norm and the
        unembedding, as the model's own output (the logit lens; ValueError where
        caps.logit_lens is False)."""

    def hook_names(self) -> list[str]:
        """Every raw hook name this model offers, in forward order (empty: groups only)."""

    def vocabulary(self) -> list[str]:
        """Every piece of the tokenizer, by id."""

    def position_kind(self, pos_table: Any) -> str:
        """How positions enter, for the positional view: 'sinusoidal' or 'learned' (a table
        in Trace.pos_table), 'rotary', 't5' (relative bias) or 'none'."""

    def rotary_frequencies(self) -> Any:
        """θ_i per rotated dimension pair, float64 (Dh/2,), or None without rotary positions."""

    def relative_bias(self, n: int) -> dict[str, Any]:
        """{'encoder'|'decoder': float32 (H, n, n)} relative position bias (T5), else {}."""
