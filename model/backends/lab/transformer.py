"""The seeds' encoder–decoder Transformer, with a HookPoint at every stage.

Shape legend
    B  sentences in the batch          S  source positions (padded)
    T  target positions (padded)       n  S or T, whichever side is meant
    D  d_model                         H  heads, Dh = D / H
    F  d_ff                            V  vocabulary size
Attention masks are bool (B, Q, K), True = blocked.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from ...hooks import HookPoint, hook_names, name_hook_points
from ...masks import MASK_FILL, cross_mask, decoder_mask, encoder_mask
from .config import ModelConfig
from .positional import PositionalEncoding, normal_embedding, position_ids


class MultiHeadAttention(nn.Module):
    """Explicit scaled dot-product attention: every intermediate passes a hook point."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.n_heads, self.d_head = cfg.n_heads, cfg.d_head
        self.w_q = nn.Linear(cfg.d_model, cfg.d_model)
        self.w_k = nn.Linear(cfg.d_model, cfg.d_model)
        self.w_v = nn.Linear(cfg.d_model, cfg.d_model)
        self.w_o = nn.Linear(cfg.d_model, cfg.d_model)
        self.dropout = nn.Dropout(cfg.dropout)
        self.hook_in = HookPoint()  # (B, Q, D) what the queries are made from
        self.hook_q = HookPoint()  # (B, H, Q, Dh)
        self.hook_k = HookPoint()  # (B, H, K, Dh)
        self.hook_v = HookPoint()  # (B, H, K, Dh)
        self.hook_scores = HookPoint()  # (B, H, Q, K) QKᵀ/√Dh, before the mask
        self.hook_masked = HookPoint()  # (B, H, Q, K) blocked cells set to MASK_FILL
        self.hook_probs = HookPoint()  # (B, H, Q, K) softmax, blocked cells exactly 0
        self.hook_context = HookPoint()  # (B, H, Q, Dh) per-head probs·V (ablation point)
        self.hook_out = HookPoint()  # (B, Q, D) after W_O

    def split(self, x: torch.Tensor) -> torch.Tensor:
        """(B, n, D) -> (B, H, n, Dh)."""
        b, n, _ = x.shape
        return x.view(b, n, self.n_heads, self.d_head).transpose(1, 2)

    def forward(self, x_q: torch.Tensor, x_kv: torch.Tensor, mask: torch.Tensor,
                kv: KVSlot | None = None) -> torch.Tensor:
        """x_q (B, Q, D), x_kv (B, K, D), mask (B, Q, K) -> (B, Q, D).

        With `kv` (greedy decoding): self-attention appends the new positions' K/V to the
        slot's, so x_kv holds only the new positions; cross-attention projects the memory once.
        """
        x_q = self.hook_in(x_q)
        q = self.hook_q(self.split(self.w_q(x_q)))  # (B, H, Q, Dh)
        if kv is not None and kv.fixed and kv.k is not None:
            k, v = kv.k, kv.v  # the memory's K/V, projected at the first step
        else:
            k = self.hook_k(self.split(self.w_k(x_kv)))  # (B, H, K, Dh)
            v = self.hook_v(self.split(self.w_v(x_kv)))  # (B, H, K, Dh)
            if kv is not None:
                if kv.k is not None:  # self-attention: the prefix's K/V, then the new ones
                    k, v = torch.cat([kv.k, k], dim=2), torch.cat([kv.v, v], dim=2)
                kv.k, kv.v = k, v
        shape = (q.size(0), self.n_heads, q.size(2), k.size(2))  # (B, H, Q, K)
        # a recorder may hand out the (B,H,Q,K) tensors' memory (HookPoint.buffer): the two
        # quadratic tensors are then written once, in place, instead of copied out after
        scores = torch.matmul(q, k.transpose(-2, -1), out=self.hook_scores.buffer(shape))
        scores = self.hook_scores(scores.div_(math.sqrt(self.d_head)))
        blocked = mask.unsqueeze(1)  # (B, 1, Q, K), broadcast over heads
        # nothing reads the scores before the mask (no hook or buffer there, no autograd): mask
        # them where they are rather than in a fresh (B,H,Q,K) tensor, whose first write is
        # page faults
        reuse = not (torch.is_grad_enabled() or self.hook_scores.watched())
        fill = scores.masked_fill_ if reuse else scores.masked_fill
        masked = self.hook_masked(fill(blocked, MASK_FILL))
        # zeroing after softmax makes blocked cells exactly 0, also in an all-blocked row
        out = self.hook_probs.buffer(shape)
        if out is None:  # out of place: autograd needs softmax's own output in training
            probs = torch.softmax(masked, dim=-1).masked_fill(blocked, 0.0)
        else:
            probs = torch.softmax(masked, dim=-1, out=out).masked_fill_(blocked, 0.0)
        probs = self.hook_probs(probs)
        context = self.hook_context(self.dropout(probs) @ v)  # (B, H, Q, Dh)
        b, _, n_q, _ = context.shape
        merged = context.transpose(1, 2).reshape(b, n_q, self.n_heads * self.d_head)  # (B,Q,D)
        return self.hook_out(self.w_o(merged))


