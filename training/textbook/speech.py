"""Textbook area: speech -- the negation chapter (안, -지 않아요, 못, -지 못해요, -지 마세요,
없어요) and "is there a ... near here?". The makers and their conventions are in speech_neg.py;
-지 않아요 ("does not") and "Please do not" are the old grammar's (grammar.py)."""

from __future__ import annotations

from ..render import Pair
from .speech_neg import (
    cannot_verb,
    dont_have,
    dont_request,
    near_here,
    short_neg_adj,
    short_neg_verb,
)

MAKERS: tuple = (
    (0.30, "neg_short_verb", short_neg_verb),
    (0.14, "neg_short_adjective", short_neg_adj),
    (0.22, "neg_cannot", cannot_verb),
    (0.12, "neg_dont_request", dont_request),
    (0.08, "neg_dont_have", dont_have),
    (0.14, "exist_near", near_here),
)

DESCRIPTIONS: dict[str, tuple[str, str]] = {
    "neg_short_verb": (
        "Short negation: 안 before the verb (before 하다 in noun + 하다 verbs): "
        "I don't eat meat. <-> 저는 고기를 안 먹어요. / He didn't study. <-> 그는 공부 안 "
        "했어요. / We won't go. <-> 우리는 안 갈 거예요. A Korean statement without a subject "
        "reads as I.",
        "짧은 부정: 동사 앞에 '안'을 써요 ('명사 + 하다' 동사는 '하다' 앞에: 공부 안 해요). "
        "저는 고기를 안 먹어요. <-> I don't eat meat. 주어가 없는 평서문은 '저'로 읽어요."),
    "neg_short_adjective": (
        "Short negation of adjectives: isn't / I'm not <-> 안 + adjective: The room isn't "
        "big. <-> 방은 안 커요. / It isn't cold today. <-> 오늘은 안 추워요.",
        "형용사의 짧은 부정: 형용사 앞에 '안'을 써요. 방은 안 커요. <-> The room isn't big. / "
        "오늘은 안 추워요. <-> It isn't cold today."),
    "neg_cannot": (
        "Inability: can't / couldn't <-> 못 + verb (수영 못 해요); -지 못해요 is read as "
        "can't too: I can't swim. <-> 저는 수영 못 해요. (cannot stays -(으)ㄹ 수 없어요)",
        "불가능: '못' + 동사 또는 '-지 못해요'. 저는 수영 못 해요. / 저는 수영하지 못해요. -> "
        "I can't swim. ('cannot'은 '-(으)ㄹ 수 없어요')"),
    "neg_dont_request": (
        "Negative request -지 마세요 with Don't (with here or a time): Don't drink coffee "
        "here. <-> 여기서 커피를 마시지 마세요. / Don't eat bread at night. <-> 밤에 빵을 먹지 "
        "마세요. (Please do not ... stays as before.)",
        "금지: '-지 마세요'. 여기서 커피를 마시지 마세요. <-> Don't drink coffee here. / "
        "밤에 빵을 먹지 마세요. <-> Don't eat bread at night."),
    "neg_dont_have": (
        "Not having: don't have <-> 없어요: I don't have money. -> 저는 돈이 없어요.; "
        "without 저는 (돈이 없어요.) the Korean reads as I.",
        "없음: '없어요'. 저는 돈이 없어요. / 돈이 없어요. -> I don't have money."),
    "exist_near": (
        "Existence near a place: Is there a hospital near here? <-> 이 근처에 병원이 "
        "있어요? / There is no bank near the school. <-> 학교 근처에 은행이 없어요.",
        "근처에 있어요/없어요: 이 근처에 병원이 있어요? <-> Is there a hospital near here? / "
        "학교 근처에 은행이 없어요. <-> There is no bank near the school."),
}

# the sentences (always in train); the makers produce exactly these pairs too
TEXTBOOK_ANCHORS: list[Pair] = [
    Pair("I don't eat meat.", "저는 고기를 안 먹어요.", ((0, 0), (1, 2), (1, 3), (2, 3), (3, 1))),
    Pair("I don't eat meat.", "고기를 안 먹어요.", ((0, 2), (1, 1), (1, 2), (2, 2), (3, 0)),
         to="en"),
    Pair("Is there a hospital near here?", "이 근처에 병원이 있어요?",
         ((0, 3), (3, 2), (4, 1), (5, 0))),
]
