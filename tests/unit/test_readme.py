"""The README's Python API example runs as written against the shipped checkpoint, and the
measured figures of the README and its docs/ pages are the committed results."""

from __future__ import annotations

import json
import os
import re
import runpy

import pytest

from tests.conftest import ROOT


def test_readme_api_example_runs(tmp_path, capsys, monkeypatch):
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"## Python API.*?```python\n(.*?)```", text, re.S)
    assert block, "README has no Python API example"
    script = tmp_path / "example.py"
    script.write_text(block.group(1), encoding="utf-8")
    monkeypatch.chdir(ROOT)
    scope = runpy.run_path(str(script))
    assert scope["trace"].attn["cross"].ndim == 5
    assert scope["out"][0].text == "Winter is cold."
    assert "Winter is cold." in capsys.readouterr().out


def test_readme_figure_blocks_are_the_committed_results():
    """Every figure block in the README and its docs/ pages is what its renderer writes from
    results.json, every renderer has its block in exactly one document, and every figure
    outside a block is on the not-measured list."""
    from benchmarks import readme as figures
    from benchmarks.common import load_results

    texts = figures.documents()
    results = load_results()
    homes = figures.block_homes(texts)  # raises on a block in two documents
    assert set(homes) == set(figures.BLOCKS), "document blocks and benchmarks.readme.BLOCKS differ"
    stray = []
    for path, text in texts.items():
        for name, body in figures.blocks_in(text).items():
            assert body == figures.render(name, results), (
                f"{path.name} block {name!r} differs from what benchmarks.readme renders from "
                "benchmarks/results.json (or the cards): run `make readme`")
            for line in body.splitlines():  # every measured line names its results key and run
                if figures.MEASURED.search(line) and not line.startswith("|---"):
                    assert "`bench_" in line or "card" in line or line.startswith("| "), line
        stray += [(path.name, i, line, f) for i, line, f in figures.measured_outside_blocks(text)]
    assert not stray, "figures outside a block that look measured:\n" + "\n".join(
        f"{name}:{i}: {', '.join(f)}: {line.strip()}" for name, i, line, f in stray)


def test_each_moved_block_stands_where_its_page_says():
    """The blocks moved off the front page stand in the docs page that covers them: the README
    holds only the Clark et al. table (issue 54 asks for it there), and a block found in two
    documents is refused."""
    from benchmarks import readme as figures

    homes = {name: path.name for name, path in figures.block_homes(figures.documents()).items()}
    assert [n for n, home in homes.items() if home == "README.md"] == ["clark"]
    assert {homes[n] for n in ("benchmarks", "tl", "heap", "tl_composition", "long")} == \
        {"benchmarks.md"}
    assert {homes[n] for n in ("estimates", "soak", "soak_short")} == {"limits.md"}
    assert {homes[n] for n in ("capacity", "capacity_nginx")} == {"deployment.md"}
    assert {homes[n] for n in ("textbook", "newcomer", "tokenizers")} == {"training.md"}
    assert homes["patching"] == "api.md"
    block = "<!-- figures:soak -->\nx\n<!-- /figures:soak -->\n"
    with pytest.raises(ValueError, match="stands in both"):
        figures.block_homes({ROOT / "a.md": block, ROOT / "b.md": block})


def test_every_allowance_is_used():
    """Each phrase NOT_MEASURED allows outside the blocks still stands in the README or one of
    its docs/ pages, so no stale allowance can let a later figure through."""
    from benchmarks import readme as figures

    outside = "\n".join(line for text in figures.documents().values()
                        for _, line in figures.outside_blocks(text))
    for pattern in figures.NOT_MEASURED:
        for alternative in re.split(r"\|(?![^(]*\))", pattern):
            assert re.search(alternative, outside), f"unused allowance {alternative!r}"


