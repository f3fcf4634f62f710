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

The grammar is built so that across the whole corpus English -> Korean and Korean -> English
are both functions (one translation per sentence, each way): count nouns always take "the"
(Korean has no articles; companions and instruments take "a"), "you" is always 당신, only the
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
from dataclasses import dataclass

__all__ = [
    "ADJECTIVES", "CONSTRUCTIONS", "LEXICON", "NOUNS", "PRONOUNS", "SEED_PAIRS", "TENSES",
    "VERBS", "Pair", "conjugate_ko", "en_past", "en_plural", "en_third_person", "generate",
    "generate_tagged", "has_batchim", "ko_attributive", "ko_imperative", "lexicon_size",
    "particle", "splits",
]


@dataclass(frozen=True)
class Pair:
    """One sentence pair with its gold word alignment."""

    en: str  # "The big dog eats fish."
    ko: str  # "큰 개가 생선을 먹어요."
    align: tuple[tuple[int, int], ...]  # (en word index, ko word index) over s.split()


# ------------------------------------------------------------------------------------ Hangul

_SYL_FIRST, _SYL_LAST = 0xAC00, 0xD7A3
_N_FINAL = 28
_F_NIEUN, _F_RIEUL, _F_SSANG_SIOT = 4, 8, 20  # final consonant indices: ㄴ ㄹ ㅆ
_V_A, _V_AE, _V_YA, _V_YAE, _V_EO, _V_YEO = 0, 1, 2, 3, 4, 6  # vowel indices
_V_O, _V_WA, _V_WAE, _V_OE, _V_U, _V_WO, _V_EU, _V_I = 8, 9, 10, 11, 13, 14, 18, 20
_BRIGHT = (_V_A, _V_YA, _V_O)  # vowels that take 아 rather than 어


def _split(ch: str) -> tuple[int, int, int]:
    code = ord(ch) - _SYL_FIRST
    if not 0 <= code <= _SYL_LAST - _SYL_FIRST:
        raise ValueError(f"{ch!r} is not a Hangul syllable")
    return code // 588, (code // _N_FINAL) % 21, code % _N_FINAL


def _join(initial: int, vowel: int, final: int) -> str:
    return chr(_SYL_FIRST + initial * 588 + vowel * _N_FINAL + final)


def _final(word: str) -> int:
    if not word:
        raise ValueError("empty word")
    return _split(word[-1])[2]


def has_batchim(word: str) -> bool:
    """True when the word's last Hangul syllable ends in a consonant: (code - 0xAC00) % 28 != 0."""
    return _final(word) != 0


_PARTICLES = {
    "topic": ("은", "는"), "subject": ("이", "가"), "object": ("을", "를"), "with": ("과", "와"),
}


def particle(word: str, kind: str) -> str:
    """`word` + the particle of `kind` chosen by its final consonant.

    kind: topic 은/는, subject 이/가, object 을/를, with 와/과, instrument (or direction) 으로/로
    (로 after a vowel or ㄹ: 학교로, 서울로, 연필로; 으로 after other consonants: 집으로).
    """
    final = _final(word)
    if kind in ("instrument", "direction"):
        return word + ("로" if final in (0, _F_RIEUL) else "으로")
    try:
        after_consonant, after_vowel = _PARTICLES[kind]
    except KeyError:
        raise ValueError(f"unknown particle kind {kind!r}") from None
    return word + (after_consonant if final else after_vowel)


# ------------------------------------------------------------------- Korean conjugation

# Irregular stems; everything else is conjugated by rule. 르 stems are irregular by rule
# (모르다 -> 몰라요) and ㄹ stems drop ㄹ where the rules say so (만들다 -> 만드세요, 만들 거예요).
_IRREGULAR: dict[str, str] = {}
for _w in ("춥다 덥다 돕다 굽다 새롭다 아름답다 귀엽다 무겁다 가볍다 차갑다 뜨겁다 쉽다 어렵다 "
           "맵다 더럽다 어둡다 가깝다 부드럽다 외롭다 시끄럽다 즐겁다 고맙다").split():
    _IRREGULAR[_w] = "b"  # ㅂ -> 우/오: 추워요, 도와요
for _w in ("듣다", "걷다", "묻다", "싣다"):
    _IRREGULAR[_w] = "d"  # ㄷ -> ㄹ before a vowel: 들어요
for _w in ("짓다", "낫다", "붓다"):
    _IRREGULAR[_w] = "s"  # ㅅ drops before a vowel: 지어요
for _w in ("빨갛다", "노랗다", "파랗다", "하얗다", "까맣다", "그렇다"):
    _IRREGULAR[_w] = "h"  # ㅎ drops, vowel -> ㅐ: 빨개요, 빨간

TENSES = ("present", "past", "future")
_ENDINGS = ("final", "and", "but", "request")


def _stem(lemma: str) -> str:
    if len(lemma) < 2 or lemma[-1] != "다":
        raise ValueError(f"{lemma!r} is not a dictionary form ending in 다")
    return lemma[:-1]


def _open(initial: int, vowel: int) -> str:
    return _join(initial, vowel, 0)


def _infinitive(lemma: str) -> str:
    """The 아/어 form: 먹어, 가, 해, 추워, 몰라, 들어, 지어, 빨개, 써, 봐, 배워, 마셔."""
    stem = _stem(lemma)
    head, last = stem[:-1], stem[-1]
    ini, vow, fin = _split(last)
    kind = _IRREGULAR.get(lemma)
    if last == "하":
        return head + "해"
    if last == "르" and head:  # 르 irregular: 모르 -> 몰라, 부르 -> 불러
        p_ini, p_vow, _ = _split(head[-1])
        return head[:-1] + _join(p_ini, p_vow, _F_RIEUL) + ("라" if p_vow in _BRIGHT else "러")
    if kind == "b":
        return head + _open(ini, vow) + ("와" if last in ("돕", "곱") else "워")
    if kind == "s":
        return head + _open(ini, vow) + ("아" if vow in _BRIGHT else "어")
    if kind == "h":
        new_vowel = {_V_A: _V_AE, _V_EO: _V_AE, _V_YA: _V_YAE}.get(vow, _V_AE)
        return head + _open(ini, new_vowel)
    if kind == "d":
        last, fin = _join(ini, vow, _F_RIEUL), _F_RIEUL
    if fin:
        return head + last + ("아" if vow in _BRIGHT else "어")
    if vow == _V_EU:  # 으 drops: 쓰 -> 써, 바쁘 -> 바빠, 예쁘 -> 예뻐
        bright = bool(head) and _split(head[-1])[1] in _BRIGHT
        return head + _open(ini, _V_A if bright else _V_EO)
    contracted = {_V_O: _V_WA, _V_U: _V_WO, _V_I: _V_YEO, _V_OE: _V_WAE}.get(vow)
    if contracted is not None:
        return head + _open(ini, contracted)
    if vow in (_V_A, _V_EO, _V_AE, _V_YEO, 5, 7, _V_YAE):  # ㅏ ㅓ ㅐ ㅕ ㅔ ㅖ ㅒ absorb 아/어
        return stem
    return stem + "어"  # 쉬 -> 쉬어


def _prospective(lemma: str) -> str:
    """The -(으)ㄹ form before 거예요: 먹을, 갈, 만들, 추울, 들을, 지을, 빨갈."""
    stem = _stem(lemma)
    head, last = stem[:-1], stem[-1]
    ini, vow, fin = _split(last)
    kind = _IRREGULAR.get(lemma)
    if kind == "b":
        return head + _open(ini, vow) + "울"
    if kind == "d":
        return head + _join(ini, vow, _F_RIEUL) + "을"
    if kind == "s":
        return head + _open(ini, vow) + "을"
    if kind == "h" or fin == 0:
        return head + _join(ini, vow, _F_RIEUL)
    if fin == _F_RIEUL:
        return stem
    return stem + "을"


def ko_attributive(lemma: str) -> str:
    """Present attributive (adnominal) form of an adjective: 큰, 작은, 추운, 긴, 빨간, 맛있는."""
    stem = _stem(lemma)
    head, last = stem[:-1], stem[-1]
    ini, vow, fin = _split(last)
    kind = _IRREGULAR.get(lemma)
    if stem.endswith(("있", "없")):
        return stem + "는"
    if kind == "b":
        return head + _open(ini, vow) + "운"
    if kind == "s":
        return head + _open(ini, vow) + "은"
    if kind == "h" or fin in (0, _F_RIEUL):
        return head + _join(ini, vow, _F_NIEUN)
    return stem + "은"


def ko_imperative(lemma: str, negated: bool = False) -> str:
    """Polite request: 읽으세요, 가세요, 만드세요, 도우세요, 들으세요; negated: 읽지 마세요."""
    stem = _stem(lemma)
    if negated:
        return stem + "지 마세요"
    head, last = stem[:-1], stem[-1]
    ini, vow, fin = _split(last)
    kind = _IRREGULAR.get(lemma)
    if kind == "b":
        return head + _open(ini, vow) + "우세요"
    if kind == "d":
        return head + _join(ini, vow, _F_RIEUL) + "으세요"
    if kind in ("s", "h"):
        return head + _open(ini, vow) + ("세요" if kind == "h" else "으세요")
    if fin == 0:
        return stem + "세요"
    if fin == _F_RIEUL:
        return head + _open(ini, vow) + "세요"
    return stem + "으세요"


_WORDS_CACHE: dict[tuple[str, str, bool, str], tuple[str, ...]] = {}


