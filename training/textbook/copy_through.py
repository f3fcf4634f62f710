"""Copy-through: a noun the model never learned is carried over unchanged (issue 42).

A newcomer types words outside the lexicon ("I like Minecraft."). Rather than invent a
translation for them, the model should say less: copy the unknown noun through and translate
the frame around it. These pairs teach that with made-up nouns, so no real word is ever given
a wrong meaning:

* a made-up Latin noun (blorvit) stays Latin in Korean, with the particle a Korean reader
  would pick for it: after a final vowel letter (a e i o u y) the vowel forms (를, 가, 는,
  예요), after any other letter the consonant forms (을, 이, 은, 이에요);
* a made-up Hangul noun (뚜미라) stays Hangul in English, with no article.

The frames are the plainest of the first lessons: like, want, have, "Please give me ..." and
"This is ...". Every made-up word is kept in MADE_UP so that the corpus word list (the
out-of-lexicon notice) never counts one as known.
"""

from __future__ import annotations

import random

from ..hangul import has_batchim
from ..lexicon import NOUNS
from ..render import Keys, Pair, finish

_LATIN_ON = "b d f g k l m n p r s t v z br gl pl tr sn kr".split()
_LATIN_NUCLEUS = "a e i o u".split()
_LATIN_CODA = ["", "", "n", "k", "t", "l", "m", "x", "s", "p"]
# Hangul syllables the corpus already writes, so they are pieces of the shared tokenizer
_SYLLABLES = sorted({ch for n in NOUNS for ch in n.ko if "가" <= ch <= "힣"})
_KNOWN = frozenset(w for n in NOUNS for w in (n.en.lower(), n.ko))
MADE_UP: set[str] = set()


def latin_word(r: random.Random) -> str:
    """A pronounceable made-up Latin noun of two or three syllables (blorvit, tamex)."""
    while True:
        parts = [pick(r, _LATIN_ON) + pick(r, _LATIN_NUCLEUS) for _ in range(r.choice((2, 3)))]
        word = "".join(parts) + pick(r, _LATIN_CODA)
        if word not in _KNOWN:
            MADE_UP.add(word)
            return word


def hangul_word(r: random.Random) -> str:
    """A made-up Hangul noun of two or three syllables the lexicon lacks."""
    while True:
        word = "".join(pick(r, _SYLLABLES) for _ in range(r.choice((2, 3))))
        if word not in _KNOWN:
            MADE_UP.add(word)
            return word


def pick(r: random.Random, seq):
    """One element, drawn with r."""
    return seq[r.randrange(len(seq))]


def latin_particle(word: str, kind: str) -> str:
    """The particle after a Latin word: the vowel forms after a final vowel letter."""
    vowel = word[-1] in "aeiouy"
    forms = {"object": ("를", "을"), "subject": ("가", "이"), "topic": ("는", "은"),
             "copula": ("예요", "이에요")}[kind]
    return word + forms[0 if vowel else 1]


def ko_particle(word: str, kind: str) -> str:
    """The particle after a Hangul word, copula included."""
    if kind == "copula":
        return word + ("이에요" if has_batchim(word) else "예요")
    from ..hangul import particle

    return particle(word, kind)


# frames: (English before, English after the noun, Korean before, particle kind, Korean after)
_FRAMES = (
    (("I", "like"), (), ("저는",), "object", ("좋아해요",)),
    (("I", "want"), (), ("저는",), "object", ("원해요",)),
    (("I", "have"), (), ("저는",), "subject", ("있어요",)),
    (("I", "do", "not", "have"), (), ("저는",), "subject", ("없어요",)),
    (("please", "give", "me"), (), (), "", ("주세요",)),
    (("this", "is"), (), ("이것은",), "copula", ()),
    (("she", "likes"), (), ("그녀는",), "object", ("좋아해요",)),
    (("he", "bought"), (), ("그는",), "object", ("샀어요",)),
)


def copy_noun(r: random.Random) -> Pair:
    """저는 blorvit을 좋아해요. <-> I like blorvit. / 저는 뚜미라를 좋아해요. <-> I like 뚜미라."""
    keys = Keys()
    latin = r.random() < 0.5
    word = latin_word(r) if latin else hangul_word(r)
    en_pre, en_post, ko_pre, kind, ko_post = pick(r, _FRAMES)
    kf, kn = keys(), keys()
    with_particle = (latin_particle if latin else ko_particle)(word, kind) if kind else word
    en = [(w, kf) for w in en_pre] + [(word, kn)] + [(w, kf) for w in en_post]
    ko = [(w, kf) for w in ko_pre] + [(with_particle, kn)] + [(w, kf) for w in ko_post]
    return finish(en, ko, ".")


MAKERS = ((1.0, "copy_noun", copy_noun),)
DESCRIPTIONS = {
    "copy_noun": (
        "An unknown noun is copied through unchanged (I like blorvit. <-> 저는 blorvit을 "
        "좋아해요.; made-up nouns, so no real word gets a meaning)",
        "모르는 명사는 그대로 옮김 (저는 blorvit을 좋아해요. <-> I like blorvit.; 지어낸 명사)"),
}
