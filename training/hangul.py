"""Hangul arithmetic, Korean conjugation (해요체) and English inflection for the grammar.

Pure standard library. Syllables are split and joined arithmetically (U+AC00 + 588 initial +
28 vowel + final), so particles and endings follow the final consonant without any table.
"""

from __future__ import annotations

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
           "맵다 더럽다 어둡다 가깝다 부드럽다 외롭다 시끄럽다 즐겁다 고맙다 무섭다").split():
    _IRREGULAR[_w] = "b"  # ㅂ -> 우/오: 추워요, 도와요
for _w in ("듣다", "걷다", "묻다", "싣다"):
    _IRREGULAR[_w] = "d"  # ㄷ -> ㄹ before a vowel: 들어요
for _w in ("짓다", "낫다", "붓다"):
    _IRREGULAR[_w] = "s"  # ㅅ drops before a vowel: 지어요
for _w in ("빨갛다", "노랗다", "파랗다", "하얗다", "까맣다", "그렇다"):
    _IRREGULAR[_w] = "h"  # ㅎ drops, vowel -> ㅐ: 빨개요, 빨간

TENSES = ("present", "past", "future")
_ENDINGS = ("final", "and", "but", "request")


def lemma_stem(lemma: str) -> str:
    if len(lemma) < 2 or lemma[-1] != "다":
        raise ValueError(f"{lemma!r} is not a dictionary form ending in 다")
    return lemma[:-1]


def _open(initial: int, vowel: int) -> str:
    return _join(initial, vowel, 0)


def infinitive(lemma: str) -> str:
    """The 아/어 form: 먹어, 가, 해, 추워, 몰라, 들어, 지어, 빨개, 써, 봐, 배워, 마셔."""
    stem = lemma_stem(lemma)
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


def prospective(lemma: str) -> str:
    """The -(으)ㄹ form before 거예요: 먹을, 갈, 만들, 추울, 들을, 지을, 빨갈."""
    stem = lemma_stem(lemma)
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
    stem = lemma_stem(lemma)
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
    stem = lemma_stem(lemma)
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


_F_BIEUP = 17  # final ㅂ
_DROPS_RIEUL = ("ㄴ", "ㅅ", "니", "세", "시", "셨", "십", "신", "는")  # ㄹ drops before these


def eu_form(lemma: str, tail: str) -> str:
    """Stem + an ending that takes 으 after a consonant: -(으)면, -(으)니까, -(으)러, -(으)려고,
    -(으)세요, -(으)셨어요 ... (tail without the 으: "면", "니까", "러", "려고", "세요").

    먹으면, 가면, 만들면 but 만드니까 / 만드세요 (ㄹ drops before ㄴ, ㅅ), 추우면, 들으면, 지으면,
    빨가면.
    """
    stem = lemma_stem(lemma)
    head, last = stem[:-1], stem[-1]
    ini, vow, fin = _split(last)
    kind = _IRREGULAR.get(lemma)
    if kind == "b":
        return head + _open(ini, vow) + "우" + tail
    if kind == "d":
        return head + _join(ini, vow, _F_RIEUL) + "으" + tail
    if kind == "s":
        return head + _open(ini, vow) + "으" + tail
    if kind == "h" or fin == 0:
        return head + _open(ini, vow) + tail
    if fin == _F_RIEUL:
        return (head + _open(ini, vow) + tail) if tail.startswith(_DROPS_RIEUL) else stem + tail
    return stem + "으" + tail


def ko_propose(lemma: str) -> str:
    """-(으)ㅂ시다 (let's): 갑시다, 먹읍시다, 만듭시다, 도웁시다, 들읍시다."""
    stem = lemma_stem(lemma)
    head, last = stem[:-1], stem[-1]
    ini, vow, fin = _split(last)
    kind = _IRREGULAR.get(lemma)
    if kind == "b":
        return head + _open(ini, vow) + "웁시다"
    if kind == "d":
        return head + _join(ini, vow, _F_RIEUL) + "읍시다"
    if kind == "s":
        return head + _open(ini, vow) + "읍시다"
    if fin in (0, _F_RIEUL) or kind == "h":
        return head + _join(ini, vow, _F_BIEUP) + "시다"
    return stem + "읍시다"


