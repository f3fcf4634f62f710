"""A checkpoint on the first-year textbook sentences and on the issue's seven sentences.

The sentences are hand-written per chapter in tests/data/textbook_<area>.tsv (direction,
source, reference, construction) and never drawn from the grammar; a test checks that none is
in the training split. This reports exact match and chrF per direction, per area and per
construction, and lists every miss.

python -m training.textbook_eval checkpoints/<name> [--data tests/data] [--write]
(--write stores the figures in the checkpoint's card.json under "textbook").
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict

from model.checkpoint import Bundle
from model.dispatch import load_checkpoint, translate

from .card import store
from .evaluate import score
from .testsets import DIRECTIONS, Row, read_sets

# the sentences the issue quotes as failing (target language, source, reference)
ISSUE_SENTENCES = (
    ("ko", "I don't eat meat.", "저는 고기를 안 먹어요."),
    ("en", "저는 고기를 안 먹어요.", "I don't eat meat."),
    ("ko", "Shall we eat together?", "같이 먹을까요?"),
    ("en", "같이 먹을까요?", "Shall we eat together?"),
    ("en", "이 근처에 병원이 있어요?", "Is there a hospital near here?"),
    ("en", "배가 고파요.", "I am hungry."),
    ("en", "동생이 방에서 자고 있어요.", "My younger sibling is sleeping in the room."),
)


def evaluate(bundle: Bundle, rows: list[Row]) -> dict:
    """Scores per direction, per area and per construction, and the misses."""
    out: dict = {"directions": {}, "areas": {}, "constructions": {}, "misses": []}
    for direction, lang in DIRECTIONS.items():
        mine = [r for r in rows if r.direction == direction]
        hyps = [t.text for t in translate(bundle, [r.source for r in mine], lang)] if mine else []
        out["directions"][direction] = score(hyps, [r.reference for r in mine])
        groups: dict[str, dict[str, list]] = {"areas": defaultdict(list),
                                              "constructions": defaultdict(list)}
        for r, h in zip(mine, hyps, strict=True):
            groups["areas"][r.area].append((h, r.reference))
            groups["constructions"][r.construction].append((h, r.reference))
            if h.strip() != r.reference.strip():
                out["misses"].append({"direction": direction, "source": r.source,
                                      "output": h, "reference": r.reference})
        for kind, by in groups.items():
            for key, hr in sorted(by.items()):
                out[kind].setdefault(key, {})[direction] = score([h for h, _ in hr],
                                                                  [r for _, r in hr])
    return out


def issue_sentences(bundle: Bundle) -> list[dict]:
    """The issue's seven sentences: output and whether it is the reference."""
    out = []
    for lang, src, ref in ISSUE_SENTENCES:
        hyp = translate(bundle, [src], lang)[0].text
        out.append({"source": src, "output": hyp, "reference": ref, "exact": hyp == ref})
    return out


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(prog="python -m training.textbook_eval",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("checkpoint")
    ap.add_argument("--data", default="tests/data")
    ap.add_argument("--write", action="store_true", help="store the figures in card.json")
    args = ap.parse_args(argv)
    bundle = load_checkpoint(args.checkpoint)
    result = evaluate(bundle, read_sets(args.data))
    result["issue_sentences"] = issue_sentences(bundle)
    summary = {"directions": result["directions"],
               "issue_sentences_exact": sum(s["exact"] for s in result["issue_sentences"])}
    print(json.dumps({**summary, "areas": result["areas"]}, indent=1, ensure_ascii=False))
    if args.write:
        store(args.checkpoint, "textbook", result)
    return result


if __name__ == "__main__":
    main()
