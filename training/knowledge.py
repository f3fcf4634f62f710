"""What a model trained on this corpus knows: its lexicon, its constructions, and which typed
words it never saw (for the out-of-lexicon notice in the tokens and translation views)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence, Set
from functools import cache
from pathlib import Path

from . import corpus, everyday, everyday_wh, textbook, words
from .pieces import split_particles

WORDS_FILE = "corpus_words.txt"  # written next to a checkpoint's card.json by training
_PUNCT = ".,?!\"'()[]{}:;"
_ONLY_SYMBOLS = re.compile(r"[\W\d_]+")  # numbers and punctuation are never "unknown"

DESCRIPTIONS = {
    "transitive": "subject, verb and object (SVO <-> SOV), with tense and negation",
    "intransitive": "subject and verb, with places, companions, means and adverbs",
    "adjective": "adjective predicates (Winter is cold.)",
    "weather": "weather with it (It is cold today., It rains.)",
    "yes_no": "yes/no questions",
    "wh": "what / who / where questions about actions",
    "request": "polite requests: Please ... <-> -(으)세요, Please do not ... <-> -지 마세요",
    "careful": "Please be careful (of ...) <-> 조심하세요",
    "and": "two clauses with and <-> -고",
    "but": "two clauses with but <-> -지만",
    "copula": "N이에요/예요 and 아니에요: I am a student., I am Korean.",
    "demonstrative": "this / that / that ... over there <-> 이 / 그 / 저; 이것, 그것",
    "have": "있어요/없어요 of possession: I have a car., with counters",
    "exist": "있어요/없어요 of place, with 위/아래/안/앞/뒤/옆: The book is on the desk.",
    "want": "-고 싶어요: I want to eat kimchi.",
    "progressive": "-고 있어요: She is reading the book.",
    "can": "-(으)ㄹ 수 있어요/없어요: I can swim.",
    "for_me": "-아/어 주세요 (Please open the window for me.) and N 주세요",
    "what_is": "뭐예요: What is this?, What is your name?",
    "my_name": "My name is ... <-> 제 이름은 ...이에요",
    "when": "언제예요 and dates: When is your birthday?, The party is on Friday.",
    "who": "누구예요: Who is that person?",
    "why": "왜: Why are you tired?",
    "clock": "몇 시 and the time with native numbers: It is three o'clock. <-> 세 시예요.",
    "price": "얼마예요 and prices with Sino-Korean numbers: It is five thousand won.",
    "age": "몇 살 and ages: I am twenty years old. <-> 저는 스무 살이에요.",
    "today_is": "days of the week: Today is Monday.",
    "weather_everyday": "날씨: The weather is nice today., How is the weather today?",
    "phrase": "set phrases: Hello., Thank you., I am sorry., It is okay.",
}

# The same descriptions for the Korean interface (data, like the lexicon: the knows view picks
# one of the two tables by interface language). A test keeps the two tables' keys equal.
DESCRIPTIONS_KO = {
    "transitive": "주어, 동사, 목적어 (SVO <-> SOV), 시제와 부정 포함",
    "intransitive": "주어와 동사, 장소·함께하는 사람·수단·부사 포함",
    "adjective": "형용사 서술어 (겨울은 추워요.)",
    "weather": "it으로 말하는 날씨 (오늘은 추워요., 비가 와요.)",
    "yes_no": "예/아니요 의문문",
    "wh": "행동에 대한 무엇/누가/어디 의문문",
    "request": "공손한 부탁: Please ... <-> -(으)세요, Please do not ... <-> -지 마세요",
    "careful": "Please be careful (of ...) <-> 조심하세요",
    "and": "and로 이은 두 절 <-> -고",
    "but": "but으로 이은 두 절 <-> -지만",
    "copula": "N이에요/예요와 아니에요: 저는 학생이에요., 저는 한국 사람이에요.",
    "demonstrative": "this / that / that ... over there <-> 이 / 그 / 저; 이것, 그것",
    "have": "소유의 있어요/없어요: 저는 차가 있어요., 세는 말(단위 명사) 포함",
    "exist": "장소의 있어요/없어요, 위/아래/안/앞/뒤/옆과 함께: 책이 책상 위에 있어요.",
    "want": "-고 싶어요: 김치를 먹고 싶어요.",
    "progressive": "-고 있어요: 그녀는 책을 읽고 있어요.",
    "can": "-(으)ㄹ 수 있어요/없어요: 저는 수영할 수 있어요.",
    "for_me": "-아/어 주세요 (창문을 열어 주세요.)와 N 주세요",
    "what_is": "뭐예요: 이것은 뭐예요?, 이름이 뭐예요?",
    "my_name": "My name is ... <-> 제 이름은 ...이에요",
    "when": "언제예요와 날짜: 생일이 언제예요?, 파티는 금요일이에요.",
    "who": "누구예요: 저 사람은 누구예요?",
    "why": "왜: 왜 피곤해요?",
    "clock": "몇 시와 고유어 수로 말하는 시각: It is three o'clock. <-> 세 시예요.",
    "price": "얼마예요와 한자어 수로 말하는 값: 오천 원이에요.",
    "age": "몇 살과 나이: I am twenty years old. <-> 저는 스무 살이에요.",
    "today_is": "요일: 오늘은 월요일이에요.",
    "weather_everyday": "날씨: 오늘 날씨가 좋아요., 오늘 날씨가 어때요?",
    "phrase": "정해진 표현: 안녕하세요., 감사합니다., 죄송합니다., 괜찮아요.",
}

# the textbook areas describe their own constructions: {name: (English, Korean)}
for _area, _share in textbook.AREAS:
    for _name, (_en, _ko) in getattr(_area, "DESCRIPTIONS", {}).items():
        DESCRIPTIONS[_name], DESCRIPTIONS_KO[_name] = _en, _ko


def _normal(word: str) -> str:
    return word.strip(_PUNCT).lower()


def corpus_word_set(pairs: Iterable[corpus.Pair]) -> frozenset[str]:
    """Every word of the pairs (lowercased, punctuation stripped) and every Korean noun or stem
    with its particle split off, so 고양이는 counts as known when 고양이가 was seen."""
    words: set[str] = set()
    for p in pairs:
        if textbook.copy_through.MADE_UP.intersection(_normal(w) for w in p.en.split()):
            continue  # a made-up noun copied through is not a word the model knows
        for w in p.en.split():
            words.update(_normal(part) for part in w.split("-"))
            words.add(_normal(w))
        for w in p.ko.split():
            w = _normal(w)
            words.add(w)
            words.add(split_particles(w)[0])
    words.discard("")
    return frozenset(words)


def write_corpus_words(folder: str | Path, pairs: Iterable[corpus.Pair]) -> Path:
    """Save the training corpus's word set next to a checkpoint (one word per line, sorted)."""
    path = Path(folder) / WORDS_FILE
    path.write_text("\n".join(sorted(corpus_word_set(pairs))) + "\n", encoding="utf-8")
    return path