class FeedForward(nn.Module):
    """Position-wise Linear -> ReLU/GELU -> Linear."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.lin1 = nn.Linear(cfg.d_model, cfg.d_ff)
        self.act = nn.GELU() if cfg.activation == "gelu" else nn.ReLU()
        self.lin2 = nn.Linear(cfg.d_ff, cfg.d_model)
        self.dropout = nn.Dropout(cfg.dropout)
        self.hook_hidden = HookPoint()  # (B, n, F) after the activation

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.lin2(self.dropout(self.hook_hidden(self.act(self.lin1(x)))))


class Sublayer(nn.Module):
    """Residual + LayerNorm around one sublayer, post-LN (paper) or pre-LN (seed 001)."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.pre = cfg.norm == "pre"
        self.norm = nn.LayerNorm(cfg.d_model, eps=cfg.layer_norm_eps)
        self.dropout = nn.Dropout(cfg.dropout)

    def forward(self, x: torch.Tensor, fn) -> torch.Tensor:
        if self.pre:
            return x + self.dropout(fn(self.norm(x)))
        return self.norm(x + self.dropout(fn(x)))


class EncoderLayer(nn.Module):
    """Self-attention then FFN."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.hook_resid_pre = HookPoint()  # (B, S, D) layer input
        self.self_attn = MultiHeadAttention(cfg)
        self.attn_block = Sublayer(cfg)
        self.hook_resid_mid = HookPoint()  # (B, S, D) after the attention sublayer
        self.ffn = FeedForward(cfg)
        self.ffn_block = Sublayer(cfg)
        self.hook_resid_post = HookPoint()  # (B, S, D) layer output

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        x = self.hook_resid_pre(x)
        x = self.hook_resid_mid(self.attn_block(x, lambda h: self.self_attn(h, h, mask)))
        return self.hook_resid_post(self.ffn_block(x, self.ffn))


class DecoderLayer(nn.Module):
    """Masked self-attention, cross-attention over the encoder output, FFN."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.hook_resid_pre = HookPoint()  # (B, T, D) layer input
        self.self_attn = MultiHeadAttention(cfg)
        self.self_block = Sublayer(cfg)
        self.hook_resid_mid = HookPoint()  # (B, T, D) after masked self-attention
        self.cross_attn = MultiHeadAttention(cfg) if cfg.n_enc_layers else None
        self.cross_block = Sublayer(cfg) if cfg.n_enc_layers else None
        self.hook_resid_cross = HookPoint()  # (B, T, D) after cross-attention
        self.ffn = FeedForward(cfg)
        self.ffn_block = Sublayer(cfg)
        self.hook_resid_post = HookPoint()  # (B, T, D) layer output

    def forward(self, y: torch.Tensor, self_mask: torch.Tensor,
                memory: torch.Tensor | None, memory_mask: torch.Tensor | None,
                past: PrefixCache | None = None, index: int = 0) -> torch.Tensor:
        """y (B, T_new, D): all positions, or with `past` only those not decoded before."""
        y = self.hook_resid_pre(y)

        own = past.self_kv[index] if past is not None else None
        y = self.hook_resid_mid(self.self_block(y, lambda h: self.self_attn(h, h, self_mask, own)))
        if self.cross_attn is not None:
            mem = past.cross_kv[index] if past is not None else None
            y = self.cross_block(y, lambda h: self.cross_attn(h, memory, memory_mask, mem))
        y = self.hook_resid_cross(y)
        return self.hook_resid_post(self.ffn_block(y, self.ffn))


class KVSlot:
    """One attention block's keys and values kept between greedy steps, (B, H, n, Dh) each.
    `fixed`: computed once (cross-attention over the memory) rather than grown per step."""

    def __init__(self, fixed: bool) -> None:
        self.fixed = fixed
        self.k: torch.Tensor | None = None
        self.v: torch.Tensor | None = None


class PrefixCache:
    """What greedy decoding keeps between steps: per decoder layer, the self-attention K/V of
    the positions already decoded and the cross-attention K/V of the memory. A step then runs
    the decoder on the new position only. Hook points see the new position's tensors (and
    hook_k/hook_v of cross-attention fire at the first step only); ablation, which acts on
    the per-head context, applies as in a full pass."""

    def __init__(self, n_layers: int) -> None:
        self.self_kv = [KVSlot(fixed=False) for _ in range(n_layers)]
        self.cross_kv = [KVSlot(fixed=True) for _ in range(n_layers)]
        self.length = 0  # positions decoded so far


