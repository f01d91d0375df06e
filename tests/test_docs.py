"""The Python examples in the docs run, and print what the docs say they print.

A ```python block is run on its own, in a fresh namespace; when a ```text block follows it
(nothing but blank lines between), that block is its exact standard output.
"""

from __future__ import annotations

import contextlib
import io
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "docs" / "library.md", ROOT / "README.md", ROOT / "CONTRIBUTING.md"]
_FENCE = re.compile(r"^(`{3,})(\w*)$")


@dataclass(frozen=True)
class Block:
    lang: str
    text: str
    start: int
    """Line number of the opening fence (1-based)."""
    end: int
    """Line number of the closing fence."""


def blocks(text: str) -> list[Block]:
    """Every fenced block, in order; a fence closes only on the same run of backticks."""
    found: list[Block] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        opened = _FENCE.match(lines[i])
        if opened is None:
            i += 1
            continue
        fence, lang = opened.groups()
        close = lines.index(fence, i + 1)
        found.append(
            Block(lang, "".join(f"{ln}\n" for ln in lines[i + 1 : close]), i + 1, close + 1)
        )
        i = close + 1
    return found


def examples(path: Path) -> list[tuple[Block, str | None]]:
    """Each python block and the output shown right after it, if any."""
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    found = blocks(text)
    out = []
    for block, after in zip(found, [*found[1:], None], strict=True):
        if block.lang != "python":
            continue
        between = lines[block.end : after.start - 1] if after is not None else ["x"]
        shown = after is not None and after.lang == "text" and not "".join(between).strip()
        out.append((block, after.text if shown and after is not None else None))
    return out


CASES = [(path, block, output) for path in DOCS for block, output in examples(path)]


def test_library_md_has_three_examples_with_their_output() -> None:
    library = examples(DOCS[0])
    assert len(library) == 3
    assert all(output for _, output in library)


@pytest.mark.parametrize(
    ("path", "block", "output"),
    CASES,
    ids=[f"{p.name}:{b.start}" for p, b, _ in CASES],
)
def test_example_runs_and_prints_what_the_doc_shows(
    path: Path, block: Block, output: str | None
) -> None:
    code = compile(block.text, f"{path.name}:{block.start}", "exec")
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(code, {"__name__": "__main__"})
    if output is not None:
        assert printed.getvalue() == output
