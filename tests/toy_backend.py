"""A test-only third model kind (issue 35): a tiny decoder-only Transformer in plain PyTorch
and its backend, written against model.backends.base.Backend and nothing else of the app.

Registered by one line in a test: monkeypatch.setattr(model.backends, "REGISTRY",
{ToyBackend.kind: ToyBackend, **model.backends.REGISTRY}). A folder is the toy's when its
config.json holds "toy_decoder"; the weights are made from a fixed seed (nothing to load).

Shape legend: B sentences, n positions, L layers, H heads, Dh head size, D width, V vocabulary.
"""

from __future__ import annotations

import json
import math
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import torch
from torch import nn

from model.backends.base import Capabilities, Facts
from model.batch import Batch, padded
from model.budget import Dims, estimate, groups_of
from model.capture import GROUPS, Trace
from model.checkpoint import Bundle
from model.decode import Translation, checked_heads
from model.forced import Forced, StepAttribution
from model.hooks import HookPoint, ablation_hooks, buffers, hooks, name_hook_points
from model.masks import trace_masks
from model.pairs import Setup, check_same_length, nothing_differs
from model.qkparts import frozen_parts, products, project_parts, split_parts
from model.slabs import Slabs

CHARS = " abcdefghijklmnopqrstuvwxyz.,!?'"


class ToyTokenizer:
    """One piece per character (unknown characters dropped); id 0 pads, 1 begins."""

    pieces = ["<pad>", "<s>", *CHARS]

    def encode(self, text: str, limit: int) -> tuple[list[int], int]:
        ids = [1] + [self.pieces.index(c) for c in text.lower() if c in CHARS]
        return ids[:limit], max(0, len(ids) - limit)


@dataclass
class ToyConfig:
    n_enc_layers: int = 0
    n_dec_layers: int = 2
    n_heads: int = 2
    d_model: int = 16
    max_len: int = 64
    pad_id: int = 0
    vocab_size: int = len(ToyTokenizer.pieces)


class Attention(nn.Module):
    def __init__(self, d: int, h: int) -> None:
        super().__init__()
        self.h, self.dh = h, d // h
        self.w_q, self.w_k, self.w_v, self.w_o = (nn.Linear(d, d) for _ in range(4))
        for name in ("q", "k", "v", "scores", "probs", "context"):
            setattr(self, f"hook_{name}", HookPoint())

    def forward(self, x: torch.Tensor, blocked: torch.Tensor) -> torch.Tensor:
        b, n, _ = x.shape

        def heads(t: torch.Tensor) -> torch.Tensor:
            return t.view(b, n, self.h, self.dh).transpose(1, 2)  # (B, H, n, Dh)

        q = self.hook_q(heads(self.w_q(x)))
        k = self.hook_k(heads(self.w_k(x)))
        v = self.hook_v(heads(self.w_v(x)))
        scores = self.hook_scores(q @ k.transpose(-1, -2) / math.sqrt(self.dh))  # (B, H, n, n)
        probs = torch.softmax(scores.masked_fill(blocked[:, None], -1e9), -1)
        probs = self.hook_probs(probs.masked_fill(blocked[:, None], 0.0))
        context = self.hook_context(probs @ v)  # (B, H, n, Dh)
        return self.w_o(context.transpose(1, 2).reshape(b, n, -1))


class Block(nn.Module):
    def __init__(self, d: int, h: int) -> None:
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.self_attn = Attention(d, h)
        self.ffn = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))
        self.hook_resid_pre, self.hook_resid_post = HookPoint(), HookPoint()

    def forward(self, x: torch.Tensor, blocked: torch.Tensor) -> torch.Tensor:
        x = self.hook_resid_pre(x)
        x = x + self.self_attn(self.norm1(x), blocked)
        return self.hook_resid_post(x + self.ffn(self.norm2(x)))


class Stack(nn.Module):
    def __init__(self, cfg: ToyConfig) -> None:
        super().__init__()
        self.tok = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.pos = nn.Embedding(cfg.max_len, cfg.d_model)
        self.layers = nn.ModuleList(Block(cfg.d_model, cfg.n_heads)
                                    for _ in range(cfg.n_dec_layers))
        self.final_norm = nn.LayerNorm(cfg.d_model)
        self.hook_embed = HookPoint()


