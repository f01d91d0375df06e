"""The ``toolwire demo`` data: the cassette decodes cleanly and its tool calls, replayed
with toolwire's own tools on a scratch copy of the demo project, fix the bug for real."""

from __future__ import annotations

import asyncio
import json
import os
import runpy
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import check_invariants
from toolwire.decode import decoder_for
from toolwire.events import (
    Event,
    MessageEnd,
    StreamError,
    ThinkingDelta,
    ToolCallEnd,
    ToolCallStart,
)
from toolwire.samples import DEMO_CASSETTE, copy_demo_project
from toolwire.tools import LocalTerminal, ToolContext, ToolResult, get_tool

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "make_demo_cassette.py"


def cassette() -> list[dict[str, Any]]:
    lines = DEMO_CASSETTE.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def decode(entry: dict[str, Any]) -> list[Event]:
    """The entry's body fed in the cassette's own chunk size, as the replay backend will."""
    decoder = decoder_for(entry["provider"])
    body = entry["body"].encode("utf-8")
    size = entry["chunk_size"]
    events: list[Event] = []
    for start in range(0, len(body), size):
        events.extend(decoder.feed(body[start : start + size]))
    events.extend(decoder.close())
    return events


def calls(events: list[Event]) -> list[tuple[str, Any]]:
    names = {e.id: e.name for e in events if isinstance(e, ToolCallStart)}
    ends = [e for e in events if isinstance(e, ToolCallEnd)]
    assert all(e.ok for e in ends)
    return [(names[e.id], e.arguments) for e in ends]


def test_cassette_is_what_the_generator_writes() -> None:
    generated = runpy.run_path(str(SCRIPT), run_name="make_demo_cassette")["render"]()
    assert DEMO_CASSETTE.read_text(encoding="utf-8") == generated, (
        "run scripts/make_demo_cassette.py to regenerate the cassette"
    )


def test_cassette_is_a_clean_anthropic_session() -> None:
    entries = cassette()
    assert len(entries) >= 8
    stops = []
    for entry in entries:
        assert entry["provider"] == "anthropic"
        assert (entry["chunk_size"], entry["chunk_delay_ms"]) == (64, 15)
        assert '"partial_json":""' in entry["body"] or "tool_use" not in entry["body"]
        events = decode(entry)
        check_invariants(events)
        assert not [e for e in events if isinstance(e, StreamError)]
        stops.append(next(e for e in events if isinstance(e, MessageEnd)).stop_reason)
    assert stops == ["tool_use"] * (len(entries) - 1) + ["end_turn"]
    thinking = [e for e in decode(entries[0]) if isinstance(e, ThinkingDelta)]
    assert any(e.signature for e in thinking)
    names = [name for entry in entries for name, _ in calls(decode(entry))]
    assert names == ["TodoWrite", "Glob", "Read", "Grep", "Read", "Edit", "Bash", "TodoWrite"]


@pytest.mark.e2e
def test_demo_project_tests_fail_before_the_fix(tmp_path: Path) -> None:
    project = copy_demo_project(tmp_path / "demo")
    done = subprocess.run(
        [sys.executable, "-m", "unittest", "-q"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode != 0
    assert "FAILED (failures=2)" in done.stderr


@pytest.fixture
def demo_context(tmp_path: Path) -> ToolContext:
    project = copy_demo_project(tmp_path / "demo")
    # The cassette runs `python`: make it this interpreter, whatever the machine has.
    path = os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")])
    return ToolContext.create(project, terminal=LocalTerminal(extra_env={"PATH": path}))


def test_replayed_tool_calls_fix_the_demo_project(demo_context: ToolContext) -> None:
    results: list[tuple[str, ToolResult]] = []
    for entry in cassette():
        for name, arguments in calls(decode(entry)):
            tool = get_tool(name)
            assert tool is not None, name
            result = asyncio.run(tool.run(arguments, demo_context))
            assert not result.is_error, f"{name} failed: {result.content}"
            results.append((name, result))
    by_name: dict[str, list[ToolResult]] = {}
    for name, result in results:
        by_name.setdefault(name, []).append(result)
    assert "tests/test_slugify.py" in by_name["Glob"][0].content
    assert "textkit/slugify.py:" in by_name["Grep"][0].content
    edit = by_name["Edit"][0]
    assert edit.diff is not None
    assert edit.diff.old_text is not None
    assert "ascii_text.lower()" in edit.diff.new_text
    assert "ascii_text.lower()" not in edit.diff.old_text
    module = demo_context.cwd / "textkit" / "slugify.py"
    assert module.read_text(encoding="utf-8") == edit.diff.new_text
    bash = by_name["Bash"][0]
    assert bash.raw_output is not None
    assert bash.raw_output["exit_code"] == 0
    assert "Ran 6 tests" in bash.content
    assert bash.content.rstrip().endswith("OK")
    final_plan = by_name["TodoWrite"][-1].plan
    assert final_plan is not None
    assert {entry.status for entry in final_plan} == {"completed"}
