"""Rendering: sections, labels, and byte-identical output for the same input."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.handoff.support import CWD, Session, sample
from toolwire.handoff import build_handoff
from toolwire.handoff.render import CLOSE, OPEN, PREAMBLE
from toolwire.history import Message


def test_block_layout() -> None:
    block = build_handoff(sample(), cwd=CWD, keep_last=1).block
    assert block.startswith(f"{OPEN}\n{PREAMBLE}\n\n## Summary\n\n")
    assert block.endswith(f"{CLOSE}\n\n")
    positions = [
        block.index(h)
        for h in (
            "## Summary",
            "## Files read",
            "## Files changed",
            "## Commands run",
            "## Other tools",
        )
    ]
    assert positions == sorted(positions)
    assert "### Read: src/parser.py (stale: changed later by Edit)\n```\ndef parse():" in block
    assert (
        "### Edit: src/parser.py\n```\nEdited src/parser.py\nold_string:\n1\nnew_string:\n2\n```"
        in block
    )
    assert "### Bash: pytest -q (side-effecting)\n```\n$ pytest -q\n1 passed\n```" in block
    assert "### Bash: git status (read-only)" in block
    assert (
        '### Grep: {"-i": true, "output_mode": "content", "path": "src", "pattern": "parse"}'
        in block
    )
    assert "Task (the user's first request):\nFix the parser, please." in block


def test_summary_none_leaves_the_section_out() -> None:
    block = build_handoff(sample(), cwd=CWD, keep_last=1, summary=False).block
    assert "## Summary" not in block
    assert "## Files read" in block


def test_same_input_same_bytes_whatever_the_argument_order() -> None:
    first = build_handoff(sample(), cwd=CWD, keep_last=1)
    again = build_handoff(sample(), cwd=CWD, keep_last=1)
    reordered = build_handoff(sample(reverse_args=True), cwd=CWD, keep_last=1)
    assert first.block == again.block == reordered.block
    assert [r.item.key for r in first.items] == [r.item.key for r in reordered.items]


@pytest.mark.e2e
def test_same_bytes_across_processes() -> None:
    """No hash seed, clock or set order leaks in: two fresh interpreters agree."""
    code = (
        "import hashlib, sys; sys.path.insert(0, '.');"
        "from tests.handoff.support import sample, CWD;"
        "from toolwire.handoff import build_handoff;"
        "block = build_handoff(sample(), cwd=CWD, keep_last=1).block;"
        "print(hashlib.sha256(block.encode()).hexdigest())"
    )
    root = Path(__file__).parents[2]
    digests = {
        subprocess.run(
            [sys.executable, "-c", code],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONHASHSEED": seed, "PATH": ""},
        ).stdout
        for seed in ("1", "2", "3")
    }
    assert len(digests) == 1


def test_labels_are_one_line_and_long_arguments_show_in_the_body() -> None:
    s = Session().user("go").bash("cat a\nls", "out")
    s.run("Search", {"query": "x" * 500}, "hits")
    block = build_handoff(s.messages, keep_last=0, summary=False).block
    assert "### Bash: cat a \\n ls (read-only)" in block
    assert "$ cat a\nls\nout" in block
    header = next(line for line in block.splitlines() if line.startswith("### Search"))
    assert len(header) < 230
    assert header.endswith("...")
    assert f'arguments: {{"query": "{"x" * 500}"}}\nhits' in block


def test_error_and_orphan_flags() -> None:
    s = Session().user("go").bash("cat nope", "No such file", error=True)
    from toolwire.history import ToolResultPart

    s.messages.append(Message("tool", (ToolResultPart("gone", "Read", "content"),)))
    block = build_handoff(s.messages, keep_last=0, summary=False).block
    assert "### Bash: cat nope (read-only) (error)" in block
    assert "### Read: {} (result without its call)" in block
