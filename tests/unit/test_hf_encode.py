"""model.backends.hf.record.encode_ids tokenizes each line once and cuts it itself: the ids
and cut counts equal transformers' own truncation (a second, truncating call, as the code did
before), on the tests' word-level tokenizers with every special-token template, both
truncation sides, rows under, at and over the limit, and typed special tokens."""

from __future__ import annotations

import pytest

from model.backends.hf.record import encode_ids
from tests.hf_folders import make_tokenizer

LINES = ["the cat eats fish every day .", "winter is cold", "a", "",
         "the cat eats fish every day . a dog runs winter is cold . the cat eats fish",
         "[CLS] the cat eats fish every day [SEP]", "the cat eats [SEP] fish every day ."]


def by_transformers(tok, texts, limit, target=False):
    """The old way: one call for the full length, one truncating call for the kept ids."""
    key = "text_target" if target else "text"
    full = tok(**{key: list(texts)}, add_special_tokens=True)["input_ids"]
    kept = tok(**{key: list(texts)}, add_special_tokens=True, truncation=True,
               max_length=limit)["input_ids"]
    return [list(k) for k in kept], [len(f) - len(k) for f, k in zip(full, kept, strict=True)]


@pytest.mark.parametrize("template", [None, "[CLS] $A [SEP]", "$A </s>", "<s> $A"])
@pytest.mark.parametrize("side", ["right", "left"])
def test_one_call_cuts_as_transformers_does(template, side):
    tok = make_tokenizer(template)
    tok.truncation_side = side
    for limit in (3, 5, 8, 40):
        for target in (False, True):
            got = encode_ids(tok, LINES, limit, target=target)
            assert got == by_transformers(tok, LINES, limit, target), (limit, target)
    assert any(c > 0 for c in encode_ids(tok, LINES, 5)[1])  # some rows were cut


def test_each_line_is_tokenized_once(monkeypatch):
    tok = make_tokenizer("[CLS] $A [SEP]")
    seen: list[str] = []
    real = type(tok).__call__

    def counted(self, *args, **kwargs):
        texts = kwargs.get("text", args[0] if args else None)
        seen.extend([texts] if isinstance(texts, str) else list(texts))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(type(tok), "__call__", counted)
    lines = LINES[:5]  # no typed special token at an edge
    ids, cuts = encode_ids(tok, lines, 5)
    assert sorted(seen) == sorted(lines) and sum(cuts) > 0
    seen.clear()
    by_transformers(tok, lines, 5)
    assert len(seen) == 2 * len(lines)  # the counter sees the old way's second call
