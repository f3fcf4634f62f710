"""Every sentence a page says about a model comes from that model's facts (issue 54, item 2).

Every view and every tour step runs through AppTest on all-MiniLM-L6-v2 (checkpoints/minilm, a
BERT encoder: WordPiece, [CLS]/[SEP], pads with positions, the dtype's minimum as mask fill,
512 positions, trained for 256 pieces) and its page text must hold none of the translators'
words: SentencePiece, −1e9, nats, 511, translation. The lab's own `paper` must still say its
true facts (SentencePiece, −1e9), so the check can fail both ways. The notes on typed text
(Korean in an English vocabulary, past the trained length, cut at the position limit) are
checked against counts made here with the tokenizer itself.
"""

from __future__ import annotations

import json
import re

import pytest

from tests.app.conftest import run_app
from tests.conftest import ROOT, skip_or_fail
from ui.views import VIEWS
from ui.views.tour.steps import STEPS

MINILM = ROOT / "checkpoints" / "minilm"
PAPER = ROOT / "checkpoints" / "paper"
TEXT = "The cat sat on the mat.\nWinter is cold."  # two lengths: pad slots and blocked cells
# the translators' words, as they would be said about this model
# 511 as a number of its own: CI once found it inside an element's random hex id
# ('511eb2c3…' on the compare view), which says nothing about the model
FORBIDDEN = re.compile(r"sentencepiece|[−-]1e9|\bnats\b|(?<![\w.,])511(?![\w.,])|translation",
                       re.IGNORECASE)
# lines that may keep such a word because they are not about the model: the view bar's label
# of the translation view, the share link (view=translation), and attention entropy's unit
# (natural logarithm, for any model)
ALLOWED = (re.compile(r"^Translation$"), re.compile(r"^\?ckpt="),
           re.compile(r"entropy.*\(nats\)|\(nats\).*entropy"))
HOVER_KEYS = ("hovertemplate", "name", "title", "text")  # a trace's words; data arrays skipped


def figure_words(spec: dict, out: list[str]) -> None:
    """A plotly spec's own words: the layout (titles, axes, annotations), each trace's name,
    hover template and colour bar; never the data (tokens, sentences of a corpus)."""
    def walk(obj) -> None:
        if isinstance(obj, str):  # a title wrapped to its width is still one sentence
            out.append(obj.replace("<br>", " "))
        elif isinstance(obj, dict):
            for v in obj.values():
                walk(v)
        elif isinstance(obj, list) and all(isinstance(v, dict) for v in obj):
            for v in obj:  # annotations, shapes: lists of objects, not data arrays
                walk(v)

    walk(spec.get("layout", {}))
    for trace in spec.get("data", []):
        for key in HOVER_KEYS:
            if isinstance(trace.get(key), str):
                out.append(trace[key])
        walk(trace.get("colorbar", {}))
        walk((trace.get("marker") or {}).get("colorbar", {}))


def page_lines(at) -> list[str]:
    """Every line of text on the page: markdown, captions, notes, labels, chart words."""
    out: list[str] = []

    def strings(message) -> None:
        for desc, value in message.ListFields():
            if desc.name in ("id", "form_id", "widget_id", "key", "css_class", "url", "srcdoc",
                             "script", "type", "data"):
                continue
            single = isinstance(value, str | bytes | int | float) or hasattr(value, "ListFields")
            for v in [value] if single else list(value):
                if isinstance(v, str) and desc.name == "spec":
                    figure_words(json.loads(v), out)
                elif isinstance(v, str):
                    out.append(v)
                elif hasattr(v, "ListFields"):
                    strings(v)

    def walk(node) -> None:
        proto = getattr(node, "proto", None)
        if proto is not None and hasattr(proto, "ListFields"):
            strings(proto)
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at._tree)
    text = re.sub(r"\\(.)", r"\1", "\n".join(out))  # markdown escapes are not words
    return [line.strip() for line in text.splitlines() if line.strip()]


def offending(at) -> list[str]:
    return [line for line in page_lines(at) if FORBIDDEN.search(line)
            and not any(a.search(line) for a in ALLOWED)]


@pytest.fixture(scope="module")
def minilm():
    if not (MINILM / "config.json").is_file():
        skip_or_fail("checkpoints/minilm is not installed (make run or make test installs it)")
    return "minilm"


@pytest.mark.parametrize("view", [v for v in VIEWS if v != "tour"])
def test_no_view_speaks_the_translators_language(minilm, view):
    at = run_app({"ckpt": minilm, "text": TEXT, "view": view}, timeout=240)
    assert not at.exception, [e.value for e in at.exception]
    assert not offending(at), f"view={view} says: {offending(at)}"


