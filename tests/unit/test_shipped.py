"""The shipped checkpoints load, translate the seed and everyday examples, and show whole words."""

from __future__ import annotations

import json
import math
import random
from collections import Counter

import numpy as np
import pytest

from model import capture, load_checkpoint, translate
from tests import chrf
from tests.conftest import ROOT, needs
from tests.floors import holds
from training.knowledge import unknown_words

SHIPPED = ["paper", "seed001"]
# the issue's first sentences of a learner, both ways
EVERYDAY = [("I am a student.", "저는 학생이에요."),
            ("The weather is nice today.", "오늘 날씨가 좋아요."),
            ("Thank you very much.", "정말 감사합니다."), ("Hello.", "안녕하세요.")]


@pytest.fixture(scope="module", params=SHIPPED)
def shipped(request):
    folder = ROOT / "checkpoints" / request.param
    card = json.loads((folder / "card.json").read_text(encoding="utf-8"))
    return request.param, folder, load_checkpoint(folder), card


def test_shipped_checkpoint_translates(shipped):
    name, folder, bundle, card = shipped
    assert sum(f.stat().st_size for f in folder.iterdir()) < 50 * 2**20
    assert not list(folder.glob("*.pt")) and not list(folder.glob("*.bin"))
    out = translate(bundle, ["Winter is cold.", "겨울은 추워요.", "The big dog eats fish."])
    assert out[0].text == "겨울은 추워요."
    assert out[1].text == "Winter is cold."
    assert out[2].text == "큰 개가 생선을 먹어요."
    # one leg's minutes: issue 42's warm starts ran 80 (the earlier legs 34-60)
    assert card["variant"] == name and 0 < card["train_wall_time_s"]
    assert holds("translator_train_minutes", card["train_wall_time_s"] / 60)
    seed_000 = translate(bundle, ["감기 조심하세요.", "Please be careful of colds."])
    assert [t.text for t in seed_000] == ["Please be careful of colds.", "감기 조심하세요."]
    cfg = bundle.config
    assert cfg.max_len >= 512
    expected = {"paper": ("post", "sinusoidal", "relu"), "seed001": ("pre", "learned", "gelu")}
    assert (cfg.norm, cfg.pos_encoding, cfg.activation) == expected[name]
    tr = capture(bundle, ["겨울은 추워요.", "감기 조심하세요."], target_lang="en")
    assert tr.src_ids[0, -1] == 0  # the shorter sentence is padded with id 0, as in seed 000
    assert tr.positions["enc"][0, -1] == 0


def test_shipped_card_figures(shipped):
    name, _, bundle, card = shipped
    metrics = card["metrics"]
    # issue 27 asks >= 97 % exact each way on the test split (40 % textbook constructions). Since
    # issue 42 the split also draws the glue and copy-through areas (100 of 2,000 pairs), scored
    # apart in metrics.areas: the floors hold on the constructions they were set on (issue 42's
    # cards: 97.05 / 97.11 % en->ko, chrF 98.83 / 99.02; 99.21 % ko->en). The whole split (95.9
    # / 96.0 % en->ko, 97.95 / 98.05 ko->en) is below them because copy-through of made-up
    # Hangul nouns is 29 of 55; the weights shipped before issue 42 read 93.2 / 94.25 on it
    before = metrics["areas"]["before_42"]
    for direction, tag in (("en->ko", "en_ko"), ("ko->en", "ko_en")):  # tests/data/floors.toml
        assert holds(f"translator_{tag}_exact", before[direction]["exact_match"]), direction
        assert holds(f"translator_{tag}_chrf", before[direction]["chrf"]), direction
        assert holds("translator_whole_split_exact", metrics[direction]["exact_match"]), direction
        assert holds("translator_everyday_exact", metrics["everyday"][direction]["exact_match"])
    assert holds("translator_alignment_agreement", metrics["best_alignment_head"]["agreement"])
    seeds = metrics["seed_pairs"]  # the seed documents' sentences, both directions
    missed = [(p["source"], p["output"]) for p in seeds if not p["exact"]]
    assert len(seeds) == 14 and not missed, missed
    assert card["tokenizer"]["vocab_size"] == bundle.tokenizer.vocab_size


def test_shipped_everyday_examples(shipped):
    _, _, bundle, _ = shipped
    en, ko = [e for e, _ in EVERYDAY], [k for _, k in EVERYDAY]
    assert [t.text for t in translate(bundle, en, "ko")] == ko
    assert [t.text for t in translate(bundle, ko, "en")] == en


