"""Each tool owns its card: its title, kind and locations come from the tool itself."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

from toolwire.tools import TOOLS, Tool, ToolKind, describers
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
