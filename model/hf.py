"""Hugging Face models from a local folder, recorded into the same Trace as the lab's own model.

Three families, told apart by the folder's config.json:
    encoder-only (BERT-like)        -> attention kind "enc_self", text on the source side
    decoder-only (GPT-2-like)       -> attention kind "dec_self", text on the target side
    encoder–decoder (Marian/T5/BART) -> "enc_self", "dec_self", "cross"

Only safetensors weights are read (`use_safetensors=True`), never with `trust_remote_code`, and
never from the network: loading a folder passes `local_files_only=True`, and unless the operator
sets ATTN_ALLOW_HUB=1 this module also sets HF_HUB_OFFLINE=1 before transformers is imported.
"""

from __future__ import annotations

import inspect
import os
import re
import threading
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch

from .capture import GROUPS, Trace
from .checkpoint import Bundle, CheckpointError, _read_json, check_safetensors
from .decode import checked_heads
from .hooks import Head

if os.environ.get("ATTN_ALLOW_HUB") != "1":
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

HUB_TIMEOUT_S = 20.0  # a hub lookup that takes longer is reported as unreachable
HUB_FILES = ["*.json", "*.safetensors", "*.model", "*.spm", "*.txt"]  # never *.bin pickles
DEFAULT_MAX_LEN = 512  # for models without a position limit (T5's relative positions)
_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]{0,95}(/[A-Za-z0-9][\w.-]{0,95})?")
# A folder needs one of these: without them transformers 5 quietly builds an empty tokenizer.
TOKENIZER_FILES = ("tokenizer.json", "vocab.txt", "vocab.json", "spiece.model", "source.spm",
                   "sentencepiece.bpe.model", "tokenizer.model")
_POS_NAMES = ("position_embeddings", "embed_positions", "wpe", "pos_embed")
_LOAD_ARGS = dict(use_safetensors=True, local_files_only=True, trust_remote_code=False,
                  attn_implementation="eager")


@dataclass(frozen=True)
class HFConfig:
    """The parts of a transformers config the lab uses, under the lab's names."""

    family: str  # "encoder", "decoder" or "seq2seq"
    n_enc_layers: int
    n_dec_layers: int
    n_heads: int
    d_model: int
    max_len: int  # longest input the position table allows
    pad_id: int  # id used to pad batches (GPT-2 has none: its eos)
    vocab_size: int
    model_type: str
    decoder_start_id: int | None = None
    hf: Any = field(default=None, repr=False, compare=False)  # the transformers config itself


def _first(cfg: Any, *names: str) -> Any:
    for name in names:
        value = getattr(cfg, name, None)
        if value is not None:
            return value
    return None


def _family(cfg: Any) -> str:
    """'seq2seq', 'decoder' or 'encoder', from the config alone."""
    if getattr(cfg, "is_encoder_decoder", False):
        return "seq2seq"
    archs = getattr(cfg, "architectures", None) or []
    if any(a.endswith(("ForCausalLM", "LMHeadModel")) for a in archs):
        return "decoder"
    if not archs:
        from transformers.models.auto.modeling_auto import (
            MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
            MODEL_FOR_MASKED_LM_MAPPING_NAMES,
        )

        kind = cfg.model_type
        causal = kind in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES
        if causal and kind not in MODEL_FOR_MASKED_LM_MAPPING_NAMES:
            return "decoder"
    return "encoder"


def _lab_config(cfg: Any, tokenizer: Any) -> HFConfig:
    family = _family(cfg)
    n_layers = _first(cfg, "num_hidden_layers", "num_layers")
    if family == "seq2seq":
        n_enc = _first(cfg, "encoder_layers", "num_layers", "num_hidden_layers")
        n_dec = _first(cfg, "decoder_layers", "num_decoder_layers", "num_layers",
                       "num_hidden_layers")
    else:
        n_enc, n_dec = (n_layers, 0) if family == "encoder" else (0, n_layers)
    max_len = _first(cfg, "max_position_embeddings", "n_positions", "n_ctx")
    if max_len is None:
        tok_max = getattr(tokenizer, "model_max_length", None) or 0
        max_len = tok_max if 0 < tok_max < 100_000 else DEFAULT_MAX_LEN
    pad = _first(tokenizer, "pad_token_id") if tokenizer is not None else None
    pad = pad if pad is not None else _first(cfg, "pad_token_id", "eos_token_id")
    if pad is None and tokenizer is not None:
        pad = tokenizer.eos_token_id
    n_heads = _first(cfg, "num_attention_heads", "encoder_attention_heads", "num_heads")
    start = _first(cfg, "decoder_start_token_id")
    return HFConfig(family=family, n_enc_layers=int(n_enc or 0), n_dec_layers=int(n_dec or 0),
                    n_heads=int(n_heads), d_model=int(_first(cfg, "hidden_size", "d_model")),
                    max_len=int(max_len), pad_id=int(pad if pad is not None else 0),
                    vocab_size=int(cfg.vocab_size), model_type=str(cfg.model_type),
                    decoder_start_id=start, hf=cfg)


