"""Issue 57: generation through the model's own key/value cache, what each new piece read, and
the eviction what-ifs, checked against transformers itself (a second, eager load of the same
folder: an outside oracle) on a GPT-2-small-shaped model (12 × 12, 768 wide, vocabulary 50,257)
and a Llama shape with grouped key/value heads, both random and built here."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from model import generate, load_checkpoint  # noqa: E402
from model.analysis.cache_reads import first_share, layer_mean, unread  # noqa: E402
from model.analysis.eviction import SINKS, eviction, policy_mask, sweep  # noqa: E402
from model.analysis.heavy import heavy_keep, heavy_mask  # noqa: E402
from tests import word_models  # noqa: E402
from tests.hf_folders import save_families  # noqa: E402
from tests.unit.test_hf import eager_twin  # noqa: E402

PROMPT = "the cat eats fish every day . a dog runs"
FAMILIES = ("gpt2-small", "llama-gqa")


def build(name: str):
    import transformers as tf

    common = {**word_models.vocab_args(), "vocab_size": 50257}
    if name == "gpt2-small":
        return tf.GPT2LMHeadModel(tf.GPT2Config(n_embd=768, n_layer=12, n_head=12,
                                                n_positions=128, **common)), None
    return tf.LlamaForCausalLM(tf.LlamaConfig(
        hidden_size=128, num_hidden_layers=4, num_attention_heads=8, num_key_value_heads=2,
        intermediate_size=256, max_position_embeddings=128, **common)), "<s> $A"


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    return save_families(tmp_path_factory.mktemp("kv_cache"), FAMILIES, build)


@pytest.fixture(scope="module")
def models(root) -> dict:
    """name -> (the lab's bundle, an independent eager twin)."""
    return {n: (load_checkpoint(root / n), eager_twin(root / n)) for n in FAMILIES}


def full_ids(bundle, g) -> list[int]:
    return list(bundle.tokenizer(PROMPT)["input_ids"]) + list(g.ids)


@pytest.mark.parametrize("name", FAMILIES)
def test_cached_steps_equal_a_full_forward(models, name):
    bundle, twin = models[name]
    g = generate(bundle, [PROMPT], max_new=6, record=True, logits=True)[0]
    ids = full_ids(bundle, g)
    p, steps = len(g.prompt_ids), len(g.steps)
    assert steps >= 2 and g.prompt_ids == ids[:p]
    with torch.inference_mode():
        out = twin(input_ids=torch.tensor([ids]), output_attentions=True, use_cache=False)
    want = out.logits[0, p - 1: p - 1 + steps].numpy()
    assert np.abs(g.logits - want).max() < 1e-4
    assert [int(x) for x in want[: len(g.ids)].argmax(-1)] == g.ids  # greedy, as chosen
    for layer, a in enumerate(g.attn):
        assert a.shape == (steps, bundle.config.n_heads, p + steps - 1)
        full = out.attentions[layer][0].numpy()  # (H, n, n)
        for s in range(steps):
            seen = p + s
            np.testing.assert_allclose(a[s, :, :seen], full[:, p - 1 + s, :seen], atol=1e-5)
            assert not a[s, :, seen:].any()  # zero beyond what the step could see


@pytest.mark.parametrize("name", FAMILIES)
def test_the_cache_size_is_the_tensors(models, name):
    bundle, twin = models[name]
    g = generate(bundle, [PROMPT], max_new=6, record=True)[0]
    fed = full_ids(bundle, g)[: g.cache_positions]
    assert g.cache_positions == len(g.prompt_ids) + len(g.steps) - 1
    with torch.inference_mode():
        past = twin(input_ids=torch.tensor([fed]), use_cache=True).past_key_values
    want = [layer.keys.numel() * layer.keys.element_size() * 2 for layer in past.layers]
    assert g.cache_bytes == want
    hf = twin.config
    kv = getattr(hf, "num_key_value_heads", None) or hf.num_attention_heads
    assert want[0] == 2 * kv * len(fed) * (hf.hidden_size // hf.num_attention_heads) * 4


def zero_head(twin, layer: int, head: int):
    """A pre-hook on layer's output projection that zeroes one head's slice of its input."""
    blocks = twin.transformer.h if hasattr(twin, "transformer") else twin.model.layers
    attn = blocks[layer].attn if hasattr(blocks[layer], "attn") else blocks[layer].self_attn
    proj = attn.c_proj if hasattr(attn, "c_proj") else attn.o_proj
    dh = twin.config.hidden_size // twin.config.num_attention_heads

    def hook(module, args):
        x = args[0].clone()
        x[..., head * dh: (head + 1) * dh] = 0
        return (x, *args[1:])

    return proj.register_forward_pre_hook(hook)


@pytest.mark.parametrize("name", FAMILIES)
def test_knocked_out_heads_stay_out_at_every_step(models, name):
    bundle, twin = models[name]
    g = generate(bundle, [PROMPT], max_new=4, ablate="dec_self:1:2,dec_self:0:0",
                 logits=True)[0]
    ids = full_ids(bundle, g)
    p = len(g.prompt_ids)
    handles = [zero_head(twin, 1, 2), zero_head(twin, 0, 0)]
    try:
        with torch.inference_mode():
            want = twin(input_ids=torch.tensor([ids]), use_cache=False).logits[0]
    finally:
        for h in handles:
            h.remove()
    want = want[p - 1: p - 1 + len(g.steps)].numpy()
    assert np.abs(g.logits - want).max() < 1e-4
    with torch.inference_mode():
        plain = twin(input_ids=torch.tensor([ids[:p]]), use_cache=False).logits[0, -1].numpy()
    assert np.abs(g.logits[0] - plain).max() > 1e-3  # the knock-out did something


def test_sampling_is_seeded_and_one_candidate_is_greedy(models):
    bundle, _ = models["llama-gqa"]
    a = generate(bundle, [PROMPT], max_new=5, sample=50, seed=3)[0]
    b = generate(bundle, [PROMPT], max_new=5, sample=50, seed=3)[0]
    assert a.ids == b.ids and a.sample == 50 and a.seed == 3
    greedy = generate(bundle, [PROMPT], max_new=5)[0]
    assert generate(bundle, [PROMPT], max_new=5, sample=1, seed=9)[0].ids == greedy.ids
    others = {tuple(generate(bundle, [PROMPT], max_new=5, sample=50, seed=s)[0].ids)
              for s in (0, 1)} | {tuple(a.ids)}
    assert len(others) > 1  # random weights: near-flat next-piece distributions


# ---- the policies' masks against constructions written out by hand ----

def loop_mask(policy: str, n: int, budget: int) -> np.ndarray:
    keep = np.zeros((n, n), bool)
    for i in range(n):
        for j in range(i + 1):
            if policy == "window":
                keep[i, j] = i - j < budget
            elif policy == "sinks":
                keep[i, j] = j < SINKS or i - j < budget - SINKS
            else:  # no_sink
                keep[i, j] = j != 0 or i == 0
    return keep


@pytest.mark.parametrize("policy,budget", [("window", 1), ("window", 3), ("sinks", 5),
                                           ("sinks", 7), ("no_sink", 0)])
def test_position_masks_equal_a_written_out_construction(policy, budget):
    np.testing.assert_array_equal(policy_mask(policy, 12, budget), loop_mask(policy, 12, budget))


def test_window_and_sinks_on_a_small_case():
    expected = np.array([[1, 0, 0, 0, 0, 0, 0],
                         [1, 1, 0, 0, 0, 0, 0],
                         [1, 1, 1, 0, 0, 0, 0],
                         [1, 1, 1, 1, 0, 0, 0],
                         [1, 1, 1, 1, 1, 0, 0],
                         [1, 1, 1, 1, 0, 1, 0],  # 4 sinks + the last 1
                         [1, 1, 1, 1, 0, 0, 1]], bool)
    np.testing.assert_array_equal(policy_mask("sinks", 7, 5), expected)
    assert policy_mask("window", 7, 2)[6].nonzero()[0].tolist() == [5, 6]


def test_heavy_hitters_evict_the_least_attended_key_for_good():
    n = 6
    a = np.zeros((1, 1, n, n))
    # query 0 reads key 0 (its only key); every later query gives key 1 five parts, every
    # other earlier key one part, key 0 none: accumulated after query 4, key 0 has 1, key 1
    # 3.17, key 2 0.43, key 3 0.27, key 4 0.125
    for i in range(n):
        a[0, 0, i, : i + 1] = 1.0
        a[0, 0, i, 0] = 0.0 if i else 1.0
        a[0, 0, i, 1] = 5.0 if i >= 1 else 0.0
        a[0, 0, i] /= a[0, 0, i].sum()
    keep = heavy_mask(a, budget=4)[0, 0]  # the recent 2 kept, 2 heavy hitters
    assert keep[3].tolist() == [1, 1, 1, 1, 0, 0]  # four held: nothing evicted yet
    # query 4: five held, one over; of the old keys 0-2, key 2 has the least
    assert keep[4].tolist() == [1, 1, 0, 1, 1, 0]
    # query 5: key 2 stays out; of the old keys 0, 1, 3, key 3 has the least (0.38)
    assert keep[5].tolist() == [1, 1, 0, 0, 1, 1]


def test_budgets_too_small_and_unknown_policies_are_refused():
    with pytest.raises(ValueError, match="at least 5"):
        policy_mask("sinks", 10, 4)
    with pytest.raises(ValueError, match="unknown eviction policy"):
        policy_mask("lru", 10, 4)


# ---- re-scored losses against transformers with the same mask ----

def twin_loss(twin, ids, masks, attentions: list | None = None) -> np.ndarray:
    """transformers' eager forward, each layer's attention mask replaced by masks[layer]
    (bool keep, (n, n) or (H, n, n)) as an additive float mask; `attentions` receives each
    layer's (H, n, n) probabilities."""
    n = len(ids)
    additive = []
    for m in masks:
        t = torch.zeros(m.shape, dtype=torch.float32)
        t[~torch.from_numpy(m)] = torch.finfo(torch.float32).min
        additive.append(t.reshape(1, -1, n, n))
    blocks = twin.transformer.h if hasattr(twin, "transformer") else twin.model.layers
    handles = []
    for layer, block in enumerate(blocks):
        attn = block.attn if hasattr(block, "attn") else block.self_attn

        def pre(module, args, kwargs, mask=additive[layer]):
            return args, {**kwargs, "attention_mask": mask}

        handles.append(attn.register_forward_pre_hook(pre, with_kwargs=True))
    try:
        with torch.inference_mode():
            out = twin(input_ids=torch.tensor([ids]), use_cache=False,
                       output_attentions=attentions is not None)
            logits = out.logits[0].double()
            if attentions is not None:
                attentions += [a[0].numpy() for a in out.attentions]
    finally:
        for h in handles:
            h.remove()
    logp = torch.log_softmax(logits, -1)[:-1]
    return -logp.gather(1, torch.tensor(ids[1:])[:, None])[:, 0].numpy()


@pytest.mark.parametrize("policy,budget", [("window", 6), ("sinks", 7), ("heavy", 6),
                                           ("no_sink", 0)])
def test_rescored_loss_equals_transformers_with_that_mask(models, policy, budget):
    bundle, twin = models["llama-gqa"]
    text = PROMPT + " " + PROMPT
    ev = eviction(bundle, text, policy, budget)
    ids = ev.ids
    layers = twin.config.num_hidden_layers
    keep = (heavy_keep(bundle, ids, budget) if policy == "heavy"
            else policy_mask(policy, len(ids), budget))
    masks = [keep[i] for i in range(layers)] if keep.ndim == 4 else [keep] * layers
    np.testing.assert_allclose(ev.loss, twin_loss(twin, ids, masks), atol=1e-4)
    full = twin_loss(twin, ids, [np.tril(np.ones((len(ids),) * 2, bool))] * layers)
    np.testing.assert_allclose(ev.full_loss, full, atol=1e-4)
    assert np.abs(ev.loss - ev.full_loss).max() > 1e-3  # the policy removed something


def test_heavy_hitters_are_scored_by_what_the_policy_let_them_read(models):
    """The mask found by stepping through the cache is a fixed point: the attention a plain
    transformers forward computes under it, fed to the rule row by row, gives it back."""
    bundle, twin = models["llama-gqa"]
    ids = list(bundle.tokenizer(PROMPT + " " + PROMPT)["input_ids"])
    keep = heavy_keep(bundle, ids, 6)
    got: list = []
    twin_loss(twin, ids, list(keep), got)
    np.testing.assert_array_equal(heavy_mask(np.stack(got), 6), keep)
    assert (keep.sum(-1)[..., 6:] == 6).all()  # full from the seventh query on


def test_the_sweep_is_each_policys_mean_loss(models):
    bundle, _ = models["llama-gqa"]
    ids = list(bundle.tokenizer(PROMPT + " " + PROMPT)["input_ids"])
    got = sweep(bundle, ids, (4, 6), start=3)
    assert got["sinks"][0] is None  # 4 positions leave no room beside the sinks
    assert got["window"][1] == pytest.approx(eviction(bundle, ids, "window", 6).loss[3:].mean())
    assert got["no_sink"][0] == got["no_sink"][1]


def test_reads_first_share_and_unread_positions():
    a = np.zeros((3, 2, 5), np.float32)  # steps 3, heads 2, positions 5
    a[:, 0, 0] = [0.9, 0.5, 0.1]
    a[:, 0, 3] = [0.1, 0.5, 0.9]
    a[:, 1, 1] = 1.0
    share = first_share([a, a], first=1)
    assert share.shape == (2, 3, 2)
    np.testing.assert_allclose(share[0, :, 0], [0.9, 0.5, 0.1])
    np.testing.assert_allclose(first_share([a], first=2)[0, :, 1], [1.0, 1.0, 1.0])
    assert unread([a], 0.05) == [2, 4]
    np.testing.assert_allclose(layer_mean(a)[0], [0.45, 0.5, 0, 0.05, 0])
