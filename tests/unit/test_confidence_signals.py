"""The combined translation confidence (issue 58): its signals, the fitted combination, the
held-out sets it is chosen and measured on, and what the shipped cards hold."""

from __future__ import annotations

import json
import math
import random
from types import SimpleNamespace

import pytest

from model import confidence as conf
from model import confidence_signals as cs
from tests.conftest import ROOT
from training import confidence_fit as cf
from training.evaluate import chrf
from training.testsets import read_sets

SHIPPED = ("paper", "seed001")


def fake(source: str, text: str, probs: list[float], lang: str = "ko"):
    return SimpleNamespace(source=source, text=text, probs=probs, target_lang=lang)


@pytest.mark.parametrize("hyp,ref", [("저는 음악을 좋아해요.", "저는 음악을 들어요."),
                                     ("The cat eats fish.", "The dog eats fish."),
                                     ("abcdefgh", "hgfedcba")])
def test_sentence_chrf_is_the_corpus_chrf_of_one_sentence(hyp, ref):
    # every order 1..6 exists on both sides here, so the two definitions coincide
    assert cs.sentence_chrf(hyp, ref) == pytest.approx(chrf([hyp], [ref]) / 100)
    assert cs.sentence_chrf(ref, ref) == pytest.approx(1.0)
    assert cs.sentence_chrf("abc", "xyz") == 0.0
    assert cs.sentence_chrf("", "") == 1.0 and cs.sentence_chrf("", "a") == 0.0


def test_read_takes_the_logs_lengths_and_chrfs_of_the_translations():
    t = fake("I like blorvit music.", "저는 음악을 좋아해요.", [0.9, 0.5, 0.8])
    back = fake("저는 음악을 좋아해요.", "I like music.", [0.9], "en")
    partner = fake("I like blorvit music.", "저는 음악을 들어요.", [0.9])
    sig = cs.read(t, frozenset({"i", "like", "music"}), back, partner, center=-0.5,
                  partner_logps=[-0.1, -0.3])
    assert sig.mean_logp == pytest.approx((math.log(0.9) + math.log(0.5) + math.log(0.8)) / 3)
    assert sig.min_logp == pytest.approx(math.log(0.5))
    assert sig.unknown == 1 and sig.unknown_words == ("blorvit",)
    ratio = math.log((len("저는음악을좋아해요.") + 1) / (len("Ilikeblorvitmusic.") + 1))
    assert sig.length_gap == pytest.approx(abs(ratio + 0.5)) and sig.longer == (ratio > -0.5)
    assert sig.round_trip == pytest.approx(cs.sentence_chrf("I like music.", t.source))
    assert sig.agreement == pytest.approx(cs.sentence_chrf(t.text, partner.text))
    assert sig.partner_logp == pytest.approx(-0.2)
    alone = cs.read(t, None)
    assert alone.round_trip is None and alone.agreement is None and alone.unknown == 0
    assert alone.partner_logp is None


def entry(**over) -> dict:
    base = {"mean": dict.fromkeys(cs.SIGNALS, 0.0), "scale": dict.fromkeys(cs.SIGNALS, 1.0),
            "coef": {"mean_logp": 1.0, "min_logp": 0.0, "unknown": -2.0, "length_gap": 0.0,
                     "round_trip": 3.0, "agreement": 0.5},
            "intercept": 0.25, "threshold": 0.5,
            "limits": {"round_trip": 0.5, "unknown": 0.5, "mean_logp": -1.0},
            "centers": {"ko": -0.7, "en": 0.7}, "partner": "seed001"}
    return {**base, **over}


def sig(**values) -> cs.Signals:
    base = {"mean_logp": -0.1, "min_logp": -0.2, "unknown": 0, "length_gap": 0.1,
            "round_trip": 0.9, "agreement": 0.9}
    return cs.Signals(**{**base, **values})


def test_the_combination_is_a_logistic_regression_over_standardised_signals():
    comb = cs.Combination.from_card({"confidence": {"combined": entry(
        mean={**dict.fromkeys(cs.SIGNALS, 0.0), "round_trip": 0.5},
        scale={**dict.fromkeys(cs.SIGNALS, 1.0), "round_trip": 0.25})}})
    s = sig(round_trip=1.0, unknown=1)
    logit = 0.25 + 1.0 * -0.1 - 2.0 * 1 + 3.0 * (1.0 - 0.5) / 0.25 + 0.5 * 0.9
    assert comb.score(s) == pytest.approx(1 / (1 + math.exp(-logit)))
    # an unread signal sits at its mean: it moves the score neither way
    assert comb.parts(sig(agreement=None))["agreement"] == 0.0


