"""Counting what the tokenizers are handed, for the tests that say each input is tokenized once
(test_one_tokenization, test_patch_tokenization): every SentencePiece encode entry point and
transformers' tokenizer call and encode, wrapped for one test."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable

import pytest


def count_encodes(monkeypatch: pytest.MonkeyPatch,
                  when: Callable[[], bool] = lambda: True) -> Counter:
    """A Counter of the texts given to a tokenizer while `when()` holds, one count per text (a
    list given at once counts each; an entry point that calls another counts once)."""
    import sentencepiece as spm
    from transformers import PreTrainedTokenizerBase

    seen: Counter = Counter()
    depth = threading.local()

    def wrap(real):
        def counted(self, text=None, *args, **kwargs):
            shown = kwargs.get("text_target") if text is None else text  # targets count too
            if getattr(depth, "n", 0) == 0 and when():
                seen.update([shown] if isinstance(shown, str) else list(shown or []))
            depth.n = getattr(depth, "n", 0) + 1
            try:
                return real(self, text, *args, **kwargs)
            finally:
                depth.n -= 1
        return counted

    spm_names = [n for n in dir(spm.SentencePieceProcessor)
                 if "encode" in n.lower() and not n.startswith("_")]
    for cls, names in ((spm.SentencePieceProcessor, spm_names),
                       (PreTrainedTokenizerBase, ["__call__", "encode"])):
        for name in names:
            monkeypatch.setattr(cls, name, wrap(getattr(cls, name)))
    return seen
