"""Synthetic English <-> Korean sentence pairs with gold word alignments.

A small synchronous grammar builds each English sentence and its Korean translation from one
derivation, so the two sides always agree and the word alignment falls out of the derivation.
Pure standard library; everything is deterministic for a seed (`random.Random`, no set or hash
ordering is ever consulted).

Constructions (each usable in both directions): transitive (SVO <-> SOV) and intransitive
clauses; present, past and future (`will` <-> `-(으)ㄹ 거예요`); negation (`does not` /
`did not` / `will not` <-> `-지 않아요` / `-지 않았어요` / `-지 않을 거예요`); yes/no and wh-
questions; adjective predicates and attributive adjectives; weather sentences; places with
prepositions <-> postpositions; companions, instruments and means of transport; time words
(the tense always agrees); adverbs; polite requests (`Please ...` <-> `-(으)세요`, `Please do not
...` <-> `-지 마세요`); two clauses joined by `and` / `but` <-> `-고` / `-지만`; plural nouns.

The first-year textbook's grammar (negation with 안/못, proposals and intentions, linked
clauses, comparison, noun modifiers, modal forms, means and ranges, honorifics, numbers with
counters and dates) lives in the textbook/ package, one module per area, and makes 40 % of the
corpus. A Korean statement without a subject means "I" and a question "you": such pro-dropped
Korean is a one-way pair (Pair.to = "en"), trained Korean -> English only, so English -> Korean
keeps one translation (저는 ...).

The grammar is built so that across the whole corpus English -> Korean and Korean -> English
are both functions (one translation per sentence, each way): count nouns always take "the"
(Korean has no articles; companions and instruments take "a"; a bare family noun is the
speaker's own, so Korean -> English reads 형이 as "my older brother", one way, since English
"my older brother" is 제 형: `my_kin`), "you" is 당신 in statements
and dropped in questions (textbook pro-drop: "Do you eat fish?" <-> 생선을 먹어요?), only the
simple present is used, English words with two Korean senses (cold: 춥다 / 차갑다, play: 놀다 /
치다 / 하다 ...) are told apart by the noun they go with, and a past tense whose English form
equals the present ("I read the book.") is never produced.

Alignment conventions (`Pair.align` holds (English word index, Korean word index) pairs, words
being `s.split()` with punctuation attached; the same list serves both directions):

* nouns and pronouns <-> the Korean word carrying the noun and its particle (개가, 저는);
  a multi-word English noun ("ice cream") aligns every word;
* articles (the, a, an) and "It" in weather sentences are unaligned, as is "of" in
  "Please be careful of ...";
* a preposition and its noun <-> the place / companion / instrument word with its postposition
  ("in the park" -> in, park <-> 공원에서; "with a friend" -> with, friend <-> 친구와);
* the main verb or adjective (and a verb particle such as "for" in "wait for") <-> the first
  word of the Korean predicate (먹어요, 먹을, 먹지, 큰);
* tense carriers -- do/does/did, will, finite copulas (am/is/are/was/were) and "Please" --
  <-> the last word of the Korean predicate (거예요, 않았어요, 먹고, 읽으세요); "be" after
  "will" <-> the adjective word; "not" <-> 않아요/않을/않고/마세요 (or the whole predicate when
  Korean uses a negative verb, does not know <-> 몰라요);
* "and"/"but" <-> the connective-bearing last word of the first clause (먹고, 춥지만);
* time words, adverbs and wh-words <-> their Korean counterparts (어제, 빨리, 무엇을, 누가).
"""

from __future__ import annotations

import math
import random
import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from . import everyday, everyday_wh, textbook
from .grammar import (
    adjective,
    careful,
    careful_of,
    compound,
    intransitive,
    render_adj,
    render_verb,
    request_pair,
    transitive_pair,
    weather,
    wh,
    yes_no,
)
from .hangul import (
    TENSES,
    conjugate_ko,
    en_past,
    en_plural,
    en_third_person,
    has_batchim,
    ko_attributive,
    ko_imperative,
    particle,
)
from .kin import my_kin, short_kin_pairs
from .lexicon import (
    ADJECTIVES,
    BY_EN,
    CAREFUL,
    FREQUENCY_ADVERBS,
    FUNCTION_WORDS,
    INTENSIFIERS,
    LEXICON,
    MANNER_ADVERBS,
    NOUNS,
    PRONOUNS,
    TIME_WORDS,
    VERBS,
    WEATHER_ADJECTIVES,
    WEATHER_VERBS,
    Adjective,
    Noun,
    Verb,
    read_table,
)
from .render import NP, Clause, Keys, Pair, Reject, finish
from .testsets import held_out
from .words import NUMBERS

