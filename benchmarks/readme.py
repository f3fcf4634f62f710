"""The measured figures of the README and its docs/ pages, written from benchmarks/results.json.

A figure block in one of DOCUMENTS (README.md and the docs/ pages it links) is the text between
two markers:

    <!-- figures:NAME -->
    ...generated text, never edited by hand...
    <!-- /figures:NAME -->

`BLOCKS[NAME]` renders that text from the whole results.json dict. Adding a block is one
renderer function and one line in `BLOCKS` (a row of the benchmark table: one function and one
line in `TABLE_ROWS`, readme_table.py). The renderers live by idea: readme_results.py
(reading results.json, the one row renderer), readme_table.py (the benchmark table),
readme_prose.py (prose blocks), readme_cards.py (model quality from the shipped cards);
`python -m benchmarks.readme` (`make readme`) rewrites every block of every document in
place, and tests/unit/test_readme.py fails while a block differs from what the file gives, a
block stands in no document or in two, or a figure outside every block looks measured (see
`NOT_MEASURED` for what is allowed there).
Every rendered figure names its results key and the run's date, core count and load average.
Model-quality blocks (checkpoints, alignment, tokenizer, examples) render the shipped cards,
checkpoints/NAME/card.json, instead.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path

from benchmarks.bench_cache import block as block_cache
from benchmarks.bench_clark import block as block_clark
from benchmarks.bench_heap import block as block_heap
from benchmarks.bench_long import block as block_long
from benchmarks.bench_tl import block as block_tl
from benchmarks.bench_tl_composition import block as block_tl_composition
from benchmarks.common import ROOT, load_results
from benchmarks.readme_cards import (
    block_alignment,
    block_checkpoints,
    block_examples,
    block_newcomer,
    block_textbook,
    block_tokenizer,
    block_tokenizers,
)
from benchmarks.readme_lm import block_lm
from benchmarks.readme_prose import (
    block_capacity,
    block_capacity_nginx,
    block_estimates,
    block_patching,
    block_soak,
    block_soak_short,
)
from benchmarks.readme_table import block_benchmarks

README = ROOT / "README.md"
# Where figure blocks may stand, and whose prose outside them is checked for hand-typed figures:
# the front page and the pages it sends readers to. docs/layout.md (where code goes) is left out:
# it quotes no measurements and is not this module's to police.
DOCUMENTS: tuple[Path, ...] = (README, *(ROOT / "docs" / f"{name}.md" for name in (
    "interface", "models", "training", "api", "benchmarks", "limits", "deployment")))
BLOCK = re.compile(
    r"(<!-- figures:(?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- /figures:(?P=name) -->)", re.S)


BLOCKS: dict[str, Callable[[dict], str]] = {
    "checkpoints": block_checkpoints,
    "textbook": block_textbook,
    "newcomer": block_newcomer,
    "examples": block_examples,
    "alignment": block_alignment,
    "tokenizer": block_tokenizer,
    "tokenizers": block_tokenizers,
    "benchmarks": block_benchmarks,
    "estimates": block_estimates,
    "soak": block_soak,
    "patching": block_patching,
    "soak_short": block_soak_short,
    "capacity": block_capacity,
    "capacity_nginx": block_capacity_nginx,
    "lm": block_lm,
    "tl": block_tl,
    "tl_composition": block_tl_composition,
    "long": block_long,
    "heap": block_heap,
    "clark": block_clark,
    "cache": block_cache,
}


def render(name: str, results: dict) -> str:
    """The text block NAME should hold (without its markers)."""
    if name not in BLOCKS:
        raise KeyError(f"README block {name!r} has no renderer in benchmarks.readme.BLOCKS")
    return BLOCKS[name](results).rstrip("\n") + "\n"


def blocks_in(text: str) -> dict[str, str]:
    """{name: body} of every figure block in a README text."""
    found: dict[str, str] = {}
    for m in BLOCK.finditer(text):
        if m["name"] in found:
            raise ValueError(f"README has two figure blocks named {m['name']!r}")
        found[m["name"]] = m["body"]
    return found


def documents() -> dict[Path, str]:
    """{path: text} of every document that may hold figure blocks."""
    return {path: path.read_text(encoding="utf-8") for path in DOCUMENTS}


def block_homes(texts: dict[Path, str]) -> dict[str, Path]:
    """{block name: the document it stands in}; a name in two documents is an error."""
    homes: dict[str, Path] = {}
    for path, text in texts.items():
        for name in blocks_in(text):
            if name in homes:
                raise ValueError(f"figure block {name!r} stands in both {homes[name].name} "
                                 f"and {path.name}")
            homes[name] = path
    return homes


def rewrite(text: str, results: dict) -> str:
    """text with every figure block's body rendered again from results."""
    blocks_in(text)  # duplicate names are an error, not a silent overwrite
    return BLOCK.sub(lambda m: m.group(1) + render(m["name"], results) + m.group(4), text)


