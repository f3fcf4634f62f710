"""The lexicon, read from the data files in training/data/ (tab-separated, # comments).

Each file row is one entry with both languages; the grammar only reads these tables, so words
are added by editing data, not code. Noun tags say which verbs and adjectives may take a noun
(selectional restrictions); see the header comment of each file for its columns.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from .hangul import TENSES, en_past, en_plural, en_third_person, ko_attributive

DATA = Path(__file__).with_name("data")


@cache
def read_table(name: str) -> tuple[tuple[str, ...], ...]:
    """Rows of data/<name>.tsv: tab-separated cells, stripped; blank and # lines skipped."""
    rows = []
    for line in (DATA / f"{name}.tsv").read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        rows.append(tuple(c.strip() for c in line.split("\t")))
    return tuple(rows)


def read_pairs(name: str) -> list[tuple[str, str]]:
    """(English, Korean) from the first two columns of data/<name>.tsv."""
    return [(r[0], r[1]) for r in read_table(name)]


def _cell(row: tuple[str, ...], i: int) -> str:
    return row[i] if i < len(row) else ""


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
            if self.pl_toks == self.toks:  # sheep, squid: the plural would need a second Korean
                self.pl_toks = None
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


def _load_nouns() -> list[Noun]:
    """nouns.tsv, nouns_everyday.tsv, nouns_textbook.tsv: en, ko, tags, plural ('' regular,
    '-' none)."""
    return [Noun(r[0], r[1], _cell(r, 2), _cell(r, 3))
            for name in ("nouns", "nouns_everyday", "nouns_textbook") for r in read_table(name)]


NOUNS = _load_nouns()


class Pronoun:
    __slots__ = ("en", "en_obj", "ko", "person")

    def __init__(self, en: str, en_obj: str, ko: str, person: str) -> None:
        self.en, self.en_obj, self.ko, self.person = en, en_obj, ko, person

    def __repr__(self) -> str:
        return f"Pronoun({self.en!r}, {self.ko!r})"


# person: 1s, 2, 1p, 3s, 3p (agreement class). "you" is 당신 (singular reading only); questions
# to "you" drop it (render.drops_subject).
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



_VERB_FLAGS = ("intr", "motion", "imp", "no_future", "arrive", "need_loc")


def _load_verbs() -> list[Verb]:
    """verbs.tsv: en, ko, subj, obj, past, obj_animal, loc, comp, tool, manner, flags, neg_ko."""
    out = []
    for r in read_table("verbs") + read_table("verbs_textbook"):
        flags = set(_cell(r, 10).split())
        out.append(Verb(r[0], r[1], r[2], _cell(r, 3), past=_cell(r, 4) or None,
                        obj_animal=_cell(r, 5), loc=_cell(r, 6), comp=_cell(r, 7),
                        tool=_cell(r, 8), manner=_cell(r, 9), neg_ko=_cell(r, 11) or None,
                        **{f: True for f in _VERB_FLAGS if f in flags}))
    return out


VERBS = _load_verbs()


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



def _load_adjectives() -> list[Adjective]:
    """adjectives.tsv: en, ko, noun tags, flags (noattr nopred state imp)."""
    out = []
    for r in read_table("adjectives") + read_table("adjectives_textbook"):
        flags = set(_cell(r, 3).split())
        out.append(Adjective(r[0], r[1], r[2], attr="noattr" not in flags,
                             pred="nopred" not in flags, state="state" in flags,
                             imp="imp" in flags))
    return out


ADJECTIVES = _load_adjectives()

# Weather: "It is cold today." <-> "오늘은 추워요."; "It rains." <-> "비가 와요."
WEATHER_ADJECTIVES = [(r[1], r[3]) for r in read_table("weather") if r[0] == "adjective"]
# (English verb or adjective, is an English adjective, Korean noun, Korean verb)
WEATHER_VERBS = [(r[1], r[0] == "noun_adjective", r[2], r[3]) for r in read_table("weather")
                 if r[0] in ("verb", "noun_adjective")]
# "The weather is nice today." <-> "오늘 날씨가 좋아요." (English adjective, Korean lemma)
WEATHER_STATES = [(r[1], r[3]) for r in read_table("weather") if r[0] == "state"]

# (English words, Korean words, tenses, usable in weather sentences)
TIME_WORDS = [(tuple(r[0].split()), tuple(r[1].split()), tuple(r[2].split()), r[3] == "1")
              for r in read_table("time_words")]

FREQUENCY_ADVERBS = [(r[1], r[2]) for r in read_table("adverbs") if r[0] == "frequency"]
MANNER_ADVERBS = {r[1]: r[2] for r in read_table("adverbs") if r[0] == "manner"}
INTENSIFIERS = [(r[1], r[2]) for r in read_table("adverbs") if r[0] == "intensifier"]

# "Please be careful of colds." <-> "감기 조심하세요."; (noun, English phrase)
CAREFUL = read_pairs("careful")

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


# --------------------------------------------------------------- selection tables (derived)

PLACES = [n for n in NOUNS if "place" in n.tags]
VEHICLES = [n for n in NOUNS if "vehicle" in n.tags]
_GENERAL = [n for n in NOUNS if not n.tags & {"hazard"}]
BY_EN = {(n.en, "place" in n.tags or "mass" in n.tags): n for n in NOUNS}


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
        v.places = _with_tags(PLACES, v.loc) if v.loc else []
        if v.arrive:
            v.places = [p for p in PLACES if p.tags & {"p_bld", "p_city"}]
        v.tools = _with_tags(NOUNS, frozenset([v.tool])) if v.tool else []
        v.comps = [n for n in _with_tags(_GENERAL, v.comp) if "family" not in n.tags]
    for a in ADJECTIVES:
        a.pred_nouns = _with_tags(_GENERAL, a.tags) if a.pred else []
        a.attr_nouns = _with_tags(_GENERAL, a.tags) if a.attr else []
        a.pron = bool(a.tags & {"person", "adult", "kid"})


_prepare()

ATTR_FOR: dict[int, list[Adjective]] = {id(n): [] for n in NOUNS}
for _a in ADJECTIVES:
    for _n in _a.attr_nouns:
        ATTR_FOR[id(_n)].append(_a)
PRED_ADJ = [a for a in ADJECTIVES if a.pred]
PRON_ADJ = [a for a in ADJECTIVES if a.pred and a.pron]
STATE_ADJ = [a for a in ADJECTIVES if a.pred and a.state]
TRANSITIVE = [v for v in VERBS if v.obj]
INTRANSITIVE = [v for v in VERBS if v.intr]
WH_OBJ = [v for v in TRANSITIVE if v.wh and v.pron_subj]
WH_WHERE = [v for v in VERBS if v.wh and v.pron_subj and (v.places or v.motion)]
WH_WHO = [v for v in VERBS if v.wh and "person" in v.subj]
REQUEST = [v for v in VERBS if v.imp]
TIMES_BY_TENSE = {t: [w for w in TIME_WORDS if t in w[2]] for t in TENSES}
WEATHER_TIMES = {t: [w for w in TIME_WORDS if t in w[2] and w[3]] for t in TENSES}
REQUEST_TIMES = [w for w in TIME_WORDS if w[0] in (("today",), ("tomorrow",), ("every", "day"))]
COPULA = {("present", "1s"): "am", ("present", "3s"): "is", ("past", "1s"): "was",
           ("past", "3s"): "was"}