__all__ = [
    "ADJECTIVES", "CONSTRUCTIONS", "LEXICON", "NOUNS", "PRONOUNS", "SEED_PAIRS", "TENSES",
    "VERBS", "Pair", "conjugate_ko", "en_past", "en_plural", "en_third_person", "generate",
    "generate_tagged", "has_batchim", "ko_attributive", "ko_imperative", "lexicon_size",
    "particle", "rare_copies", "splits", "ANCHOR_PAIRS", "EVERYDAY_CONSTRUCTIONS",
    "EVERYDAY_EXAMPLES", "my_kin", "short_kin_pairs",
]


def _english_lemmas() -> list[str]:
    words: list[str] = []
    words += [n.en for n in NOUNS]
    words += [p.en for p in PRONOUNS]
    words += [v.base for v in VERBS]
    words += [a.en for a in ADJECTIVES]
    words += [w[0] for w in WEATHER_ADJECTIVES + WEATHER_VERBS]
    words += [w for t in TIME_WORDS for w in t[0] if w not in ("the", "in", "at", "on")]
    words += [w for w, _ in FREQUENCY_ADVERBS + list(MANNER_ADVERBS.items()) + INTENSIFIERS]
    words += FUNCTION_WORDS
    # the everyday tables: names, nationalities, numbers, days, months, possessives, location
    # prepositions, counters' measure words, wh-words and the words of the set phrases
    words += [r[0] for name in ("names", "nationalities", "days", "months", "possessives",
                                "locations") for r in read_table(name)]
    words += [en for en, _, _ in NUMBERS.values()]
    words += [w for w in everyday.COUNTER_EN.values() if w]
    words += ["why", "when", "how", "much", "old", "time", "o'clock", "half", "past", "won",
              "thousand", "hundred", "year", "weather", "there", "can", "want", "home"]
    words += [w.strip(".,?!") for p in everyday_wh.PHRASES for w in p.en.split()]
    return sorted({w.lower() for w in words})


def lexicon_size() -> int:
    """Number of distinct English lemmas (nouns, places, pronouns, verbs, adjectives, time
    words, adverbs, function words and the everyday tables together; a multi-word noun such
    as "ice cream" counts once)."""
    return len(_english_lemmas())


# the original grammar (scaled to 55 % of the corpus) and the everyday constructions (45 %)
_OLD = (
    (0.26, "transitive", transitive_pair),
    (0.12, "intransitive", intransitive),
    (0.14, "adjective", adjective),
    (0.04, "weather", weather),
    (0.10, "yes_no", yes_no),
    (0.07, "wh", wh),
    (0.09, "request", request_pair),
    (0.01, "careful", careful),
    (0.09, "and", lambda r: compound(r, "and")),
    (0.08, "but", lambda r: compound(r, "but")),
)
_EVERYDAY = (
    (0.060, "copula", everyday.copula_sentence),
    (0.040, "demonstrative", everyday.demonstrative_sentence),
    (0.050, "have", everyday.have_sentence),
    (0.060, "exist", everyday.exist_sentence),
    (0.040, "want", lambda r: everyday.verb_form_sentence(r, "want")),
    (0.040, "progressive", lambda r: everyday.verb_form_sentence(r, "progressive")),
    (0.035, "can", lambda r: everyday.verb_form_sentence(r, "can")),
    (0.030, "for_me", everyday.for_me_sentence),
    (0.015, "what_is", everyday_wh.what_is),
    (0.008, "my_name", everyday_wh.my_name),
    (0.012, "when", everyday_wh.when_is),
    (0.010, "who", everyday_wh.who_is),
    (0.015, "why", everyday_wh.why_question),
    (0.020, "clock", everyday_wh.clock),
    (0.015, "price", everyday_wh.price),
    (0.010, "age", everyday_wh.age),
    (0.005, "today_is", everyday_wh.today_is),
    (0.020, "weather_everyday", everyday_wh.weather_everyday),
    (0.002, "phrase", everyday_wh.phrase),
)
# shares of the corpus: the original grammar, the everyday constructions, the textbook's
_MAKERS = (tuple((w * 0.35, n, f) for w, n, f in _OLD)
           + tuple((w * 0.25 / 0.45, n, f) for w, n, f in _EVERYDAY)
           + tuple((w * 0.40, n, f) for w, n, f in textbook.MAKERS))