def test_shipped_tokens_are_whole_words(shipped):
    _, folder, bundle, card = shipped
    tok = bundle.tokenizer
    assert tok.pieces("겨울은 추워요.") == ["▁겨울", "은", "▁추워요", "."]  # as seed 000
    assert tok.pieces("Winter is cold.") == ["▁Winter", "▁is", "▁cold", "."]
    assert tok.pieces("winter") == ["▁winter"]
    for letter in "GNOQUVXZ":  # once missing from the vocabulary (byte fallback)
        assert not tok.pieces(letter)[-1].startswith("<0x"), letter
    shares = card["tokenizer"]["one_piece_share_top500"]
    assert shares["en_lower"] >= 95 and shares["en_capitalised"] >= 95
    assert shares["ko_stems"] >= 95
    assert unknown_words("Winter is cold. 겨울은 추워요.", folder) == []
    assert unknown_words("The quokka is cold.", folder) == ["quokka"]


@pytest.fixture(scope="module")
def drawn():
    """corpus.splits for each (seed, n_train, n_val, n_test), drawn once per module."""
    from training import corpus

    memo = {}

    def draw(args: tuple[int, int, int, int]) -> dict:
        if args not in memo:
            seed, n_train, n_val, n_test = args
            memo[args] = corpus.splits(seed=seed, n_train=n_train, n_val=n_val, n_test=n_test)
        return memo[args]

    return draw


@pytest.fixture(scope="module")
def drawn_val(drawn):
    """corpus.splits' validation split for each (seed, n_train, n_val, n_test)."""
    return lambda args: drawn(args)["val"]


def test_shipped_val_split_is_the_one_drawn_beside_training(shipped, drawn_val):
    """val_pairs.tsv (read by the heads and query–key map views instead of drawing 200,000
    training pairs to reach it) is exactly what the corpus draws for the card's settings."""
    from training import corpus
    from ui.corpus_cache import corpus_args

    _name, folder, bundle, _card = shipped
    kept = corpus.read_pairs_file(folder / corpus.VAL_FILE)
    assert len(kept) == 1_000 and kept == drawn_val(corpus_args(bundle))


TEXTBOOK = ROOT / "tests" / "data"


def test_textbook_sets_are_outside_the_training_corpus(shipped, drawn):
    """The hand-written textbook sentences: at least 100 each way, and neither a source nor a
    reference is a sentence of the training split the checkpoint was trained on."""
    from training.textbook_eval import read_sets
    from ui.corpus_cache import corpus_args

    rows = read_sets(TEXTBOOK)
    per_direction = Counter(r.direction for r in rows)
    assert per_direction["en-ko"] >= 100 and per_direction["ko-en"] >= 100, per_direction
    assert len({(r.direction, r.source) for r in rows}) == len(rows)  # no sentence twice
    train = drawn(corpus_args(shipped[2]))["train"]
    seen = {p.en for p in train} | {p.ko for p in train}
    inside = [r.source for r in rows if r.source in seen or r.reference in seen]
    assert not inside, inside


def test_shipped_textbook_figures(shipped):
    """chrF >= 85 each way on the textbook sentences, recomputed live (translated here, scored
    by this module's own exact match and chrF, not by textbook_eval, which wrote the card) and
    equal to the card: the same whole set, so only the card's rounding to 0.01 separates them.
    Each direction goes to translate in one call, as textbook_eval does (each row gets its own
    step limit, model.backends.lab.decode.default_max_steps, whatever the call's size)."""
    from training.testsets import DIRECTIONS, read_sets

    _, _, bundle, card = shipped
    rows = read_sets(TEXTBOOK)
    for direction, lang in DIRECTIONS.items():
        mine = [r for r in rows if r.direction == direction]
        hyps = [t.text for t in translate(bundle, [r.source for r in mine], lang)]
        refs = [r.reference for r in mine]
        exact, measured = chrf.exact(hyps, refs), chrf.chrf(hyps, refs)
        stored = card["textbook"]["directions"][direction]
        assert (stored["n"], stored["exact"]) == (len(mine), exact), (direction, stored, exact)
        assert stored["exact_match"] == round(100 * exact / len(mine), 2), direction
        assert abs(stored["chrf"] - measured) <= 0.005 + 1e-9, (direction, stored, measured)
        assert measured >= 85, (direction, measured)


def test_shipped_issue_sentences(shipped):
    """The seven sentences the issue quotes come out right both checkpoints (배가 고파요. read
    as "The ship is hungry." until the feeling and body_ache constructions gave 배 its other
    senses). Translated here one at a time; the card holds the same outputs."""
    from training.textbook_eval import ISSUE_SENTENCES

    _, _, bundle, card = shipped
    stored = card["textbook"]["issue_sentences"]
    assert len(stored) == len(ISSUE_SENTENCES) == 7
    for (lang, source, reference), entry in zip(ISSUE_SENTENCES, stored, strict=True):
        output = translate(bundle, [source], lang)[0].text
        assert (entry["source"], entry["reference"]) == (source, reference)
        assert entry["output"] == output and entry["exact"] == (output == reference), entry
        assert output == reference, (source, output)


