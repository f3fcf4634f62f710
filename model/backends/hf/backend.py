"""Hugging Face folders (a config.json with model_type) as a backend; model/hf does the work.

Shape legend: B sentences, n positions (padded), L layers, H heads.
transformers is imported only when such a folder is loaded or a bundle of it is run.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from pathlib import Path
from typing import Any, ClassVar

from ...batch import Batch, padded
from ...budget import Dims, Estimate, estimate, groups_of
from ...capture import GROUPS, Trace
from ...checkpoint import Bundle
from ...decode import Translation
from ...forced import Forced, StepAttribution
from ...hooks import Head, HookFn, ablation_hooks, parse_ablate
from ...long.trace import LongTrace
from ...pairs import Setup
from ..base import Capabilities, Facts
from .shapes import FORWARD_COSTS


class HFBackend:
    """model.backends.base.Backend for a Hugging Face model (model/hf/)."""

    kind: ClassVar[str] = "hf"
    forward_costs: ClassVar[dict] = FORWARD_COSTS

    def __init__(self, bundle: Bundle) -> None:
        self.bundle = bundle

    @classmethod
    def claims(cls, folder: Path, raw_config: Any) -> bool:
        return isinstance(raw_config, dict) and "model_type" in raw_config

    @classmethod
    def load(cls, folder: Path, raw_config: Any) -> Bundle:
        from .load import load_hf

        return load_hf(folder)

    @property
    def caps(self) -> Capabilities:
        from .capabilities import hf_capabilities

        return hf_capabilities(self.bundle)

    @property
    def facts(self) -> Facts:
        from .facts import hf_facts

        return hf_facts(self.bundle, self.caps, self.vocabulary())

    def encode(self, lines: Sequence[str], targets: Sequence[str] | None = None,
               target_lang: str | None = None) -> Batch:
        """The model's own tokenizer, specials included; target_lang is not used (a Hugging
        Face model translates the way it was trained)."""
        from .record import encode_checked, encode_ids

        cfg, tok = self.bundle.config, self.bundle.tokenizer
        sources = tuple(lines)
        if targets is not None and cfg.family != "seq2seq":
            raise ValueError(f"a {cfg.family}-only model reads one text per sentence; pass "
                             "targets=None")
        texts, cuts = encode_checked(tok, sources, cfg.max_len)
        extra = {}
        if targets is not None:
            extra["targets"] = encode_ids(tok, list(targets), cfg.max_len, target=True)[0]
        return Batch(sources=sources, target_lang=target_lang, langs=(None,) * len(sources),
                     src_lists=tuple(tuple(x) for x in texts),
                     pieces=tuple(tuple(tok.convert_ids_to_tokens(x)) for x in texts),
                     cuts=tuple(cuts), src_ids=padded(texts, cfg.pad_id), pad_id=cfg.pad_id,
                     targets=tuple(targets) if targets is not None else None, extra=extra)

    def dims(self, batch: Batch, forced: bool = False) -> Dims:
        from .shapes import hf_dims

        if forced:
            batch = Batch(**{**vars(batch), "targets": None, "extra": {}})
        return hf_dims(self.bundle, batch)

    def estimate(self, batch: Batch, needs: Collection[str] | None = None) -> Estimate:
        return estimate(self.dims(batch), *groups_of(self.names(needs)))

    def names(self, needs: Collection[str] | None) -> list[str] | None:
        """Field groups only: a Hugging Face model has no raw hook names."""
        return None if needs is None else [g for g in GROUPS if g in needs]

    def capture(self, batch: Batch, needs: Collection[str] | None = None,
                ablate: Iterable[Head] | str = (), *,
                decoded: Sequence[Translation] | None = None) -> Trace:
        return self.record(batch, self.names(needs), ablate, decoded=decoded)

    def record(self, batch: Batch, names: Collection[str] | None,
               ablate: Iterable[Head] | str = (), *,
               decoded: Sequence[Translation] | None = None) -> Trace:
        """capture() by concrete names (field groups), as model.capture; `decoded` is unused
        (an encoder–decoder model decodes with its own generate())."""
        from .record import capture_hf

        return capture_hf(self.bundle, list(batch.sources),
                          list(batch.targets) if batch.targets is not None else None,
                          target_lang=batch.target_lang, ablate=ablate, names=names,
                          batch=batch)

    def capture_long(self, batch: Batch, pixels: int, qk_dtype: str,
                     qk_store: str = "memory") -> LongTrace:
        """Self-attention over one long text, the attention calls diverted (hf/long.py)."""
        from .long import long_forward

        return long_forward(self.bundle, batch, pixels, qk_dtype, qk_store)

    def translate(self, batch: Batch, *, max_len: int | None = None, top_k: int = 5,
                  ablate: Iterable[Head] | str = ()) -> list[Translation]:
        raise ValueError("translation needs one of this project's encoder–decoder checkpoints")

    def generate(self, batch: Batch, *, max_new: int = 24, top_k: int = 5,
                 ablate: Iterable[Head] | str = (), **options: Any) -> list[Translation]:
        """Continuation of a decoder-only model through its key/value cache, step by step;
        options: record, sample, seed, logits (generate.py)."""
        from .generate import continue_text

        return continue_text(self.bundle, batch, max_new=max_new, top_k=top_k, ablate=ablate,
                             **options)

    def embed(self, lines: Sequence[str], ablate: Iterable[Head] | str = ()) -> Any:
        """(B, D) float32 CPU torch sentence vectors, pooled and normalised as the folder's
        sentence-transformers files say (hf/embed.py; ValueError where caps.embeds is False)."""
        from .embed import embed_lines

        return embed_lines(self.bundle, list(lines), ablation_hooks(parse_ablate(ablate)))

    def sentence_rows(self, lines: Sequence[str]) -> tuple[Any, Any]:
        """(R, n) ids and mask of the lines as embed() feeds them (cut to the trained length)."""
        from .embed import checked_sentence, sentence_ids

        checked_sentence(self.bundle)
        return sentence_ids(self.bundle, list(lines))

    def embed_rows(self, ids: Any, mask: Any, fns: dict[str, HookFn] | None = None, *,
                   grad: bool = False) -> Any:
        """(R, D) float32 pooled vectors of given rows under hooks `fns` (graph kept if grad)."""
        from .embed import embed_rows

        return embed_rows(self.bundle, ids, mask, fns, grad=grad)

    def stepped(self, ids: Sequence[int]) -> Any:
        """(n, V) logits of `ids` fed one piece per forward through the model's own cache,
        under the caller's hooks (generate.py; the heavy-hitter eviction policy)."""
        from .generate import stepped_logits

        return stepped_logits(self.bundle, list(ids))

    def patch_setup(self, clean: str, corrupted: str, *, target: str | None,
                    step: int | None, target_lang: str | None,
                    ablate: frozenset[Head], encoded: Batch | None = None,
                    decoded: Sequence[Translation] | None = None) -> Setup:
        """A clean/corrupted pair ready for model.patching (see hf/patching.py);
        target_lang and decoded are not used (no Hugging Face model translates here: an
        encoder–decoder one's output comes from the setup's own greedy run, hooks in force)."""
        from .patching import hf_setup

        return hf_setup(self.bundle, clean, corrupted, target=target, step=step,
                        fns=ablation_hooks(ablate), encoded=encoded)

    def forward(self, src: Any, src_mask: Any, tgt: Any, tgt_mask: Any) -> Any:
        """One forward on given ids (B, S) / (B, T) and their masks (1 = a real token) under
        the caller's hooks, through the recorder (ValueError if the model's attention does not
        run through it)."""
        from .recorder import sites

        model, family = self.bundle.model, self.bundle.config.family
        if sites(model, family) is None:
            raise ValueError("this model's attention does not run through the lab's "
                             "recorder, so the detectors that run it cannot be computed")
        if family == "seq2seq":
            return model(input_ids=src, attention_mask=src_mask, decoder_input_ids=tgt,
                         decoder_attention_mask=tgt_mask, use_cache=False)
        if family == "decoder":
            return model(input_ids=tgt, attention_mask=tgt_mask, use_cache=False)
        return model(input_ids=src, attention_mask=src_mask)

    def greedy(self, sources: Sequence[str], target_lang: str | None = None,
               ablate: Iterable[Head] | str = ()) -> list[Translation]:
        """What the model writes: an encoder–decoder its greedy output, a decoder-only model a
        few greedy tokens after the text, an encoder-only model nothing (hf/forced.py)."""
        from .forced import greedy

        return greedy(self.bundle, list(sources), ablation_hooks(ablate))

    def forced(self, sources: Sequence[str], target_lang: str | None = None, *,
               outputs: Sequence[Sequence[int]] | None = None,
               target: str | None = None) -> Forced:
        """model.forced.Forced: the next tokens of the text (decoder-only), the given outputs
        or target (encoder–decoder; neither: its greedy output), the last hidden states
        (encoder-only)."""
        from .forced import forced_batch, greedy

        sources = list(sources)
        if outputs is None and target is None and self.bundle.config.family == "seq2seq":
            outputs = [t.ids for t in greedy(self.bundle, sources)]
        return forced_batch(self.bundle, sources, outputs, target)

    def forced_values(self, forced: Forced, fns: dict[str, HookFn]) -> Any:
        from .forced import forced_values

        return forced_values(self.bundle, forced, fns)

    def attribution(self, source: str, target: str | None, target_lang: str | None,
                    step: int | None, token_id: int | None, k: int) -> StepAttribution:
        """One step of a pre-LN decoder-only model explained (hf/contributions.py)."""
        from .contributions import attribution

        return attribution(self, source, target, target_lang, step, token_id, k)

    def step_logits(self, inputs: dict[str, Any], step: int, fns: dict[str, HookFn]) -> Any:
        """float64 (R, V) logits at `step` of the rows `inputs` ({"input_ids"}), hooks on."""
        import torch

        from ...hooks import hooks

        batch = inputs["input_ids"]
        with torch.inference_mode(), hooks(fns):
            out = self.bundle.model(input_ids=batch, attention_mask=torch.ones_like(batch),
                                    use_cache=False)
        return out.logits[:, step].double().cpu().numpy()

    def qk_terms(self, trace: Trace, kind: str, layer: int, head: int, query: int, key: int,
                 batch: int = 0) -> dict[str, float]:
        """One recorded score split into terms that add up to it (model.analysis.qkterms)."""
        from .qkterms import qk_terms

        return qk_terms(self, trace, kind, layer, head, query, key, batch)

    def head_weights(self, kind: str, layer: int) -> dict[str, Any]:
        raise ValueError("head_weights reads this project's own Transformer only")

    def circuit_weights(self, kind: str, layer: int) -> dict[str, Any]:
        """Per-head W_Q … W_O, float64, and the pre-norms they read through (hf/circuits.py)."""
        from .circuits import circuit_weights

        return circuit_weights(self.bundle, kind, layer)

    def block_weights(self, kind: str, layer: int) -> dict[str, Any]:
        """The layer's two norms (LayerNorm or RMS norm) and its FFN (gated or not), float64,
        with the model's own activation (hf/blocks.py): what the tour's steps 14 and 15
        compute from."""
        from .blocks import block_weights

        return block_weights(self.bundle, kind, layer)

    def qk_parts(self, trace: Trace, kind: str, layer: int, head: int, query: int, key: int,
                 batch: int = 0) -> tuple[dict[str, Any], dict[str, Any], float, float]:
        """One head's query and key split by upstream component (hf/components.py)."""
        from .components import qk_parts

        return qk_parts(self, trace, kind, layer, head, query, key, batch)

    def ov_parts(self, trace: Trace, kind: str, layer: int, head: int, keys: Sequence[int],
                 batch: int = 0) -> dict[str, Any]:
        """One head's values at those keys split by upstream component (hf/values.py)."""
        from .values import ov_parts

        return ov_parts(self, trace, kind, layer, head, keys, batch)

    def direct_logits(self, trace: Trace, kind: str, layer: int, query: int, write: Any,
                      batch: int = 0) -> Any:
        """A write at the query carried through the frozen final norm (hf/values.py)."""
        from .values import direct_logits

        return direct_logits(self, trace, kind, layer, query, write, batch)

    def unembed(self, states: Any) -> Any:
        """(L+1, T, D) recorded hidden states -> (L+1, T, V) logits of a decoder-only model.

        transformers records the last hidden state after the final norm (its logits are
        lm_head of it exactly), so the norm is applied to every earlier layer only."""
        import torch

        from .contributions import final_norm

        model = self.bundle.model
        if not self.caps.logit_lens:
            raise ValueError("the logit lens needs a decoder-only model with an output layer")
        if states.shape[0] != self.bundle.n_layers("dec_self") + 1:
            raise ValueError("unembed reads every layer's recorded hidden state (L + 1 rows)")
        head = model.get_output_embeddings()
        x = states.to(head.weight.dtype)
        normed = torch.cat([final_norm(model)(x[:-1]), x[-1:]])
        return head(normed).float()

    def hook_names(self) -> list[str]:
        return []

    def vocabulary(self) -> list[str]:
        tok = self.bundle.tokenizer
        return [str(p) for p in tok.convert_ids_to_tokens(list(range(len(tok))))]

    def position_kind(self, pos_table: Any) -> str:
        from .positions import position_kind

        return position_kind(self.bundle, pos_table)

    def rotary_frequencies(self) -> Any:
        from .positions import rotary_frequencies

        return rotary_frequencies(self.bundle.model)

    def relative_bias(self, n: int) -> dict[str, Any]:
        from .positions import t5_bias

        return t5_bias(self.bundle.model, n)