CONSTRUCTIONS = tuple(name for _, name, _ in _MAKERS)
EVERYDAY_CONSTRUCTIONS = tuple(name for _, name, _ in _EVERYDAY)


def _bounds(makers: tuple) -> list[float]:
    out, total = [], 0.0
    for weight, _, _ in makers:
        total += weight
        out.append(total)
    return out


_BOUNDS = _bounds(_MAKERS)
_EVERYDAY_BOUNDS = _bounds(_EVERYDAY)
# issue 42's areas (textbook/glue.py, textbook/copy_through.py), by construction-name prefix
ISSUE_42 = ("glue_", "copy_")
# The language model's text (lm/text.py, lm/story.py) draws from the mixture it was trained on,
# which predates those areas: adding areas here must not move its held-out rows, nor with them
# the figures its card holds (test_lm). Same makers, same order, so the same draws as then.
_BEFORE_42 = tuple(m for m in _MAKERS if not m[1].startswith(ISSUE_42))
_BEFORE_42_BOUNDS = _bounds(_BEFORE_42)


def make(r: random.Random, everyday_only: bool = False,
         before_42: bool = False) -> tuple[str, Pair]:
    """One (construction name, pair); derivations the grammar rejects are redrawn.
    before_42: the mixture without issue 42's areas (the language model's text)."""
    makers, bounds = ((_EVERYDAY, _EVERYDAY_BOUNDS) if everyday_only
                      else (_BEFORE_42, _BEFORE_42_BOUNDS) if before_42 else (_MAKERS, _BOUNDS))
    total = bounds[-1]
    while True:
        x = r.random() * total
        i = 0
        while bounds[i] <= x and i < len(bounds) - 1:
            i += 1
        _, name, fn = makers[i]
        try:
            p = fn(r)
        except Reject:
            continue
        # the language model's text keeps the words it was trained on (see _BEFORE_42)
        return name, p if before_42 else my_kin(p)


def generate_tagged(n: int, seed: int = 0) -> list[tuple[str, Pair]]:
    """Like generate, with each pair's construction name (one of CONSTRUCTIONS)."""
    r = random.Random(seed)
    return [make(r) for _ in range(n)]


def generate(n: int, seed: int = 0) -> list[Pair]:
    """n pairs, deterministic for (n, seed); the list may contain duplicates."""
    r = random.Random(seed)
    return [make(r)[1] for _ in range(n)]


# ---------------------------------------------------------------------------- seed pairs


def _seed_pairs() -> list[Pair]:
    def noun(en: str, mass: bool = False) -> Noun:
        return BY_EN[(en, mass)]

    def verb(en: str, ko: str) -> Verb:
        return next(v for v in VERBS if (v.en, v.ko) == (en, ko))

    def adj(en: str, ko: str) -> Adjective:
        return next(a for a in ADJECTIVES if (a.en, a.ko) == (en, ko))

    out = []
    # "Winter is cold." <-> "겨울은 추워요."
    c = Clause()
    c.subj, c.adj = NP(noun=noun("winter")), adj("cold", "춥다")
    en, ko, _ = render_adj(c, "decl", Keys())
    out.append(finish(en, ko, "."))
    # "Please be careful of colds." <-> "감기 조심하세요."
    keys = Keys()
    k = keys()
    out.append(careful_of(CAREFUL[0], [("please", k), ("be", k), ("careful", k)],
                           [(ko_imperative("조심하다"), k)], keys))
    # "Does the dog eat fish?" <-> "개가 생선을 먹어요?"
    c = Clause()
    c.subj, c.verb, c.obj = NP(noun=noun("dog")), verb("eat", "먹다"), NP(noun("fish", True))
    en, ko, _ = render_verb(c, "ynq", Keys())
    out.append(finish(en, ko, "?"))
    # "The big dog eats fish." <-> "큰 개가 생선을 먹어요."
    c.subj = NP(noun=noun("dog"), adj=adj("big", "크다"))
    en, ko, _ = render_verb(c, "decl", Keys())
    out.append(finish(en, ko, "."))
    # "Please read the book." <-> "책을 읽으세요."
    c = Clause()
    c.verb, c.obj = verb("read", "읽다"), NP(noun=noun("book"))
    en, ko, _ = render_verb(c, "imp", Keys())
    out.append(finish(en, ko, "."))
    # "The children go to school." <-> "아이들이 학교에 가요."
    c = Clause()
    c.subj, c.verb = NP(noun=noun("child"), plural=True), verb("go", "가다")
    c.place = ("dir", noun("school", True))
    en, ko, _ = render_verb(c, "decl", Keys())
    out.append(finish(en, ko, "."))
    # "Winter is cold but summer is hot." <-> "겨울은 춥지만 여름은 더워요."
    keys = Keys()
    c1, c2 = Clause(), Clause()
    c1.subj, c1.adj = NP(noun=noun("winter")), adj("cold", "춥다")
    c2.subj, c2.adj = NP(noun=noun("summer")), adj("hot", "덥다")
    en1, ko1, k = render_adj(c1, "but", keys)
    en2, ko2, _ = render_adj(c2, "decl", keys)
    out.append(finish(en1 + [("but", k)] + en2, ko1 + ko2, "."))
    return out