class ToyModel(nn.Module):
    def __init__(self, cfg: ToyConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.decoder = Stack(cfg)
        name_hook_points(self)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        """(B, n) ids -> (B, n, V) logits; pad keys and future keys blocked."""
        n = ids.size(1)
        blocked = ids.eq(self.cfg.pad_id)[:, None, :] | torch.triu(
            torch.ones(n, n, dtype=torch.bool), 1)[None]
        x = self.decoder.hook_embed(self.decoder.tok(ids) + self.decoder.pos(torch.arange(n)))
        for block in self.decoder.layers:
            x = block(x, blocked)
        return self.decoder.final_norm(x) @ self.decoder.tok.weight.T


class ToyBackend:
    """model.backends.base.Backend for ToyModel."""

    kind: ClassVar[str] = "toy"
    forward_costs: ClassVar[dict] = {}

    def __init__(self, bundle: Bundle) -> None:
        self.bundle = bundle

    @classmethod
    def claims(cls, folder: Path, raw_config: Any) -> bool:
        return isinstance(raw_config, dict) and "toy_decoder" in raw_config

    @classmethod
    def load(cls, folder: Path, raw_config: Any) -> Bundle:
        torch.manual_seed(int(raw_config.get("seed", 0)))
        cfg = ToyConfig()
        model = ToyModel(cfg).eval()
        return Bundle(model, ToyTokenizer(), cfg, name=Path(folder).name, kind=cls.kind)

    @property
    def caps(self) -> Capabilities:
        return Capabilities(lab=False, translates=False, kinds=("dec_self",), family="decoder",
                            positional="learned", norm="pre", grouped_kv=False,
                            head_outputs=True, ablates=True, logit_attribution=False,
                            d_ff=2 * self.bundle.config.d_model, weighted_norms=True)

    @property
    def facts(self) -> Facts:
        # one character per piece, no word marks; Attention.forward fills blocked cells with
        # -1e9; positions arange over every slot, pads included
        return Facts(tokenizer="plain", word_mark="", specials=(("<pad>", "pad"), ("<s>", "bos")),
                     languages=("en",), positional="learned", pad_positions="counted",
                     token_types=False, mask_fill="-1e9", mask_fill_value=-1e9, norm="pre",
                     embedding_norm=False, activation="gelu", pooling="none", normalize=False,
                     output="next_token", effect_unit="nats",
                     max_positions=self.bundle.config.max_len, trained_length=None)

    # ---- text in, Batch, estimate, Trace out ---------------------------------------------

    def encode(self, lines: Sequence[str], targets: Sequence[str] | None = None,
               target_lang: str | None = None) -> Batch:
        if targets is not None:
            raise ValueError("a decoder-only model reads one text per sentence")
        tok, cfg = self.bundle.tokenizer, self.bundle.config
        done = [tok.encode(t, cfg.max_len) for t in lines]
        lists = tuple(tuple(ids) for ids, _ in done)
        return Batch(sources=tuple(lines), target_lang=target_lang, langs=(None,) * len(lines),
                     src_lists=lists, pieces=tuple(tuple(tok.pieces[i] for i in x)
                                                   for x in lists),
                     cuts=tuple(c for _, c in done), src_ids=padded(lists, cfg.pad_id),
                     pad_id=cfg.pad_id)

    def dims(self, batch: Batch, forced: bool = False) -> Dims:
        cfg = self.bundle.config
        return Dims(batch=len(batch.sources), src=0, tgt=batch.src_ids.shape[1],
                    layers={"dec_self": cfg.n_dec_layers}, heads=cfg.n_heads,
                    d_head=cfg.d_model // cfg.n_heads, d_model=cfg.d_model,
                    d_ff=2 * cfg.d_model, vocab=cfg.vocab_size, max_len=cfg.max_len)

    def estimate(self, batch: Batch, needs: Collection[str] | None = None):
        return estimate(self.dims(batch), *groups_of(self.names(needs)))

    def names(self, needs: Collection[str] | None) -> list[str] | None:
        return None if needs is None else [g for g in GROUPS if g in needs]

    def capture(self, batch: Batch, needs: Collection[str] | None = None,
                ablate: Iterable | str = (), *, decoded=None) -> Trace:
        return self.record(batch, self.names(needs), ablate)

    def record(self, batch: Batch, names: Collection[str] | None, ablate: Iterable | str = (),
               *, decoded=None) -> Trace:
        bundle, cfg = self.bundle, self.bundle.config
        heads = checked_heads(bundle, ablate)
        groups = set(GROUPS) if names is None else set(names)
        need = groups | ({"attn", "v"} if "norms" in groups else set())
        slabs = Slabs({"dec_self": cfg.n_dec_layers}, need)
        if "hidden" in groups:
            n = cfg.n_dec_layers + 1
            slabs.add("decoder.hook_embed", "hidden/dec", 0, n)
            for i in range(n - 1):
                slabs.add(f"decoder.layers.{i}.hook_resid_post", "hidden/dec", i + 1, n)
        ids = torch.from_numpy(batch.src_ids.copy())
        with torch.inference_mode(), hooks(ablation_hooks(heads)), hooks(slabs.hooks()), \
                buffers(slabs.buffers()):
            logits = bundle.model(ids)
        per = {g: slabs.group(g) if g in need else {} for g in ("attn", "scores", "q", "k", "v")}
        pad = batch.src_ids == cfg.pad_id
        norms = {}
        if "norms" in groups:  # ‖α_ij v_j W_O^h‖ = α_ij ‖v_j W_O^h‖
            rows = []
            for i, block in enumerate(bundle.model.decoder.layers):
                w_o = block.self_attn.w_o.weight.detach().T.reshape(cfg.n_heads, -1, cfg.d_model)
                v = torch.from_numpy(per["v"]["dec_self"][i])  # (B, H, n, Dh)
                size = torch.einsum("bhkd,hde->bhke", v, w_o).norm(dim=-1)  # (B, H, n)
                rows.append(per["attn"]["dec_self"][i] * size[:, :, None, :].numpy())
            norms = {"dec_self": np.stack(rows).astype(np.float32)}
        for g in need - groups:
            per[g] = {}
        n_b = len(batch.sources)
        return Trace(
            src_tokens=[[] for _ in range(n_b)], tgt_tokens=[list(p) for p in batch.pieces],
            src_ids=np.zeros((n_b, 0), np.int64), tgt_ids=batch.src_ids.copy(),
            masks=trace_masks(None, pad, ("dec_self",)), scores=per["scores"], attn=per["attn"],
            q=per["q"], k=per["k"], v=per["v"],
            hidden={"dec": slabs.take("hidden/dec")} if "hidden" in groups else {},
            pos_table=bundle.model.decoder.pos.weight.detach().numpy().copy(),
            logits=logits.numpy() if "logits" in groups else None, pad_id=cfg.pad_id,
            sources=list(batch.sources), targets=[], target_langs=[None] * n_b,
            positions={"dec": np.where(pad, -1, np.arange(pad.shape[1])[None])},
            src_cut=list(batch.cuts), ablate=heads,
            kv_groups=np.arange(cfg.n_heads, dtype=np.int64), norms=norms)

    def translate(self, batch: Batch, **_kw) -> list[Translation]:
        raise ValueError("translation needs one of this project's encoder–decoder checkpoints")

    # ---- runs on ids, for the analyses ---------------------------------------------------

    def forward(self, src, src_mask, tgt, tgt_mask):
        return self.bundle.model(tgt)

    def greedy(self, sources: Sequence[str], target_lang: str | None = None,
               ablate: Iterable | str = ()) -> list[Translation]:
        tok, out = self.bundle.tokenizer, []
        for text in sources:
            ids = tok.encode(text, self.bundle.config.max_len)[0]
            new = []
            with torch.inference_mode(), hooks(ablation_hooks(checked_heads(self.bundle,
                                                                            ablate))):
                for _ in range(4):
                    if len(ids) + len(new) >= self.bundle.config.max_len:
                        break
                    new.append(int(self.bundle.model(torch.tensor([ids + new]))[0, -1].argmax()))
            pieces = [tok.pieces[i] for i in new]
            out.append(Translation(source=text, target_lang=None, text="".join(pieces), ids=new,
                                   pieces=pieces, steps=[], probs=[], finished=True))
        return out

    def forced(self, sources: Sequence[str], target_lang: str | None = None, *,
               outputs=None, target: str | None = None) -> Forced:
        tok, cfg = self.bundle.tokenizer, self.bundle.config
        lists = [tok.encode(t, cfg.max_len)[0] for t in sources]
        ids = torch.from_numpy(padded(lists, cfg.pad_id))
        out = torch.cat([ids[:, 1:], torch.zeros_like(ids[:, :1])], 1)
        return Forced({"ids": ids}, out, out.ne(cfg.pad_id),
                      [[tok.pieces[i] for i in x[1:]] for x in lists], "logp")

    def forced_values(self, forced: Forced, fns) -> Any:
        with torch.inference_mode(), hooks(fns):
            logp = torch.log_softmax(self.bundle.model(forced.inputs["ids"]).double(), -1)
        picked = logp.gather(-1, forced.out_ids.unsqueeze(-1)).squeeze(-1)
        return picked.masked_fill(~forced.valid, 0.0)

    def attribution(self, source, target, target_lang, step, token_id, k) -> StepAttribution:
        tok = self.bundle.tokenizer
        ids = tok.encode(source, self.bundle.config.max_len)[0]
        step = len(ids) - 1 if step is None else int(step)
        with torch.inference_mode():
            logits = self.bundle.model(torch.tensor([ids]))[0, step].double().numpy()
        token_id = int(logits.argmax()) if token_id is None else int(token_id)
        return StepAttribution(step=step, token_id=token_id, logits=logits,
                               pieces=list(tok.pieces), inputs={"ids": torch.tensor([ids])},
                               tgt_tokens=[tok.pieces[i] for i in ids])

    def step_logits(self, inputs, step, fns) -> Any:
        with torch.inference_mode(), hooks(fns):
            return self.bundle.model(inputs["ids"])[:, step].double().numpy()

    def patch_setup(self, clean, corrupted, *, target, step, target_lang, ablate,
                    encoded=None, decoded=None) -> Setup:
        # encoded (the page's Batch of the pair) is not read: the toy tokenizes in one line;
        # decoded is a translator's, and the toy does not translate
        if target is not None:
            raise ValueError("target= is for encoder–decoder models")
        tok, cfg, model = self.bundle.tokenizer, self.bundle.config, self.bundle.model
        ids_c, ids_r = (tok.encode(t, cfg.max_len)[0] for t in (clean, corrupted))

        def pieces(ids):
            return [tok.pieces[i] for i in ids]

        check_same_length(ids_c, ids_r, pieces, "sentences")
        if ids_c == ids_r:
            raise nothing_differs(pieces(ids_c))

        def run(which: Sequence[str], grad: bool) -> torch.Tensor:
            rows = torch.tensor([ids_c if w == "clean" else ids_r for w in which])
            with torch.enable_grad() if grad else torch.no_grad():
                return model(rows)[:, -1]

        return Setup(run=run, kinds={"dec_self": cfg.n_dec_layers},
                     sides={"dec": cfg.n_dec_layers}, lengths={"dec": len(ids_c)},
                     n_heads=cfg.n_heads, clean_ids=list(ids_c), corrupted_ids=list(ids_r),
                     position=len(ids_c) - 1, pieces={"dec": pieces(ids_c)},
                     corrupted_pieces={"dec": pieces(ids_r)},
                     id_to_piece=lambda i: tok.pieces[int(i)],
                     token_id=lambda s: tok.pieces.index(s), never=(cfg.pad_id, 1))

    def qk_terms(self, trace: Trace, kind: str, layer: int, head: int, query: int, key: int,
                 batch: int = 0) -> dict[str, float]:
        model, cfg = self.bundle.model, self.bundle.config
        ids = trace.ids("dec")[batch]
        got = {}

        def keep(x: torch.Tensor, name: str) -> None:
            got["x"] = x[0].double().numpy()

        with torch.inference_mode(), hooks(ablation_hooks(trace.ablate)), hooks(
                {f"decoder.layers.{layer}.hook_resid_pre": keep}):
            model(torch.tensor(ids[None]))
        tok = model.decoder.tok.weight.detach().double().numpy()[ids]
        pos = model.decoder.pos.weight.detach().double().numpy()[: len(ids)]
        block = model.decoder.layers[layer]
        dh = cfg.d_model // cfg.n_heads
        cut = slice(head * dh, (head + 1) * dh)

        def proj(linear):
            w, b = linear.weight.detach().double()[cut], linear.bias.detach().double()[cut]
            return lambda t: t @ w.T + b

        def parts(i):
            return frozen_parts(split_parts(got["x"][i], tok[i], pos[i]), block.norm1)

        attn = block.self_attn
        return products(project_parts(parts(query), proj(attn.w_q)),
                        project_parts(parts(key), proj(attn.w_k)), 1 / math.sqrt(dh))

    # ---- what the views ask of positions and weights -------------------------------------

    def head_weights(self, kind: str, layer: int) -> dict[str, Any]:
        raise ValueError("the toy offers no per-block weights")

    def capture_long(self, batch: Batch, pixels: int, qk_dtype: str,
                     qk_store: str = "memory") -> Any:
        """No long mode here: caps.long_context stays False, so the view never asks."""
        raise ValueError("the toy backend has no long mode")

    def unembed(self, states: Any) -> Any:
        raise ValueError("the toy has no logit lens")

    def hook_names(self) -> list[str]:
        return []

    def vocabulary(self) -> list[str]:
        return list(self.bundle.tokenizer.pieces)

    def position_kind(self, pos_table: Any) -> str:
        return "learned"

    def rotary_frequencies(self) -> Any:
        return None

    def relative_bias(self, n: int) -> dict[str, Any]:
        return {}


def toy_folder(root: Path) -> Path:
    """A folder the toy backend claims."""
    folder = root / "toy"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps({"toy_decoder": True, "seed": 0}))
    return folder