def _pred_words(lemma: str, tense: str, negated: bool, ending: str) -> tuple[str, ...]:
    """The Korean predicate as words; cached, since the lexicon is small."""
    key = (lemma, tense, negated, ending)
    words = _WORDS_CACHE.get(key)
    if words is not None:
        return words
    if tense not in TENSES:
        raise ValueError(f"tense must be one of {TENSES}, not {tense!r}")
    if ending not in _ENDINGS:
        raise ValueError(f"ending must be one of {_ENDINGS}, not {ending!r}")
    stem = _stem(lemma)
    inf = _infinitive(lemma)
    ini, vow, _ = _split(inf[-1])
    past = inf[:-1] + _join(ini, vow, _F_SSANG_SIOT)  # 먹었, 갔, 했
    if ending == "request":
        words = tuple(ko_imperative(lemma, negated).split())
    elif negated:
        neg = {
            ("final", "present"): ("않아요",), ("final", "past"): ("않았어요",),
            ("final", "future"): ("않을", "거예요"), ("but", "present"): ("않지만",),
            ("but", "past"): ("않았지만",), ("but", "future"): ("않을", "거지만"),
        }.get((ending, tense), ("않고",))
        words = (stem + "지", *neg)
    elif ending == "and":
        words = (stem + "고",)
    elif ending == "but":
        words = {"present": (stem + "지만",), "past": (past + "지만",),
                 "future": (_prospective(lemma), "거지만")}[tense]
    else:
        words = {"present": (inf + "요",), "past": (past + "어요",),
                 "future": (_prospective(lemma), "거예요")}[tense]
    _WORDS_CACHE[key] = words
    return words


def conjugate_ko(lemma: str, tense: str = "present", negated: bool = False,
                 ending: str = "final") -> str:
    """Polite (해요체) form of a verb or adjective given in dictionary form.

    tense: present / past / future; ending: "final" (sentence end: 먹어요, 먹었어요, 먹을 거예요),
    "and" (-고; the tense shows on the last clause), "but" (-지만: 먹지만, 먹었지만, 먹을 거지만)
    or "request" (-(으)세요 / -지 마세요; tense ignored). negated uses -지 않- (or -지 마세요).
    """
    return " ".join(_pred_words(lemma, tense, negated, ending))


# ---------------------------------------------------------------------- English morphology

_EN_S_IRREGULAR = {"go": "goes", "do": "does", "have": "has"}


def en_third_person(base: str) -> str:
    """eat -> eats, watch -> watches, study -> studies, go -> goes."""
    if base in _EN_S_IRREGULAR:
        return _EN_S_IRREGULAR[base]
    if base.endswith(("s", "x", "z", "ch", "sh")):
        return base + "es"
    if base.endswith("y") and base[-2:-1] not in "aeiou":
        return base[:-1] + "ies"
    return base + "s"


_EN_PAST_DOUBLE = {"shop": "shopped", "stop": "stopped", "plan": "planned", "jog": "jogged"}


def en_past(base: str) -> str:
    """Regular past: like -> liked, study -> studied, play -> played, shop -> shopped."""
    if base in _EN_PAST_DOUBLE:
        return _EN_PAST_DOUBLE[base]
    if base.endswith("e"):
        return base + "d"
    if base.endswith("y") and base[-2:-1] not in "aeiou":
        return base[:-1] + "ied"
    return base + "ed"


_EN_PLURAL_IRREGULAR = {
    "child": "children", "man": "men", "woman": "women", "mouse": "mice", "wolf": "wolves",
    "knife": "knives", "person": "people", "foot": "feet", "potato": "potatoes",
    "tomato": "tomatoes",
}


def en_plural(noun: str) -> str:
    """dog -> dogs, child -> children, mouse -> mice, box -> boxes, city -> cities."""
    if noun in _EN_PLURAL_IRREGULAR:
        return _EN_PLURAL_IRREGULAR[noun]
    if noun.endswith(("s", "x", "z", "ch", "sh")):
        return noun + "es"
    if noun.endswith("y") and noun[-2:-1] not in "aeiou":
        return noun[:-1] + "ies"
    return noun + "s"


# --------------------------------------------------------------------------------- lexicon


class Noun:
    """A noun (or place). tags select it for verbs and adjectives."""

    __slots__ = ("en", "ko", "tags", "toks", "pl_toks", "article", "loc", "bare", "an",
                 "adj_ok")

    def __init__(self, en: str, ko: str, tags: str, plural: str) -> None:
        self.en, self.ko = en, ko
        self.tags = frozenset(tags.split())
        no_article = self.tags & {"mass", "proper", "season"}
        self.toks = tuple(en.split())
        self.article = not no_article
        if no_article or plural == "-":
            self.pl_toks = None
        else:
            self.pl_toks = tuple((plural or en_plural(en)).split())
        prep = [t[1:] for t in self.tags if t.startswith("@")]
        self.loc = prep[0] if prep else None  # preposition of place: in / at / on
        self.bare = "bare" in self.tags  # "to school", "at school"
        self.an = en[0] in "aeiou"
        # attributive adjectives: count nouns, and food or drink ("cold water")
        self.adj_ok = self.article or bool(self.tags & {"food", "drink"})

    def __repr__(self) -> str:
        return f"Noun({self.en!r}, {self.ko!r})"