def read_corpus_words(folder: str | Path) -> frozenset[str] | None:
    """What write_corpus_words saved beside a checkpoint; None when there is no such file."""
    path = Path(folder) / WORDS_FILE
    return frozenset(path.read_text(encoding="utf-8").split()) if path.is_file() else None


@cache
def _words_of(folder: str | None) -> frozenset[str]:
    saved = read_corpus_words(folder) if folder is not None else None
    if saved is not None:
        return saved
    return corpus_word_set(corpus.splits()["train"])  # ~20 s once: the default corpus


def unknown_flags(line: str, known: Set[str]) -> list[bool]:
    """For each whitespace-separated word of line: True when `known` (a corpus word set) lacks
    it. Case and end punctuation are ignored, words of only digits or symbols are never
    flagged, and a hyphenated word whose parts are known, or a Korean noun with a particle it
    was never seen with (고양이는), counts as known."""
    flags = []
    for raw in line.split():
        w = _normal(raw)
        if not w or _ONLY_SYMBOLS.fullmatch(w) or w in known:
            flags.append(False)
            continue
        parts = [_normal(part) for part in w.split("-")]
        flags.append(not (all(part in known for part in parts)
                          or split_particles(w)[0] in known))
    return flags


def unknown_list(line: str, flags: Sequence[bool]) -> list[str]:
    """The flagged words of line, normalised, each once, in order."""
    out: list[str] = []
    for raw, flag in zip(line.split(), flags):
        if flag and _normal(raw) not in out:
            out.append(_normal(raw))
    return out


