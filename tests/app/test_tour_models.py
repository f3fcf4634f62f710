"""The guided tour tells only what is true of the model (issue 39, item 1).

All 19 steps run through AppTest on every family the lab serves: the shipped checkpoints
(`paper`: sinusoidal, post-LN; `seed001`: learned, pre-LN) and random-weight Hugging Face
models built here: GPT-2 (byte-level BPE, and a word-level twin), BERT (WordPiece,
encoder-only), Marian (SentencePiece-style ▁, fixed sinusoidal table, encoder–decoder),
Llama (rotary, 9 query heads sharing 3 key/value heads) and T5 (relative position bias, no
√d_k). Each sentence that names a fact is checked against TRUTH, written here from how each
model was built (not from the app's capabilities), and against a Trace captured here.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import numpy as np
import pytest
import torch

from model import capture, load_checkpoint
from model.backends import backend_for
from tests.app.conftest import run_app
from tests.conftest import ROOT
from ui.views.tour.steps import STEPS

IDS = list(STEPS)
TEXT = "the cat eats fish every day .\nwinter is cold"
SHIPPED = [c for c in ("paper", "seed001") if (ROOT / "checkpoints" / c / "config.json").is_file()]
HF = ("gpt2", "gpt2-word", "bert", "marian", "llama", "t5")

# What each model is, from how it was built (tests/hostile/families.py and build() below).
TRUTH = {
    "paper": dict(family="seq2seq", tokenizer="sentencepiece", positional="sinusoidal",
                  norm="post", heads=4, kv=4, scale="sqrt", lab=True, d_ff=512,
                  names=("d_model", "n_heads", "d_model / n_heads", "d_ff")),
    "seed001": dict(family="seq2seq", tokenizer="sentencepiece", positional="learned",
                    norm="pre", heads=4, kv=4, scale="sqrt", lab=True, d_ff=512,
                    names=("d_model", "n_heads", "d_model / n_heads", "d_ff")),
    "gpt2": dict(family="decoder", tokenizer="byte_bpe", positional="learned", norm="pre",
                 heads=12, kv=12, scale="sqrt", d_ff=96,
                 names=("n_embd", "n_head", "n_embd / n_head", "4 · n_embd")),
    "gpt2-word": dict(family="decoder", tokenizer="word", positional="learned", norm="pre",
                      heads=4, kv=4, scale="sqrt", d_ff=64,
                      names=("n_embd", "n_head", "n_embd / n_head", "n_inner")),
    "bert": dict(family="encoder", tokenizer="wordpiece", positional="learned", norm="post",
                 heads=4, kv=4, scale="sqrt", d_ff=32,
                 names=("hidden_size", "num_attention_heads",
                        "hidden_size / num_attention_heads", "intermediate_size")),
    "marian": dict(family="seq2seq", tokenizer="sentencepiece", positional="sinusoidal",
                   norm="post", heads=2, kv=2, scale="sqrt", d_ff=32,
                   names=("d_model", "encoder_attention_heads",
                          "d_model / encoder_attention_heads", "encoder_ffn_dim")),
    "llama": dict(family="decoder", tokenizer="byte_bpe", positional="rotary", norm="pre",
                  heads=9, kv=3, scale="sqrt", d_ff=48,
                  names=("hidden_size", "num_attention_heads", "head_dim", "intermediate_size",
                         "num_key_value_heads")),
    "t5": dict(family="seq2seq", tokenizer="sentencepiece", positional="relative_bias",
               norm="pre", heads=4, kv=4, scale="none_bias", d_ff=32,
               names=("d_model", "num_heads", "d_kv", "d_ff")),
}
# What transformers (or the lab) gives a pad slot as its position: the lab reads a pad row;
# transformers numbers every slot 0 … n−1 (pads too) except where positions are a relative bias
PADS = {"paper": "pad_row", "seed001": "pad_row", "gpt2": "counted", "gpt2-word": "counted",
        "bert": "counted", "marian": "counted", "llama": "counted", "t5": "none"}
TOKENIZER_WORDS = {"sentencepiece": "▁ marks", "byte_bpe": "Ġ stands", "wordpiece": "## marks",
                   "word": "word-level"}
POSITIONAL_WORDS = {"sinusoidal": "PE(pos, 2i) = sin", "learned": "learns its position table",
                    "rotary": "rotary positions (RoPE)", "relative_bias": "relative positions."}


def build(name: str, root: Path) -> Path:
    """One random-weight Hugging Face folder under root."""
    import transformers as tf

    from tests.hf_folders import SPECIALS, WORDS
    from tests.hf_folders import make_tokenizer as word_tokenizer
    from tests.hostile.families import build_folder
    from tests.hostile.families import make_tokenizer as family_tokenizer

    if name in ("gpt2", "bert", "marian"):
        return build_folder(root, name)
    torch.manual_seed(0)
    if name == "gpt2-word":
        tok = word_tokenizer(None)
        model = tf.GPT2LMHeadModel(tf.GPT2Config(
            vocab_size=len(SPECIALS) + len(WORDS), n_embd=16, n_layer=2, n_head=4,
            n_positions=32, n_inner=64, bos_token_id=2, eos_token_id=3, pad_token_id=0))
    elif name == "llama":
        tok = family_tokenizer("gpt2")
        model = tf.LlamaForCausalLM(tf.LlamaConfig(
            vocab_size=len(tok), hidden_size=36, intermediate_size=48, num_hidden_layers=2,
            num_attention_heads=9, num_key_value_heads=3, max_position_embeddings=64,
            pad_token_id=tok.pad_token_id))
    else:
        tok = family_tokenizer("marian")
        model = tf.T5ForConditionalGeneration(tf.T5Config(
            vocab_size=len(tok), d_model=16, d_kv=4, d_ff=32, num_layers=2,
            num_decoder_layers=2, num_heads=4, relative_attention_num_buckets=8,
            pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id,
            decoder_start_token_id=tok.pad_token_id))
    model.save_pretrained(root / name, safe_serialization=True)
    tok.save_pretrained(root / name)
    return root / name


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("tour_models")
    out = {name: build(name, root) for name in HF}
    out.update({c: ROOT / "checkpoints" / c for c in SHIPPED})
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ATTN_MODELS", str(root))
        mp.setenv("HF_HUB_OFFLINE", "1")
        yield out


def walk_all_steps(name: str) -> list[dict]:
    """Every step of the tour on one model: its text, notes and chart specs."""
    at = run_app({"view": "tour", "ckpt": name, "text": TEXT}, timeout=300)
    pages = []
    for i in range(1, len(IDS) + 1):
        if i > 1:
            at.button(key="tour_next").click().run(timeout=300)
        problems = [e.value for e in at.error] + [str(x.value)[:300] for x in at.exception]
        assert not problems, (name, i, problems)
        assert [h.value for h in at.subheader][-1].startswith(f"{i}. ")
        texts = [m.value for m in at.markdown] + [c.value for c in at.caption] + \
            [c.value for c in at.code]
        pages.append({"said": re.sub(r"\\(.)", r"\1", "\n".join(texts)),
                      "info": " ".join(x.value for x in at.info),
                      "charts": [json.loads(c.proto.spec) for c in at.get("plotly_chart")]})
    return pages


def titles(page: dict) -> list[str]:
    return [str(c["layout"].get("title", {}).get("text", "")) for c in page["charts"]]


def oracle(folder: Path, lab: bool):
    """The model's own Trace of TEXT, captured here (the app's default: target_lang auto)."""
    bundle = load_checkpoint(folder)
    kwargs = {"target_lang": "auto"} if lab else {}
    return bundle, capture(bundle, TEXT.split("\n"), **kwargs)


@pytest.mark.parametrize("name", [*SHIPPED, *HF])
def test_every_step_says_only_what_the_model_is(name, folders):
    truth = TRUTH[name]
    bundle, t = oracle(folders[name], truth.get("lab", False))
    pages = dict(zip(IDS, walk_all_steps(name), strict=True))
    enc = truth["family"] != "decoder"
    toks, ids = (t.src_tokens, t.src_ids) if enc else (t.tgt_tokens, t.tgt_ids)
    m, n = len(toks[0]), ids.shape[1]
    pos = t.positions["enc" if enc else "dec"][0]
    fails = []

    def check(step: str, ok: bool, what: str) -> None:
        if not ok:
            fails.append(f"step {IDS.index(step) + 1} ({step}): {what}")

    said = {step: page["said"] for step, page in pages.items()}
    for step, page in pages.items():  # sentences are numbered from 1 everywhere
        check(step, not any("sentence 0" in x for x in titles(page)), "a chart says sentence 0")

    # 1: the tokenizer's marks, the vocabulary, the pieces
    for kind, words in TOKENIZER_WORDS.items():
        check("pieces", (words in said["pieces"]) == (kind == truth["tokenizer"]),
              f"{words!r} said: {said['pieces'][:200]}")
    check("pieces", ("SentencePiece" in said["pieces"]) == (truth["tokenizer"] ==
                                                            "sentencepiece"), "SentencePiece")
    vocab = len(backend_for(bundle).vocabulary())
    check("pieces", f"vocabulary of {vocab:,} pieces" in said["pieces"], "vocabulary size")
    check("pieces", f"Sentence 1 has {m} pieces" in said["pieces"], "piece count")
    # 2: the pad id, seed 000's padding_value=0 only where it is the model's
    check("padding", f"pad id {t.pad_id} " in said["padding"], f"pad id {t.pad_id}")
    check("padding", ("padding_value=0" in said["padding"]) == (t.pad_id == 0), "padding_value")
    # every size under the model's own config name (names: how it was built above), never
    # another code base's variable (seed 000's d_hidn is the lab's d_model, GPT-2's n_embd …)
    width, heads, head_dim, ffn, *kv_name = truth["names"]
    for step, text in said.items():
        for alien in ("d_hidn", "n_vocab", "n_kv_head"):
            check(step, alien not in text, f"says {alien}")
    check("embedding", f"nn.Embedding(vocab_size, {width})" in said["embedding"], width)
    check("embedding", f"(bs, {'n_enc_seq' if enc else 'n_dec_seq'}, {width}) = "
          in said["embedding"], f"input_embs in {width}")
    # 3: √d_model only for the lab's models, which multiply by it
    check("embedding", ("√" in said["embedding"]) == truth.get("lab", False), "√d")
    # 4: the positional scheme, the position ids, the table only where there is one
    for kind, words in POSITIONAL_WORDS.items():
        check("positional", (words in said["positional"]) == (kind == truth["positional"]),
              f"{words!r} said: {said['positional'][:300]}")
    table = truth["positional"] in ("sinusoidal", "learned")
    shown = titles(pages["positional"])
    check("positional", any("Positional table" in x for x in shown) == table, "table chart")
    check("positional", not any(re.search(r"\b[01] positions ×", x) for x in shown),
          "an empty table")
    real = pos[:m].tolist()
    pads = {int(x) for b, row in enumerate(t.positions["enc" if enc else "dec"])
            for x in row[len(toks[b]):]}  # every sentence's pad slots
    check("positional", f"positions {real[0]} to {real[-1]}." in said["positional"],
          f"positions {real[0]} to {real[-1]}")
    lab_pads = real[0] == 1 and pads == {0}  # the lab's convention, seen on a pad slot
    check("positional", ("row 0 = pad position" in " ".join(shown)) == (lab_pads and table),
          "row 0 = pad position")
    check("positional", ("pad slots get 0" in " ".join(shown)) == lab_pads, "pad slots get 0")
    check("positional", ("Pad slots get position 0" in said["positional"]) == lab_pads,
          "Pad slots get position 0")
    # what the model gives the pads (transformers numbers every slot unless positions are a
    # relative bias), said wherever there are pad slots beyond the lab's row 0
    check("positional", ("Pad slots get no position" in said["positional"])
          == (bool(pads) and not lab_pads and PADS[name] == "none"), "Pad slots get no position")
    check("positional", ("Pad slots are numbered on like every other slot" in said["positional"])
          == (bool(pads) and not lab_pads and PADS[name] == "counted"),
          "Pad slots are numbered on")
    # 5: a position vector is added only where the model adds one
    check("sum", ("+ pos_embs" in said["sum"]) == (table and truth.get("lab", False)),
          "input_embs + pos_embs")
    check("sum", ("Nothing is added" in said["sum"]) == (not table), "nothing added")
    # 7: the key/value heads
    gqa = truth["kv"] != truth["heads"]
    check("qkv", (f"{truth['heads']} query heads sharing {truth['kv']} key/value heads" in
                  said["qkv"]) == gqa, "query heads sharing key/value heads")
    check("qkv", f"{heads} = {truth['heads']} heads" in said["qkv"], heads)
    kv_shape = f"k_s: (bs, {kv_name[0] if gqa else heads}, n_seq, {head_dim}) = " \
        f"({ids.shape[0]}, {truth['kv']}, {n},"
    check("qkv", kv_shape in said["qkv"], kv_shape)
    check("qkv", any("key/value head" in x for x in titles(pages["qkv"])) == gqa, "K title")
    # 9: ÷√d_k only where the model divides by it; a bias named where there is one
    d_h = t.q["enc_self" if enc else "dec_self"].shape[-1]
    check("scale", ("divided by √d_k" in said["scale"]) == truth["scale"].startswith("sqrt"),
          f"√d_k said: {said['scale'][:200]}")
    check("scale", ("does not divide" in said["scale"]) == truth["scale"].startswith("none"),
          "does not divide")
    check("scale", ("relative position bias" in said["scale"]) ==
          (truth["positional"] == "relative_bias"), "relative position bias")
    check("scale", f"√{d_h}" in said["scale"], "d_head")
    # 14: norm placement; LayerNorm named only for the lab's models (Llama and T5 use RMS norms)
    pre = truth["norm"] == "pre"
    words = ("Pre-LN", "Post-LN") if truth.get("lab") else ("pre-norm", "post-norm")
    check("residual", words[0 if pre else 1] in said["residual"], words[0 if pre else 1])
    check("residual", words[1 if pre else 0] not in said["residual"], words[1 if pre else 0])
    check("residual", "LayerNorm" not in said["residual"] or truth.get("lab", False),
          "LayerNorm named for a model the lab does not know")
    # 15: the FFN's width is never 0 and, where said, the model's
    widths = {int(a or b) for a, b in re.findall(rf"{re.escape(ffn)} = (\d+)|→ (\d+)\)",
                                                  said["ffn"])}
    check("ffn", widths <= {truth["d_ff"]}, f"{ffn} {widths} against {truth['d_ff']}")
    check("ffn", not widths or f"{ffn} = {truth['d_ff']}" in said["ffn"]
          or f"→ {ffn} (" in said["ffn"], ffn)  # GPT-2 leaves its width unsaid (n_inner None)
    check("ffn", ", 0)" not in said["ffn"], "a width of 0")
    # 16: the layers of the walked stack
    layers = t.hidden["enc" if enc else "dec"].shape[0] - 1
    check("next", f"{layers} layers in all" in said["next"], f"{layers} layers")
    # 17, 18: the decoder and cross-attention by family
    sub, crs = said["subsequent"] + pages["subsequent"]["info"], \
        said["cross"] + pages["cross"]["info"]
    family = truth["family"]
    check("subsequent", ("no decoder" in sub) == (family == "encoder"), "no decoder")
    check("subsequent", ("decoder only" in sub) == (family == "decoder"), "decoder only")
    check("subsequent", ("shifted right" in sub) == (family == "seq2seq"), "shifted right")
    check("cross", ("has no decoder" in crs) == (family == "encoder"), "cross: no decoder")
    check("cross", ("has no encoder" in crs) == (family == "decoder"), "cross: no encoder")
    check("cross", ("the queries come from the decoder" in crs) == (family == "seq2seq"),
          "cross-attention")
    # 19: what the model predicts, from its own logits
    out = said["output"] + pages["output"]["info"]
    if t.logits is None:
        check("output", "no output layer" in out, "no output layer")
    else:
        vocab_list = backend_for(bundle).vocabulary()
        p = torch.softmax(torch.from_numpy(t.logits[0, :len(t.tgt_tokens[0])]).double(), -1)
        top = [vocab_list[i] for i in p.argmax(-1).tolist()]
        shown = re.search(r"reads?: ([^;\n]*)", out)
        shown = shown.group(1).split(" ") if shown else []
        # a random Hugging Face encoder–decoder's decoder input is the app's own greedy output,
        # which may differ in length from generate()'s here: its first piece is the same
        lab_or_decoder = truth.get("lab") or family == "decoder"
        same = shown == top if lab_or_decoder else shown[:1] == top[:1]
        check("output", bool(same), f"reads: {' '.join(top)}; said: {' '.join(shown)}")
        check("output", "(0%)" not in out or float(p.max(-1).values[0]) == 0, "a 0% top piece")
        if family == "decoder":
            hits = sum(a == b for a, b in zip(top, t.tgt_tokens[0][1:]))
            check("output", f"at {hits} of {len(t.tgt_tokens[0]) - 1} positions" in out,
                  "matches")
    assert not fails, f"{name}:\n" + "\n".join(fails)


def test_the_walked_head_reads_its_shared_key_value_head(folders):
    """Llama: head 4 reads key/value head 1 (heads 3, 4, 5 share it); K and V charts hold
    that head's numbers, and the scores chart is Q·Kᵀ of the two."""
    bundle, t = oracle(folders["llama"], False)
    at = run_app({"view": "tour", "ckpt": "llama", "text": TEXT, "step": "7", "head": "4"},
                 timeout=300)
    said = " ".join(m.value for m in at.markdown)
    assert "reads key/value head 1, shared by query heads 3, 4, 5" in said
    charts = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    from tests.app.test_views import array

    np.testing.assert_allclose(array(charts[1]["data"][0]["z"]), t.k["dec_self"][0, 0, 1],
                               atol=1e-5)
    np.testing.assert_allclose(array(charts[2]["data"][0]["z"]), t.v["dec_self"][0, 0, 1],
                               atol=1e-5)
    assert os.environ["ATTN_MODELS"]


