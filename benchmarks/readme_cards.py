"""The README's model-quality blocks, rendered from the shipped cards
(checkpoints/NAME/card.json) rather than from results.json: checkpoints, alignment,
tokenizer(s), examples, the textbook sets."""

from __future__ import annotations

from benchmarks.common import ROOT
from benchmarks.readme_results import MissingResult, part, provenance

# These renderers read checkpoints/NAME/card.json, written by training and evaluation; the
# results dict is not used.

CARDS = ("paper", "seed001")
VARIANTS = {"paper": "post-LN, sinusoidal, ReLU (the paper, seeds 000/004)",
            "seed001": "pre-LN + final LN, learned positions, GELU (seed 001)"}


def _cards() -> dict[str, dict]:
    import json

    found = {}
    for name in CARDS:
        path = ROOT / "checkpoints" / name / "card.json"
        if not path.is_file():
            raise MissingResult(f"{path} is missing")
        found[name] = json.loads(path.read_text(encoding="utf-8"))
    return found


def _pct(x: float) -> str:
    return f"{x:g} %"


def _legs(card: dict) -> str:
    """Steps and minutes of each training leg, earliest first: a warm-started card names the
    weights it began from (card.warm_start, nested), so the chain reads 3,572 → 2,800 → …"""
    legs, node = [(card["steps"], card["train_wall_time_s"])], card.get("warm_start")
    while node and "steps" in node:
        legs.append((node["steps"], node["train_wall_time_s"]))
        node = node.get("warm_start")
    legs.reverse()
    return (" → ".join(f"{s:,}" for s, _ in legs) + " steps, "
            + " + ".join(f"{t / 60:.0f}" for _, t in legs) + " min")


def block_checkpoints(results: dict) -> str:
    """The shipped checkpoints' quality table, from their cards."""
    rows = ["| checkpoint | variant | test en→ko exact / chrF | test ko→en exact / chrF | everyday "
            "en→ko | everyday ko→en | best cross head (alignment) | steps, training time |",
            "|---|---|---|---|---|---|---|---|"]
    params = []
    for name, card in _cards().items():
        m = card["metrics"]
        ev, best = m["everyday"], m["best_alignment_head"]
        cells = [f"{_pct(d['exact_match'])} / {d['chrf']:.2f}"
                 for d in (m["en->ko"], m["ko->en"], ev["en->ko"], ev["ko->en"])]
        rows.append(f"| `{name}` | {VARIANTS.get(name, card.get('variant', ''))} | "
                    + " | ".join(cells) + f" | layer {best['layer']} head {best['head']}: "
                    f"{_pct(best['agreement'])} | {_legs(card)} |")
        params.append(f"`{name}` {card['parameters'] / 1e6:.2f} M")
    return ("\n".join(rows) + "\n\nParameters: " + ", ".join(params) + " (from each "
            "`checkpoints/NAME/card.json`).")


def block_alignment(results: dict) -> str:
    """Best head by α vs by ‖αf(x)‖ per layer, from the cards' two per-head tables."""
    import numpy as np

    from training.alignment_table import HEADER, card_tables, layer_rows

    rows, diffs, drops = [HEADER], [], []
    for name, card in _cards().items():
        tables = card_tables(card)
        if tables is None:
            raise MissingResult(f"checkpoints/{name}/card.json lacks an alignment table")
        alpha, norms = tables
        rows += layer_rows(name, alpha, norms)
        # from the rounded figures the table shows, so the sentence agrees with the rows
        shown = np.vectorize(lambda x: float(f"{100 * x:.1f}"))  # as layer_rows prints it
        diffs += list(shown(norms.max(1)) - shown(alpha.max(1)))
        drops += list(shown(alpha.mean(1)) - shown(norms.mean(1)))
    lo, hi = min(diffs), max(diffs)
    said = (f"The claim does not hold here: the best head by ‖αf(x)‖ is within {lo:+.1f} to "
            f"{hi:+.1f} points of the best head by α, and the mean over heads drops by "
            f"{min(drops):.1f} to {max(drops):.1f} points.").replace("-", "−")
    return "\n".join(rows) + "\n\n" + said


def block_tokenizer(results: dict) -> str:
    """The shipped tokenizer's one-piece shares (the same file for both cards)."""
    shares = [c["tokenizer"]["one_piece_share_top500"] for c in _cards().values()]
    if any(s != shares[0] for s in shares):
        raise ValueError("the shipped checkpoints' tokenizer figures differ")
    s = shares[0]
    return (f"The tokenizer: {_pct(s['en_lower'])} of the 500 most frequent English words are one "
            f"piece in lower case and {_pct(s['en_capitalised'])} capitalised (`▁winter`, "
            f"`▁Winter`), {_pct(s['ko_stems'])} of the 500 most frequent Korean nouns and stems "
            f"once the particle is split off (`▁겨울` of 겨울은; {_pct(s['ko_words'])} of Korean "
            "words as written, since particles and copula endings are pieces of their own: `▁겨울 "
            "은`, `▁학생 이에요`), from the cards' `tokenizer` figures.")


