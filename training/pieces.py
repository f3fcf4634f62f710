"""The shared SentencePiece tokenizer, trained so that pieces look like words.

Three things are done to the training text, none to the text the model later reads:

* Korean particles are split off the nouns they follow (겨울은 -> 겨울 은), so the vocabulary
  holds ▁겨울 and never ▁겨울은; at encoding time "겨울은" becomes ▁겨울 + 은, as in seed 000.
* Every English sentence is also given with its first word lowercased and with every word
  capitalised, so ▁winter and ▁Winter are both frequent enough to be pieces.
* Every ASCII letter, digit and Hangul syllable the corpus uses is a required character, so
  nothing the grammar writes falls back to bytes.
"""

from __future__ import annotations

import io
import random
import re
import string
from collections import Counter
from collections.abc import Iterable, Sequence

import sentencepiece as spm

from model.backends.lab.tokenizer import SPM_TRAIN_OPTIONS, Tokenizer

from .lexicon import NOUNS, PRONOUNS, read_table

# longest first; the copula endings are split too, so ▁학생 is a piece rather than ▁학생이에요
PARTICLES = ("이었어요", "였어요", "이에요", "예요", "에서", "으로", "은", "는", "이", "가", "을",
             "를", "와", "과", "에", "로", "의", "들")
_KO_NOUNS = ({n.ko for n in NOUNS} | {p.ko for p in PRONOUNS} | {r[1] for r in read_table("names")}
             | {"이것", "그것", "사람"})


def split_particles(word: str) -> list[str]:
    """겨울은 -> [겨울, 은]; 아이들이 -> [아이, 들, 이]; words that are not noun+particle stay."""
    for p in PARTICLES:
        if word.endswith(p) and len(word) > len(p):
            stem = word[: -len(p)]
            if stem in _KO_NOUNS:
                return [stem, p]
            if stem.endswith("들") and stem[:-1] in _KO_NOUNS:
                return [stem[:-1], "들", p]
    return [word]


def _ko_line(text: str) -> str:
    out = []
    for w in text.split():
        core, punct = re.match(r"^(.*?)([.?!,]*)$", w).groups()
        out += split_particles(core) if core else []
        if punct:
            out.append(punct)
    return " ".join(out)


def _en_lines(text: str) -> list[str]:
    words = text.split()
    lower = " ".join([words[0][:1].lower() + words[0][1:], *words[1:]])
    title = " ".join(w[:1].upper() + w[1:] for w in words)
    return [text, lower, title]


def training_lines(en: Sequence[str], ko: Sequence[str], seed: int = 0) -> list[str]:
    """The tokenizer's training text: English with case variants, Korean with particles split."""
    lines = [v for s in en for v in _en_lines(s)] + [_ko_line(s) for s in ko]
    random.Random(seed).shuffle(lines)
    return lines


def required_chars(texts: Iterable[str]) -> str:
    """Every ASCII letter, digit and punctuation mark, and every Hangul syllable in texts."""
    chars = set(string.ascii_letters + string.digits + ".,?!'-")
    for t in texts:
        chars.update(c for c in t if "\uac00" <= c <= "\ud7a3")
    return "".join(sorted(chars))


def train_tokenizer(en: Sequence[str], ko: Sequence[str], vocab_size: int,
                    max_sentences: int = 2_000_000, model_type: str = "bpe") -> Tokenizer:
    """Train the shared unigram model in memory (pad 0, unk 1, bos 2, eos 3, tags, bytes)."""
    buf = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(training_lines(en, ko)),
        model_writer=buf,
        vocab_size=vocab_size,
        model_type=model_type,
        required_chars=required_chars(ko),
        input_sentence_size=max_sentences,
        split_digits=True,
        **SPM_TRAIN_OPTIONS,
    )
    return Tokenizer(buf.getvalue())


def one_piece_shares(tok: Tokenizer, en: Sequence[str], ko: Sequence[str], top: int = 500
                     ) -> dict[str, float]:
    """Share (%) of the `top` most frequent words that are a single piece: English lowercased,
    English capitalised, Korean nouns and stems with the particle split off (겨울 of 겨울은),
    and Korean words as written."""
    en_words = Counter(w.lower() for s in en for w in re.findall(r"[A-Za-z']+", s))
    ko_words = Counter(w.strip(".?!,") for s in ko for w in s.split())
    ko_stems = Counter(split_particles(w)[0] for w in ko_words.elements())

    def share(words: list[str]) -> float:
        return round(100 * sum(len(tok.pieces(w)) == 1 for w in words) / max(len(words), 1), 1)

    top_en = [w for w, _ in en_words.most_common(top)]
    return {
        "en_lower": share(top_en),
        "en_capitalised": share([w[:1].upper() + w[1:] for w in top_en]),
        "ko_stems": share([w for w, _ in ko_stems.most_common(top)]),
        "ko_words": share([w for w, _ in ko_words.most_common(top)]),
    }