@pytest.mark.parametrize("name", ["gpt2", "t5"])
def test_the_steps_view_names_only_what_this_models_scores_hold(name, folders):
    # the recorder's caption once named T5's bias and Gemma 2's softcap on every model; now the
    # bias only where TRUTH says the model has relative positions, and no softcap on either
    at = run_app({"view": "steps", "ckpt": name, "text": TEXT}, timeout=300)
    assert not at.exception and not at.error
    said = " ".join(str(c.value) for c in at.caption)
    assert "AttentionInterface" in said and "Padding is kept." in said
    bias = TRUTH[name]["positional"] == "relative_bias"
    assert ("relative position bias" in said) == bias, said
    assert "T5" not in said and "Gemma" not in said and "tanh" not in said


def test_a_softcapped_model_says_its_cap(folders):
    # Gemma 2's attn_logit_softcapping, read from the model's config by the hf facts
    from model.backends.hf.facts import hf_facts
    from ui.views.steps import recorder_caption

    bundle = load_checkpoint(folders["gpt2"])
    backend = backend_for(bundle)
    pieces = bundle.tokenizer.convert_ids_to_tokens(list(range(len(bundle.tokenizer))))
    plain = hf_facts(bundle, backend.caps, pieces)
    assert plain.score_softcap is None and "tanh" not in recorder_caption(plain)
    bundle.config.hf.attn_logit_softcapping = 50.0
    capped = hf_facts(bundle, backend.caps, pieces)
    assert capped.score_softcap == 50.0
    said = recorder_caption(capped)
    assert "±50 (c · tanh(score / c))" in said and "relative position bias" not in said