# en | ko | tags | plural ("" = regular, "-" = none). Tags: mass/proper/season nouns take no
# article and no plural; "@in"/"@at"/"@on" give a place its preposition; p_* say what
# happens at a place. Korean nouns are all distinct, and so are the English ones within a
# role (the fish / fish, the chicken / chicken differ by the article).
_NOUN_TABLE = """
child | 아이 | person kid | children
teacher | 선생님 | person adult
student | 학생 | person
friend | 친구 | person
mother | 어머니 | person adult family
father | 아버지 | person adult family
doctor | 의사 | person adult
nurse | 간호사 | person adult
baby | 아기 | person kid family
boy | 소년 | person kid
girl | 소녀 | person kid
man | 남자 | person adult
woman | 여자 | person adult
grandmother | 할머니 | person adult family
grandfather | 할아버지 | person adult family
farmer | 농부 | person adult
chef | 요리사 | person adult
singer | 가수 | person adult
artist | 화가 | person adult
writer | 작가 | person adult
scientist | 과학자 | person adult
soldier | 군인 | person adult
neighbor | 이웃 | person
customer | 손님 | person
son | 아들 | person kid family
daughter | 딸 | person kid family
king | 왕 | person adult family
queen | 여왕 | person adult family
actor | 배우 | person adult
pilot | 조종사 | person adult
lawyer | 변호사 | person adult
driver | 운전기사 | person adult
dancer | 무용수 | person adult
musician | 음악가 | person adult
uncle | 삼촌 | person adult family
cousin | 사촌 | person
waiter | 종업원 | person adult
tourist | 관광객 | person
player | 선수 | person
baker | 제빵사 | person adult
dog | 개 | animal pet land white black drawable
cat | 고양이 | animal pet land white black drawable
bird | 새 | animal flyer prey drawable
fish | 물고기 | animal swimmer prey | -
horse | 말 | animal land rideable drawable
cow | 소 | animal land
pig | 돼지 | animal land
chicken | 닭 | animal land
duck | 오리 | animal swimmer flyer
rabbit | 토끼 | animal pet land white
tiger | 호랑이 | animal wild land
lion | 사자 | animal wild land
bear | 곰 | animal wild land
monkey | 원숭이 | animal land
elephant | 코끼리 | animal land
mouse | 쥐 | animal land prey
fox | 여우 | animal wild land
wolf | 늑대 | animal wild land
giraffe | 기린 | animal land
penguin | 펭귄 | animal swimmer
turtle | 거북이 | animal swimmer
frog | 개구리 | animal swimmer
snake | 뱀 | animal wild
puppy | 강아지 | animal pet land white black
apple | 사과 | food afood fruit red cut
banana | 바나나 | food afood fruit yellow
orange | 오렌지 | food fruit
egg | 달걀 | food cook
cake | 케이크 | food sweet soft bake make cut pricey
cookie | 쿠키 | food sweet bake make
sandwich | 샌드위치 | food make
potato | 감자 | food veg cook
tomato | 토마토 | food veg red
carrot | 당근 | food afood veg
strawberry | 딸기 | food fruit red sweet
peach | 복숭아 | food fruit sweet
lemon | 레몬 | food fruit yellow
pizza | 피자 | food temp bake make cut
hamburger | 햄버거 | food make
watermelon | 수박 | food fruit sweet cut heavy
onion | 양파 | food veg cut
pie | 파이 | food sweet bake make cut
rice | 밥 | food mass afood temp cook
bread | 빵 | food mass afood soft bake cut fresh
fish | 생선 | food mass afood fresh cook
meat | 고기 | food mass afood fresh cook
soup | 수프 | food mass temp salty make cook
cheese | 치즈 | food mass soft salty
chicken | 닭고기 | food mass cook
kimchi | 김치 | food mass spicy make
pasta | 파스타 | food mass temp make cook
salad | 샐러드 | food mass fresh make
chocolate | 초콜릿 | food mass sweet
beef | 소고기 | food mass cook
pork | 돼지고기 | food mass cook
candy | 사탕 | food mass sweet
fruit | 과일 | food mass fresh sweet
ice cream | 아이스크림 | food mass sweet
water | 물 | drink mass adrink temp cool clean
milk | 우유 | drink mass adrink temp fresh
juice | 주스 | drink mass sweet cool
coffee | 커피 | drink mass temp pricey
tea | 차 | drink mass temp
beer | 맥주 | drink mass cool
wine | 와인 | drink mass pricey
cola | 콜라 | drink mass sweet cool
lemonade | 레모네이드 | drink mass sweet cool
book | 책 | read obj interesting studytext pricey heavy
newspaper | 신문 | read obj
letter | 편지 | read write send longshort
magazine | 잡지 | read obj interesting
novel | 소설 | read obj interesting longshort
poem | 시 | read write longshort
story | 이야기 | read write interesting longshort
message | 메시지 | read write send longshort
email | 이메일 | read write send longshort
report | 보고서 | read write longshort
textbook | 교과서 | read obj studytext heavy
map | 지도 | read obj drawable
menu | 메뉴 | read
diary | 일기 | read write
note | 메모 | read write send
car | 자동차 | obj vehicle drivable colored fixable heavy pricey
bag | 가방 | obj colored heavy openable lose pricey
shoe | 신발 | obj lose pricey
hat | 모자 | obj colored lose
umbrella | 우산 | obj colored lose
pen | 펜 | obj lose toolW toolD usable
pencil | 연필 | obj lose toolW toolD usable
phone | 휴대폰 | obj fixable lose usable pricey
computer | 컴퓨터 | obj fixable usable toolW pricey heavy
cup | 컵 | obj dish
ball | 공 | obj ball colored lose
chair | 의자 | obj furniture make fixable heavy
table | 탁자 | obj furniture make heavy
desk | 책상 | obj furniture make heavy
bed | 침대 | obj furniture soft heavy pricey
key | 열쇠 | obj lose
ticket | 표 | obj lose pricey
gift | 선물 | obj send
toy | 장난감 | obj make colored
bicycle | 자전거 | obj vehicle rideable fixable colored pricey
camera | 카메라 | obj fixable usable pricey
picture | 그림 | obj drawable
box | 상자 | obj openable heavy make
clock | 시계 | obj fixable
window | 창문 | obj openable
door | 문 | obj openable fixable
doll | 인형 | obj make cute
guitar | 기타 | obj musical
piano | 피아노 | obj musical heavy pricey
radio | 라디오 | obj fixable song
spoon | 숟가락 | obj dish toolE
knife | 칼 | obj toolC
fork | 포크 | obj dish toolE
brush | 붓 | obj toolD
chopsticks | 젓가락 | mass toolE
plate | 접시 | obj dish
bottle | 병 | obj openable
shirt | 셔츠 | obj clothes colored pricey
coat | 코트 | obj clothes colored warmcloth pricey
dress | 드레스 | obj clothes colored pricey
jacket | 재킷 | obj clothes colored warmcloth
bus | 버스 | vehicle take drivable
train | 기차 | vehicle take
taxi | 택시 | vehicle take drivable
subway | 지하철 | vehicle take
plane | 비행기 | vehicle take
ship | 배 | vehicle take
soccer | 축구 | sport mass
baseball | 야구 | sport mass
basketball | 농구 | sport mass
tennis | 테니스 | sport mass
golf | 골프 | sport mass
English | 영어 | lang speak mass
Korean | 한국어 | lang speak mass
Japanese | 일본어 | lang speak mass
Chinese | 중국어 | lang speak mass
French | 프랑스어 | lang speak mass
math | 수학 | lang mass
science | 과학 | lang mass
history | 역사 | lang mass
art | 미술 | lang mass
music | 음악 | lang song mass
song | 노래 | song sing
tree | 나무 | plant drawable
flower | 꽃 | plant drawable red yellow white
winter | 겨울 | season
summer | 여름 | season
spring | 봄 | season
autumn | 가을 | season
cold | 감기 | hazard
fire | 불 | hazard
stair | 계단 | hazard
road | 길 | hazard
ice | 얼음 | hazard
park | 공원 | place @in p_out p_view p_walk p_meet p_food p_sit p_play p_dance p_sport p_rest
school | 학교 | place @at bare p_bld p_study p_work p_meet p_wait p_build p_sport p_music
library | 도서관 | place @in p_bld p_study p_work p_build p_read
hospital | 병원 | place @at p_bld p_work p_build
station | 역 | place @at p_bld p_work p_meet p_wait
market | 시장 | place @at p_bld p_shop p_work p_food
store | 가게 | place @at p_bld p_shop p_work
restaurant | 식당 | place @at p_bld p_food p_work p_meet p_order
bank | 은행 | place @at p_bld p_work
museum | 박물관 | place @at p_bld p_work p_build
zoo | 동물원 | place @at p_out p_walk p_view
beach | 해변 | place @at p_out p_view p_water p_walk p_play p_sport p_rest
river | 강 | place @in p_water p_view p_danger p_long
mountain | 산 | place @on p_out p_view p_danger p_rest
office | 사무실 | place @at p_bld p_work
airport | 공항 | place @at p_bld p_work p_wait p_meet
church | 교회 | place @at p_bld p_sing p_meet p_build p_music
cafe | 카페 | place @at p_bld p_food p_study p_meet p_work p_wait p_order p_read
garden | 정원 | place @in p_out p_view p_walk p_sit p_play p_plant
kitchen | 부엌 | place @in p_room p_cook p_food
room | 방 | place @in p_room p_sleep p_study p_rest p_sit p_play p_read p_music
classroom | 교실 | place @in p_room p_study p_sit
house | 집 | place @at p_bld p_sleep p_food p_cook p_study p_rest p_live p_build p_read
city | 도시 | place @in p_city p_view p_live p_shop
village | 마을 | place @in p_city p_view p_live
farm | 농장 | place @on p_out p_work p_live p_plant
hotel | 호텔 | place @at p_bld p_sleep p_food p_work p_meet p_build
theater | 극장 | place @at p_bld p_sing p_dance p_meet p_work p_music
supermarket | 슈퍼마켓 | place @at p_bld p_shop p_work
bakery | 빵집 | place @at p_bld p_shop p_work p_cook
Seoul | 서울 | place @in proper p_city p_view p_live p_shop
Busan | 부산 | place @in proper p_city p_view p_live p_shop
Korea | 한국 | place @in proper p_city p_live
Japan | 일본 | place @in proper p_city p_live
China | 중국 | place @in proper p_city p_live
America | 미국 | place @in proper p_city p_live
London | 런던 | place @in proper p_city p_view p_live p_shop
Paris | 파리 | place @in proper p_city p_view p_live p_shop
"""


def _parse_nouns(table: str) -> list[Noun]:
    out = []
    for line in table.strip().splitlines():
        cells = [c.strip() for c in line.split("|")]
        en, ko, tags = cells[:3]
        out.append(Noun(en, ko, tags, cells[3] if len(cells) > 3 else ""))
    return out


NOUNS = _parse_nouns(_NOUN_TABLE)


class Pronoun:
    __slots__ = ("en", "en_obj", "ko", "person")

    def __init__(self, en: str, en_obj: str, ko: str, person: str) -> None:
        self.en, self.en_obj, self.ko, self.person = en, en_obj, ko, person

    def __repr__(self) -> str:
        return f"Pronoun({self.en!r}, {self.ko!r})"


# person: 1s, 2, 1p, 3s, 3p (agreement class). "you" is always 당신 (singular reading only).
PRONOUNS = [
    Pronoun("I", "me", "저", "1s"), Pronoun("you", "you", "당신", "2"),
    Pronoun("we", "us", "우리", "1p"), Pronoun("he", "him", "그", "3s"),
    Pronoun("she", "her", "그녀", "3s"), Pronoun("they", "them", "그들", "3p"),
]


class Verb:
    """One verb sense. subj/obj are noun tags; obj empty = intransitive."""

    __slots__ = ("en", "base", "part", "s3", "past", "ko", "subj", "obj", "obj_animal", "intr",
                 "loc", "motion", "comp", "tool", "means", "imp", "manner", "no_future",
                 "neg_ko", "arrive", "need_loc", "wh", "subj_nouns", "obj_nouns",
                 "obj_nouns_animal", "places", "tools", "comps", "pron_subj", "pron_obj")

    def __init__(self, en: str, ko: str, subj: str, obj: str = "", *, past: str | None = None,
                 obj_animal: str = "", intr: bool = False, loc: str = "", motion: bool = False,
                 comp: str = "", tool: str = "", imp: bool = False, manner: str = "",
                 no_future: bool = False, neg_ko: str | None = None,
                 arrive: bool = False, need_loc: bool = False) -> None:
        self.en = en
        words = en.split()
        self.base, self.part = words[0], tuple(words[1:])
        self.s3 = en_third_person(self.base)
        self.past = past or en_past(self.base)
        self.ko = ko
        self.subj, self.obj = frozenset(subj.split()), frozenset(obj.split())
        self.obj_animal = frozenset(obj_animal.split())
        self.intr = intr or not self.obj  # may be used without an object
        self.loc, self.motion, self.comp = frozenset(loc.split()), motion, frozenset(comp.split())
        self.tool, self.means, self.imp = tool, motion, imp
        self.manner = tuple(manner.split())
        self.no_future, self.neg_ko, self.arrive = no_future, neg_ko, arrive
        self.need_loc = need_loc  # "lives in Seoul", never a bare "lives"
        self.wh = True  # set below: False when another sense shares the English or Korean verb

    def __repr__(self) -> str:
        return f"Verb({self.en!r}, {self.ko!r})"


