"""Comments, docstrings and docs cite only what a reader of the repository can open.

A rule cites docs/design.md (or another page under docs/), the ACP or provider docs, or
the public upstream report it comes from: never design drafts, research notes or work
items kept outside the checkout, which a reader cannot follow.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCANNED = ("src", "docs", "bench", "scripts", "README.md", "BENCHMARKS.md", "CONTRIBUTING.md")
SUFFIXES = {".py", ".pyi", ".md", ".toml", ".txt", ".cfg", ".ini"}

# A file kept outside the repository, or a work item: the old design draft (the page in
# the repository is the lowercase docs/design.md), research notes, seed write-ups, issue
# numbers without a repository, and the shared directory beside the checkout.
CITATION = re.compile(
    r"DESIGN\.md"
    r"|research/"
    r"|\b(?:switching|streaming|seeds|acp)\.md\b"
    r"|\bseeds?/"
    r"|(?i:\bseed [0-9])"
    r"|(?i:\bissue [0-9]+)"
    r"|\.\./shared"
)

# Not a citation: the README says where the tests read third-party recordings and the
# schema fallback from at test time (behaviour, not a source).
ALLOWED = {("README.md", "../shared")}


def scanned_files() -> Iterator[Path]:
    for name in SCANNED:
        top = ROOT / name
        if top.is_file():
            yield top
            continue
        for path in sorted(top.rglob("*")):
            parts = path.relative_to(ROOT).parts
            if any(p.startswith(".") or p in ("__pycache__", "node_modules") for p in parts):
                continue
            if path.is_file() and path.suffix in SUFFIXES:
                yield path


def citations() -> dict[str, list[str]]:
    """Every reference to a file outside the repository, as ``file:line: text`` per file."""
    found: dict[str, list[str]] = {}
    for path in scanned_files():
        rel = path.relative_to(ROOT).as_posix()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            hits = [m.group() for m in CITATION.finditer(line)]
            if any((rel, hit) not in ALLOWED for hit in hits):
                found.setdefault(rel, []).append(f"{rel}:{number}: {line.strip()}")
    return found


def test_nothing_cites_a_file_outside_the_repository() -> None:
    found = citations()
    bad = [entry for entries in found.values() for entry in entries]
    assert not bad, "cite docs/ or a public source instead:\n" + "\n".join(bad)


def test_the_pattern_catches_each_kind() -> None:
    for text in (
        'see DESIGN.md "Normalized events"',
        "(research/acp.md 6.1)",
        "(switching.md 0.4)",
        "seed 002's four stages",
        "(Issue 5 section 1)",
        "the copy in ../shared/acp-schema",
    ):
        assert CITATION.search(text), text
    for text in ('docs/design.md, "Normalized events"', "zed-industries/zed#44834"):
        assert not CITATION.search(text), text
