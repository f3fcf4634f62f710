"""Teacher-forced scoring of Hugging Face models, for ablation and the importance scan.

What a head's removal costs depends on what the model does:
    decoder-only    log-probability of each next token of the typed text (token t+1 given 1..t)
    encoder–decoder log-probability of each token of the greedy output (given the source)
    encoder-only    no text to predict (the folder loads without an LM head): the relative
                    change of each token's last hidden state, ‖h_after − h_before‖ / ‖h_before‖
Heads are knocked out by hooks at `...hook_context` (recorder.py), the lab model's names.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from ...decode import Translation
from ...forced import Forced
from ...hooks import HookFn, hooks
from .record import device_of, encode_checked, padded, target_lists

CONTINUE_STEPS = 8  # tokens a decoder-only model writes after the text, shown before/after


def measure(bundle) -> str:
    """'logp' where the model predicts text, 'hidden' for encoder-only models."""
    return "hidden" if bundle.config.family == "encoder" else "logp"


def greedy(bundle, sources: Sequence[str], fns: dict[str, HookFn] | None = None,
           ids: Sequence[Sequence[int]] | None = None) -> list[Translation]:
    """What the model writes (with hooks fns attached): an encoder–decoder model its greedy
    output, a decoder-only model CONTINUE_STEPS greedy tokens after the text, an encoder-only
    model nothing. `ids`: the sources' token ids where the caller has them (not tokenized
    again)."""
    model, tok, cfg = bundle.model, bundle.tokenizer, bundle.config
    device = device_of(model)
    ids = [list(r) for r in ids] if ids is not None \
        else encode_checked(tok, sources, cfg.max_len)[0]
    out: list[list[int]] = []
    with hooks(fns or {}), torch.inference_mode():
        if cfg.family == "seq2seq":
            src, mask = padded(ids, cfg.pad_id, device)
            out = [row[1:] for row in target_lists(bundle, src, mask, None)]
        elif cfg.family == "decoder":
            for row in ids:  # one at a time: right padding would derail generate()
                x = torch.tensor([row], device=device)
                steps = max(0, min(CONTINUE_STEPS, cfg.max_len - len(row)))
                if steps == 0:
                    out.append([])
                    continue
                gen = model.generate(input_ids=x, attention_mask=torch.ones_like(x),
                                     max_new_tokens=steps, do_sample=False, num_beams=1,
                                     pad_token_id=cfg.pad_id)
                out.append(gen[0, len(row):].tolist())
        else:
            out = [[] for _ in sources]
    return [Translation(source=s, target_lang=None,
                        text=tok.decode(o, skip_special_tokens=True), ids=list(o),
                        pieces=tok.convert_ids_to_tokens(o), steps=[], probs=[], finished=True)
            for s, o in zip(sources, out)]


def forced_batch(bundle, sources: Sequence[str], outputs: Sequence[Sequence[int]] | None = None,
                 target: str | None = None) -> Forced:
    """The batch to score: `outputs` are an encoder–decoder model's generated ids (eos
    excluded), or `target` a text to force instead (one sentence)."""
    tok, cfg = bundle.tokenizer, bundle.config
    device = device_of(bundle.model)
    ids, _ = encode_checked(tok, sources, cfg.max_len)
    src, mask = padded(ids, cfg.pad_id, device)
    if cfg.family == "seq2seq":
        start = cfg.decoder_start_id if cfg.decoder_start_id is not None else cfg.pad_id
        eos = tok.eos_token_id if tok.eos_token_id is not None else cfg.hf.eos_token_id
        if target is not None:
            outputs = [target_lists(bundle, src, mask, [target])[0][1:]]
        limit = cfg.max_len - 1
        bodies = [list(o)[: limit - 1] for o in outputs or []]
        tgt_in, tgt_mask = padded([[start, *b] for b in bodies], cfg.pad_id, device)
        tgt_out, valid = padded([[*b, eos] for b in bodies], cfg.pad_id, device)
        inputs = dict(input_ids=src, attention_mask=mask, decoder_input_ids=tgt_in,
                      decoder_attention_mask=tgt_mask)
        tokens = [tok.convert_ids_to_tokens([*b, eos]) for b in bodies]
        return Forced(inputs, tgt_out, valid.bool(), tokens, "logp")
    inputs = dict(input_ids=src, attention_mask=mask)
    if cfg.family == "decoder":  # position t predicts token t+1
        out_ids = torch.cat([src[:, 1:], torch.full_like(src[:, :1], cfg.pad_id)], dim=1)
        valid = torch.cat([mask[:, 1:], torch.zeros_like(mask[:, :1])], dim=1).bool()
        tokens = [tok.convert_ids_to_tokens(row[1:]) for row in ids]
        return Forced(inputs, out_ids, valid, tokens, "logp")
    return Forced(inputs, src, mask.bool(), [tok.convert_ids_to_tokens(r) for r in ids],
                  "hidden")


def forced_values(bundle, forced: Forced, fns: dict[str, HookFn]) -> torch.Tensor:
    """'logp': (B, T) float64 log-probability of each output id (0 where not valid);
    'hidden': (B, T, D) float64 last hidden states. On the CPU, with hooks fns attached."""
    model = bundle.model
    with torch.inference_mode(), hooks(fns):
        kwargs = {} if bundle.config.family == "encoder" else {"use_cache": False}
        out = model(**forced.inputs, return_dict=True, **kwargs)
    if forced.measure == "hidden":
        return out.last_hidden_state.to("cpu", torch.float64)
    logp = torch.log_softmax(out.logits.to("cpu", torch.float64), dim=-1)  # (B, T, V)
    picked = logp.gather(-1, forced.out_ids.cpu().unsqueeze(-1)).squeeze(-1)  # (B, T)
    return picked.masked_fill(~forced.valid.cpu(), 0.0)