def _weights_file(folder: Path) -> Path:
    """The safetensors weights of a folder; pickled .bin weights are refused, never opened."""
    single, index = folder / "model.safetensors", folder / "model.safetensors.index.json"
    if single.is_file():
        check_safetensors(single)
        return single
    if index.is_file():
        return index
    pickles = sorted(p.name for p in folder.glob("*.bin"))
    why = "file is missing; only safetensors weights are loaded"
    if pickles:
        why += f" ({', '.join(pickles)} is a pickle and is never opened)"
    raise CheckpointError(single, why)


def load_hf(folder: str | Path) -> Bundle:
    """Load a Hugging Face model folder (config.json with model_type) as a Bundle, kind='hf'."""
    folder = Path(folder)
    weights = _weights_file(folder)
    from transformers import (
        AutoConfig,
        AutoModel,
        AutoModelForCausalLM,
        AutoModelForSeq2SeqLM,
        AutoTokenizer,
    )

    try:
        cfg = AutoConfig.from_pretrained(folder, local_files_only=True, trust_remote_code=False)
    except Exception as exc:  # unknown model_type, malformed fields: transformers' errors vary
        raise CheckpointError(folder / "config.json", f"not a usable Hugging Face config "
                              f"({type(exc).__name__}: {exc})") from None
    tok_file = next((folder / n for n in TOKENIZER_FILES if (folder / n).is_file()), None)
    if tok_file is None:
        raise CheckpointError(folder / "tokenizer.json", "file is missing (no tokenizer files: "
                              f"one of {', '.join(TOKENIZER_FILES)} is needed)")
    try:
        tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True,
                                                  trust_remote_code=False)
    except Exception as exc:
        raise CheckpointError(tok_file, f"cannot load the tokenizer ({type(exc).__name__}: "
                              f"{exc})") from None
    family = _family(cfg)
    auto = {"seq2seq": AutoModelForSeq2SeqLM, "decoder": AutoModelForCausalLM,
            "encoder": AutoModel}[family]
    try:
        model = auto.from_pretrained(folder, **_LOAD_ARGS).eval()
    except Exception as exc:
        raise CheckpointError(weights, f"cannot load the weights ({type(exc).__name__}: "
                              f"{exc})") from None
    n_embed = model.get_input_embeddings().num_embeddings
    if len(tokenizer) > n_embed:
        raise CheckpointError(tok_file, f"tokenizer has {len(tokenizer)} tokens but the model "
                              f"embeds only {n_embed}")
    lab_cfg = _lab_config(model.config, tokenizer)
    if lab_cfg.decoder_start_id is None and family == "seq2seq":
        start = getattr(model.generation_config, "decoder_start_token_id", None)
        lab_cfg = replace(lab_cfg, decoder_start_id=start)
    card_path = folder / "card.json"
    card = _read_json(card_path) if card_path.exists() else {}
    if not isinstance(card, dict):
        raise CheckpointError(card_path, "must be a JSON object")
    card = {"source": "Hugging Face", "model_type": lab_cfg.model_type, **card}
    return Bundle(model=model, tokenizer=tokenizer, config=lab_cfg, card=card,
                  name=folder.name, kind="hf")


# --- which models may be opened ----------------------------------------------------------