# --- the card's test-split figures recomputed (issue 60): not re-read, and not through
# training.evaluate, the code that wrote them; exact match and chrF from tests/chrf.py
SAMPLE = 512  # test pairs per direction: 8 batches of 64, 2-4 s a direction on 2 loaded cores
CARD_BATCH = 64  # the batch evaluate_bundle translated in; the card was written when decoding's
# step budget shrank with a call's rows (32 steps for 64), which no output of these splits
# reached; each row now gets its own (model.backends.lab.decode.default_max_steps)
TAIL = 1e-5  # chance, per check, that a card which is right fails on an unlucky sample


def _hypergeometric_tails(population: int, good: int, drawn: int, seen: int) -> tuple[float,
                                                                                       float]:
    """P(X <= seen), P(X >= seen) for X good items among `drawn` taken without replacement."""
    total = math.comb(population, drawn)
    pmf = [math.comb(good, k) * math.comb(population - good, drawn - k) / total
           for k in range(drawn + 1)]
    return sum(pmf[:seen + 1]), sum(pmf[seen:])


@needs(all((ROOT / "checkpoints" / n / "card.json").is_file() for n in SHIPPED),
       "the shipped translators (checkpoints/paper, checkpoints/seed001)")
def test_shipped_card_test_split_figures_recomputed(shipped, drawn):
    """Exact match and chrF per direction on a fixed random sample of 512 of the card's 2,000
    test pairs, translated here and scored by this test's own code, against the card.

    Tolerances, argued: the card scored all N = 2,000 pairs, the sample is n of them drawn
    without replacement. If the card's exact count K is right, the sample's exact count is
    hypergeometric(N, K, n) and the test fails only when it lies in a tail of probability below
    1e-5 (for 96 % it accepts 474-506 of 512, 92.6-98.8 %; 2e-5 per check, 8 checks). chrF
    is a ratio of summed counts, so its sampling spread is estimated from the sample itself:
    the delete-one jackknife standard error times sqrt(1 - n/N), the finite-population
    correction (0.09-0.29 chrF points here, so a card off by more than 0.5-1.5 fails); the card
    must lie within 5 of those (normal tail 6e-7) plus its own rounding of 0.005. Measured
    2026-11-28, en->ko / ko->en: paper 96.09 / 97.66 % exact (card 96.0 / 98.0), chrF 98.61 /
    99.61 (98.56 / 99.71), standard errors 0.29 / 0.12; seed001 97.27 / 97.85 % (96.1 /
    97.95), chrF 99.04 / 99.69 (98.64 / 99.73), standard errors 0.22 / 0.09. The card's three
    example outputs per direction must come back exactly."""
    name, _, bundle, card = shipped
    metrics = card["metrics"]
    split = drawn((card["corpus_seed"], card["train_pairs_requested"],
                   card["val_pairs_requested"], card["test_pairs_per_direction"]))["test"]
    population = len(split)
    assert population == metrics["test_pairs"] == card["test_pairs_per_direction"]
    picked = sorted(random.Random(f"issue 60 card sample {name}").sample(range(population),
                                                                         SAMPLE))
    pairs = [split[i] for i in picked]
    for lang, src_of, tgt_of in (("ko", "en", "ko"), ("en", "ko", "en")):
        key, stored = f"{src_of}->{tgt_of}", metrics[f"{src_of}->{tgt_of}"]
        # the card's examples are its first three test pairs, from the first batch of 64
        first = [t.text for t in translate(
            bundle, [getattr(p, src_of) for p in split[:CARD_BATCH]], lang)[:3]]
        assert [[getattr(p, src_of), h] for p, h in zip(split, first)] == stored["examples"]
        hyps = [t.text for start in range(0, SAMPLE, CARD_BATCH) for t in translate(
            bundle, [getattr(p, src_of) for p in pairs[start:start + CARD_BATCH]], lang)]
        refs = [getattr(p, tgt_of) for p in pairs]
        exact = chrf.exact(hyps, refs)
        good = round(stored["exact_match"] * population / 100)
        low, high = _hypergeometric_tails(population, good, SAMPLE, exact)
        assert min(low, high) >= TAIL, (
            f"{name} {key}: {exact}/{SAMPLE} exact ({100 * exact / SAMPLE:.2f} %) is not a "
            f"plausible sample of the card's {stored['exact_match']} % (tails {low:.2g}, "
            f"{high:.2g})")
        counts = np.stack([chrf.counts(h, r) for h, r in zip(hyps, refs, strict=True)])
        whole = counts.sum(axis=0)
        measured = chrf.from_counts(whole)
        leave_one = np.array([chrf.from_counts(whole - row) for row in counts])
        spread = math.sqrt((SAMPLE - 1) / SAMPLE * ((leave_one - leave_one.mean()) ** 2).sum())
        spread *= math.sqrt(1 - SAMPLE / population)
        assert 5 * spread < 2.5, (name, key, spread)  # a bound with teeth, not a free pass
        assert abs(measured - stored["chrf"]) <= 5 * spread + 0.005, (
            f"{name} {key}: chrF {measured:.2f} on the sample against the card's {stored['chrf']} "
            f"(standard error {spread:.3f})")
