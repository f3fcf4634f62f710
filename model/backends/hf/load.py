"""Hugging Face models from a local folder, recorded into the same Trace as the lab's own model.

Three families, told apart by the folder's config.json:
    encoder-only (BERT-like)        -> attention kind "enc_self", text on the source side
    decoder-only (GPT-2-like)       -> attention kind "dec_self", text on the target side
    encoder–decoder (Marian/T5/BART) -> "enc_self", "dec_self", "cross"

Only safetensors weights are read (`use_safetensors=True`), never with `trust_remote_code`, and
never from the network: loading a folder passes `local_files_only=True`, and unless the operator
sets ATTN_ALLOW_HUB=1 this module also sets HF_HUB_OFFLINE=1 before transformers is imported.

Models load with the lab's recording attention (recorder.py, attn_implementation="lab_record"),
in the dtype their weights are stored in, on ATTN_DEVICE (cpu, the default; cuda; auto = cuda
when a GPU is available). The card records the device and dtype used.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ...checkpoint import Bundle, CheckpointError, check_safetensors, read_json
from ...settings import DEVICES, keep_hub_offline, model_entries, settings
from .segments import type_segments
from .sentence import sentence_config

keep_hub_offline()  # before transformers is imported: HF_HUB_OFFLINE=1 unless ATTN_ALLOW_HUB=1

HUB_TIMEOUT_S = 20.0  # a hub lookup that takes longer is reported as unreachable
HUB_FILES = ["*.json", "*.safetensors", "*.model", "*.spm", "*.txt"]  # never *.bin pickles
DEFAULT_MAX_LEN = 512  # for models without a position limit (T5's relative positions)
_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]{0,95}(/[A-Za-z0-9][\w.-]{0,95})?")
# A folder needs one of these: without them transformers 5 quietly builds an empty tokenizer.
TOKENIZER_FILES = ("tokenizer.json", "vocab.txt", "vocab.json", "spiece.model", "source.spm",
                   "sentencepiece.bpe.model", "tokenizer.model")
POS_NAMES = ("position_embeddings", "embed_positions", "wpe", "pos_embed")
# dtype="auto": weights stored in bf16/fp16 stay in bf16/fp16 (the Trace is float32 anyway)
_LOAD_ARGS = dict(use_safetensors=True, local_files_only=True, trust_remote_code=False,
                  dtype="auto")


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


def model_device(setting: str | None = None) -> tuple[str, str]:
    """(device, note) for ATTN_DEVICE=cpu|cuda|auto (default cpu). Without a GPU, cuda and auto
    run on the CPU, and the note says why."""
    import torch

    want = (settings().device if setting is None else setting).strip().lower()
    if want not in DEVICES:
        return "cpu", f"ATTN_DEVICE={want!r} is not one of {', '.join(DEVICES)}; using cpu"
    if want == "cpu":
        return "cpu", ""
    if torch.cuda.is_available():
        return "cuda", ""
    return "cpu", f"ATTN_DEVICE={want} but no GPU is available; using cpu"


def _load_model(auto: Any, folder: Path, weights: Path) -> Any:
    """The model with the lab's recording attention; families whose attention cannot be
    swapped load with eager attention (attention recorded via output_attentions only)."""
    from .recorder import register

    try:
        return auto.from_pretrained(folder, attn_implementation=register(), **_LOAD_ARGS)
    except (ValueError, KeyError, ImportError):  # attn_implementation refused by this family
        pass
    except Exception as exc:
        raise CheckpointError(weights, f"cannot load the weights ({type(exc).__name__}: "
                              f"{exc})") from None
    try:
        return auto.from_pretrained(folder, attn_implementation="eager", **_LOAD_ARGS)
    except Exception as exc:
        raise CheckpointError(weights, f"cannot load the weights ({type(exc).__name__}: "
                              f"{exc})") from None


def _warm(model: Any, family: str, weights: Path) -> None:
    """Hook the model once here, not on some session's first patch: sessions share it, and a
    hook added while another thread runs a forward changes the table that forward reads."""
    from .recorder import prepare

    try:
        prepare(model, family)
    except Exception as exc:  # a model that cannot run 3 tokens would fail every view anyway
        raise CheckpointError(weights, f"cannot run the model once ({type(exc).__name__}: "
                              f"{exc})") from None


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
    device, device_note = model_device()
    model = _load_model(auto, folder, weights).eval().to(device)
    n_embed = model.get_input_embeddings().num_embeddings
    if len(tokenizer) > n_embed:
        raise CheckpointError(tok_file, f"tokenizer has {len(tokenizer)} tokens but the model "
                              f"embeds only {n_embed}")
    lab_cfg = _lab_config(model.config, tokenizer)
    if lab_cfg.decoder_start_id is None and family == "seq2seq":
        start = getattr(model.generation_config, "decoder_start_token_id", None)
        lab_cfg = replace(lab_cfg, decoder_start_id=start)
    card_path = folder / "card.json"
    card = read_json(card_path) if card_path.exists() else {}
    if not isinstance(card, dict):
        raise CheckpointError(card_path, "must be a JSON object")
    card = {"source": "Hugging Face", "model_type": lab_cfg.model_type, **card,
            "device": device, "dtype": str(next(model.parameters()).dtype).removeprefix("torch.")}
    if device_note:
        card["device_note"] = device_note
    sentence = sentence_config(folder)
    type_segments(model, getattr(tokenizer, "sep_token_id", None), lab_cfg.pad_id)  # "A [SEP] B"
    _warm(model, family, weights)  # last: after every check that names a file
    return Bundle(model=model, tokenizer=tokenizer, config=lab_cfg, card=card,
                  name=folder.name, kind="hf", sentence=sentence)


# --- which models may be opened ----------------------------------------------------------


def listed_models(spec: str | None = None) -> dict[str, Path]:
    """Models named by ATTN_MODELS (or `spec`): each entry a model folder or a folder of them.

    Entries are separated by os.pathsep; a model is a folder with config.json, named by its
    folder name (the first one wins when two share a name). Missing entries are skipped.
    """
    found: dict[str, Path] = {}
    for root in settings().models if spec is None else model_entries(spec):
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
    if not settings().allow_hub:
        raise CheckpointError(ref, f"unknown model; choose one of: {names} (Hugging Face hub "
                              "ids are accepted only when the operator sets ATTN_ALLOW_HUB=1)")
    return _from_hub(ref, timeout)
