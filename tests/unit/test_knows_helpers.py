"""The out-of-lexicon marking and the knows view's search, against hand-worked cases and
against training.knowledge.unknown_words (the training engineer's rule) as the oracle."""

from __future__ import annotations

from tests.conftest import ROOT, needs
from tests.hostile.inputs import CASES
from training.knowledge import unknown_flags, unknown_list
from ui.notices import marked_chips_html, marked_line_html, piece_words
from ui.views.knows import filter_knowledge

PAPER = ROOT / "checkpoints" / "paper"


def test_piece_words_hand_worked():
    pieces = ["<2ko>", "▁The", "▁wea", "ther", ".", "</s>"]
    assert piece_words(pieces, 2, "▁") == [None, 0, 1, 1, 1, None]
    # a lone ▁ opens a word and the next piece continues it (seed 000's "▁ 겨 울 은")
    assert piece_words(["<2en>", "▁", "겨", "울", "▁추워요", ".", "</s>"], 2, "▁") == \
        [None, 0, 0, 0, 1, 1, None]
    # pieces that do not match the words: nothing is attributed
    assert piece_words(pieces, 3, "▁") == [None] * 6
    assert piece_words(pieces, 1, "▁") == [None] * 6
    # a cut sentence has fewer word starts than words
    assert piece_words(pieces, 3, "▁", cut=True) == [None, 0, 1, 1, 1, None]


def test_unknown_flags_hand_worked():
    known = frozenset({"the", "eats", "고양이", "fish", "x"})
    line = "The Zebra eats 고양이는 x-ray 12 ... zebra, fish!"
    assert unknown_flags(line, known) == [False, True, False, False, True, False, False, True,
                                          False]
    assert unknown_list(line, unknown_flags(line, known)) == ["zebra", "x-ray"]
    assert unknown_flags("", known) == []


@needs((PAPER / "corpus_words.txt").is_file(), reason="no shipped checkpoint")
def test_unknown_words_on_the_shipped_corpus():
    """Hand-picked sentences: everyday words the new grammar covers are known, a zoo word is
    not; hostile lines never crash and only ever name words that were typed."""
    from training.knowledge import unknown_words

    for line in ["The weather is nice today.", "Winter is cold. 겨울은 추워요.",
                 "고양이는 커피를 먹어요.", "I am a student.", "WINTER is cold!",
                 "저는 학생이에요.", "오늘 날씨가 좋아요."]:
        assert unknown_words(line, PAPER) == [], line
    assert unknown_words("The quokka is cold.", PAPER) == ["quokka"]  # zebra is a textbook word now
    assert unknown_words("the-dog x-ray-zebra", PAPER) == ["x-ray-zebra"]
    for case in CASES:
        line = case.source.split("\n")[0][:300]
        typed = {w.strip(".,?!\"'()[]{}:;").lower() for w in line.split()}
        assert set(unknown_words(line, PAPER)) <= typed, case.name


def test_marked_html_escapes_and_marks():
    pieces = ["<2ko>", "▁</script><b>x", "▁ok", "</s>"]
    page = marked_chips_html(pieces, [3, 17, 18, 2], [False, True, False, False])
    assert "</script><b>" not in page and "&lt;/script&gt;&lt;b&gt;x" in page
    assert page.count("dashed") == 1 and page.count("title=") == 1
    line = marked_line_html('a "<img src=x onerror=alert(1)>" ok', [False, True, True, False])
    assert "<img" not in line and line.count("dashed") == 2


K = {"lexicon": {"nouns": [("dog", "개"), ("weather", "날씨")], "verbs": [("eat", "먹다")]},
     "lemmas": 3,
     "constructions": [{"name": "copula", "description": "N이에요", "examples": [("I am", "저는")]},
                       {"name": "want", "description": "-고 싶어요",
                        "examples": [("I want to eat.", "먹고 싶어요.")]}]}


def test_filter_knowledge_hand_worked():
    assert filter_knowledge(K, "  ") is K
    f = filter_knowledge(K, "WEATH")
    assert f["lexicon"] == {"nouns": [("weather", "날씨")]} and f["constructions"] == []
    f = filter_knowledge(K, "먹")  # Korean: a lexicon entry and a construction's example
    assert f["lexicon"] == {"verbs": [("eat", "먹다")]}
    assert [c["name"] for c in f["constructions"]] == ["want"]
    f = filter_knowledge(K, "nouns")  # a category name keeps the whole category
    assert f["lexicon"] == {"nouns": K["lexicon"]["nouns"]}
    f = filter_knowledge(K, "<script>")
    assert f["lexicon"] == {} and f["constructions"] == []


def test_every_construction_is_described_in_both_languages():
    from training import corpus
    from training.knowledge import DESCRIPTIONS, DESCRIPTIONS_KO

    assert set(DESCRIPTIONS) == set(DESCRIPTIONS_KO) == set(corpus.CONSTRUCTIONS)
    hangul = [name for name, text in DESCRIPTIONS_KO.items()
              if not any("\uac00" <= ch <= "\ud7a3" for ch in text)]
    assert not hangul, f"Korean descriptions without Hangul: {hangul}"