V = Verb
VERBS = [
    V("eat", "먹다", "person animal", "food", past="ate", obj_animal="afood", intr=True,
      loc="p_food", comp="person", tool="toolE", imp=True, manner="quickly slowly together"),
    V("drink", "마시다", "person animal", "drink", past="drank", obj_animal="adrink", intr=True,
      loc="p_food", comp="person", imp=True, manner="quickly slowly together"),
    V("read", "읽다", "person", "read", past="read", intr=True, loc="p_study p_read", imp=True,
      manner="slowly quickly quietly"),
    V("see", "보다", "person animal", "person animal plant vehicle obj", past="saw",
      obj_animal="person animal", loc="p_walk"),
    V("like", "좋아하다", "person animal",
      "person animal food drink read obj plant season sport lang song place",
      obj_animal="afood person ball"),
    V("love", "사랑하다", "person", "person animal season"),
    V("hate", "싫어하다", "person animal", "food drink season sport lang animal",
      obj_animal="afood"),
    V("go", "가다", "person animal", past="went", motion=True, comp="person", imp=True,
      manner="early late together"),
    V("come", "오다", "person animal", past="came", motion=True, comp="person", imp=True,
      manner="early late together"),
    V("buy", "사다", "person", "food drink read obj clothes", past="bought", loc="p_shop p_city",
      comp="person", imp=True),
    V("sell", "팔다", "person", "food read obj clothes", past="sold", loc="p_shop"),
    V("make", "만들다", "person", "make", past="made", loc="p_cook", comp="person", imp=True,
      manner="quickly"),
    V("write", "쓰다", "person", "write", past="wrote", loc="p_study p_read", tool="toolW",
      imp=True, manner="quickly slowly"),
    V("sleep", "자다", "person animal", past="slept", loc="p_sleep", imp=True,
      manner="well early late"),
    V("walk", "걷다", "person animal", loc="p_walk", comp="person pet",
      manner="slowly quickly together"),
    V("run", "달리다", "person animal", past="ran", loc="p_walk", comp="person pet", imp=True,
      manner="quickly slowly together"),
    V("study", "공부하다", "person", "lang", intr=True, loc="p_study", comp="person", imp=True,
      manner="hard quietly together"),
    V("meet", "만나다", "person", "person", past="met", loc="p_meet"),
    V("listen to", "듣다", "person", "song", loc="p_read p_music", imp=True, manner="quietly"),
    V("learn", "배우다", "person", "lang sport musical", loc="p_study", comp="person",
      manner="hard"),
    V("teach", "가르치다", "adult", "lang sport musical", past="taught", loc="p_study",
      manner="well"),
    V("help", "돕다", "person", "person", imp=True),
    V("know", "알다", "person", "person", past="knew", no_future=True, neg_ko="모르다"),
    V("wait for", "기다리다", "person animal", "person animal take", obj_animal="person",
      loc="p_wait", imp=True),
    V("find", "찾다", "person animal", "lose", past="found", obj_animal="ball"),
    V("lose", "잃어버리다", "person", "lose", past="lost"),
    V("wash", "씻다", "person", "dish fruit veg", loc="p_cook", imp=True),
    V("clean", "청소하다", "person", "p_room p_bld", imp=True, comp="person"),
    V("cook", "요리하다", "person", "cook", intr=True, loc="p_cook", comp="person",
      manner="well"),
    V("bake", "굽다", "person", "bake", loc="p_cook", comp="person", imp=True),
    V("open", "열다", "person", "openable", imp=True),
    V("close", "닫다", "person", "openable", imp=True),
    V("throw", "던지다", "person", "ball", past="threw", loc="p_sport"),
    V("catch", "잡다", "person animal", "ball", past="caught", obj_animal="prey",
      loc="p_sport"),
    V("kick", "차다", "person", "ball", loc="p_sport"),
    V("draw", "그리다", "person", "drawable", past="drew", loc="p_read p_out", tool="toolD",
      imp=True, manner="well"),
    V("fix", "고치다", "person", "fixable", manner="quickly"),
    V("build", "짓다", "person", "p_build", past="built"),
    V("visit", "방문하다", "person", "place person"),
    V("drive", "운전하다", "adult", "drivable", past="drove", manner="slowly well"),
    V("ride", "타다", "person", "rideable", past="rode", loc="p_walk"),
    V("take", "타다", "person", "take", past="took", loc="p_wait"),
    V("play", "놀다", "person pet", loc="p_play", comp="person pet", imp=True,
      manner="quietly together"),
    V("play", "치다", "person", "musical", loc="p_music", manner="well"),
    V("play", "하다", "person", "sport", loc="p_sport", comp="person", manner="well"),
    V("sing", "노래하다", "person flyer", past="sang", loc="p_sing p_music", imp=True,
      manner="well quietly together"),
    V("sing", "부르다", "person", "sing", past="sang", manner="well"),
    V("call", "부르다", "person", "person animal", imp=True),
    V("dance", "춤추다", "person", loc="p_dance", comp="person", imp=True,
      manner="well together"),
    V("cry", "울다", "person animal"),
    V("laugh", "웃다", "person", comp="person", manner="quietly together"),
    V("rest", "쉬다", "person animal", loc="p_rest p_sleep", imp=True),
    V("work", "일하다", "person", loc="p_work", comp="person", manner="hard late together"),
    V("sit", "앉다", "person animal", past="sat", loc="p_sit", imp=True),
    V("stand", "서다", "person", past="stood", loc="p_wait", imp=True),
    V("swim", "수영하다", "person", past="swam", loc="p_water", comp="person", imp=True,
      manner="well"),
    V("swim", "헤엄치다", "swimmer", past="swam", loc="p_water"),
    V("fly", "날다", "flyer", past="flew"),
    V("jump", "뛰다", "person animal", loc="p_play"),
    V("live", "살다", "person animal", loc="p_live", comp="person", need_loc=True),
    V("arrive", "도착하다", "person", arrive=True, manner="early late"),
    V("leave", "떠나다", "person", "p_city", past="left"),
    V("hike", "등산하다", "person", comp="person"),
    V("shop", "쇼핑하다", "person", loc="p_shop p_city", comp="person"),
    V("use", "사용하다", "person", "usable"),
    V("want", "원하다", "person animal", "food drink obj clothes", obj_animal="afood ball"),
    V("wear", "입다", "person", "clothes", past="wore", imp=True),
    V("send", "보내다", "person", "send", past="sent"),
    V("receive", "받다", "person", "send"),
    V("bring", "가져오다", "person", "obj food drink read", past="brought", imp=True),
    V("order", "주문하다", "person", "food drink", loc="p_order"),
    V("plant", "심다", "person", "plant", loc="p_plant"),
    V("cut", "자르다", "person", "cut", past="cut", tool="toolC", imp=True),
    V("choose", "고르다", "person", "obj clothes read", past="chose"),
    V("understand", "이해하다", "person", "lang read", past="understood"),
    V("speak", "하다", "person", "speak", past="spoke", imp=True, manner="well slowly"),
]
del V


class Adjective:
    """One adjective sense: tags = the noun tags it may describe."""

    __slots__ = ("en", "ko", "tags", "attr", "pred", "state", "imp", "attr_ko",
                 "pred_nouns", "attr_nouns", "pron")

    def __init__(self, en: str, ko: str, tags: str, *, attr: bool = True, pred: bool = True,
                 state: bool = False, imp: bool = False) -> None:
        self.en, self.ko, self.tags = en, ko, frozenset(tags.split())
        self.attr, self.pred, self.state, self.imp = attr, pred, state, imp
        self.attr_ko = ko_attributive(ko)

    def __repr__(self) -> str:
        return f"Adjective({self.en!r}, {self.ko!r})"


_SIZE = "animal obj plant vehicle fruit kid p_out p_bld p_room p_city p_water"
A = Adjective
ADJECTIVES = [
    A("big", "크다", _SIZE),
    A("small", "작다", _SIZE),
    A("good", "좋다", "food drink read obj person animal"),
    A("bad", "나쁘다", "food drink read person animal"),
    A("cold", "춥다", "person season", attr=False, state=True),
    A("hot", "덥다", "person season", attr=False, state=True),
    A("cold", "차갑다", "temp cool"),
    A("hot", "뜨겁다", "temp"),
    A("warm", "따뜻하다", "season temp warmcloth"),
    A("cool", "시원하다", "season cool"),
    A("happy", "행복하다", "person", state=True, imp=True),
    A("sad", "슬프다", "person", state=True),
    A("busy", "바쁘다", "person", state=True),
    A("tired", "피곤하다", "person animal", state=True),
    A("hungry", "배고프다", "person animal", state=True),
    A("sick", "아프다", "person animal", state=True),
    A("kind", "친절하다", "person"),
    A("smart", "똑똑하다", "person animal"),
    A("young", "젊다", "adult"),
    A("pretty", "예쁘다", "person animal plant clothes colored"),
    A("beautiful", "아름답다", "adult plant p_view season"),
    A("cute", "귀엽다", "kid animal cute"),
    A("new", "새롭다", "obj vehicle p_bld"),
    A("old", "낡다", "obj vehicle p_bld clothes", pred=False),
    A("expensive", "비싸다", "pricey"),
    A("cheap", "싸다", "pricey"),
    A("delicious", "맛있다", "food drink"),
    A("interesting", "재미있다", "interesting lang"),
    A("boring", "지루하다", "interesting lang"),
    A("heavy", "무겁다", "heavy"),
    A("light", "가볍다", "heavy"),
    A("fast", "빠르다", "animal vehicle"),
    A("slow", "느리다", "animal vehicle"),
    A("long", "길다", "longshort p_long"),
    A("short", "짧다", "longshort"),
    A("quiet", "조용하다", "person p_bld p_room p_city"),
    A("noisy", "시끄럽다", "kid animal p_bld p_room p_city"),
    A("clean", "깨끗하다", "clean clothes dish p_bld p_room p_city p_water"),
    A("dirty", "더럽다", "clean clothes dish pet p_bld p_room p_city p_water"),
    A("easy", "쉽다", "studytext lang"),
    A("difficult", "어렵다", "studytext lang"),
    A("sweet", "달다", "sweet"),
    A("spicy", "맵다", "spicy"),
    A("salty", "짜다", "salty"),
    A("fresh", "신선하다", "fresh fruit veg"),
    A("soft", "부드럽다", "soft"),
    A("red", "빨갛다", "red colored"),
    A("yellow", "노랗다", "yellow colored"),
    A("white", "하얗다", "white colored"),
    A("blue", "파랗다", "colored"),
    A("black", "까맣다", "black colored"),
    A("far", "멀다", "p_bld p_city p_out", attr=False),
    A("close", "가깝다", "p_bld p_city p_out", attr=False),
    A("strong", "강하다", "person animal"),
    A("weak", "약하다", "person animal"),
    A("brave", "용감하다", "person"),
    A("lazy", "게으르다", "person pet"),
    A("diligent", "부지런하다", "person"),
    A("famous", "유명하다", "adult p_bld p_city"),
    A("dangerous", "위험하다", "wild p_danger"),
    A("safe", "안전하다", "p_city p_bld vehicle"),
    A("bright", "밝다", "p_room"),
    A("dark", "어둡다", "p_room"),
    A("honest", "정직하다", "person"),
    A("healthy", "건강하다", "person animal", imp=True),
    A("lonely", "외롭다", "person", state=True),
    A("full", "배부르다", "person animal", attr=False, state=True),
    A("thirsty", "목마르다", "person animal", attr=False, state=True),
    A("sleepy", "졸리다", "person animal", attr=False, state=True),
]
del A

