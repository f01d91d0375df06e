"""A tiny ACP agent on the official SDK's agent side, for testing ``toolwire client``.

Run as a script (``python tests/fakes/acp_agent.py [SCENARIO]``); it imports nothing from
toolwire, so the client is tested against someone else's agent. Scenarios:

* ``edit`` (default): text, a plan, a ``Read`` through ``fs/read_text_file``, an ``Edit``
  that asks permission and writes through ``fs/write_text_file``, then ``end_turn``.
* ``escape``: a ``Read`` of a file outside the session directory (the client refuses;
  the call fails with the client's message).
* ``wait``: a running ``Bash`` call that only ends when ``session/cancel`` arrives.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import acp
from acp import helpers
from acp.schema import (
    AgentCapabilities,
    Implementation,
    PermissionOption,
    StopReason,
    ToolCallLocation,
    ToolCallUpdate,
)

SESSION = "sess_fake"


class FakeAgent:
    def __init__(self, scenario: str) -> None:
        self.scenario = scenario
        self.cwd = Path(".")
        self.cancelled = asyncio.Event()
        self.conn: Any = None

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, **kwargs: Any) -> acp.InitializeResponse:
        return acp.InitializeResponse(
            protocol_version=acp.PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(),
            agent_info=Implementation(name="fake-agent", title="Fake agent", version="0.0.1"),
        )

    async def new_session(self, cwd: str, **kwargs: Any) -> acp.NewSessionResponse:
        self.cwd = Path(cwd)
        return acp.NewSessionResponse(session_id=SESSION)

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        self.cancelled.set()

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> Any:
        run = {"edit": self._edit, "escape": self._escape, "wait": self._wait}[self.scenario]
        return acp.PromptResponse(stop_reason=await run())

    async def _send(self, update: Any) -> None:
        await self.conn.session_update(session_id=SESSION, update=update)

    async def _edit(self) -> StopReason:
        await self._send(helpers.update_agent_message_text("Let me look "))
        await self._send(helpers.update_agent_message_text("at the notes."))
        await self._send(
            helpers.update_plan(
                [
                    helpers.plan_entry("Read the notes", status="in_progress"),
                    helpers.plan_entry("Fix the typo"),
                ]
            )
        )
        notes = str(self.cwd / "notes.txt")
        await self._send(helpers.start_tool_call("r1", "Read", kind="read", status="pending"))
        await self._send(
            helpers.update_tool_call(
                "r1",
                title="Read notes.txt",
                locations=[ToolCallLocation(path=notes)],
                raw_input={"file_path": "notes.txt"},
                status="in_progress",
            )
        )
        read = await self.conn.read_text_file(session_id=SESSION, path=notes)
        text = read.content
        await self._send(
            helpers.update_tool_call(
                "r1",
                status="completed",
                content=[helpers.tool_content(helpers.text_block(text))],
            )
        )
        return await self._write(notes, text)

    async def _write(self, notes: str, text: str) -> StopReason:
        fixed = text.replace("teh", "the")
        diff = helpers.tool_diff_content(notes, fixed, text)
        await self._send(helpers.start_tool_call("e1", "Edit", kind="edit", status="pending"))
        await self._send(helpers.update_tool_call("e1", title="Edit notes.txt", content=[diff]))
        options = [
            PermissionOption(option_id="once", name="Allow once", kind="allow_once"),
            PermissionOption(option_id="always", name="Allow always", kind="allow_always"),
            PermissionOption(option_id="no", name="Reject", kind="reject_once"),
        ]
        answer = await self.conn.request_permission(
            session_id=SESSION, tool_call=ToolCallUpdate(tool_call_id="e1"), options=options
        )
        if getattr(answer.outcome, "option_id", None) not in ("once", "always"):
            await self._send(helpers.update_tool_call("e1", status="failed"))
            return "end_turn"
        await self.conn.write_text_file(session_id=SESSION, path=notes, content=fixed)
        await self._send(helpers.update_tool_call("e1", status="completed"))
        await self._send(helpers.update_agent_message_text("Fixed the typo."))
        return "end_turn"

    async def _escape(self) -> StopReason:
        outside = str(self.cwd.parent / "secret.txt")
        await self._send(helpers.start_tool_call("r1", "Read ../secret.txt", kind="read"))
        try:
            await self.conn.read_text_file(session_id=SESSION, path=outside)
        except acp.RequestError as e:
            message = helpers.tool_content(helpers.text_block(f"client refused: {e}"))
            await self._send(helpers.update_tool_call("r1", status="failed", content=[message]))
        return "end_turn"

    async def _wait(self) -> StopReason:
        await self._send(helpers.start_tool_call("b1", "Run sleep", kind="execute"))
        await self._send(helpers.update_tool_call("b1", status="in_progress"))
        print("waiting for session/cancel", file=sys.stderr, flush=True)
        await self.cancelled.wait()
        await self._send(helpers.update_tool_call("b1", status="failed"))
        return "cancelled"


if __name__ == "__main__":
    agent = FakeAgent(sys.argv[1] if len(sys.argv) > 1 else "edit")
    # The SDK finds each handler by name and answers "method not found" for the rest; its
    # Agent protocol lists every method, so a partial agent needs this one ignore.
    asyncio.run(acp.run_agent(agent))  # type: ignore[arg-type]