def test_fired_names_signals_past_their_limits_worst_first():
    comb = cs.Combination.from_card({"confidence": {"combined": entry()}})
    s = sig(round_trip=0.2, unknown=2, mean_logp=-0.5)
    # round trip part 3·0.2 = 0.6 and unknown -4: unknown pulls down most; mean_logp is within
    assert comb.fired(s) == ["unknown", "round_trip"]
    # below the threshold with nothing past a limit: the signal that pulls down most
    comb = cs.Combination.from_card({"confidence": {"combined": entry(pair_threshold=0.9)}})
    low = sig(mean_logp=-0.5, partner_logp=-0.3, round_trip=0.55, agreement=-3.0)
    assert comb.margin(low) < 0 and comb.fired(low) == ["agreement"]
    assert comb.fired(sig()) == []


def test_the_notice_rings_when_either_likelihood_alarm_does():
    comb = cs.Combination.from_card({"confidence": {"threshold": 0.9, "combined": entry(
        pair_threshold=0.8)}})
    assert comb.old_threshold == 0.9 and comb.pair_threshold == 0.8
    sure = sig(partner_logp=-0.2)  # old exp(-0.1) = 0.905; pair exp(-0.15) = 0.861
    assert cs.Combination.pair(sure) == pytest.approx(math.exp(-0.15))
    assert comb.margin(sure) == pytest.approx(min(-0.1 - math.log(0.9), -0.15 - math.log(0.8)))
    assert comb.margin(sure) > 0 and comb.fired(sure) == []
    unsure = sig(mean_logp=-0.3, partner_logp=-0.1)  # 0.741 < 0.9: the old alarm alone
    assert comb.alarms(unsure)["pair"] > 0 and comb.margin(unsure) < 0
    assert comb.fired(unsure) == ["mean_logp"]
    # the partner doubts a sure output: the pair alarm alone, and the partner is named
    doubted = sig(partner_logp=-1.0)  # pair exp(-0.55) = 0.577 < 0.8
    assert comb.alarms(doubted)["old"] > 0 and comb.alarms(doubted)["pair"] < 0
    assert comb.fired(doubted) == ["partner_logp"]
    # the regression's score rings nothing by itself: a low round trip only explains
    low_rt = sig(round_trip=-0.5, partner_logp=-0.1)  # half a unit below its fitted mean
    assert comb.score(low_rt) < comb.threshold and comb.margin(low_rt) > 0
    # an uncovered word halves both measures and explains it: no extra reason
    worded = sig(unknown=1, partner_logp=-0.1)
    assert cs.Combination.old(worded) == pytest.approx(math.exp(-0.1) * conf.COVERAGE)
    assert cs.Combination.pair(worded) == pytest.approx(math.exp(-0.1) * conf.COVERAGE)
    assert comb.fired(worded) == ["unknown"]
    # no partner read: the old alarm alone decides; no threshold at all: nothing rings
    assert comb.alarms(sig()) == {"old": pytest.approx(-0.1 - math.log(0.9))}
    assert cs.Combination.from_card({"confidence": {"combined": entry()}}).margin(
        sig(mean_logp=-5.0)) == math.inf


def test_outputs_rank_as_the_view_presents_them():
    # flagged outputs below every quiet one, by their margin; quiet ones by the printed
    # confidence (the old measure), even where the partner would order them the other way
    comb = cs.Combination.from_card({"confidence": {"threshold": 0.8, "combined": entry(
        pair_threshold=0.7)}})
    quiet_sure = sig(mean_logp=-0.05, partner_logp=-0.8)  # old 0.951, pair 0.654 < 0.7: flagged
    quiet_a = sig(mean_logp=-0.10, partner_logp=-0.6)  # old 0.905, pair 0.705 (margin 0.007)
    quiet_b = sig(mean_logp=-0.15, partner_logp=-0.01)  # old 0.861 (margin 0.073), pair 0.923
    loud = sig(mean_logp=-0.5, partner_logp=-0.1)  # old 0.607 < 0.8
    assert comb.margin(quiet_sure) < 0 and comb.margin(quiet_a) > 0 and comb.margin(quiet_b) > 0
    ranks = {k: comb.rank(v) for k, v in (("flag_pair", quiet_sure), ("a", quiet_a),
                                          ("b", quiet_b), ("flag_old", loud))}
    assert sorted(ranks, key=ranks.get) == ["flag_old", "flag_pair", "b", "a"]
    assert ranks["a"] == (1, pytest.approx(-0.10)) and ranks["flag_old"][0] == 0
    assert ranks["flag_pair"] == (0, pytest.approx(comb.margin(quiet_sure)))
    # the margin alone orders the quiet pair the partner's way: b above a
    assert comb.margin(quiet_b) > comb.margin(quiet_a)