SEED_PAIRS: list[Pair] = _seed_pairs()

# the issue's first sentences of a learner (made by the grammar too; the test checks that)
EVERYDAY_EXAMPLES: list[Pair] = [
    Pair("I am a student.", "저는 학생이에요.", ((0, 0), (1, 1), (3, 1))),
    Pair("The weather is nice today.", "오늘 날씨가 좋아요.", ((1, 1), (2, 2), (3, 2), (4, 0))),
    *[p for p in everyday_wh.PHRASES if p.en in ("Hello.", "Thank you very much.")],
]
# always in train, before anything drawn: the seed sentences, the set phrases, the examples
ANCHOR_PAIRS: list[Pair] = list({(p.en, p.ko, p.to): p for p in [
    *SEED_PAIRS, *EVERYDAY_EXAMPLES, *everyday_wh.PHRASES, *textbook.ANCHORS]}.values())


# -------------------------------------------------------------------------------- splits

def splits(seed: int = 0, n_train: int = 200_000, n_val: int = 2_000,
           n_test: int = 4_000, n_everyday: int = 1_000,
           names: dict[tuple[str, str], str] | None = None) -> dict[str, list[Pair]]:
    """Deduplicated train / val / test / everyday lists; no English or Korean string is in two.

    Train is drawn first (ANCHOR_PAIRS first of all), then val, then test, each from the same
    seeded stream and each skipping anything already taken; then "everyday", drawn only from
    the everyday constructions (EVERYDAY_CONSTRUCTIONS), a test set of the new sentences. So
    every short, frequent sentence
    ("Please be careful.") lands in train, and val / test hold sentences the model never saw.
    The sizes are exact unless the grammar runs out of new pairs. The splits depend on all of
    (seed, n_train, n_val, n_test) and on the held-out test sets (held_out): pass the same
    values when evaluating. names, when given, is filled with each drawn pair's construction
    name, keyed by (en, ko) (the anchor pairs have none).
    """
    r = random.Random(f"attention-lab-corpus-splits:{seed}")
    # the hand-written test sets' sentences (tests/data) count as taken, so no split holds one
    # and a grammar change cannot leak them into training
    held = held_out()
    seen_en: set[str] = set(held)
    seen_ko: set[str] = set(seen_en)

    one_way: set[str] = set()  # both sides of the one-way pairs, kept out of val and test

    def fresh(p: Pair, split: str) -> bool:
        # a one-way pair (p.to) goes to train only, and only its source must be new there;
        # neither side may be a held-out sentence, not even as a one-way pair's target
        if split != "train" and (p.to or p.en in one_way or p.ko in one_way):
            return False
        if p.to and (p.en in held or p.ko in held):
            return False
        return not ((p.to != "en" and p.en in seen_en) or (p.to != "ko" and p.ko in seen_ko))

    def take(p: Pair) -> None:
        if p.to:
            one_way.update((p.en, p.ko))
        if p.to != "en":
            seen_en.add(p.en)
        if p.to != "ko":
            seen_ko.add(p.ko)

    out: dict[str, list[Pair]] = {}
    for name, size in (("train", n_train), ("val", n_val), ("test", n_test),
                       ("everyday", n_everyday)):
        bucket: list[Pair] = []
        if name == "train":
            for p in ANCHOR_PAIRS:
                if fresh(p, name):
                    take(p)
                    bucket.append(p)
        misses = 0
        while len(bucket) < size and misses < 100_000:
            construction, p = make(r, name == "everyday")
            if not fresh(p, name):
                misses += 1
                continue
            misses = 0
            take(p)
            if names is not None:
                names[(p.en, p.ko)] = construction
            bucket.append(p)
        out[name] = bucket
    return out


