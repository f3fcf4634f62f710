"""The lab's own encoder–decoder Transformer (checkpoints/, save_checkpoint) as a backend.

Shape legend: B sentences, S source / T target positions, L layers, H heads, D model size.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from pathlib import Path
from typing import Any, ClassVar

import torch

from ...batch import Batch
from ...budget import Dims, Estimate, estimate, groups_of
from ...capture import GROUPS, Trace
from ...checkpoint import Bundle
from ...decode import Translation
from ...forced import Forced, StepAttribution
from ...hooks import Head, HookFn, attn_prefix, hooks
from ...long.trace import LongTrace
from ...pairs import Setup
from ..base import Capabilities, Facts
from .capture import capture_native
from .checkpoint import load_native
from .decode import translate_native
from .dims import native_dims
from .langs import target_langs

# raw hooks behind the named need groups (base.NEED_GROUPS): what the embeddings view, the
# steps view and the tour read beyond the Trace's field groups
EMBED_HOOKS = ("encoder.hook_tok", "encoder.hook_pos", "decoder.hook_tok", "decoder.hook_pos")
STEP_HOOKS = ("hook_in", "hook_context", "hook_out")  # every attention block's
MEMORY_HOOK = "encoder.hook_out"  # what cross-attention's keys and values are made from
TOUR_HOOKS = ("hook_resid_mid", "ffn.hook_hidden")  # layer 0 of each stack


class LabBackend:
    """model.backends.base.Backend for the lab's own Transformer."""

    kind: ClassVar[str] = "native"
    forward_costs: ClassVar[dict] = {}  # budget.Dims' defaults are this forward's

    def __init__(self, bundle: Bundle) -> None:
        self.bundle = bundle

    @classmethod
    def claims(cls, folder: Path, raw_config: Any) -> bool:
        return isinstance(raw_config, dict) and "model_type" not in raw_config

    @classmethod
    def load(cls, folder: Path, raw_config: Any) -> Bundle:
        return load_native(folder, raw_config)

    @property
    def caps(self) -> Capabilities:
        bundle, cfg = self.bundle, self.bundle.config
        family = ("seq2seq" if cfg.n_enc_layers and cfg.n_dec_layers
                  else "decoder" if cfg.n_dec_layers else "encoder")
        return Capabilities(
            lab=True, translates="cross" in bundle.kinds, kinds=bundle.kinds, family=family,
            positional=cfg.pos_encoding, norm=cfg.norm, grouped_kv=False, head_outputs=True,
            ablates="cross" in bundle.kinds,
            logit_attribution=cfg.norm == "pre" and cfg.n_dec_layers > 0,
            raw_hooks=True, activation=cfg.activation, d_ff=cfg.d_ff, weighted_norms=True,
            teacher_forced="cross" in bundle.kinds, logit_lens="dec_self" in bundle.kinds,
            pad_row=True, components=True,
            long_context=True)

    @property
    def facts(self) -> Facts:
        from .facts import lab_facts

        return lab_facts(self.bundle, "cross" in self.bundle.kinds)

    def encode(self, lines: Sequence[str], targets: Sequence[str] | None = None,
               target_lang: str | None = None) -> Batch:
        """SentencePiece once per line (and once per teacher-forced target)."""
        bundle = self.bundle
        tok, model, limit = bundle.tokenizer, bundle.model, bundle.config.max_len - 1
        sources = tuple(lines)
        langs = target_langs(bundle, sources, target_lang)
        bodies = [tok.encode(text) for text in sources]
        lists, cuts = [], []
        for text, lang, body in zip(sources, langs, bodies, strict=True):
            ids, cut = tok.source_ids(text, lang, limit, body=body)
            lists.append(tuple(ids))
            cuts.append(cut)
        tgt_lists = None
        if targets is not None:
            tgt_lists = tuple(tuple(tok.target_ids(t, limit)[0]) for t in targets)
        elif model.encoder is None and model.decoder is not None:  # reads the text itself
            tgt_lists = tuple(tuple(tok.target_ids(t, limit, body=body)[0])
                              for t, body in zip(sources, bodies, strict=True))
        return Batch(sources=sources, target_lang=target_lang, langs=tuple(langs),
                     src_lists=tuple(lists), pieces=tuple(tuple(tok.ids_to_pieces(x))
                                                         for x in lists),
                     cuts=tuple(cuts), src_ids=tok.pad(lists), pad_id=tok.pad_id,
                     targets=tuple(targets) if targets is not None else None,
                     tgt_lists=tgt_lists)

    def dims(self, batch: Batch, forced: bool = False) -> Dims:
        if forced and batch.targets is not None:
            batch = Batch(**{**vars(batch), "targets": None, "tgt_lists": None})
        return native_dims(self.bundle, batch)

    def estimate(self, batch: Batch, needs: Collection[str] | None = None) -> Estimate:
        return estimate(self.dims(batch), *groups_of(self.names(needs)))

    def names(self, needs: Collection[str] | None) -> list[str] | None:
        """Field groups plus the raw hooks of the named groups, those this model has."""
        bundle = self.bundle
        needs = set(GROUPS) | {"embed", "steps", "tour"} if needs is None else set(needs)
        known = set(bundle.model.hook_names())
        raw: list[str] = []
        if "embed" in needs:
            raw += EMBED_HOOKS
        if "steps" in needs:
            layers = {k: bundle.n_layers(k) for k in bundle.kinds}
            raw += [f"{attn_prefix(kind, i)}.{hook}" for kind, n in layers.items()
                    for i in range(n) for hook in STEP_HOOKS]
            if "cross" in layers:
                raw.append(MEMORY_HOOK)
        if "tour" in needs:
            cfg = bundle.config
            raw += [f"{stack}.layers.0.{hook}" for stack, n in
                    (("encoder", cfg.n_enc_layers), ("decoder", cfg.n_dec_layers)) if n
                    for hook in TOUR_HOOKS]
        return [g for g in GROUPS if g in needs] + [n for n in dict.fromkeys(raw) if n in known]

    def capture(self, batch: Batch, needs: Collection[str] | None = None,
                ablate: Iterable[Head] | str = (), *,
                decoded: Sequence[Translation] | None = None) -> Trace:
        return self.record(batch, None if needs is None else self.names(needs), ablate,
                           decoded=decoded)

    def record(self, batch: Batch, names: Collection[str] | None,
               ablate: Iterable[Head] | str = (), *,
               decoded: Sequence[Translation] | None = None) -> Trace:
        """capture() by concrete names (field groups and raw hook names), as model.capture."""
        return capture_native(self.bundle, batch, ablate=ablate, names=names, decoded=decoded)

    def translate(self, batch: Batch, *, max_len: int | None = None, top_k: int = 5,
                  ablate: Iterable[Head] | str = ()) -> list[Translation]:
        if not self.caps.translates:
            raise ValueError("translation needs one of this project's encoder–decoder "
                             "checkpoints")
        return translate_native(self.bundle, batch, max_len=max_len, top_k=top_k,
                                ablate=ablate)

    def patch_setup(self, clean: str, corrupted: str, *, target: str | None,
                    step: int | None, target_lang: str | None,
                    ablate: frozenset[Head], encoded: Batch | None = None,
                    decoded: Sequence[Translation] | None = None) -> Setup:
        """A clean/corrupted pair ready for model.patching (see lab/patching.py)."""
        from .patching import lab_setup

        return lab_setup(self, clean, corrupted, target=target, step=step,
                         target_lang=target_lang, ablate=ablate, encoded=encoded,
                         decoded=decoded)

    def forward(self, src: Any, src_mask: Any, tgt: Any, tgt_mask: Any) -> Any:
        """One forward on given ids (B, S) / (B, T) under the caller's hooks; the lab's model
        masks pad_id itself, so the masks are not read."""
        model = self.bundle.model
        return model(src if model.encoder is not None else None,
                     tgt if model.decoder is not None else None)

    def greedy(self, sources: Sequence[str], target_lang: str | None = None,
               ablate: Iterable[Head] | str = ()) -> list[Translation]:
        """What the model writes for each source: its greedy translation."""
        return self.translate(self.encode(sources, None, target_lang), ablate=ablate)

    def forced(self, sources: Sequence[str], target_lang: str | None = None, *,
               outputs: Sequence[Sequence[int]] | None = None,
               target: str | None = None) -> Forced:
        """model.forced.Forced on the translation ids `outputs` (None: its own translation)
        or a target text (lab/forced.py)."""
        from .forced import forced_batch

        return forced_batch(self, sources, target_lang, outputs, target)

    def forced_values(self, forced: Forced, fns: dict[str, HookFn]) -> Any:
        from .forced import forced_values

        return forced_values(self.bundle, forced, fns)

    def attribution(self, source: str, target: str | None, target_lang: str | None,
                    step: int | None, token_id: int | None, k: int) -> StepAttribution:
        """One decoder step explained: logits, the knock-out input, DLA where pre-LN."""
        from .contributions import attribution

        return attribution(self, source, target, target_lang, step, token_id, k)

    def step_logits(self, inputs: dict[str, Any], step: int, fns: dict[str, HookFn]) -> Any:
        """float64 (R, V) logits at `step` of the rows `inputs` ({"src", "tgt"}), hooks on."""
        with torch.inference_mode(), hooks(fns):
            out = self.bundle.model(inputs["src"], inputs["tgt"])  # (R, T, V)
        return out[:, step].double().numpy()

    def qk_terms(self, trace: Trace, kind: str, layer: int, head: int, query: int, key: int,
                 batch: int = 0) -> dict[str, float]:
        """One recorded score split into terms that add up to it (model.analysis.qkterms)."""
        from .qkterms import qk_terms

        return qk_terms(self.bundle, trace, kind, layer, head, query, key, batch)

    def head_weights(self, kind: str, layer: int) -> dict[str, Any]:
        """W_Q … W_O (x @ W convention) and b_Q … b_O of one attention block (lab/weights.py)."""
        from .weights import head_weights

        return head_weights(self.bundle, kind, layer)

    def circuit_weights(self, kind: str, layer: int) -> dict[str, Any]:
        """Per-head W_Q … W_O, float64, and the pre-norms they read through (lab/circuits.py)."""
        from .circuits import circuit_weights

        return circuit_weights(self.bundle, kind, layer)

    def qk_parts(self, trace: Trace, kind: str, layer: int, head: int, query: int, key: int,
                 batch: int = 0) -> tuple[dict[str, Any], dict[str, Any], float, float]:
        """One head's query and key split by upstream component (lab/components.py)."""
        from .components import qk_parts

        return qk_parts(self.bundle, trace, kind, layer, head, query, key, batch)

    def ov_parts(self, trace: Trace, kind: str, layer: int, head: int, keys: Sequence[int],
                 batch: int = 0) -> dict[str, Any]:
        """One head's values at those keys split by upstream component (lab/components.py)."""
        from .components import ov_parts

        return ov_parts(self.bundle, trace, kind, layer, head, keys, batch)

    def direct_logits(self, trace: Trace, kind: str, layer: int, query: int, write: Any,
                      batch: int = 0) -> Any:
        """A write at the query carried to the logits, later norms frozen (lab/components.py)."""
        from .components import direct_logits

        return direct_logits(self.bundle, trace, kind, layer, query, write, batch)

    def capture_long(self, batch: Batch, pixels: int, qk_dtype: str,
                     qk_store: str = "memory") -> LongTrace:
        """Self-attention over one long text through the hook points (lab/long.py)."""
        from .long import long_forward

        return long_forward(self.bundle, batch, pixels, qk_dtype, qk_store)

    def unembed(self, states: Any) -> Any:
        """(…, D) residual states -> (…, V) logits: the decoder's final norm (if any), then
        the output projection, as the real output does."""
        model = self.bundle.model
        norm = model.decoder.final_norm
        return model.project(norm(states) if norm is not None else states)

    def hook_names(self) -> list[str]:
        return self.bundle.model.hook_names()

    def vocabulary(self) -> list[str]:
        tok = self.bundle.tokenizer
        return [tok.id_to_piece(i) for i in range(tok.vocab_size)]

    def position_kind(self, pos_table: Any) -> str:
        return self.bundle.config.pos_encoding  # a table either way: sinusoidal or learned

    def rotary_frequencies(self) -> Any:
        return None

    def relative_bias(self, n: int) -> dict[str, Any]:
        return {}
