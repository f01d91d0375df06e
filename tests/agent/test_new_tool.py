"""The recipe for a plain new tool (docs/architecture.md, "Adding a tool"), followed:
one module (here, the class below), one registry line (here, patched in) and its tests.
Nothing else in toolwire learns of it, yet the editor sees its own title, kind, file and
result, and the model gets its answer.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, ClassVar

import pytest

import toolwire.tools
from tests.agent.pair import AgentUnderTest
from tests.agent.support import answer, calls_by_id, check_wire
from toolwire.history import ToolResultPart
from toolwire.tools import Location, Tool, ToolContext, ToolKind, ToolResult
from toolwire.updates.titles import Description, resolve

pytestmark = pytest.mark.anyio


class WordCountTool(Tool):
    """A toy tool: how many words a file has."""

    name = "WordCount"
    description = "Counts the words of a text file."
    kind: ClassVar[ToolKind] = "read"
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"file_path": {"type": "string"}},
        "required": ["file_path"],
    }

    def describe(self, args: Mapping[str, Any], cwd: str) -> Description:
        path = args.get("file_path")
        if not isinstance(path, str):
            return Description("Count words", self.kind)
        shown, absolute = resolve(path, cwd)
        return Description(f"Count words in {shown}", self.kind, ({"path": absolute},))

    async def _run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        path = ctx.resolve(str(args["file_path"]))
        words = len((await ctx.fs.read_text(path)).split())
        return ToolResult(f"{words} words", locations=(Location(str(path)),))


@pytest.fixture
def registered(monkeypatch: pytest.MonkeyPatch) -> None:
    """The registry line: the tool among ``toolwire.tools.TOOLS``."""
    tools = {**toolwire.tools.TOOLS, WordCountTool.name: WordCountTool()}
    monkeypatch.setattr(toolwire.tools, "TOOLS", MappingProxyType(tools))


@pytest.mark.usefixtures("registered")
async def test_a_new_tool_shows_its_own_title_kind_and_result(acp: AgentUnderTest) -> None:
    args = {"file_path": "app.py"}
    acp.model.script(answer(("tool", "WordCount", args, "toolu_wc")), "Four words.")
    sid = await acp.start()
    result = await acp.prompt(sid, "How long is app.py?")
    assert result.stop_reason == "end_turn"
    check_wire(acp.run.wire)
    call = calls_by_id(acp.run.notifications())["toolu_wc"]
    app = str(acp.root / "app.py")
    assert (call["title"], call["kind"], call["status"]) == (
        "Count words in app.py",
        "read",
        "completed",
    )
    assert call["locations"] == [{"path": app}]
    assert call["content"] == [{"type": "content", "content": {"type": "text", "text": "4 words"}}]
    assert acp.client.permissions == []  # a read never asks
    sent = acp.model.requests[0]
    assert "WordCount" in [spec.name for spec in sent.tools]  # offered to the model
    answered = acp.model.requests[1].messages[-1].parts[0]
    assert isinstance(answered, ToolResultPart)
    assert answered.content == "4 words"