def test_figure_blocks_catch_drift_and_stray_figures():
    """The checks above can fail: a changed result, a hand-typed figure, a block without a
    renderer and one renderer's figure edited by hand are each caught."""
    from benchmarks import readme as figures
    from benchmarks.common import load_results

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    limits = (ROOT / "docs" / "limits.md").read_text(encoding="utf-8")
    results = load_results()
    # a result changed after the README was written
    changed = json.loads(json.dumps(results))
    changed["bench_soak"]["soak"]["peak_after_warmup_mb"] += 1
    assert figures.render("soak", changed) != figures.render("soak", results)
    # a figure typed by hand outside the blocks
    typed = text.replace("## Tests\n", "## Tests\n\nA rerun takes 91 ms here.\n", 1)
    assert [f for *_, f in figures.measured_outside_blocks(typed)] == [["91 ms"]]
    # settings stay allowed, but only the phrase allowed
    assert not figures.measured_outside_blocks("check (every 0.2 s). x\n")
    assert figures.measured_outside_blocks("check (every 0.2 s), took 0.3 s\n")
    # a block without a renderer, and a block edited by hand, are refused by rewrite/compare
    with pytest.raises(KeyError, match="no renderer"):
        figures.rewrite("<!-- figures:nosuch -->\nx\n<!-- /figures:nosuch -->\n", results)
    body = figures.blocks_in(limits)["soak"]
    by_hand = re.sub(r"\d", lambda m: "1" if m[0] != "1" else "2", body, count=1)  # typed over
    assert by_hand != body
    edited = limits.replace(body, by_hand)
    assert figures.blocks_in(figures.rewrite(edited, results))["soak"] == \
        figures.render("soak", results)
    # provenance: the key, date, cores and load of the run
    results2 = {"bench_x": {"p": {"measured": "2026-11-24 03:00 UTC", "cpu_cores": 2,
                                   "load_average": [6.25, 5.5, 4.0]}}}
    from benchmarks.readme_results import MissingResult, provenance

    assert provenance(results2, "bench_x.p") == (
        "`bench_x.p`, 2026-11-24 03:00 UTC, 2 cores, load average 6.2 (1 min), 5.5 (5 min)")
    with pytest.raises(MissingResult, match="bench_x.q"):
        provenance(results2, "bench_x.q")


def test_save_results_records_date_cores_and_load(tmp_path):
    """Each saved part carries when, on how many cores and under what load it was measured."""
    from benchmarks.common import save_results

    path = tmp_path / "results.json"
    save_results("bench_x", {"p": {"v": 1}}, path)
    saved = json.loads(path.read_text("utf-8"))["bench_x"]["p"]
    assert saved["v"] == 1 and saved["cpu_cores"] == os.cpu_count()
    assert len(saved["load_average"]) == 3 and all(x >= 0 for x in saved["load_average"])
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", saved["measured"])


def test_readme_alignment_table_matches_the_cards():
    """The weights-vs-norms table in docs/models.md is what the shipped cards hold."""
    from training.alignment_table import HEADER, card_tables, layer_rows

    readme = (ROOT / "docs" / "models.md").read_text(encoding="utf-8")
    assert HEADER in readme
    for name in ("paper", "seed001"):
        card = json.loads((ROOT / "checkpoints" / name / "card.json").read_text("utf-8"))
        tables = card_tables(card)
        assert tables is not None, f"{name}: card lacks the α or ‖αf(x)‖ alignment table"
        for row in layer_rows(name, *tables):
            assert row in readme, f"docs/models.md row missing or stale: {row}"


def test_tokenizers_block_holds_the_shipped_row_to_the_card():
    """Where the retrained shipped-size tokenizer has the shipped pieces, its measured shares
    must be the cards' figures, and a shipped row that drifts from the card is refused, not
    printed. Where it has not (the shipped one was trained on leg 2's corpus and kept for leg 3,
    so the warm-started rows stay; leg 3's grammar draws another split), the block says so."""
    from benchmarks import readme as figures
    from benchmarks.common import load_results
    from benchmarks.readme_results import part

    results = load_results()
    r = part(results, "bench_tokenizers.sizes")
    card = json.loads((ROOT / "checkpoints" / "paper" / "card.json").read_text("utf-8"))
    assert r["shipped_card"] == card["tokenizer"]
    block = figures.render("tokenizers", results)
    if r["same_pieces_as_shipped"]:
        assert r["tokenizers"][r["shipped"]]["one_piece_share_top500"] == \
            card["tokenizer"]["one_piece_share_top500"]
        assert "holds the same pieces" in block
    else:
        assert "differs from the shipped" in block and "holds the same pieces" not in block
    drifted = json.loads(json.dumps(results))
    drifted["bench_tokenizers"]["sizes"]["same_pieces_as_shipped"] = True
    drifted["bench_tokenizers"]["sizes"]["tokenizers"][r["shipped"]][
        "one_piece_share_top500"]["en_lower"] += 0.1
    with pytest.raises(ValueError, match="differ from the card"):
        figures.render("tokenizers", drifted)