def block_tokenizers(results: dict) -> str:
    """The tokenizer sizes compared on the shipped training split (bench_tokenizers.sizes)."""
    key = "bench_tokenizers.sizes"
    r = part(results, key)
    shipped = r["shipped"]
    # results.json sorts its keys; the table reads unigram first, then BPE by size
    toks = dict(sorted(r["tokenizers"].items(),
                       key=lambda kv: (kv[1]["model_type"] != "unigram", kv[1]["vocab_asked"])))
    cols = ("en_lower", "en_capitalised", "ko_stems", "ko_words")
    rows = ["| tokenizer | English lower | English capitalised | Korean nouns/stems | Korean "
            "words as written | pieces per sentence (en / ko) | `겨울은 추워요.` |",
            "|---|---|---|---|---|---|---|"]
    for name, t in toks.items():
        asked, got = t["vocab_asked"], t["vocab_size"]
        label = (f"unigram, {asked:,} asked" + (f" (stops at {got:,})" if got < asked else "")
                 if t["model_type"] == "unigram" else f"BPE {asked:,}")
        if name == shipped:
            label = f"**{label} (shipped)**"
        s, p = t["one_piece_share_top500"], t["pieces_per_sentence"]
        rows.append(f"| {label} | " + " | ".join(_pct(s[c]) for c in cols)
                    + f" | {p['en']:.1f} / {p['ko']:.1f} | `{t['example']}` |")
    said = []
    for t in toks.values():
        if t["model_type"] == "unigram" and t["vocab_size"] < t["vocab_asked"]:
            ko = [w.lstrip("▁") for w in t["example"].split()]
            single = all(len(w) <= 1 for w in ko)
            said.append(f"The unigram trainer stops at {t['vocab_size']:,} of the "
                        f"{t['vocab_asked']:,} pieces asked on this text"
                        + (" and leaves `겨울은 추워요.` in single syllables." if single else "."))
    bpe = sorted((t["vocab_asked"], n) for n, t in toks.items() if t["model_type"] == "bpe")
    full = [size for size, n in bpe if toks[n]["one_piece_share_top500"]["ko_stems"] >= 100]
    said.append(f"Of the BPE sizes tried, {full[0]:,} is the smallest at which every one of the "
                "500 most frequent Korean nouns and stems is one piece." if full else
                "No BPE size tried makes every frequent Korean noun and stem one piece.")
    base = toks[shipped]
    for size, n in bpe:
        if size <= base["vocab_asked"]:
            continue
        gains = [f"{toks[n]['one_piece_share_top500'][c] - base['one_piece_share_top500'][c]:+.1f}"
                 f" points {what}" for c, what in zip(cols, ("English lower case",
                                                             "English capitalised",
                                                             "Korean nouns/stems",
                                                             "Korean words"), strict=True)
                 if toks[n]["one_piece_share_top500"][c] != base["one_piece_share_top500"][c]]
        said.append(f"BPE {size:,} against the shipped {base['vocab_asked']:,}: "
                    + (", ".join(gains) if gains else "no share changes")
                    + f", for {100 * (size / base['vocab_asked'] - 1):.0f} % more output-layer "
                    "rows.")
    same = r["same_pieces_as_shipped"]
    card = r["shipped_card"]["one_piece_share_top500"]
    if same and base["one_piece_share_top500"] != card:
        # the same pieces on the same split must give the card's figures: a measuring bug
        raise ValueError(f"{key}: the shipped row's shares {base['one_piece_share_top500']} "
                         f"differ from the card's {card} although the pieces are the same")
    said.append((f"The BPE {base['vocab_asked']:,} trained here holds the same pieces, in the "
                 "same order, as the shipped `checkpoints/paper/tokenizer.model`" if same else
                 f"The BPE {base['vocab_asked']:,} trained here differs from the shipped "
                 "`checkpoints/paper/tokenizer.model`")
                + "; the cards' `tokenizer` figures for the shipped one are "
                + " / ".join(_pct(card[c]) for c in cols) + f" (`{key}`).")
    head = (f"Measured on the shipped cards' training split "
            f"({r['train_pairs']:,} pairs, corpus seed {r['corpus_seed']}; the "
            "shipped tokenizer itself was trained on an earlier leg's split), each candidate "
            "trained by `pieces.train_tokenizer` and measured by `pieces.one_piece_shares` as "
            f"training measures the card ({provenance(results, key)}); share of the 500 most "
            "frequent words that are one piece, and mean pieces per training sentence:")
    return head + "\n\n" + "\n".join(rows) + "\n\n" + " ".join(said)


