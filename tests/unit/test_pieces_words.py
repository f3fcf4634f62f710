"""ui/pieces.py: the words whose pieces keep two sentences from lining up, for the three ways
tokenizers mark words (issue 39: the hint named 고양이/강아지, not 많이)."""

from __future__ import annotations

from ui.pieces import mismatches, tail, words


def test_sentencepiece_byte_pieces_are_named_by_the_typed_word():
    clean = ("<2en>", "▁고양이", "가", "▁생선", "을", "▁먹어요", ".", "</s>")
    corrupted = ("<2en>", "▁강아지", "가", "▁생선", "을", "▁", "<0xEB>", "<0xA7>", "<0x8E>", "이",
                 "▁먹어요", ".", "</s>")
    found = mismatches(clean, corrupted, "고양이가 생선을 먹어요.", "강아지가 생선을 많이 먹어요.")
    assert len(found) == 1 and found[0].clean == ()
    assert found[0].corrupted[0].text == "많이" and len(found[0].corrupted[0].pieces) == 5


def test_gpt2_and_wordpiece_marks():
    found = mismatches(["the", "Ġcat", "Ġeats"], ["the", "Ġhippo", "pot", "amus", "Ġeats"],
                       "the cat eats", "the hippopotamus eats")
    assert [(m.clean[0].text, m.corrupted[0].text) for m in found] == [("cat", "hippopotamus")]
    found = mismatches(["[CLS]", "the", "cat", "[SEP]"], ["[CLS]", "the", "zeb", "##ra", "[SEP]"],
                       "the cat", "the zebra")
    assert [(m.clean[0].text, m.corrupted[0].pieces) for m in found] == [("cat", ("zeb", "##ra"))]


def test_a_swap_of_as_many_pieces_is_not_a_cause():
    assert mismatches(["▁a", "▁b"], ["▁a", "▁c"], "a b", "a c") == []  # equal counts
    found = mismatches(["▁The", "▁cat", "▁eats"], ["▁The", "▁big", "▁dog", "▁eats"],
                       "The cat eats", "The big dog eats")
    assert found and found[0].corrupted  # a word added: named


def test_words_without_typed_match_fall_back_to_pieces_and_tail():
    assert [w.text for w in words(["▁do", "g", "."], "dog .")] == ["dog."]
    assert tail(["<2ko>", "▁a", "▁b", "▁c", "▁d", "</s>"]) == "▁b ▁c ▁d"