# Weather: "It is cold today." <-> "오늘은 추워요."; "It rains." <-> "비가 와요."
WEATHER_ADJECTIVES = [("cold", "춥다"), ("hot", "덥다"), ("warm", "따뜻하다"),
                      ("cool", "시원하다"), ("cloudy", "흐리다"), ("sunny", "맑다")]
# (English verb or adjective, is an English adjective, Korean noun, Korean verb)
WEATHER_VERBS = [("rain", False, "비", "오다"), ("snow", False, "눈", "오다"),
                 ("windy", True, "바람", "불다")]

# (English words, Korean words, tenses, usable in weather sentences)
TIME_WORDS = [
    (("today",), ("오늘",), ("present", "past", "future"), True),
    (("yesterday",), ("어제",), ("past",), True),
    (("tomorrow",), ("내일",), ("future",), True),
    (("every", "day"), ("매일",), ("present",), False),
    (("last", "week"), ("지난주",), ("past",), False),
    (("next", "week"), ("다음", "주"), ("future",), False),
    (("last", "year"), ("작년",), ("past",), False),
    (("next", "year"), ("내년",), ("future",), False),
    (("this", "morning"), ("오늘", "아침"), ("past", "future"), True),
    (("tonight",), ("오늘", "밤"), ("future",), True),
    (("in", "the", "morning"), ("아침에",), ("present",), False),
    (("at", "night"), ("밤에",), ("present",), False),
    (("on", "weekends"), ("주말에",), ("present",), False),
]

FREQUENCY_ADVERBS = [("always", "항상"), ("often", "자주"), ("sometimes", "가끔"),
                     ("usually", "보통")]
MANNER_ADVERBS = {"quickly": "빨리", "slowly": "천천히", "well": "잘", "hard": "열심히",
                  "quietly": "조용히", "early": "일찍", "late": "늦게", "together": "같이"}
INTENSIFIERS = [("very", "아주"), ("really", "정말")]

# "Please be careful of colds." <-> "감기 조심하세요."; (noun, English phrase)
_CAREFUL = [("cold", "colds"), ("fire", "the fire"), ("stair", "the stairs"),
            ("road", "the road"), ("ice", "the ice"), ("car", "the car"),
            ("snake", "the snake"), ("knife", "the knife"), ("dog", "the dog")]

FUNCTION_WORDS = ["the", "a", "an", "in", "at", "on", "to", "with", "by", "of", "for", "and",
                  "but", "not", "do", "will", "be", "please", "what", "who", "where", "it",
                  "careful"]

LEXICON: dict[str, list] = {
    "nouns": [n for n in NOUNS if "place" not in n.tags],
    "places": [n for n in NOUNS if "place" in n.tags],
    "pronouns": PRONOUNS,
    "verbs": VERBS,
    "adjectives": ADJECTIVES,
    "weather": WEATHER_ADJECTIVES + WEATHER_VERBS,
    "time_words": TIME_WORDS,
    "adverbs": FREQUENCY_ADVERBS + list(MANNER_ADVERBS.items()) + INTENSIFIERS,
    "function_words": FUNCTION_WORDS,
}


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
    return sorted({w.lower() for w in words})


def lexicon_size() -> int:
    """Number of distinct English lemmas (nouns, places, pronouns, verbs, adjectives, time
    words, adverbs and function words together)."""
    return len(_english_lemmas())


# --------------------------------------------------------------- selection tables (derived)

_PLACES = [n for n in NOUNS if "place" in n.tags]
_VEHICLES = [n for n in NOUNS if "vehicle" in n.tags]
_GENERAL = [n for n in NOUNS if not n.tags & {"hazard"}]
_BY_EN = {(n.en, "place" in n.tags or "mass" in n.tags): n for n in NOUNS}


def _with_tags(nouns: list[Noun], tags: frozenset[str]) -> list[Noun]:
    return [n for n in nouns if n.tags & tags]


def _prepare() -> None:
    en_count: dict[str, int] = {}
    ko_count: dict[str, int] = {}
    for v in VERBS:
        en_count[v.en] = en_count.get(v.en, 0) + 1
        ko_count[v.ko] = ko_count.get(v.ko, 0) + 1
    for v in VERBS:
        v.wh = en_count[v.en] == 1 and ko_count[v.ko] == 1
        v.subj_nouns = _with_tags(_GENERAL, v.subj)
        v.pron_subj = bool(v.subj & {"person", "adult"})
        v.obj_nouns = _with_tags(_GENERAL, v.obj) if v.obj else []
        v.obj_nouns_animal = _with_tags(_GENERAL, v.obj_animal) if v.obj_animal else []
        v.pron_obj = "person" in v.obj
        v.places = _with_tags(_PLACES, v.loc) if v.loc else []
        if v.arrive:
            v.places = [p for p in _PLACES if p.tags & {"p_bld", "p_city"}]
        v.tools = _with_tags(NOUNS, frozenset([v.tool])) if v.tool else []
        v.comps = [n for n in _with_tags(_GENERAL, v.comp) if "family" not in n.tags]
    for a in ADJECTIVES:
        a.pred_nouns = _with_tags(_GENERAL, a.tags) if a.pred else []
        a.attr_nouns = _with_tags(_GENERAL, a.tags) if a.attr else []
        a.pron = bool(a.tags & {"person", "adult", "kid"})


_prepare()

_ATTR_FOR: dict[int, list[Adjective]] = {id(n): [] for n in NOUNS}
for _a in ADJECTIVES:
    for _n in _a.attr_nouns:
        _ATTR_FOR[id(_n)].append(_a)
_PRED_ADJ = [a for a in ADJECTIVES if a.pred]
_PRON_ADJ = [a for a in ADJECTIVES if a.pred and a.pron]
_STATE_ADJ = [a for a in ADJECTIVES if a.pred and a.state]
_TRANSITIVE = [v for v in VERBS if v.obj]
_INTRANSITIVE = [v for v in VERBS if v.intr]
_WH_OBJ = [v for v in _TRANSITIVE if v.wh and v.pron_subj]
_WH_WHERE = [v for v in VERBS if v.wh and v.pron_subj and (v.places or v.motion)]
_WH_WHO = [v for v in VERBS if v.wh and "person" in v.subj]
_REQUEST = [v for v in VERBS if v.imp]
_TIMES_BY_TENSE = {t: [w for w in TIME_WORDS if t in w[2]] for t in TENSES}
_WEATHER_TIMES = {t: [w for w in TIME_WORDS if t in w[2] and w[3]] for t in TENSES}
_REQUEST_TIMES = [w for w in TIME_WORDS if w[0] in (("today",), ("tomorrow",), ("every", "day"))]
_THIRD = ("3s", "3p")
_COPULA = {("present", "1s"): "am", ("present", "3s"): "is", ("past", "1s"): "was",
           ("past", "3s"): "was"}


# ------------------------------------------------------------------------------ rendering
#
# A sentence is built as two token lists: English [(word, keys)] and Korean [(word, key)],
# where keys are small ints shared by aligned words (English keys may be a tuple).


class _Reject(Exception):
    """This derivation is not wanted (too long, ambiguous English); draw another."""


class _Keys:
    __slots__ = ("n",)

    def __init__(self) -> None:
        self.n = 0

    def __call__(self) -> int:
        self.n += 1
        return self.n


class _NP:
    """A noun phrase: a noun (maybe plural, maybe with an adjective) or a pronoun."""

    __slots__ = ("noun", "pron", "plural", "adj")

    def __init__(self, noun: Noun | None = None, pron: Pronoun | None = None,
                 plural: bool = False, adj: Adjective | None = None) -> None:
        self.noun, self.pron, self.plural, self.adj = noun, pron, plural, adj

    @property
    def person(self) -> str:
        if self.pron is not None:
            return self.pron.person
        return "3p" if self.plural else "3s"

    def same(self, other: _NP | None) -> bool:
        return other is not None and (self.noun, self.pron, self.plural, self.adj) == (
            other.noun, other.pron, other.plural, other.adj)

    def en_pron(self, key: int, obj: bool = False) -> list:
        return [(self.pron.en_obj if obj else self.pron.en, key)]

    def ko(self, key: int, kind: str, adj_key: int | None) -> list:
        if self.pron is not None:
            return [(particle(self.pron.ko, kind), key)]
        word = self.noun.ko + "들" if self.plural else self.noun.ko
        out = [(self.adj.attr_ko, adj_key)] if self.adj is not None else []
        out.append((particle(word, kind), key))
        return out


def _np_pair(np: _NP, keys: _Keys, kind: str, obj: bool = False) -> tuple[list, list]:
    """English and Korean tokens of a noun phrase with shared keys."""
    key = keys()
    if np.pron is not None:
        return np.en_pron(key, obj), np.ko(key, kind, None)
    adj_key = keys() if np.adj is not None else None
    noun = np.noun
    en: list = [("the", None)] if noun.article else []
    if np.adj is not None:
        en.append((np.adj.en, adj_key))
    en += [(w, key) for w in (noun.pl_toks if np.plural else noun.toks)]
    return en, np.ko(key, kind, adj_key)


