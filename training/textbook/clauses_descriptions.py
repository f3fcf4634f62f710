"""English and Korean descriptions of the linked-clause constructions (clauses.py), each with
the convention that keeps its English one pattern per Korean ending."""

from __future__ import annotations

DESCRIPTIONS = {
    "clause_purpose": (
        "Purpose: go / come to a place to do something <-> -(으)러 가요/와요 "
        "(I go to the library to study. <-> 저는 도서관에 공부하러 가요.)",
        "목적: -(으)러 가요/와요 (저는 도서관에 공부하러 가요. <-> I go to the library to study.)"),
    "clause_reason_so": (
        "Reason with a statement: 'A, so B.' <-> -아/어서; the tense is on the last verb; "
        "'Because A, B.' is read too, into Korean only "
        "(I was tired, so I slept. <-> 저는 피곤해서 잤어요.)",
        "이유: -아/어서 + 서술문, 시제는 마지막 동사에만; 영어는 'A, so B.' "
        "(저는 피곤해서 잤어요. <-> I was tired, so I slept.)"),
    "clause_reason_nikka": (
        "Reason with a request or proposal: 'A, so please B.' / 'A, so let's B.' <-> -(으)니까 "
        "(It is cold, so please close the window. <-> 추우니까 창문을 닫으세요.)",
        "이유: -(으)니까 + 명령·청유, 영어는 'A, so please / let's B.' "
        "(추우니까 창문을 닫으세요. <-> It is cold, so please close the window.)"),
    "clause_because_of": (
        "Cause with a noun: 'because of N' <-> N 때문에 "
        "(I am busy because of the exam. <-> 저는 시험 때문에 바빠요.)",
        "원인: 명사 + 때문에 (저는 시험 때문에 바빠요. <-> I am busy because of the exam.)"),
    "clause_if": (
        "Condition: 'If A, B.' <-> -(으)면 (If I am tired, I sleep. <-> 저는 피곤하면 자요.)",
        "조건: -(으)면 (저는 피곤하면 자요. <-> If I am tired, I sleep.)"),
    "clause_when": (
        "Time: 'When A, B.' <-> -(으)ㄹ 때; a past state or arrival takes -았/었을 때 "
        "(When I was sick, I went to the hospital. <-> 저는 아팠을 때 병원에 갔어요.)",
        "때: -(으)ㄹ 때, 과거의 상태·도착은 -았/었을 때 (저는 아팠을 때 병원에 갔어요. <-> "
        "When I was sick, I went to the hospital.)"),
    "clause_after": (
        "Time: 'After VERB-ing, ...' <-> -(으)ㄴ 후에 "
        "(After eating lunch, I drink coffee. <-> 저는 점심을 먹은 후에 커피를 마셔요.)",
        "시간 순서: -(으)ㄴ 후에 (저는 점심을 먹은 후에 커피를 마셔요. <-> "
        "After eating lunch, I drink coffee.)"),
    "clause_before": (
        "Time: 'Before VERB-ing, ...' <-> -기 전에 "
        "(Before sleeping, I read the book. <-> 저는 자기 전에 책을 읽어요.)",
        "시간 순서: -기 전에 (저는 자기 전에 책을 읽어요. <-> Before sleeping, I read the book.)"),
    "clause_sequence": (
        "Sequence: go / come / meet 'and' then act <-> -아/어서 "
        "(I went to the market and bought bread. <-> 저는 시장에 가서 빵을 샀어요.)",
        "순서: 가다·오다·만나다 + -아/어서 (저는 시장에 가서 빵을 샀어요. <-> "
        "I went to the market and bought bread.)"),
}
