"""The soak's long-mode inputs (issue 41): a random long-context model built for the soak, and
a long text pasted into its attention view the way a student does."""

from __future__ import annotations

from pathlib import Path

from benchmarks.soak_common import LONG_MODEL


def long_model(folder: Path) -> Path:
    """A random rotary model (2 layers, 4 query heads on 2 key/value heads, 64 wide, word-level
    pieces) reading up to 40,000 positions: long mode's inputs go to it."""
    import torch
    import transformers as tf

    from benchmarks.big_models import SPECIALS, WORDS, make_tokenizer

    torch.manual_seed(0)
    model = tf.LlamaForCausalLM(tf.LlamaConfig(
        hidden_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
        intermediate_size=128, max_position_embeddings=40_000,
        vocab_size=len(SPECIALS) + len(WORDS), pad_token_id=0, bos_token_id=2, eos_token_id=3))
    model.save_pretrained(folder / LONG_MODEL, safe_serialization=True)
    make_tokenizer("<s> $A").save_pretrained(folder / LONG_MODEL)
    return folder / LONG_MODEL


def long_input(at, text: str, words: str) -> bool:
    """A long text pasted into the attention view of LONG_MODEL: the view first (its long-text
    box exists only there), then the text, in a second rerun, as a student does. True when
    the page then says it is in long mode."""
    if at.selectbox(key="ckpt").value != LONG_MODEL:
        at.selectbox(key="ckpt").select(LONG_MODEL)
    at.text_area(key="text").input(text)
    at.text_input(key="ablate").input("")
    at.radio(key="view").set_value("attention")
    at.run()
    if at.exception:
        return False
    at.text_area(key="long_text").input(words).run()
    return any(str(box.value).startswith("Long mode:") for box in at.info)