class _Clause:
    """Everything one clause needs; rendered by _render_verb / _render_adj."""

    __slots__ = ("subj", "verb", "adj", "obj", "adjunct", "place", "place_adj", "manner",
                 "freq", "time", "tense", "neg", "intens", "elide")

    def __init__(self) -> None:
        self.subj: _NP | None = None
        self.verb: Verb | None = None
        self.adj: Adjective | None = None
        self.obj: _NP | None = None
        self.adjunct: tuple | None = None  # ("with" | "tool" | "by", noun, plural)
        self.place: tuple | None = None  # ("loc" | "dir" | "arrive", place noun)
        self.place_adj: Adjective | None = None
        self.manner: str | None = None
        self.freq: tuple | None = None
        self.time: tuple | None = None
        self.tense = "present"
        self.neg = False
        self.intens: tuple | None = None
        self.elide = False


def _pred_keys(words: tuple[str, ...], neg: bool, keys: _Keys) -> tuple[list, int, int, int]:
    """Korean predicate tokens and the keys of its main, negation and tense-carrying words."""
    ks = [keys() for _ in words]
    main, last = ks[0], ks[-1]
    negk = ks[1] if neg and len(ks) > 1 else main
    return list(zip(words, ks)), main, negk, last


def _adjunct_pair(adjunct: tuple, keys: _Keys) -> tuple[list, list]:
    kind, noun, plural = adjunct
    key = keys()
    if kind == "by":
        return [("by", key)] + [(w, key) for w in noun.toks], [(particle(noun.ko, "instrument"),
                                                                key)]
    en: list = [("with", key)]
    if not plural and noun.article:
        en.append(("an" if noun.an else "a", None))
    en += [(w, key) for w in (noun.pl_toks if plural else noun.toks)]
    ko_word = noun.ko + "들" if plural else noun.ko
    return en, [(particle(ko_word, "with" if kind == "with" else "instrument"), key)]


def _place_pair(place: tuple, adj: Adjective | None, keys: _Keys) -> tuple[list, list]:
    kind, noun = place
    key = keys()
    prep = "to" if kind == "dir" else noun.loc
    en: list = [(prep, key)]
    if noun.article and not noun.bare:
        en.append(("the", None))
    ko: list = []
    if adj is not None:
        adj_key = keys()
        en.append((adj.en, adj_key))
        ko.append((adj.attr_ko, adj_key))
    en += [(w, key) for w in noun.toks]
    ko.append((noun.ko + ("에서" if kind == "loc" else "에"), key))
    return en, ko


def _time_pair(time: tuple, keys: _Keys, topic: bool = False) -> tuple[list, list]:
    key = keys()
    en = [(w, None if w == "the" else key) for w in time[0]]
    ko = [(w, key) for w in time[1]]
    if topic:
        ko[-1] = (particle(ko[-1][0], "topic"), key)
    return en, ko


def _render_verb(c: _Clause, mode: str, keys: _Keys) -> tuple[list, list, int]:
    """mode: decl | and | but | ynq | what | who | where | imp. Returns (en, ko, last key)."""
    v = c.verb
    neg_ko = c.neg and v.neg_ko is not None
    lemma = v.neg_ko if neg_ko else v.ko
    ending = {"and": "and", "but": "but", "imp": "request"}.get(mode, "final")
    pred, k_main, k_neg, k_tense = _pred_keys(
        _pred_words(lemma, c.tense, c.neg and not neg_ko, ending), c.neg and not neg_ko, keys)
    verb_tail = [(w, k_main) for w in v.part]

    # subject
    en_front: list = []
    en_s: list = []
    ko_s: list = []
    person = "3s"
    if mode == "who":
        k = keys()
        en_s, ko_s = [("who", k)], [("누가", k)]
    elif mode != "imp" and c.subj is not None:
        person = c.subj.person
        en_s, ko_s = _np_pair(c.subj, keys, "topic" if c.subj.pron else "subject")
        if c.elide:
            en_s, ko_s = [], []

    # English verb group
    question = mode in ("ynq", "what", "where")
    do = "does" if person == "3s" else "do"
    aux = {"present": do, "past": "did", "future": "will"}[c.tense]
    en_v: list
    if mode == "imp":
        en_v = [("please", k_tense)]
        if c.neg:
            en_v += [("do", k_tense), ("not", k_neg)]
        en_v += [(v.base, k_main), *verb_tail]
    elif question:
        en_v = [(v.base, k_main), *verb_tail]
    elif c.neg:
        en_v = [(aux, k_tense), ("not", k_neg), (v.base, k_main), *verb_tail]
    elif c.tense == "future":
        en_v = [("will", k_tense), (v.base, k_main), *verb_tail]
    else:
        if c.tense == "present":
            form = v.s3 if person == "3s" else v.base
        else:
            form = v.past
        en_v = [(form, (k_main, k_tense) if k_main != k_tense else k_main), *verb_tail]
    en_freq: list = []
    ko_freq: list = []
    if c.freq is not None:
        k = keys()
        en_freq, ko_freq = [(c.freq[0], k)], [(c.freq[1], k)]

    en_o: list = []
    ko_o: list = []
    if mode == "what":
        k = keys()
        wh_en, wh_ko = ("who", "누구를") if c.obj.pron or "person" in c.obj.noun.tags else (
            "what", "무엇을")
        en_front = [(wh_en, k)]
        ko_o = [(wh_ko, k)]
    elif c.obj is not None:
        en_o, ko_o = _np_pair(c.obj, keys, "object", obj=True)
    en_a: list = []
    ko_a: list = []
    if c.adjunct is not None:
        en_a, ko_a = _adjunct_pair(c.adjunct, keys)
    en_p: list = []
    ko_p: list = []
    if mode == "where":
        k = keys()
        en_front = [("where", k)]
        ko_p = [("어디에" if v.motion or v.arrive else "어디에서", k)]
    elif c.place is not None:
        en_p, ko_p = _place_pair(c.place, c.place_adj, keys)
    en_m: list = []
    ko_m: list = []
    if c.manner is not None:
        k = keys()
        en_m, ko_m = [(c.manner, k)], [(MANNER_ADVERBS[c.manner], k)]
    en_t: list = []
    ko_t: list = []
    if c.time is not None:
        en_t, ko_t = _time_pair(c.time, keys)

    if c.manner in ("early", "late"):  # "goes to school early"
        rest = en_o + en_a + en_p + en_m + en_t
    else:  # "plays golf well at school"
        rest = en_o + en_m + en_a + en_p + en_t
    if question:
        front = en_front if mode in ("what", "where") else []
        en = front + [(aux, k_tense)] + en_s + en_v + rest
    else:
        en = en_s + en_freq + en_v + rest
    ko = ko_t + ko_s + ko_freq + ko_a + ko_p + ko_o + ko_m + pred
    return en, ko, k_tense


def _copula(tense: str, person: str) -> str:
    return _COPULA.get((tense, person), "are" if tense == "present" else "were")


def _render_adj(c: _Clause, mode: str, keys: _Keys) -> tuple[list, list, int]:
    """Adjective predicate: mode decl | and | but | ynq."""
    a = c.adj
    ending = mode if mode in ("and", "but") else "final"
    pred, k_main, k_neg, k_tense = _pred_keys(_pred_words(a.ko, c.tense, c.neg, ending), c.neg,
                                              keys)
    en_s, ko_s = _np_pair(c.subj, keys, "topic")
    en_i: list = []
    ko_i: list = []
    if c.intens is not None:
        k = keys()
        en_i, ko_i = [(c.intens[0], k)], [(c.intens[1], k)]
    en_t: list = []
    ko_t: list = []
    if c.time is not None:
        en_t, ko_t = _time_pair(c.time, keys)
    adj = [(a.en, k_main)]
    if c.tense == "future":
        head = [("will", k_tense)]
        tail = ([("not", k_neg)] if c.neg else []) + [("be", k_main)] + en_i + adj
    else:
        head = [(_copula(c.tense, c.subj.person), k_tense)]
        tail = ([("not", k_neg)] if c.neg else []) + en_i + adj
    if mode == "ynq":
        en = head + en_s + tail + en_t
    else:
        en = en_s + head + tail + en_t
    return en, ko_t + ko_s + ko_i + pred, k_tense


def _finish(en: list, ko: list, punct: str) -> Pair:
    if len(en) > 16:
        raise _Reject
    where: dict[int | None, tuple[int, ...]] = {}
    for j, (_, k) in enumerate(ko):
        where[k] = where[k] + (j,) if k in where else (j,)
    get = where.get
    align = sorted([(i, j) for i, (_, ks) in enumerate(en) if ks is not None
                    for k in (ks if ks.__class__ is tuple else (ks,)) for j in get(k, ())])
    en_text = " ".join([w for w, _ in en])
    return Pair(en_text[0].upper() + en_text[1:] + punct, " ".join([w for w, _ in ko]) + punct,
                tuple(align))


# ----------------------------------------------------------------------------- sampling


def _pick(r: random.Random, items: list):
    return items[int(r.random() * len(items))]


def _tense(r: random.Random, verb: Verb | None = None) -> str:
    x = r.random()
    tense = "present" if x < 0.42 else "past" if x < 0.72 else "future"
    if tense == "future" and verb is not None and verb.no_future:
        tense = "present"
    return tense


def _noun_np(r: random.Random, nouns: list[Noun], p_plural: float, p_adj: float,
             avoid: Noun | None = None) -> _NP:
    noun = _pick(r, nouns)
    if noun is avoid:
        noun = _pick(r, nouns)
        if noun is avoid:
            raise _Reject
    plural = noun.pl_toks is not None and r.random() < p_plural
    adj = None
    if noun.adj_ok and r.random() < p_adj:
        cands = _ATTR_FOR[id(noun)]
        if cands:
            adj = _pick(r, cands)
    return _NP(noun=noun, plural=plural, adj=adj)