@pytest.mark.parametrize("step", range(1, len(STEPS) + 1))
def test_no_tour_step_speaks_the_translators_language(minilm, step):
    at = run_app({"ckpt": minilm, "text": TEXT, "view": "tour", "step": str(step)},
                 timeout=240)
    assert not at.exception, [e.value for e in at.exception]
    assert not offending(at), f"tour step {step} says: {offending(at)}"


def test_the_lab_still_says_its_own_facts():
    """The same check on the paper translator finds its true words: the test can fail."""
    if not (PAPER / "config.json").is_file():
        skip_or_fail("the shipped paper checkpoint is not here")
    tokens = page_lines(run_app({"ckpt": "paper", "text": TEXT, "view": "tokens"}))
    assert any("SentencePiece" in line and "▁" in line for line in tokens)
    mask = page_lines(run_app({"ckpt": "paper", "text": TEXT, "view": "tour",
                               "step": str(list(STEPS).index("mask") + 1)}))
    assert any("-1e9" in line or "−1e9" in line for line in mask)
    masks = page_lines(run_app({"ckpt": "paper", "text": TEXT, "view": "masks"}))
    assert any("set to -1e9" in line for line in masks)


def test_minilm_pages_name_its_own_facts(minilm):
    """What the pages say instead comes from the folder's own files, read here directly."""
    config = json.loads((MINILM / "config.json").read_text())
    trained = json.loads((MINILM / "sentence_bert_config.json").read_text())["max_seq_length"]
    tokens = page_lines(run_app({"ckpt": minilm, "text": TEXT, "view": "tokens"}))
    assert any("WordPiece" in line and "[CLS]" in line and "[SEP]" in line for line in tokens)
    assert any("Token-type" in line for line in tokens)
    mask = page_lines(run_app({"ckpt": minilm, "text": TEXT, "view": "tour",
                               "step": str(list(STEPS).index("mask") + 1)}))
    assert any("dtype's minimum (-3.4e38)" in line for line in mask)  # float32's own minimum
    long_text = " ".join(["word"] * (config["max_position_embeddings"] + 40))
    notes = page_lines(run_app({"ckpt": minilm, "text": long_text, "view": "tokens"}))
    # [CLS] + 552 pieces + [SEP] = 554 > 512: 42 pieces cut, and the trained length exceeded
    cut = config["max_position_embeddings"] + 40 + 2 - config["max_position_embeddings"]
    assert any(f"{cut} piece(s) were cut to fit the model's "
               f"{config['max_position_embeddings']} positions" in line for line in notes)
    assert any(f"more than the {trained} pieces this model was trained on" in line
               for line in notes)


def test_korean_in_an_english_vocabulary_gets_a_note(minilm):
    """The note counts the pieces of the Korean line that are [UNK] or a single jamo."""
    from transformers import AutoTokenizer

    line = "겨울은 추워요."
    pieces = AutoTokenizer.from_pretrained(str(MINILM)).tokenize(line)
    lost = sum(p == "[UNK]" or bool(re.fullmatch(r"(##)?[\u1100-\u11ff\u3130-\u318f]", p))
               for p in pieces)
    assert lost > len(pieces) // 2  # the premise: this vocabulary has no Korean
    at = run_app({"ckpt": minilm, "text": f"The cat sat on the mat.\n{line}", "view": "tokens"})
    note = [w.value for w in at.warning if "has no Korean" in w.value]
    # + [CLS] and [SEP]: the line's pieces as the model reads them
    assert note and f"of the {len(pieces) + 2} pieces" in note[0] and f", {lost} are" in note[0]
    english = run_app({"ckpt": minilm, "view": "tokens"})  # no text in the link: the default
    assert not re.search(r"[\uac00-\ud7a3]", english.text_area[0].value)
    assert not [w.value for w in english.warning if "has no Korean" in w.value]


def test_minilm_steps_name_only_the_mask_it_has(minilm):
    """The steps view's mask sentence (viz.steps.mask_caption) on an encoder: no future keys,
    ever; on the longer line of TEXT nothing is blocked, on the shorter its padding keys. The
    longer line is found with the tokenizer here. The view said "pad keys, future positions"
    on every head before."""
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(MINILM))
    lines = TEXT.splitlines()
    lengths = [len(tok(line)["input_ids"]) for line in lines]
    at = run_app({"ckpt": minilm, "text": TEXT, "view": "steps"}, timeout=240)
    for b, n in enumerate(lengths):
        if b:  # the sidebar's "Sentence to inspect"
            at.selectbox(key="sentence").set_value(b).run(timeout=240)
        assert not at.exception, [e.value for e in at.exception]
        said = [line for line in page_lines(at) if line.startswith("Mask: ")]
        assert said and not any("future" in line for line in said), said
        want = ("Mask: no cell is blocked" if n == max(lengths) else "Mask: padding keys set")
        assert any(line.startswith(want) for line in said), (b, n, lengths, said)
