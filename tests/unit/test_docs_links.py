"""The README is a front page (at most 300 lines) that links every page under docs/, and every
relative link in README.md and docs/*.md reaches a file that exists and, after `#`, a heading
of that file (GitHub's anchor for it)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import ROOT

FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
EXTERNAL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.I)  # http:, https:, mailto: ...


def prose_lines(text: str) -> list[tuple[int, str]]:
    """(line number, line) outside fenced code blocks, inline code spans blanked: a link or a
    heading written inside code is text, not markdown."""
    out, fenced = [], False
    for i, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            out.append((i, re.sub(r"`[^`]*`", lambda m: m[0].strip("`"), line)
                        if HEADING.match(line) else re.sub(r"`[^`]*`", "``", line)))
    return out


def slug(heading: str) -> str:
    """GitHub's anchor for a heading's text: lower case, link markup reduced to its text,
    everything but letters, digits, `_`, `-` and spaces dropped, each space a hyphen."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = re.sub(r"[*`]", "", text).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(text: str) -> set[str]:
    """Every heading anchor of a markdown text, repeated headings numbered -1, -2 … as GitHub
    numbers them."""
    seen: dict[str, int] = {}
    out = set()
    for _, line in prose_lines(text):
        m = HEADING.match(line)
        if m:
            base = slug(m[2])
            n = seen.get(base, 0)
            seen[base] = n + 1
            out.add(base if n == 0 else f"{base}-{n}")
    return out


def broken_links(path: Path, text: str | None = None) -> list[str]:
    """'file:line: target (why)' for each relative link in a markdown file that reaches no
    file, or no heading of the file it reaches."""
    text = path.read_text(encoding="utf-8") if text is None else text
    bad = []
    for i, line in prose_lines(text):
        for target in LINK.findall(line):
            if EXTERNAL.match(target):
                continue
            file_part, _, anchor = target.partition("#")
            dest = (path.parent / file_part).resolve() if file_part else path
            where = f"{path.relative_to(ROOT)}:{i}: {target}"
            if not dest.exists():
                bad.append(f"{where} (no such file)")
            elif anchor and dest.suffix == ".md":
                dest_text = text if dest == path else dest.read_text(encoding="utf-8")
                if anchor not in anchors(dest_text):
                    bad.append(f"{where} (no heading with that anchor in {dest.name})")
    return bad


def pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def test_every_relative_link_reaches_its_file_and_heading():
    links = sum(len(LINK.findall(line)) for p in pages()
                for _, line in prose_lines(p.read_text(encoding="utf-8")))
    assert links >= 20, f"only {links} links found: the link pattern no longer finds them"
    bad = [b for p in pages() for b in broken_links(p)]
    assert not bad, "broken links:\n" + "\n".join(bad)


def test_the_readme_is_a_front_page_that_links_every_doc():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 300, f"README.md has {len(text.splitlines())} lines"
    linked = {(ROOT / t.partition("#")[0]).resolve() for _, line in prose_lines(text)
              for t in LINK.findall(line) if not EXTERNAL.match(t)}
    unlinked = [p.name for p in sorted((ROOT / "docs").glob("*.md")) if p.resolve() not in linked]
    assert not unlinked, f"docs pages the README does not link: {unlinked}"


def test_the_checker_catches_a_missing_file_or_anchor():
    """The checks above can fail: a link to no file, to a heading that is not there, and one
    written inside code (which is not a link) are told apart."""
    readme = ROOT / "README.md"
    planted = ("# Title\n\n## Your own `models`: here\n\n"
               "[ok](#your-own-models-here) [gone](docs/nosuch.md) "
               "[no heading](docs/api.md#nosuch) [api](docs/api.md#activation-patching)\n"
               "`[code](docs/nosuch2.md)`\n```\n[fenced](docs/nosuch3.md)\n```\n")
    bad = broken_links(readme, planted)
    assert len(bad) == 2, bad
    assert "docs/nosuch.md (no such file)" in bad[0]
    assert "docs/api.md#nosuch (no heading" in bad[1]
    assert slug("The key/value cache and what evicting it costs") == \
        "the-keyvalue-cache-and-what-evicting-it-costs"
    assert anchors("## Tests\n## Tests\n") == {"tests", "tests-1"}