class Stack(nn.Module):
    """Embedding hooks, a stack of layers and (pre-LN only) the final LayerNorm."""

    def __init__(self, cfg: ModelConfig, layer_cls: type[nn.Module], n_layers: int) -> None:
        super().__init__()
        self.hook_tok = HookPoint()  # (B, n, D) token embedding × √D
        self.hook_pos = HookPoint()  # (B, n, D) positional term
        self.hook_embed = HookPoint()  # (B, n, D) their sum, the layer-0 input
        self.dropout = nn.Dropout(cfg.dropout)
        self.layers = nn.ModuleList(layer_cls(cfg) for _ in range(n_layers))
        self.final_norm = (nn.LayerNorm(cfg.d_model, eps=cfg.layer_norm_eps)
                           if cfg.norm == "pre" else None)
        self.hook_out = HookPoint()  # (B, n, D) what leaves the stack

    def embed(self, tok: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
        return self.dropout(self.hook_embed(self.hook_tok(tok) + self.hook_pos(pos)))

    def finish(self, x: torch.Tensor) -> torch.Tensor:
        return self.hook_out(x if self.final_norm is None else self.final_norm(x))


class Transformer(nn.Module):
    """Encoder–decoder (or encoder-only / decoder-only) Transformer with a shared vocabulary."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.config = cfg
        self.tok_embed = normal_embedding(cfg.vocab_size, cfg.d_model, cfg.d_model ** -0.5,
                                          padding_idx=cfg.pad_id)
        self.pos_embed = PositionalEncoding(cfg)
        self.encoder = Stack(cfg, EncoderLayer, cfg.n_enc_layers) if cfg.n_enc_layers else None
        self.decoder = Stack(cfg, DecoderLayer, cfg.n_dec_layers) if cfg.n_dec_layers else None
        self.out_proj = None
        if self.decoder is not None and not cfg.tie_output:
            self.out_proj = nn.Linear(cfg.d_model, cfg.vocab_size, bias=False)
        self.embed_scale = math.sqrt(cfg.d_model)
        name_hook_points(self)

    def hook_names(self) -> list[str]:
        """Every hook point, in forward order."""
        return hook_names(self)

    def _inputs(self, ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(B, n) ids -> scaled token embeddings and positional terms, both (B, n, D)."""
        if ids.size(1) > self.config.max_len - 1:
            raise ValueError(f"{ids.size(1)} positions exceed max_len - 1 = "
                             f"{self.config.max_len - 1}")
        tok = self.tok_embed(ids) * self.embed_scale
        pos = self.pos_embed(position_ids(ids, self.config.pad_id))
        return tok, pos

    def encode(self, src_ids: torch.Tensor) -> torch.Tensor:
        """(B, S) source ids -> (B, S, D) encoder output."""
        if self.encoder is None:
            raise ValueError("this model has no encoder")
        mask = encoder_mask(src_ids, self.config.pad_id)  # (B, S, S)
        x = self.encoder.embed(*self._inputs(src_ids))
        for layer in self.encoder.layers:
            x = layer(x, mask)
        return self.encoder.finish(x)

    def decode(self, tgt_ids: torch.Tensor, memory: torch.Tensor | None = None,
               src_ids: torch.Tensor | None = None, past: PrefixCache | None = None
               ) -> torch.Tensor:
        """(B, T) target ids, (B, S, D) memory, (B, S) source ids -> (B, T, D) decoder output.

        With `past` (greedy decoding), only the positions after past.length are run and
        returned, (B, T - past.length, D); the cache then covers all T.
        """
        if self.decoder is None:
            raise ValueError("this model has no decoder")
        start = 0 if past is None else past.length
        self_mask = decoder_mask(tgt_ids, self.config.pad_id)[:, start:]  # (B, T_new, T)
        mem_mask = None
        if self.encoder is not None:
            if memory is None or src_ids is None:
                raise ValueError("an encoder–decoder model needs memory and src_ids to decode")
            mem_mask = cross_mask(tgt_ids[:, start:], src_ids, self.config.pad_id)  # (B,T_new,S)
        tok, pos = self._inputs(tgt_ids)
        y = self.decoder.embed(tok[:, start:], pos[:, start:])  # (B, T_new, D)
        for i, layer in enumerate(self.decoder.layers):
            y = layer(y, self_mask, memory, mem_mask, past, i)
        if past is not None:
            past.length = tgt_ids.size(1)
        return self.decoder.finish(y)

    def project(self, h: torch.Tensor) -> torch.Tensor:
        """(B, T, D) decoder states -> (B, T, V) logits (tied to the embedding by default)."""
        weight = self.tok_embed.weight if self.out_proj is None else self.out_proj.weight
        return h @ weight.t()

    def forward(self, src_ids: torch.Tensor | None, tgt_ids: torch.Tensor | None = None
                ) -> torch.Tensor:
        """Logits (B, T, V) for an encoder–decoder; encoder output (B, S, D) for encoder-only."""
        memory = self.encode(src_ids) if self.encoder is not None else None
        if self.decoder is None:
            return memory
        return self.project(self.decode(tgt_ids, memory, src_ids))