# ---- what may stand outside a block -------------------------------------------------------

# A number with a unit a measurement would carry.
MEASURED = re.compile(
    r"(?<![\w.])[−+-]?~?\d[\d,]*(?:\.\d+)?\s?(?:ms|s|MB|GB|KB|kB|×|%|reruns/s|students|min|"
    r"minutes|seconds|CPU s)(?![\w/])|(?<![\w/])1/\d+(?:\.\d+)?\b")

# Numbers with units outside any block that are settings, bounds or definitions, not
# measurements: (regex over one README line, why it may stay). Matches are blanked before the
# scan, so each entry allows exactly the phrase it names.
NOT_MEASURED: dict[str, str] = {
    r"zoomed 1\.5×|with 1\.5× larger fonts": "presenter-mode zoom, a setting",
    r"`max_len` 520|14 MB per folder": "shipped checkpoint size on disk (a file size)",
    r"--max-minutes 50|9\.5 more|50\n?\s*minutes|59\.5 with|about 39 minutes|for 19 minutes|"
    r"resumed to 34": "training time limits and the leg-1 stop",
    r"10 % of the pairs": "--typed-share 0.1, a setting",
    r"are 35 % of the corpus|ones 25 %|textbook's 40 %|share of its 40 %|\((?:16|22|15|10) %\)":
        "corpus mixture, settings",
    r"2 × source \+ 10": "decoding formula",
    r"within ±30 % of measured peaks": "test tolerance",
    r"every 0\.2 s": "queue poll interval, a setting",
    r"to 512 × 512 pixels|\(up to 1,024 × 1,024\)": "long mode's pixels and zoom cap, settings",
    r"still busy after 90 seconds": "the QueueTimeout message at the default timeout",
    r"blocks of 1 MB or more|up to 32 MB": "glibc M_MMAP_THRESHOLD, settings",
    r"1\.2 × budget": "test bound",
    r"16 × 512 tokens|16 lines of 519 pieces": "input sizes",
    r"is estimated at 1\.5 GB|2\.3 GB\.|about 2\.9 GB|about 1\.2 GB|about 10\.5 GB":
        "model.budget's estimate from shapes, deterministic (H5's tests tie it to the code)",
    r"of 8–48 MB each|184 MB together": "st.cache_data max sizes, settings",
    r"at most 2 minutes": "Streamlit's disconnected-session limit",
    r"\+ 600 MB|±5 MB": "soak pass bounds, settings",
    r"an 8 MB Trace": "test setting",
    r"baseline \+ 5\.1 GB with the defaults": "sum of the default budgets (3,072 + 2,048 MB)",
    r"every 15 s": "planning assumption",
    r"every 100 inputs": "sampling interval",
}
def outside_blocks(text: str) -> list[tuple[int, str]]:
    """(line number, line) of a document's lines outside every figure block."""
    keep, inside = [], None
    for i, line in enumerate(text.splitlines(), 1):
        m = re.match(r"<!-- (/?)figures:([\w-]+) -->", line)
        if m:
            inside = None if m[1] else m[2]
            continue
        if inside is None:
            keep.append((i, line))
    return keep


def measured_outside_blocks(text: str) -> list[tuple[int, str, list[str]]]:
    """(line number, line, figures) for each figure outside a block that looks measured."""
    allowed = re.compile("|".join(f"(?:{p})" for p in NOT_MEASURED))
    hits = []
    for i, line in outside_blocks(text):
        figures = MEASURED.findall(allowed.sub(" ", line))
        if figures:
            hits.append((i, line, figures))
    return hits


def main(argv: list[str] | None = None) -> int:
    """Rewrite every document's figure blocks from benchmarks/results.json; --check only
    compares (exit 1 on a stale block, a block in two documents or a stray figure)."""
    argv = sys.argv[1:] if argv is None else argv
    texts = documents()
    block_homes(texts)  # a block in two documents stops here, before anything is written
    results, failed = load_results(), False
    for path, text in texts.items():
        new = rewrite(text, results)
        where = path.relative_to(ROOT)
        for i, line, figures in measured_outside_blocks(new):
            failed = True
            print(f"{where}:{i}: figure outside a block: {', '.join(figures)}: {line.strip()}")
        if new != text:
            failed = True
            if "--check" not in argv:
                path.write_text(new, encoding="utf-8")
        print(f"{where}: {len(blocks_in(new))} figure blocks"
              + (" checked" if "--check" in argv else " written") + " from "
              f"{Path('benchmarks/results.json')}")
    return 1 if "--check" in argv and failed else 0


if __name__ == "__main__":
    sys.exit(main())
