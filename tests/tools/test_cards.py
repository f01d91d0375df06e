"""Each tool owns its card: its title, kind and locations come from the tool itself."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

from toolwire.tools import (
    TOOLS,
    CommandOutcome,
    FileDiff,
    Location,
    Tool,
    ToolKind,
    ToolLimits,
    ToolResult,
    describers,
)
from toolwire.tools.card import Card
from toolwire.updates.titles import COMMON_CALLS, describe

CWD = "/work/proj"
ARGS: list[dict[str, Any]] = [
    {},
    {"file_path": "src/app.py"},
    {"file_path": "src/app.py", "offset": 10, "limit": 5},
    {"path": "/elsewhere/x.txt"},
    {"command": "pytest -q\nand more"},
    {"pattern": "def main", "path": "src", "glob": "*.py"},
    {"todos": [{}, {}]},
    {"url": "https://docs.python.org/3/library/?q=1"},
    {"query": "acp protocol"},
]


@pytest.mark.parametrize("name", list(TOOLS))
@pytest.mark.parametrize("args", ARGS)
def test_a_tool_reads_as_the_common_agent_tool_of_its_name(name: str, args: dict[str, Any]) -> None:
    # toolwire's tools are named like Claude Code's: a stream toolwire does not run
    # (``toolwire updates``) titles them as the agent does.
    tool = TOOLS[name]
    assert tool.describe(args, CWD) == COMMON_CALLS[name](args, CWD)
    assert tool.describe(args, CWD).kind == tool.kind


def test_the_agent_describes_each_tool_by_the_tool() -> None:
    found = describers()
    assert set(found) == set(TOOLS)
    assert describe("Read", {"file_path": "a.py"}, CWD, found).title == "Read a.py"


def test_a_tool_without_words_of_its_own_shows_its_name_kind_and_file() -> None:
    class Plain(Tool):
        name = "Plain"
        description = "A tool with no describe of its own."
        kind: ClassVar[ToolKind] = "read"
        input_schema: ClassVar[dict[str, Any]] = {"type": "object"}

        async def _run(self, args: Any, ctx: Any) -> Any:
            raise NotImplementedError

    seen = Plain().describe({"path": "b.txt"}, CWD)
    assert (seen.title, seen.kind) == ("Plain", "read")
    assert seen.locations == ({"path": "/work/proj/b.txt"},)


def test_a_failed_edit_drops_its_preview_and_a_failed_command_keeps_its_output() -> None:
    limits = ToolLimits()
    failed = ToolResult.error("old_string not found")
    assert TOOLS["Edit"].card(failed, limits) == Card(
        error="old_string not found", raw_output={"error": "old_string not found"}, clear=True
    )
    outcome = CommandOutcome(
        exit_code=-9, timed_out=False, timeout_s=5, output_chars=3, truncated=False
    )
    ran = ToolResult("out", is_error=True, command=outcome)
    card = TOOLS["Bash"].card(ran, limits)
    assert (card.error, card.clear) == ("Killed by signal 9.", False)


def test_an_edit_card_shows_the_diff_bounded_like_a_read() -> None:
    limits = ToolLimits(read_max_chars=100)
    new = "".join(f"line {i}\n" for i in range(40))
    diff = FileDiff("/p/f.py", new.replace("line 20", "LINE 20"), new)
    card = ToolResult("ok", diff=diff, locations=(Location("/p/f.py", 21),)).card(limits)
    assert card.locations == ({"path": "/p/f.py", "line": 21},)
    assert card.content is not None
    assert card.content[0]["type"] == "diff"
    assert len(card.content[0]["newText"]) <= 100
    assert "Only the changed lines are shown" in card.content[1]["content"]["text"]


def test_edits_propose_what_they_will_write() -> None:
    assert TOOLS["Write"].proposed({"content": "new"}, "old") == "new"
    edit = {"file_path": "f", "old_string": "a", "new_string": "b"}
    assert TOOLS["Edit"].proposed(edit, "xay") == "xby"
    assert TOOLS["Edit"].proposed(edit, "none here") is None
    assert TOOLS["Read"].proposed({"file_path": "f"}, "x") is None