def test_piece_logps_of_a_greedy_output_are_its_own_decoding_probabilities():
    # teacher-forcing what greedy decoding chose gives back the chosen pieces' probabilities
    # (eos included): the partner's opinion is the same quantity as the old measure's
    from model.dispatch import load_checkpoint, piece_logps, translate
    from tests.conftest import ROOT as root

    paper = load_checkpoint(root / "checkpoints" / "paper")
    for source, lang in (("저는 한국 음식을 좋아해요.", "en"), ("My phone battery is dead.", "ko")):
        t = translate(paper, [source], lang)[0]
        logps = piece_logps(paper, source, t.text, lang)
        assert len(logps) == len(t.probs)
        assert logps == pytest.approx([math.log(p) for p in t.probs], abs=1e-3)
    assert piece_logps(paper, "Hello.", " ", "ko") == []


@pytest.mark.parametrize("card", [{}, None, {"confidence": {"threshold": 0.8}},
                                  {"confidence": {"combined": {"mean": {}}}},
                                  {"confidence": {"combined": entry(intercept="x")}}])
def test_a_card_without_a_usable_combination_gives_none(card):
    assert cs.Combination.from_card(card) is None


def test_fit_finds_the_signal_that_separates_and_flags_few_right_outputs():
    rng = random.Random(0)
    recs = []
    for i in range(120):
        right = i % 3 == 0
        recs.append({**sig(round_trip=(0.8 if right else 0.3) + rng.uniform(-0.1, 0.1),
                           mean_logp=rng.uniform(-1, 0), agreement=rng.uniform(0, 1)).to_dict(),
                     "exact": right, "old": 0.5})
    e = cf.fit(recs, "seed001", {"ko": 0.0})
    assert e["coef"]["round_trip"] > 2 * max(abs(e["coef"][n]) for n in cs.SIGNALS
                                               if n != "round_trip")
    a = cf.aurocs(recs, e)
    assert a["combined"] == 1.0 and a["round_trip"] == 1.0
    assert a["exact_flagged"] <= math.floor(conf.MAX_FALSE_ALARM * 40)


def test_the_held_out_halves_are_fixed_disjoint_and_large_enough():
    rows = read_sets(ROOT / "tests" / "data", "heldout_")
    halves = {area: [r for r in rows if r.area == area] for area in ("dev", "test")}
    assert len(rows) >= 200 and len(halves["dev"]) + len(halves["test"]) == len(rows)
    assert {r.direction for r in halves["test"]} == {"en-ko", "ko-en"}
    assert not {r.source for r in halves["dev"]} & {r.source for r in halves["test"]}
    import hashlib

    for r in rows:  # the split rule the files' header states
        en = r.source if r.direction == "en-ko" else r.reference
        assert (hashlib.md5(en.encode()).digest()[0] % 2 == 0) == (r.area == "dev"), r.source


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_cards_hold_a_combination_that_beats_the_target(name):
    card = json.loads((ROOT / "checkpoints" / name / "card.json").read_text("utf-8"))
    comb = cs.Combination.from_card(card)
    assert comb is not None and 0 < comb.threshold < 1
    assert comb.partner in SHIPPED and comb.partner != name
    assert (ROOT / "checkpoints" / comb.partner / "config.json").is_file()
    assert 0 < comb.pair_threshold < 1 and 0 < comb.old_threshold < 1
    test = card["confidence"]["combined"]["auroc"]["test"]
    # issue 58's target on the held-out half; benchmarks/bench_confidence.py decodes it
    # again and checks the card against a fresh fit
    assert min(test["combined"], test["either"], test["pair"]) >= 0.85 and test["n"] >= 100
    # and no lower than the old measure alone on the newcomer glue and out-of-grammar sets
    for s in ("glue", "oog"):
        figures = card["confidence"]["combined"]["auroc"][s]
        assert figures["either"] >= figures["old"], (s, figures)
