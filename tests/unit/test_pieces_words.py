"""ui/pieces.py: the words whose pieces keep two sentences from lining up, for the ways
tokenizers mark words (Facts.word_mark; issue 39: the hint named 고양이/강아지, not 많이)."""

from __future__ import annotations

from ui.pieces import mismatches, tail, words


def test_sentencepiece_byte_pieces_are_named_by_the_typed_word():
    clean = ("<2en>", "▁고양이", "가", "▁생선", "을", "▁먹어요", ".", "</s>")
    corrupted = ("<2en>", "▁강아지", "가", "▁생선", "을", "▁", "<0xEB>", "<0xA7>", "<0x8E>", "이",
                 "▁먹어요", ".", "</s>")
    found = mismatches(clean, corrupted, "고양이가 생선을 먹어요.", "강아지가 생선을 많이 먹어요.",
                       "▁")
    assert len(found) == 1 and found[0].clean == ()
    assert found[0].corrupted[0].text == "많이" and len(found[0].corrupted[0].pieces) == 5


def test_gpt2_and_wordpiece_marks():
    found = mismatches(["the", "Ġcat", "Ġeats"], ["the", "Ġhippo", "pot", "amus", "Ġeats"],
                       "the cat eats", "the hippopotamus eats", "Ġ")
    assert [(m.clean[0].text, m.corrupted[0].text) for m in found] == [("cat", "hippopotamus")]
    found = mismatches(["[CLS]", "the", "cat", "[SEP]"], ["[CLS]", "the", "zeb", "##ra", "[SEP]"],
                       "the cat", "the zebra", "##")
    assert [(m.clean[0].text, m.corrupted[0].pieces) for m in found] == [("cat", ("zeb", "##ra"))]


def test_a_swap_of_as_many_pieces_is_not_a_cause():
    assert mismatches(["▁a", "▁b"], ["▁a", "▁c"], "a b", "a c", "▁") == []  # equal counts
    found = mismatches(["▁The", "▁cat", "▁eats"], ["▁The", "▁big", "▁dog", "▁eats"],
                       "The cat eats", "The big dog eats", "▁")
    assert found and found[0].corrupted  # a word added: named


def test_words_without_typed_match_fall_back_to_pieces_and_tail():
    assert [w.text for w in words(["▁do", "g", "."], "dog .", "▁")] == ["dog."]
    assert tail(["<2ko>", "▁a", "▁b", "▁c", "▁d", "</s>"]) == "▁b ▁c ▁d"


def test_a_word_level_tokenizer_makes_every_piece_a_word():
    found = mismatches(["[CLS]", "the", "cat", "[SEP]"], ["[CLS]", "the", "big", "cat", "[SEP]"],
                       "the cat", "the big cat", "")
    assert [(m.clean, [w.text for w in m.corrupted]) for m in found] == [((), ["big"])]
    # the mark decides: the same pieces read with ▁ would make "thebig" one word
    assert [w.text for w in words(["the", "big", "cat"], "x y", "▁")] == ["thebigcat"]


def test_word_index_for_each_mark():
    """model.backends.word_index, the one grouping: hand-worked for every Facts.word_mark."""
    from model.backends import word_index

    assert word_index(["<2ko>", "▁The", "▁wea", "ther", ".", "</s>"], "▁") == \
        [None, 0, 1, 1, 1, None]
    assert word_index(["the", "Ġhippo", "pot", "Ġeats"], "Ġ") == [0, 1, 1, 2]
    assert word_index(["[CLS]", "zeb", "##ra", "runs", "[SEP]"], "##") == [None, 0, 0, 1, None]
    assert word_index(["[CLS]", "zeb", "ra", "[SEP]"], "") == [None, 0, 1, None]
    assert word_index(["<0xEB>", "이"], "▁") == [0, 0]  # a byte piece is text, not special