def _subject(r: random.Random, v: Verb, p_pron: float = 0.3, questions: bool = False) -> _NP:
    if v.pron_subj and r.random() < p_pron:
        pron = _pick(r, PRONOUNS)
        if questions and pron.person == "1s":
            pron = PRONOUNS[1]
        return _NP(pron=pron)
    return _noun_np(r, v.subj_nouns, 0.25, 0.15)


def _object(r: random.Random, v: Verb, subj: _NP | None, request: bool = False) -> _NP:
    animal_subj = subj is not None and subj.noun is not None and "animal" in subj.noun.tags
    nouns = v.obj_nouns_animal if animal_subj and v.obj_animal else v.obj_nouns
    if v.pron_obj and r.random() < 0.2:
        pron = _pick(r, PRONOUNS)
        me = subj.person if subj is not None and subj.pron is not None else "2"
        if request and pron.en == "you":
            raise _Reject
        if me[0] in "12" and pron.person[0] == me[0]:
            raise _Reject  # no "I like me", "we help us"
        return _NP(pron=pron)
    return _noun_np(r, nouns, 0.2, 0.2, avoid=subj.noun if subj is not None else None)


def _past_is_ambiguous(c: _Clause, person: str) -> bool:
    """"I read the book." reads as present; never produce it as a past."""
    return (c.tense == "past" and not c.neg and c.verb.past == c.verb.base
            and person not in ("3s",))


def _adjuncts(r: random.Random, c: _Clause, budget: float, animal: bool) -> None:
    v = c.verb
    opts = []
    if v.comps and not animal:
        opts.append("with")
    if v.tools and not animal:
        opts.append("tool")
    if v.means and not animal:
        opts.append("by")
    if opts and r.random() < 0.3 * budget:
        kind = _pick(r, opts)
        if kind == "with":
            noun = _pick(r, v.comps)
            if c.subj is not None and noun is c.subj.noun:
                raise _Reject  # no "the teacher plays with a teacher"
            c.adjunct = ("with", noun, noun.pl_toks is not None and r.random() < 0.25)
        elif kind == "tool":
            c.adjunct = ("tool", _pick(r, v.tools), False)
        else:
            c.adjunct = ("by", _pick(r, _VEHICLES), False)
    if v.motion:
        if r.random() < 0.65 * budget:
            c.place = ("dir", _pick(r, _PLACES))
    elif v.places and (v.need_loc or r.random() < 0.35 * budget):
        c.place = ("arrive" if v.arrive else "loc", _pick(r, v.places))
    if c.place is not None and c.place[1].article and not c.place[1].bare and r.random() < 0.1:
        cands = _ATTR_FOR[id(c.place[1])]
        if cands:
            c.place_adj = _pick(r, cands)
    if v.manner and r.random() < 0.18 * budget:
        manner = _pick(r, v.manner)
        plural_subj = c.subj is None or c.subj.person in ("1p", "3p")
        if manner != "together" or (plural_subj and c.subj is not None
                                     and (c.adjunct is None or c.adjunct[0] != "with")):
            c.manner = manner


def _verb_clause(r: random.Random, verbs: list[Verb], *, transitive: bool | None,
                 budget: float = 1.0, questions: bool = False, p_neg: float = 0.2,
                 p_time: float = 0.3, p_pron: float = 0.3, subj: _NP | None = None) -> _Clause:
    c = _Clause()
    v = c.verb = _pick(r, verbs)
    c.subj = subj if subj is not None else _subject(r, v, p_pron, questions)
    if transitive or (transitive is None and v.obj and (not v.intr or r.random() < 0.7)):
        if not v.obj:
            raise _Reject
        c.obj = _object(r, v, c.subj)
    animal = c.subj.noun is not None and "animal" in c.subj.noun.tags
    _adjuncts(r, c, budget, animal)
    c.tense = _tense(r, v)
    c.neg = not questions and r.random() < p_neg
    if _past_is_ambiguous(c, c.subj.person):
        c.tense = "present"
    if r.random() < p_time:
        c.time = _pick(r, _TIMES_BY_TENSE[c.tense])
    elif not c.neg and not questions and c.tense != "future" and r.random() < 0.12:
        c.freq = _pick(r, FREQUENCY_ADVERBS)
    return c


def _adj_clause(r: random.Random, *, questions: bool = False, p_neg: float = 0.2,
                p_time: float = 0.3, state_only: bool = False) -> _Clause:
    c = _Clause()
    if r.random() < 0.3:
        c.adj = _pick(r, _STATE_ADJ if state_only else _PRON_ADJ)
        pron = _pick(r, PRONOUNS)
        if questions and pron.person == "1s":
            pron = PRONOUNS[1]
        c.subj = _NP(pron=pron)
    else:
        c.adj = _pick(r, _STATE_ADJ if state_only else _PRED_ADJ)
        noun = _pick(r, c.adj.pred_nouns)
        c.subj = _NP(noun=noun, plural=noun.pl_toks is not None and r.random() < 0.25)
    c.tense = _tense(r) if c.adj.state else ("present" if r.random() < 0.6 else "past")
    c.neg = not questions and r.random() < p_neg
    if c.adj.state and r.random() < p_time:
        c.time = _pick(r, _TIMES_BY_TENSE[c.tense])
    if not c.neg and r.random() < 0.15:
        c.intens = _pick(r, INTENSIFIERS)
    return c


# ---------------------------------------------------------------------------- constructions


def _transitive(r: random.Random) -> Pair:
    keys = _Keys()
    en, ko, _ = _render_verb(_verb_clause(r, _TRANSITIVE, transitive=True), "decl", keys)
    return _finish(en, ko, ".")


def _intransitive(r: random.Random) -> Pair:
    keys = _Keys()
    c = _verb_clause(r, _INTRANSITIVE, transitive=False, budget=1.6)
    en, ko, _ = _render_verb(c, "decl", keys)
    return _finish(en, ko, ".")


def _adjective(r: random.Random) -> Pair:
    keys = _Keys()
    c = _adj_clause(r)
    en, ko, _ = _render_adj(c, "decl", keys)
    punct = "!" if c.intens is not None and c.tense == "present" and r.random() < 0.5 else "."
    return _finish(en, ko, punct)


def _weather(r: random.Random) -> Pair:
    keys = _Keys()
    tense = _tense(r)
    question = r.random() < 0.2
    neg = not question and r.random() < 0.2
    time = _pick(r, _WEATHER_TIMES[tense]) if r.random() < 0.6 else None
    en_t: list = []
    ko_t: list = []
    person = "3s"
    if r.random() < 0.6:
        word, lemma = _pick(r, WEATHER_ADJECTIVES)
        is_adj, noun_ko = True, None
        if time is not None:
            en_t, ko_t = _time_pair(time, keys, topic=True)
    else:
        word, is_adj, noun_ko, lemma = _pick(r, WEATHER_VERBS)
        if time is not None:
            en_t, ko_t = _time_pair(time, keys)
    pred, k_main, k_neg, k_tense = _pred_keys(_pred_words(lemma, tense, neg, "final"), neg, keys)
    ko_n: list = []
    k_word: int | tuple = k_main
    if noun_ko is not None:
        k_noun = keys()
        ko_n = [(particle(noun_ko, "subject"), k_noun)]
        k_word = (k_noun, k_main)
    it = [("it", None)]
    if is_adj:
        if tense == "future":
            head = [("will", k_tense)]
            body = ([("not", k_neg)] if neg else []) + [("be", k_main), (word, k_word)]
        else:
            head = [(_copula(tense, person), k_tense)]
            body = ([("not", k_neg)] if neg else []) + [(word, k_word)]
        en = head + it + body if question else it + head + body
    else:
        aux = {"present": "does", "past": "did", "future": "will"}[tense]
        if question:
            en = [(aux, k_tense)] + it + [(word, k_word)]
        elif neg:
            en = it + [(aux, k_tense), ("not", k_neg), (word, k_word)]
        elif tense == "future":
            en = it + [("will", k_tense), (word, k_word)]
        else:
            form = en_third_person(word) if tense == "present" else en_past(word)
            en = it + [(form, k_word if k_main == k_tense else (*k_word, k_tense))]
    return _finish(en + en_t, ko_t + ko_n + pred, "?" if question else ".")


def _yes_no(r: random.Random) -> Pair:
    keys = _Keys()
    if r.random() < 0.3:
        en, ko, _ = _render_adj(_adj_clause(r, questions=True), "ynq", keys)
    else:
        c = _verb_clause(r, VERBS, transitive=None, questions=True, p_pron=0.4)
        en, ko, _ = _render_verb(c, "ynq", keys)
    return _finish(en, ko, "?")


def _wh(r: random.Random) -> Pair:
    keys = _Keys()
    x = r.random()
    if x < 0.4:
        c = _verb_clause(r, _WH_OBJ, transitive=True, questions=True, p_pron=0.4)
        c.place = None if c.place is not None and r.random() < 0.5 else c.place
        mode = "what"
    elif x < 0.7:
        c = _verb_clause(r, _WH_WHO, transitive=None, questions=True)
        mode = "who"  # the drawn subject is replaced by who (agreement: 3rd singular)
        if c.manner == "together":
            c.manner = None
    else:
        c = _verb_clause(r, _WH_WHERE, transitive=None, questions=True, p_pron=0.4)
        c.place, c.place_adj, mode = None, None, "where"
    en, ko, _ = _render_verb(c, mode, keys)
    return _finish(en, ko, "?")


def _request(r: random.Random) -> Pair:
    keys = _Keys()
    c = _Clause()
    v = c.verb = _pick(r, _REQUEST)
    if v.obj and (not v.intr or r.random() < 0.75):
        c.obj = _object(r, v, None, request=True)
    _adjuncts(r, c, 0.8, False)
    c.neg = r.random() < 0.25
    if c.manner == "together":
        c.manner = None
    if not c.neg and r.random() < 0.15:
        c.time = _pick(r, _REQUEST_TIMES)
    en, ko, _ = _render_verb(c, "imp", keys)
    return _finish(en, ko, ".")