VAL_FILE = "val_pairs.tsv"  # written next to a checkpoint's card.json by training


def write_pairs(path: str | Path, pairs: Iterable[Pair]) -> Path:
    """Pairs as TSV: English, Korean, the alignment as 'en-ko' index pairs, and for a one-way
    pair its direction (`Pair.to`) in a fourth column."""
    rows = ("\t".join((p.en, p.ko, " ".join(f"{e}-{k}" for e, k in p.align))
                      + ((p.to,) if p.to else ())) for p in pairs)
    Path(path).write_text("".join(row + "\n" for row in rows), encoding="utf-8")
    return Path(path)


def read_pairs_file(path: str | Path) -> list[Pair]:
    """What write_pairs wrote."""
    out = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        en, ko, align, *to = line.split("\t")
        out.append(Pair(en, ko, tuple(tuple(int(i) for i in a.split("-"))
                                      for a in align.split()), *to))
    return out


def rare_copies(pairs: list[Pair], target: int = 200, cap: int = 100) -> list[Pair]:
    """Extra copies of pairs that hold a rare English word, so each word is seen ~target times.

    Deduplication leaves a small construction ("Please be careful of colds.") with a handful of
    distinct sentences among 200k, too few to learn. A pair whose rarest word occurs in c pairs
    gets min(cap, ceil(target / c)) - 1 copies; pairs of common words get none.
    """
    words = [set(re.findall(r"[a-z]+", p.en.lower())) for p in pairs]
    count = Counter(w for ws in words for w in ws)
    out: list[Pair] = []
    for p, ws in zip(pairs, words, strict=True):
        rarest = min((count[w] for w in ws), default=target)
        out += [p] * (min(cap, math.ceil(target / rarest)) - 1)
    return out


def frequent_copies(pairs: list[Pair], seed: int = 0, n_draw: int = 200_000, cap: int = 10
                    ) -> list[Pair]:
    """Extra copies of pairs the grammar draws often, which deduplication left only once.

    "How much is this?" or "What time is it?" come out of the grammar hundreds of times in
    200k draws but stand once in the deduplicated training split, once among 200k: too rare to
    learn although a learner types them first. A pair drawn c >= 3 times in n_draw draws of
    an independent stream gets min(cap, c - 1) copies.
    """
    drawn = Counter(p.en for p in generate(n_draw, seed=seed + 1))
    return [p for p in pairs if drawn[p.en] >= 3 for _ in range(min(cap, drawn[p.en] - 1))]


def boost_pairs(n: int, seed: int, exclude: Iterable[str],
                construction: str | None = None) -> list[Pair]:
    """n extra training pairs from the issue-42 areas (glue words, copy-through), drawn from a
    stream of their own: a short warm start sees them often enough to learn them while the
    splits keep the corpus's mixture. Pairs with a string in exclude (val, test, the held-out
    sets) are skipped; repeats are kept, as oversampling.

    construction: draw from that one construction instead (a name in CONSTRUCTIONS), on a
    stream of its own. Warm starts on the glue alone unlearned older constructions that share
    its English (purpose "to go" beside "decided to go", "short" beside "short person"); those
    pairs beside the glue keep both senses apart."""
    if construction is None:
        makers = tuple(m for m in textbook.MAKERS if m[1].startswith(ISSUE_42))
        r = random.Random(f"attention-lab-boost:{seed}")
    else:
        makers = tuple(m for m in _MAKERS if m[1] == construction)
        if not makers:
            raise ValueError(f"no construction named {construction!r}")
        r = random.Random(f"attention-lab-boost:{seed}:{construction}")
    bounds = _bounds(makers)
    skip = set(exclude)
    out: list[Pair] = []
    while len(out) < n:
        x, i = r.random() * bounds[-1], 0
        while bounds[i] <= x and i < len(bounds) - 1:
            i += 1
        try:
            p = makers[i][2](r)
        except Reject:
            continue
        if p.en not in skip and p.ko not in skip:
            out.append(my_kin(p))
    return out
