"""Context in the agent's turns: usage_update, /compact, recovery from a provider's
context-length error, and a compaction that outlives the process (in-process agent, the
official SDK client, the model a ``FunctionBackend`` behind the real Anthropic backend)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from acp.connection import StreamDirection

from tests.agent.pair import agent_under_test
from tests.agent.support import answer, check_wire, text_of
from toolwire.backends.base import ModelRequest
from toolwire.events import Event, MessageEnd, StopReason, ToolCallStart, Usage
from toolwire.handoff.render import OPEN
from toolwire.testing import ErrorResponse, streams
from toolwire.testing.function import Answer

pytestmark = pytest.mark.anyio

PRICE = '\nprice_per_mtok = { input = 3.0, output = 15.0, cache_read = 0.3, currency = "USD" }\n'
EXTRACTIVE = '\n[compaction]\nsummary = "extractive"\n'
TOO_LONG = ErrorResponse(
    400,
    {
        "type": "error",
        "error": {
            "type": "invalid_request_error",
            "message": "prompt is too long: 40000 tokens > 20000 maximum",
        },
    },
)


def _project(root: Path, files: int = 3, size: int = 30_000) -> None:
    for i in range(files):
        line = f"value_{i} = {i}  # a line of file {i}\n"
        (root / f"f{i}.py").write_text(f"# FILE {i}\n" + line * (size // len(line)))


def _updates(notes: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [n["params"]["update"] for n in notes if n["params"]["update"]["sessionUpdate"] == kind]


def _reads(files: int) -> list[Answer]:
    reads: list[Answer] = [
        answer(("tool", "Read", {"file_path": f"f{i}.py"}, f"toolu_{i}")) for i in range(files)
    ]
    return [*reads, "All read."]


def _counted(input_tokens: int, events: list[Event]) -> list[Event]:
    """``events``, then an end whose usage says ``input_tokens`` in and 20 out."""
    stop: StopReason = "end_turn"
    if any(isinstance(e, ToolCallStart) for e in events):
        stop = "tool_use"
    return [*events, MessageEnd(stop, Usage(input_tokens=input_tokens, output_tokens=20))]


def _messages_text(body: dict[str, Any]) -> str:
    return json.dumps(body["messages"])


async def test_usage_update_after_each_response_and_commands_after_the_new_session(
    tmp_path: Path,
) -> None:
    async with agent_under_test(tmp_path, config="context_window = 50000" + PRICE) as acp:
        _project(acp.root, files=1, size=2_000)
        acp.model.script(
            _counted(1_200, streams.tool_call("toolu_0", "Read", {"file_path": "f0.py"})),
            _counted(3_000, streams.text("Read.")),
        )
        sid = await acp.start()
        done = await acp.prompt(sid, "Read f0")
        assert done.stop_reason == "end_turn"
        usage = _updates(acp.run.notifications(), "usage_update")
        assert len(usage) == 2  # one per model response
        assert all(u["size"] == 50_000 for u in usage)
        assert [u["used"] for u in usage] == [1_220, 3_020]  # input + output
        first, total = (1_200 * 3.0 + 20 * 15.0) / 1e6, (4_200 * 3.0 + 40 * 15.0) / 1e6
        assert usage[0]["cost"] == {"amount": first, "currency": "USD"}
        assert usage[1]["cost"] == {"amount": total, "currency": "USD"}
        (commands,) = _updates(acp.run.notifications(), "available_commands_update")
        names = [c["name"] for c in commands["availableCommands"]]
        assert names == ["compact", "model", "mode", "init", "clear", "rewind"]
        # the update follows the session/new response on the wire
        sent = [e.message for e in acp.run.wire if e.direction == StreamDirection.INCOMING]
        answered = next(i for i, m in enumerate(sent) if "sessionId" in m.get("result", {}))
        listed = next(
            i
            for i, m in enumerate(sent)
            if m.get("params", {}).get("update", {}).get("sessionUpdate")
            == "available_commands_update"
        )
        assert answered < listed
        check_wire(acp.run.wire)
    # every request asks for no more output than the window reserves for it
    assert {body["max_tokens"] for body in acp.model.bodies} == {8192}


async def test_a_context_length_error_compacts_and_retries_once(tmp_path: Path) -> None:
    async with agent_under_test(tmp_path, config=EXTRACTIVE) as acp:
        _project(acp.root)
        acp.model.script(*_reads(3), TOO_LONG, answer(("text", "f2 holds value_2.")))
        sid = await acp.start()
        await acp.prompt(sid, "Read the files")
        before = len(acp.run.notifications())
        done = await acp.prompt(sid, "Which is f2?")
        assert done.stop_reason == "end_turn"
        said = text_of(acp.run.notifications()[before:])
        assert "Compacted" in said
        assert "f2 holds value_2." in said
        assert "failed" not in said
        usage = _updates(acp.run.notifications()[before:], "usage_update")
        assert usage[-1]["size"] == 20_000  # the window the provider named
        check_wire(acp.run.wire)
        # a later load shows the compaction as a message in the transcript
        mark = len(acp.run.notifications())
        await acp.run.conn.load_session(cwd=str(acp.root), session_id=sid, mcp_servers=[])
        assert "Compacted" in text_of(acp.run.notifications()[mark:])
    refused, retried = acp.model.bodies[4], acp.model.bodies[5]
    assert OPEN not in _messages_text(refused)
    assert OPEN in _messages_text(retried)
    assert "Which is f2?" in _messages_text(retried)
    assert "# FILE 2" in _messages_text(retried)  # the newest file read
    assert retried["max_tokens"] <= 10_000


async def test_compact_on_demand_with_a_model_summary_and_a_focus(tmp_path: Path) -> None:
    summary = "Task: find value_2. Decisions: none. Next steps: answer."
    async with agent_under_test(tmp_path, config="context_window = 30000\n") as acp:
        _project(acp.root)
        acp.model.script(*_reads(3), answer(("text", summary)), "It is in f2.py.")
        sid = await acp.start()
        await acp.prompt(sid, "Read the files")
        mark = len(acp.run.notifications())
        done = await acp.prompt(sid, "/compact the value of f2")
        assert done.stop_reason == "end_turn"
        assert "Compacted" in text_of(acp.run.notifications()[mark:])
        await acp.prompt(sid, "Where is value_2?")
        check_wire(acp.run.wire)
    asked = acp.model.bodies[4]
    assert "tools" not in asked  # the summary request
    assert "focus on: the value of f2" in json.dumps(asked)
    after = _messages_text(acp.model.bodies[5])
    assert summary in after
    assert "Focus the user asked for: the value of f2" in after
    assert "/compact" not in after  # a command is not a prompt


async def test_nothing_to_compact_is_said_without_a_model_request(tmp_path: Path) -> None:
    async with agent_under_test(tmp_path) as acp:
        acp.model.script()  # any request fails the test
        sid = await acp.start()
        done = await acp.prompt(sid, "/compact")
        assert done.stop_reason == "end_turn"
        assert "Nothing to compact yet" in text_of(acp.run.notifications())
    assert acp.model.bodies == []


async def test_a_compaction_outlives_the_process(tmp_path: Path) -> None:
    config = "context_window = 30000" + EXTRACTIVE
    async with agent_under_test(tmp_path, config=config) as acp:
        _project(acp.root)
        acp.model.script(*_reads(3), "one", "two")
        sid = await acp.start()
        await acp.prompt(sid, "Read the files")
        await acp.prompt(sid, "/compact")
        await acp.prompt(sid, "Next?")
    async with acp.again() as second:
        await second.run.conn.initialize(protocol_version=1)
        await second.run.conn.resume_session(cwd=str(acp.root), session_id=sid, mcp_servers=[])
        await second.prompt(sid, "And then?")
    one, two = acp.model.bodies[4]["messages"], acp.model.bodies[5]["messages"]
    assert OPEN in json.dumps(one)
    # The same prefix, byte for byte, but for the prompt-cache breakpoint that moved on
    # (docs/context.md, "Prompt caching").
    mark = ', "cache_control": {"type": "ephemeral"}'
    assert json.dumps(two).replace(mark, "").startswith(json.dumps(one).replace(mark, "")[:-1])


async def test_a_switch_to_a_smaller_window_hands_off_within_it(tmp_path: Path) -> None:
    small = (
        '[backends.small]\nprovider = "anthropic"\nmodel = "m"\nbase_url = "http://small.test"\n'
        'api_key_env = "TEST_KEY"\ncontext_window = 16000\nmax_output_tokens = 2000\n'
    )
    async with agent_under_test(tmp_path, config=small + EXTRACTIVE) as acp:
        _project(acp.root, files=6, size=12_000)  # ~24k tokens read on the big model
        reads = _reads(6)
        on_small: list[Answer] = [answer(("text", "Task: read files.")), "Here on the small one."]

        def model(request: ModelRequest) -> Answer:
            # Which backend asked: the model name in the body it sent.
            return (on_small if acp.model.bodies[-1]["model"] == "m" else reads).pop(0)

        acp.model.function = model
        sid = await acp.start()
        await acp.prompt(sid, "Read the files")
        await acp.run.conn.set_config_option(config_id="model", session_id=sid, value="small")
        done = await acp.prompt(sid, "Go on")
        assert done.stop_reason == "end_turn"
        said = text_of(acp.run.notifications())
        assert "Here on the small one." in said
        assert "compacted to fit small's 16000-token window" in said
    summary, first = [body for body in acp.model.bodies if body["model"] == "m"]
    assert "tools" not in summary
    tokens = len(json.dumps(first).encode()) / 3  # the agent's own (high) estimate
    assert tokens + first["max_tokens"] <= 16_000
    sent = _messages_text(first)
    assert "# FILE 5" in sent  # the newest file
    assert "Read the files" in sent
    assert "Go on" in sent


async def test_compact_on_a_short_conversation_keeps_only_the_last_step(tmp_path: Path) -> None:
    async with agent_under_test(tmp_path, config=EXTRACTIVE) as acp:
        _project(acp.root, files=1, size=2_000)
        acp.model.script(*_reads(1), "ok")
        sid = await acp.start()
        await acp.prompt(sid, "Read f0")
        mark = len(acp.run.notifications())
        await acp.prompt(sid, "/compact")
        assert "Compacted" in text_of(acp.run.notifications()[mark:])
        await acp.prompt(sid, "Go on")
    after = _messages_text(acp.model.bodies[-1])
    assert OPEN in after
    assert "Read f0" in after  # the task, in the summary
    assert "# FILE 0" in after  # the file, in the tool context