def _careful(r: random.Random) -> Pair:
    keys = _Keys()
    k = keys()
    x = r.random()
    if x < 0.25:  # "Please be happy." <-> "행복하세요."
        a = _pick(r, [a for a in ADJECTIVES if a.imp])
        return _finish([("please", k), ("be", k), (a.en, k)], [(ko_imperative(a.ko), k)], ".")
    en = [("please", k), ("be", k), ("careful", k)]
    ko = [(ko_imperative("조심하다"), k)]
    if x < 0.4:
        return _finish(en, ko, ".")
    return _careful_of(_pick(r, _CAREFUL), en, ko, keys)


def _careful_of(item: tuple[str, str], en: list, ko: list, keys: _Keys) -> Pair:
    name, phrase = item
    kn = keys()
    en = en + [("of", None)] + [(w, None if w == "the" else kn) for w in phrase.split()]
    return _finish(en, [(_BY_EN[(name, False)].ko, kn)] + ko, ".")


_VERBS_FOR: dict[int, list[Verb]] = {}


def _verbs_for(subj: _NP) -> list[Verb]:
    """Verbs that can take this subject (cached by noun / pronoun)."""
    key = id(subj.pron if subj.pron is not None else subj.noun)
    verbs = _VERBS_FOR.get(key)
    if verbs is None:
        verbs = _VERBS_FOR[key] = [v for v in VERBS if (
            v.pron_subj if subj.pron is not None else subj.noun in v.subj_nouns)]
    return verbs


def _compound(r: random.Random, conj: str) -> Pair:
    keys = _Keys()
    if r.random() < 0.3:
        c1 = _adj_clause(r, p_neg=0.15, p_time=0.0)
        c2 = _adj_clause(r, p_neg=0.3 if conj == "but" else 0.1, p_time=0.0)
        if c1.subj.same(c2.subj) or (c1.subj.noun is not None and c1.subj.noun is c2.subj.noun):
            raise _Reject
        if c1.adj.state != c2.adj.state:
            c2.tense = c1.tense if c1.tense != "future" else "present"
            c1.tense = c2.tense
        else:
            c2.tense = c1.tense
        render = _render_adj
    else:
        kw = dict(transitive=None, budget=0.5, p_time=0.0)
        c1 = _verb_clause(r, VERBS, p_neg=0.15, **kw)
        p_neg2 = 0.3 if conj == "but" else 0.1
        if r.random() < 0.35:  # same subject, left out in both languages
            s1 = c1.subj
            c2 = _verb_clause(r, _verbs_for(s1), p_neg=p_neg2, subj=s1, **kw)
        else:
            c2 = _verb_clause(r, VERBS, p_neg=p_neg2, **kw)
        c2.elide = c1.subj.same(c2.subj)
        tense = c1.tense
        if (c1.verb.no_future or c2.verb.no_future) and tense == "future":
            tense = "present"
        c1.tense = c2.tense = tense
        c1.freq = c2.freq = None
        if c2.obj is not None and c2.obj.pron is not None:
            me = c2.subj.person
            if me[0] in "12" and c2.obj.pron.person[0] == me[0]:
                raise _Reject
        for c in (c1, c2):
            if _past_is_ambiguous(c, c.subj.person):
                raise _Reject
        render = _render_verb
    en1, ko1, k_last = render(c1, conj, keys)
    en2, ko2, _ = render(c2, "decl", keys)
    return _finish(en1 + [(conj, k_last)] + en2, ko1 + ko2, ".")


CONSTRUCTIONS = ("transitive", "intransitive", "adjective", "weather", "yes_no", "wh",
                 "request", "careful", "and", "but")
_MAKERS = (
    (0.26, "transitive", _transitive),
    (0.12, "intransitive", _intransitive),
    (0.14, "adjective", _adjective),
    (0.04, "weather", _weather),
    (0.10, "yes_no", _yes_no),
    (0.07, "wh", _wh),
    (0.09, "request", _request),
    (0.01, "careful", _careful),
    (0.09, "and", lambda r: _compound(r, "and")),
    (0.08, "but", lambda r: _compound(r, "but")),
)
_BOUNDS: list[float] = []
_total = 0.0
for _weight, _, _ in _MAKERS:
    _total += _weight
    _BOUNDS.append(_total)


def _make(r: random.Random) -> tuple[str, Pair]:
    """One (construction name, pair); derivations the grammar rejects are redrawn."""
    while True:
        x = r.random() * _total
        i = 0
        while _BOUNDS[i] <= x and i < len(_BOUNDS) - 1:
            i += 1
        _, name, fn = _MAKERS[i]
        try:
            return name, fn(r)
        except _Reject:
            continue


def generate_tagged(n: int, seed: int = 0) -> list[tuple[str, Pair]]:
    """Like generate, with each pair's construction name (one of CONSTRUCTIONS)."""
    r = random.Random(seed)
    return [_make(r) for _ in range(n)]


def generate(n: int, seed: int = 0) -> list[Pair]:
    """n pairs, deterministic for (n, seed); the list may contain duplicates."""
    r = random.Random(seed)
    return [_make(r)[1] for _ in range(n)]


# ---------------------------------------------------------------------------- seed pairs


def _seed_pairs() -> list[Pair]:
    def noun(en: str, mass: bool = False) -> Noun:
        return _BY_EN[(en, mass)]

    def verb(en: str, ko: str) -> Verb:
        return next(v for v in VERBS if (v.en, v.ko) == (en, ko))

    def adj(en: str, ko: str) -> Adjective:
        return next(a for a in ADJECTIVES if (a.en, a.ko) == (en, ko))

    out = []
    # "Winter is cold." <-> "겨울은 추워요."
    c = _Clause()
    c.subj, c.adj = _NP(noun=noun("winter")), adj("cold", "춥다")
    en, ko, _ = _render_adj(c, "decl", _Keys())
    out.append(_finish(en, ko, "."))
    # "Please be careful of colds." <-> "감기 조심하세요."
    keys = _Keys()
    k = keys()
    out.append(_careful_of(_CAREFUL[0], [("please", k), ("be", k), ("careful", k)],
                           [(ko_imperative("조심하다"), k)], keys))
    # "Does the dog eat fish?" <-> "개가 생선을 먹어요?"
    c = _Clause()
    c.subj, c.verb, c.obj = _NP(noun=noun("dog")), verb("eat", "먹다"), _NP(noun("fish", True))
    en, ko, _ = _render_verb(c, "ynq", _Keys())
    out.append(_finish(en, ko, "?"))
    # "The big dog eats fish." <-> "큰 개가 생선을 먹어요."
    c.subj = _NP(noun=noun("dog"), adj=adj("big", "크다"))
    en, ko, _ = _render_verb(c, "decl", _Keys())
    out.append(_finish(en, ko, "."))
    # "Please read the book." <-> "책을 읽으세요."
    c = _Clause()
    c.verb, c.obj = verb("read", "읽다"), _NP(noun=noun("book"))
    en, ko, _ = _render_verb(c, "imp", _Keys())
    out.append(_finish(en, ko, "."))
    # "The children go to school." <-> "아이들이 학교에 가요."
    c = _Clause()
    c.subj, c.verb = _NP(noun=noun("child"), plural=True), verb("go", "가다")
    c.place = ("dir", noun("school", True))
    en, ko, _ = _render_verb(c, "decl", _Keys())
    out.append(_finish(en, ko, "."))
    # "Winter is cold but summer is hot." <-> "겨울은 춥지만 여름은 더워요."
    keys = _Keys()
    c1, c2 = _Clause(), _Clause()
    c1.subj, c1.adj = _NP(noun=noun("winter")), adj("cold", "춥다")
    c2.subj, c2.adj = _NP(noun=noun("summer")), adj("hot", "덥다")
    en1, ko1, k = _render_adj(c1, "but", keys)
    en2, ko2, _ = _render_adj(c2, "decl", keys)
    out.append(_finish(en1 + [("but", k)] + en2, ko1 + ko2, "."))
    return out


SEED_PAIRS: list[Pair] = _seed_pairs()


# -------------------------------------------------------------------------------- splits


def splits(seed: int = 0, n_train: int = 200_000, n_val: int = 2_000,
           n_test: int = 4_000) -> dict[str, list[Pair]]:
    """Deduplicated train / val / test lists; no English or Korean string is in two splits.

    Train is drawn first (SEED_PAIRS first of all), then val, then test, each from the same
    seeded stream and each skipping anything already taken. So every short, frequent sentence
    ("Please be careful.") lands in train, and val / test hold sentences the model never saw.
    The sizes are exact unless the grammar runs out of new pairs. The splits depend on all of
    (seed, n_train, n_val, n_test): pass the same values when evaluating.
    """
    r = random.Random(f"attention-lab-corpus-splits:{seed}")
    seen_en: set[str] = set()
    seen_ko: set[str] = set()
    out: dict[str, list[Pair]] = {}
    for name, size in (("train", n_train), ("val", n_val), ("test", n_test)):
        bucket: list[Pair] = []
        if name == "train":
            for p in SEED_PAIRS:
                if p.en not in seen_en and p.ko not in seen_ko:
                    seen_en.add(p.en)
                    seen_ko.add(p.ko)
                    bucket.append(p)
        misses = 0
        while len(bucket) < size and misses < 100_000:
            p = _make(r)[1]
            if p.en in seen_en or p.ko in seen_ko:
                misses += 1
                continue
            misses = 0
            seen_en.add(p.en)
            seen_ko.add(p.ko)
            bucket.append(p)
        out[name] = bucket
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
