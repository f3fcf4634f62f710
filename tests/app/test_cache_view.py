"""view=cache on the shipped language model (checkpoints/lm): the numbers it draws against
transformers' own generate() and an eager forward of an independent load of the folder."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tests.app.conftest import run_app
from tests.app.test_views import charts, ok, texts
from tests.conftest import ROOT
from tests.unit.test_hf import eager_twin

PROMPT = "Ravonel: I eat fish. Ravonel:"
LM = ROOT / "checkpoints" / "lm"
MAX_NEW = 24


@pytest.fixture(scope="module")
def twin():
    return eager_twin(LM)


@pytest.fixture(scope="module")
def reference(twin):
    """The greedy continuation by transformers' generate, and one eager forward over it."""
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(LM)
    prompt = tok(PROMPT)["input_ids"]
    with torch.inference_mode():
        out = twin.generate(torch.tensor([prompt]), attention_mask=torch.ones(1, len(prompt),
                                                                               dtype=torch.long),
                            max_new_tokens=MAX_NEW, do_sample=False)[0].tolist()
    gen = out[len(prompt):]
    finished = bool(gen) and gen[-1] == tok.eos_token_id
    ids = out[:-1] if finished else out
    return {"prompt": prompt, "ids": ids, "steps": len(gen), "tok": tok}


def metric(at, label: str) -> float:
    return float(next(m.value for m in at.metric if m.label.startswith(label)))


def test_the_view_draws_numbers_transformers_agrees_with(twin, reference):
    at = run_app({"ckpt": "lm", "view": "cache", "text": PROMPT, "policy": "window",
                  "budget": "8"}, timeout=180)
    ok(at)
    assert not at.error, texts(at.error)
    ids, p = reference["ids"], len(reference["prompt"])
    shown = next(c.value for c in at.code if "⟶" in c.value)
    assert shown == PROMPT + " ⟶ " + reference["tok"].decode(ids[p:], skip_special_tokens=True)
    n = len(ids)
    # the first position's share at the last step, every layer and head
    with torch.inference_mode():
        att = twin(input_ids=torch.tensor([ids]), output_attentions=True,
                   use_cache=False).attentions
    last = p - 1 + reference["steps"] - 1
    share = np.mean([a[0, :, last, 0].numpy() for a in att])
    assert metric(at, "Share on the first 1") == pytest.approx(share, abs=6e-4)
    # the window of 8, re-scored: transformers with the same additive mask
    i, j = np.arange(n)[:, None], np.arange(n)[None, :]
    keep = torch.from_numpy((j <= i) & (j > i - 8))
    mask = torch.zeros(1, 1, n, n)
    mask[0, 0][~keep] = torch.finfo(torch.float32).min
    with torch.inference_mode():
        logits = twin(input_ids=torch.tensor([ids]), attention_mask=mask,
                      use_cache=False).logits[0].double()
    logp = torch.log_softmax(logits, -1)[:-1]
    loss = -logp.gather(1, torch.tensor(ids[1:])[:, None])[:, 0].numpy()
    assert metric(at, "Mean loss, window") == pytest.approx(loss[p - 1:].mean(), abs=6e-4)
    titles = [str(f["layout"].get("title", {}).get("text", "")) for f in charts(at)]
    assert any("against the cache budget" in t for t in titles)
    assert at.query_params["policy"] == "window" and at.query_params["budget"] == "8"
    at.selectbox(key="cache_policy").set_value("sinks").run(timeout=180)
    ok(at)
    assert at.query_params["policy"] == "sinks"
    assert metric(at, "Mean loss, full cache") == pytest.approx(
        (-logp_full(twin, ids))[p - 1:].mean(), abs=6e-4)


def logp_full(twin, ids) -> np.ndarray:
    """log p of each next piece with the whole cache (transformers' own causal mask)."""
    with torch.inference_mode():
        logits = twin(input_ids=torch.tensor([ids]), use_cache=False).logits[0].double()
    return torch.log_softmax(logits, -1)[:-1].gather(
        1, torch.tensor(ids[1:])[:, None])[:, 0].numpy()


def test_bad_policy_and_budget_in_the_link_are_notes():
    at = run_app({"ckpt": "lm", "view": "cache", "text": PROMPT, "policy": "lru",
                  "budget": "99999"}, timeout=180)
    ok(at)
    warned = texts(at.warning)
    assert "Unknown eviction policy" in warned and "is not between 1 and" in warned


def test_the_view_says_why_on_a_translator():
    at = run_app({"ckpt": "paper", "view": "cache", "text": "The cat eats fish."})
    ok(at)
    assert "key/value cache belongs to decoder-only models" in texts(at.info)


def test_heavy_hitters_over_the_memory_limit_are_a_note(monkeypatch):
    from model import load_checkpoint
    from model.analysis.eviction import heavy_bytes
    from ui.views import cache_evict

    bundle = load_checkpoint(LM)
    assert heavy_bytes(bundle, 10) == 2 * 6 * 10 * 10  # 2 layers × 6 heads, a bool mask
    monkeypatch.setattr(cache_evict, "HEAVY_LIMIT", 0)
    at = run_app({"ckpt": "lm", "view": "cache", "text": PROMPT, "policy": "heavy"},
                 timeout=180)
    ok(at)
    assert "heavy-hitter policy would hold" in texts(at.info)
    budget = next(f for f in charts(at) if "against the cache budget" in
                  str(f["layout"]["title"]["text"]))
    names = {t.get("name") for t in budget["data"]}
    assert "window" in names and "heavy hitters (H2O)" not in names


def test_the_korean_page_has_no_untranslated_message():
    from tests.app.test_i18n import english_in_charts, untranslated

    at = run_app({"ckpt": "lm", "view": "cache", "text": PROMPT, "lang_ui": "ko",
                  "policy": "heavy", "budget": "4"}, timeout=180)
    assert not at.exception, [e.value for e in at.exception]
    assert not untranslated(at), untranslated(at)
    # chart texts with English words of ours: the pieces of the English text are kept
    english = [t for t in english_in_charts(at) if not set(t.split()) & {"Ravonel", "fish"}]
    assert not english, english