def ko_present_attributive(lemma: str) -> str:
    """Present attributive of a verb (-는 + noun): 먹는, 가는, 만드는 (ㄹ drops), 듣는."""
    stem = lemma_stem(lemma)
    head, last = stem[:-1], stem[-1]
    ini, vow, fin = _split(last)
    if fin == _F_RIEUL:
        return head + _open(ini, vow) + "는"
    return stem + "는"


def past_stem(lemma: str) -> str:
    """The past stem before -어요 / -지만 / -고: 먹었, 갔, 했, 추웠, 몰랐."""
    inf = infinitive(lemma)
    ini, vow, _ = _split(inf[-1])
    return inf[:-1] + _join(ini, vow, _F_SSANG_SIOT)


# Other first-year endings are compositions of the forms above (no new rule needed):
#   -(으)ㄹ까요 / -(으)ㄹ게요 / -(으)ㄹ 때   prospective(l) + "까요" / "게요" / " 때"
#   -(으)ㄴ 후에 (verbs)              ko_attributive(l) + " 후에"  (먹은, 간, 만든, 들은)
#   -아/어서, -아/어야 해요, -아/어도 돼요  infinitive(l) + "서" / "야 해요" / "도 돼요"
#   -지 않아요, -지 못해요, -기 전에, -고   lemma_stem(l) + "지 않아요" / "지 못해요" / "기 전에"


_WORDS_CACHE: dict[tuple[str, str, bool, str], tuple[str, ...]] = {}


def pred_words(lemma: str, tense: str, negated: bool, ending: str) -> tuple[str, ...]:
    """The Korean predicate as words; cached, since the lexicon is small."""
    key = (lemma, tense, negated, ending)
    words = _WORDS_CACHE.get(key)
    if words is not None:
        return words
    if tense not in TENSES:
        raise ValueError(f"tense must be one of {TENSES}, not {tense!r}")
    if ending not in _ENDINGS:
        raise ValueError(f"ending must be one of {_ENDINGS}, not {ending!r}")
    stem = lemma_stem(lemma)
    inf = infinitive(lemma)
    past = past_stem(lemma)  # 먹었, 갔, 했
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
                 "future": (prospective(lemma), "거지만")}[tense]
    else:
        words = {"present": (inf + "요",), "past": (past + "어요",),
                 "future": (prospective(lemma), "거예요")}[tense]
    _WORDS_CACHE[key] = words
    return words


def conjugate_ko(lemma: str, tense: str = "present", negated: bool = False,
                 ending: str = "final") -> str:
    """Polite (해요체) form of a verb or adjective given in dictionary form.

    tense: present / past / future; ending: "final" (sentence end: 먹어요, 먹었어요, 먹을 거예요),
    "and" (-고; the tense shows on the last clause), "but" (-지만: 먹지만, 먹었지만, 먹을 거지만)
    or "request" (-(으)세요 / -지 마세요; tense ignored). negated uses -지 않- (or -지 마세요).
    """
    return " ".join(pred_words(lemma, tense, negated, ending))


# ---------------------------------------------------------------------- English morphology

_EN_S_IRREGULAR = {"go": "goes", "do": "does", "have": "has"}


def _add_s(word: str) -> str:
    """The regular -s ending (third person and plural alike): box -> boxes, city -> cities."""
    if word.endswith(("s", "x", "z", "ch", "sh")):
        return word + "es"
    if word.endswith("y") and word[-2:-1] not in "aeiou":
        return word[:-1] + "ies"
    return word + "s"


def en_third_person(base: str) -> str:
    """eat -> eats, watch -> watches, study -> studies, go -> goes."""
    return _EN_S_IRREGULAR.get(base) or _add_s(base)


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
    return _EN_PLURAL_IRREGULAR.get(noun) or _add_s(noun)