def listed_models(spec: str | None = None) -> dict[str, Path]:
    """Models named by ATTN_MODELS (or `spec`): each entry a model folder or a folder of them.

    Entries are separated by os.pathsep; a model is a folder with config.json, named by its
    folder name (the first one wins when two share a name). Missing entries are skipped.
    """
    spec = os.environ.get("ATTN_MODELS", "") if spec is None else spec
    found: dict[str, Path] = {}
    for entry in filter(None, (e.strip() for e in spec.split(os.pathsep))):
        root = Path(entry).expanduser()
        if (root / "config.json").is_file():
            candidates = [root]
        elif root.is_dir():
            candidates = sorted(p for p in root.iterdir() if (p / "config.json").is_file())
        else:
            continue
        for path in candidates:
            found.setdefault(path.name, path.resolve())
    return found


def _download(ref: str, offline: bool) -> str:
    """The local snapshot folder of a hub repository (weights as safetensors only)."""
    from huggingface_hub import snapshot_download

    return snapshot_download(repo_id=ref, allow_patterns=HUB_FILES, local_files_only=offline,
                             etag_timeout=HUB_TIMEOUT_S)


def _from_hub(ref: str, timeout: float) -> Path:
    """Fetch (or find in the cache) a hub model in a worker thread that may not outlive timeout."""
    offline = os.environ.get("HF_HUB_OFFLINE", "").lower() in {"1", "true", "yes", "on"}
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["path"] = _download(ref, offline)
        except Exception as exc:  # network, 404, gated repo, offline cache miss
            box["error"] = exc

    worker = threading.Thread(target=work, name=f"hub:{ref}", daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        raise CheckpointError(ref, f"the Hugging Face hub did not answer within {timeout:g} s "
                              "(no network here?); use a model folder listed in ATTN_MODELS")
    if "error" in box:
        exc = box["error"]
        where = "the local cache (HF_HUB_OFFLINE=1)" if offline else "the Hugging Face hub"
        detail = str(exc).splitlines()[0] if str(exc) else ""
        raise CheckpointError(ref, f"cannot get this model from {where}: "
                              f"{type(exc).__name__}: {detail}".rstrip(": "))
    return Path(box["path"])


def resolve_model_ref(ref: str, allowed: Mapping[str, Path], *,
                      timeout: float = HUB_TIMEOUT_S) -> Path:
    """The folder for a model name from a URL: only names in `allowed`, or, when the operator
    set ATTN_ALLOW_HUB=1, a hub id ("org/name"). Paths are always refused."""
    ref = str(ref).strip()
    if ref in allowed:
        return Path(allowed[ref])
    names = ", ".join(sorted(allowed)) or "none"
    if (not ref or ".." in ref or ref.startswith(("/", "~", ".")) or "\\" in ref or ":" in ref
            or "\x00" in ref or os.path.isabs(ref)):
        raise CheckpointError(ref[:80], f"paths are not accepted; choose a model by name ({names})")
    if not _HUB_ID.fullmatch(ref):
        raise CheckpointError(ref[:80], f"unknown model; choose one of: {names}")
    if os.environ.get("ATTN_ALLOW_HUB") != "1":
        raise CheckpointError(ref, f"unknown model; choose one of: {names} (Hugging Face hub "
                              "ids are accepted only when the operator sets ATTN_ALLOW_HUB=1)")
    return _from_hub(ref, timeout)


# --- capture -----------------------------------------------------------------------------


def _encode(tok: Any, texts: Sequence[str], limit: int, target: bool = False
            ) -> tuple[list[list[int]], list[int]]:
    """Token ids with the tokenizer's own special tokens, cut to `limit`; and how many were cut."""
    key = "text_target" if target else "text"
    full = tok(**{key: list(texts)}, add_special_tokens=True)["input_ids"]
    kept = tok(**{key: list(texts)}, add_special_tokens=True, truncation=True,
               max_length=limit)["input_ids"]
    return [list(k) for k in kept], [len(f) - len(k) for f, k in zip(full, kept)]


def _padded(lists: Sequence[Sequence[int]], pad: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(B, n) ids padded on the right and the (B, n) attention mask (1 = real token)."""
    n = max((len(x) for x in lists), default=0)
    ids = torch.full((len(lists), n), pad, dtype=torch.long)
    mask = torch.zeros((len(lists), n), dtype=torch.long)
    for row, x in enumerate(lists):
        ids[row, : len(x)] = torch.tensor(x, dtype=torch.long)
        mask[row, : len(x)] = 1
    return ids, mask


def _blocked(q_valid: torch.Tensor, k_valid: torch.Tensor, causal: bool) -> np.ndarray:
    """bool (B, Q, K), True = blocked: pad keys, and future keys when causal."""
    out = ~k_valid.bool()[:, None, :].expand(-1, q_valid.size(1), -1)
    if causal:
        n = q_valid.size(1)
        out = out | torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)
    return out.numpy().copy()


def _positions(mask: torch.Tensor, offset: int) -> np.ndarray:
    """int64 (B, n): the row of pos_table each token used; -1 for padding."""
    pos = torch.arange(mask.size(1))[None, :].expand_as(mask) + offset
    return torch.where(mask.bool(), pos, torch.full_like(pos, -1)).numpy().copy()


def _pos_table(model: torch.nn.Module, d_model: int) -> tuple[np.ndarray, int]:
    """The first position embedding table in the model (encoder first) and its row offset."""
    for name, module in model.named_modules():
        weight = getattr(module, "weight", None)
        if (name.rsplit(".", 1)[-1] in _POS_NAMES and isinstance(weight, torch.Tensor)
                and weight.dim() == 2 and weight.size(1) == d_model):
            return weight.detach().float().numpy().copy(), int(getattr(module, "offset", 0))
    return np.zeros((1, d_model), np.float32), 0


def _head_masks(model: torch.nn.Module, cfg: HFConfig, heads: frozenset[Head]
                ) -> dict[str, torch.Tensor]:
    """head_mask-style arguments that knock out `heads`, if the model's forward takes them."""
    if not heads:
        return {}
    names = {"enc_self": "head_mask", "cross": "cross_attn_head_mask",
             "dec_self": "decoder_head_mask" if cfg.family == "seq2seq" else "head_mask"}
    accepted = inspect.signature(model.forward).parameters
    masks: dict[str, torch.Tensor] = {}
    for kind, layer, head in sorted(heads):
        arg = names[kind]
        if arg not in accepted:
            raise ValueError("head ablation is not supported for this model")
        n_layers = cfg.n_enc_layers if kind == "enc_self" else cfg.n_dec_layers
        masks.setdefault(arg, torch.ones(n_layers, cfg.n_heads))[layer, head] = 0.0
    return masks


def _target_lists(bundle: Bundle, src: torch.Tensor, src_mask: torch.Tensor,
                  targets: Sequence[str] | None, extra: dict[str, torch.Tensor]
                  ) -> list[list[int]]:
    """Decoder inputs [start] + pieces (eos excluded): given texts, or the model's greedy output."""
    model, tok, cfg = bundle.model, bundle.tokenizer, bundle.config
    start = cfg.decoder_start_id if cfg.decoder_start_id is not None else cfg.pad_id
    eos = tok.eos_token_id if tok.eos_token_id is not None else cfg.hf.eos_token_id
    limit = cfg.max_len - 1
    if targets is None:
        steps = max(1, min(limit, 2 * src.size(1) + 10))
        with torch.inference_mode():
            out = model.generate(input_ids=src, attention_mask=src_mask, max_new_tokens=steps,
                                 do_sample=False, num_beams=1, **extra)
        lists = []
        for row in out.tolist():
            pieces = []
            for t in row[1:]:
                if t in (eos, cfg.pad_id):
                    break
                pieces.append(t)
            lists.append([row[0], *pieces[: limit - 1]])
        return lists
    ids, _ = _encode(tok, targets, limit + 1, target=True)
    return [[start, *[t for t in x if t != eos][: limit - 1]] for x in ids]


def _stack(parts: Sequence[torch.Tensor] | None) -> np.ndarray:
    return torch.stack(list(parts)).detach().float().numpy()  # (L, B, ...) from L tensors


def capture_hf(bundle: Bundle, sources: Sequence[str], targets: Sequence[str] | None = None, *,
               target_lang: str | None = None, ablate: Iterable[Head] | str = (),
               names: Collection[str] | None = None) -> Trace:
    """One forward pass of a Hugging Face model with output_attentions and output_hidden_states.

    Fills src/tgt tokens (the model's own tokenizer, specials included), ids, masks (from the
    attention masks; decoder causal), attn, hidden, logits (where the model has an LM head),
    pos_table (the model's position embedding, or zeros (1, D) without one, e.g. T5) and
    positions (row of pos_table used, -1 for pad). `scores`, `q`, `k` and `v` are empty dicts:
    transformers does not return them. Encoder-only models put the text on the source side,
    decoder-only models on the target side. `target_lang` is ignored (a Hugging Face model
    translates in the direction it was trained for); with targets=None an encoder–decoder model
    decodes greedily with its own generate(). Ablation works only through head_mask arguments,
    which transformers 5 models no longer take: otherwise ValueError.
    """
    del target_lang
    model, tok, cfg = bundle.model, bundle.tokenizer, bundle.config
    sources = [sources] if isinstance(sources, str) else list(sources)
    groups = set(GROUPS) if names is None else set(names)
    if groups - set(GROUPS):
        raise ValueError(f"hook names {sorted(groups - set(GROUPS))} exist only in the lab's own "
                         f"model; a Hugging Face model records {GROUPS[0]}, hidden and logits")
    if targets is not None and cfg.family != "seq2seq":
        raise ValueError(f"a {cfg.family}-only model reads one text per sentence; pass "
                         "targets=None")
    heads = checked_heads(bundle, ablate)
    extra = _head_masks(model, cfg, heads)
    limit = cfg.max_len
    texts, cuts = _encode(tok, sources, limit)
    ids, mask = _padded(texts, cfg.pad_id)
    seq2seq, encoder = cfg.family == "seq2seq", cfg.family == "encoder"
    pos_table, offset = _pos_table(model, cfg.d_model)
    run = dict(output_attentions=True, output_hidden_states=True, return_dict=True, **extra)
    if seq2seq:
        tgt_lists = _target_lists(bundle, ids, mask, targets, extra)
        tgt, tgt_mask = _padded(tgt_lists, cfg.pad_id)
        with torch.inference_mode():
            out = model(input_ids=ids, attention_mask=mask, decoder_input_ids=tgt,
                        decoder_attention_mask=tgt_mask, **run)
        attn = {"enc_self": out.encoder_attentions, "dec_self": out.decoder_attentions,
                "cross": out.cross_attentions}
        hidden = {"enc": out.encoder_hidden_states, "dec": out.decoder_hidden_states}
        masks = {"enc_self": _blocked(mask, mask, False),
                 "dec_self": _blocked(tgt_mask, tgt_mask, True),
                 "cross": _blocked(tgt_mask, mask, False)}
        src_lists, src, src_mask = texts, ids, mask
    else:
        with torch.inference_mode():
            out = model(input_ids=ids, attention_mask=mask, **run)
        side, kind = ("enc", "enc_self") if encoder else ("dec", "dec_self")
        attn, hidden = {kind: out.attentions}, {side: out.hidden_states}
        masks = {kind: _blocked(mask, mask, causal=not encoder)}
        empty = torch.zeros((len(sources), 0), dtype=torch.long)
        if encoder:
            src_lists, src, src_mask, tgt_lists, tgt, tgt_mask = texts, ids, mask, [], empty, None
        else:
            src_lists, src, src_mask, tgt_lists, tgt, tgt_mask = [], empty, None, texts, ids, mask
    logits = getattr(out, "logits", None)
    positions = {}
    if src_mask is not None:
        positions["enc"] = _positions(src_mask, offset)
    if tgt_mask is not None:
        positions["dec"] = _positions(tgt_mask, offset)
    n = len(sources)
    return Trace(
        src_tokens=[tok.convert_ids_to_tokens(x) for x in src_lists] or [[] for _ in range(n)],
        tgt_tokens=[tok.convert_ids_to_tokens(x) for x in tgt_lists] or [[] for _ in range(n)],
        src_ids=src.numpy().copy(), tgt_ids=tgt.numpy().copy(), masks=masks,
        scores={}, q={}, k={}, v={},
        attn={k: _stack(a) for k, a in attn.items()} if "attn" in groups else {},
        hidden={s: _stack(h) for s, h in hidden.items()} if "hidden" in groups else {},
        pos_table=pos_table,
        logits=logits.detach().float().numpy() if logits is not None and "logits" in groups
        else None,
        pad_id=cfg.pad_id, sources=sources,
        targets=[tok.decode(t, skip_special_tokens=True) for t in tgt_lists] if seq2seq else [],
        target_langs=[None] * n, positions=positions, src_cut=cuts, ablate=heads,
    )