def block_examples(results: dict) -> str:
    """How many of the seed sentences and the learner's first sentences each card gets exactly
    right (metrics.seed_pairs, metrics.everyday_examples)."""
    parts = []
    for what, key in (("the seed sentences", "seed_pairs"),
                      ("the learner's first sentences", "everyday_examples")):
        counts = []
        for name, card in _cards().items():
            rows = card["metrics"][key]
            counts.append(f"{sum(bool(r['exact']) for r in rows)} of {len(rows)} for `{name}`")
        parts.append(f"{what}: " + ", ".join(counts))
    return "Exactly right, from the cards: " + "; ".join(parts) + "."


def block_textbook(results: dict) -> str:
    """The hand-written first-year textbook sentences and the issue's seven sentences, per
    card (card.textbook, written by python -m training.textbook_eval --write)."""
    cards = _cards()
    areas = sorted({a for card in cards.values() for a in card["textbook"]["areas"]})
    head = ["| checkpoint | en→ko exact / chrF | ko→en exact / chrF | "
            + " | ".join(f"{a} (en→ko / ko→en chrF)" for a in areas)
            + " | the issue's seven |",
            "|---|---|---|" + "---|" * len(areas) + "---|"]
    for name, card in cards.items():
        tb = card["textbook"]
        cells = [f"{d['exact']} of {d['n']} / {d['chrf']:.1f}"
                 for d in (tb["directions"]["en-ko"], tb["directions"]["ko-en"])]
        cells += [" / ".join(f"{tb['areas'][a][d]['chrf']:.1f}" if d in tb["areas"][a] else "–"
                             for d in ("en-ko", "ko-en")) for a in areas]
        seven = tb["issue_sentences"]
        cells.append(f"{sum(bool(x['exact']) for x in seven)} of {len(seven)}")
        head.append(f"| `{name}` | " + " | ".join(cells) + " |")
    n = {d: card["textbook"]["directions"][d]["n"] for d in ("en-ko", "ko-en")
         for card in list(cards.values())[:1]}
    conf = "; ".join(
        f"`{name}` flags below {c['confidence']['threshold']:g}, AUROC {ev['auroc']:g} on "
        f"{ev['sentences']} sentences outside the grammar ({ev['exact']} exact)"
        for name, c in cards.items() for ev in [c["confidence"]["evaluation"]])
    return ("\n".join(head) + f"\n\nOn {n['en-ko']} English and {n['ko-en']} Korean sentences "
            "written by hand per chapter (`tests/data/textbook_*.tsv`), which the corpus never "
            "draws into any split (`corpus.held_out`; a test checks); from each "
            "`checkpoints/NAME/card.json` (`textbook`). "
            f"`Translation.confidence` (card `confidence`): {conf}.")


def block_newcomer(results: dict) -> str:
    """What newcomers type (issue 42): the hand-written glue and out-of-grammar sets, the
    confidence's AUROC there and the issue's six sentences, per card (card.newcomer, written by
    python -m training.newcomer_eval --write)."""
    cards = _cards()
    head = ["| checkpoint | glue en→ko exact / chrF | glue ko→en exact / chrF "
            "| outside the grammar en→ko / ko→en chrF | confidence AUROC: outside the grammar "
            "/ both sets | the issue's six | test split, constructions before issue 42: "
            "en→ko / ko→en exact |",
            "|---|---|---|---|---|---|---|"]
    for name, card in cards.items():
        nc = card["newcomer"]
        glue, oog = nc["sets"]["glue"], nc["sets"]["oog"]
        cells = [f"{glue[d]['exact']} of {glue[d]['n']} / {glue[d]['chrf']:.1f}"
                 for d in ("en-ko", "ko-en")]
        cells.append(f"{oog['en-ko']['chrf']:.1f} / {oog['ko-en']['chrf']:.1f}")
        cells.append(f"{nc['auroc']['oog']:.3f} / {nc['auroc']['both']:.3f}")
        six = nc["issue_sentences"]
        cells.append(f"{sum(bool(x['exact']) for x in six)} of {len(six)}")
        before = card["metrics"]["areas"]["before_42"]  # every shipped card has it (test_shipped)
        cells.append(" / ".join(_pct(before[d]["exact_match"]) for d in ("en->ko", "ko->en")))
        head.append(f"| `{name}` | " + " | ".join(cells) + " |")
    n = {k: sum(v["n"] for v in cards["paper"]["newcomer"]["sets"][k].values())
         for k in ("glue", "oog")}
    return ("\n".join(head) + f"\n\nOn {n['glue']} glue sentences and {n['oog']} sentences "
            "outside the grammar, both directions, written by hand (`tests/data/newcomer_*.tsv`) "
            "and never drawn into any split (`corpus.held_out`); from each "
            "`checkpoints/NAME/card.json` (`newcomer`, `metrics.areas`).")