def unknown_words(text: str, folder: str | Path | None = None) -> list[str]:
    """Words of text that the training corpus never contained, in order, each once.

    folder: a checkpoint folder holding corpus_words.txt (written by training); without one,
    the default corpus (seed 0, 200k training pairs) is used. The rule is unknown_flags'.
    """
    known = _words_of(None if folder is None else str(Path(folder).resolve()))
    return unknown_list(text, unknown_flags(text, known))


def lexicon_entries() -> dict[str, list[tuple[str, str]]]:
    """(English, Korean) entries of the lexicon by category, as the grammar uses them."""
    from .lexicon import (
        ADJECTIVES,
        FREQUENCY_ADVERBS,
        INTENSIFIERS,
        MANNER_ADVERBS,
        NOUNS,
        PRONOUNS,
        TIME_WORDS,
        VERBS,
        WEATHER_STATES,
    )

    return {
        "nouns": [(n.en, n.ko) for n in NOUNS if "place" not in n.tags],
        "places": [(n.en, n.ko) for n in NOUNS if "place" in n.tags],
        "pronouns": [(p.en, p.ko) for p in PRONOUNS],
        "verbs": [(v.en, v.ko) for v in VERBS],
        "adjectives": [(a.en, a.ko) for a in ADJECTIVES],
        "weather": [(en, ko) for en, ko in WEATHER_STATES],
        "time words": [(" ".join(t[0]), " ".join(t[1])) for t in TIME_WORDS],
        "adverbs": FREQUENCY_ADVERBS + list(MANNER_ADVERBS.items()) + INTENSIFIERS,
        "possessives": list(everyday.POSSESSIVES),
        "location nouns": list(everyday.LOCATIONS),
        "names": list(everyday.NAMES),
        "nationalities": [(en, ko + " 사람") for en, ko in everyday.NATIONALITIES],
        "numbers": [(en, f"{nat} / {sino}") for en, nat, sino in words.NUMBERS.values()],
        "counters": [(en or "-", ko) for ko, en in everyday.COUNTER_EN.items()],
        "days": list(everyday_wh.DAYS),
        "months": list(everyday_wh.MONTHS),
        "set phrases": [(p.en, p.ko) for p in everyday_wh.PHRASES],
    }


@cache
def knowledge() -> dict:
    """The lexicon by category and every construction with a description and three examples
    in both languages: {"lexicon": {category: [(en, ko), ...]}, "lemmas": int,
    "constructions": [{"name", "description", "examples": [(en, ko), ...]}]}."""
    examples: dict[str, list[tuple[str, str]]] = {name: [] for name in corpus.CONSTRUCTIONS}
    for name, p in corpus.generate_tagged(6000, seed=11):
        if len(examples[name]) < 3 and (p.en, p.ko) not in examples[name]:
            examples[name].append((p.en, p.ko))
    return {
        "lexicon": lexicon_entries(),
        "lemmas": corpus.lexicon_size(),
        "constructions": [{"name": name, "description": DESCRIPTIONS.get(name, name),
                           "description_ko": DESCRIPTIONS_KO.get(name, name),
                           "examples": examples[name]} for name in corpus.CONSTRUCTIONS],
    }
