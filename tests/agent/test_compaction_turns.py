"""Context in the agent's turns: usage_update, /compact, recovery from a provider's
context-length error, and a compaction that outlives the process (in-process agent, the
official SDK client, a scripted Anthropic-compatible server)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from acp import text_block
from acp.connection import StreamDirection

from tests.agent.support import (
    KEY,
    ScriptedClient,
    agent,
    check_wire,
    environment,
    fake_backend,
    response,
    start,
    text_of,
    write_config,
)
from tests.fakes.http import FakeServer, Received, Reply
from toolwire.events import StopReason, ToolCallStart
from toolwire.handoff.render import OPEN
from toolwire.testing import streams

PRICE = '\nprice_per_mtok = { input = 3.0, output = 15.0, cache_read = 0.3, currency = "USD" }\n'
TOO_LONG = {
    "type": "error",
    "error": {
        "type": "invalid_request_error",
        "message": "prompt is too long: 40000 tokens > 20000 maximum",
    },
}


def _project(tmp_path: Path, files: int = 3, size: int = 30_000) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    for i in range(files):
        line = f"value_{i} = {i}  # a line of file {i}\n"
        (root / f"f{i}.py").write_text(f"# FILE {i}\n" + line * (size // len(line)))
    return root


def _updates(notes: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [n["params"]["update"] for n in notes if n["params"]["update"]["sessionUpdate"] == kind]


def _reads(files: int) -> list[Reply]:
    replies = [
        Reply(chunks=[response(("tool", "Read", {"file_path": f"f{i}.py"}, f"toolu_{i}")).encode()])
        for i in range(files)
    ]
    return [*replies, Reply(chunks=[response(("text", "All read."), n=files).encode()])]


def _counted(input_tokens: int, events: list[Any]) -> bytes:
    """An Anthropic stream whose usage says ``input_tokens`` in and 20 out."""
    stop: StopReason = "end_turn"
    if any(isinstance(e, ToolCallStart) for e in events):
        stop = "tool_use"
    return streams.anthropic_sse([*events, streams.end(stop, 20)], input_tokens=input_tokens)


def _messages_text(request: Received) -> str:
    return json.dumps(request.json()["messages"])


def test_usage_update_after_each_response_and_commands_after_the_new_session(
    tmp_path: Path,
) -> None:
    root = _project(tmp_path, files=1, size=2_000)
    with FakeServer() as server:
        server.script(
            Reply(
                chunks=[
                    _counted(1_200, streams.tool_call("toolu_0", "Read", {"file_path": "f0.py"}))
                ]
            ),
            Reply(chunks=[_counted(3_000, streams.text("Read."))]),
        )
        config = write_config(tmp_path, fake_backend(server.url) + "context_window = 50000" + PRICE)
        env = environment(tmp_path, TEST_KEY=KEY)

        async def scenario() -> None:
            async with agent(tmp_path, ScriptedClient(), "--config", str(config), env=env) as run:
                sid = await start(run.conn, root)
                done = await run.conn.prompt(session_id=sid, prompt=[text_block("Read f0")])
                assert done.stop_reason == "end_turn"
                usage = _updates(run.notifications(), "usage_update")
                assert len(usage) == 2  # one per model response
                assert all(u["size"] == 50_000 for u in usage)
                assert [u["used"] for u in usage] == [1_220, 3_020]  # input + output
                first, total = (1_200 * 3.0 + 20 * 15.0) / 1e6, (4_200 * 3.0 + 40 * 15.0) / 1e6
                assert usage[0]["cost"] == {"amount": first, "currency": "USD"}
                assert usage[1]["cost"] == {"amount": total, "currency": "USD"}
                (commands,) = _updates(run.notifications(), "available_commands_update")
                names = [c["name"] for c in commands["availableCommands"]]
                assert names == ["compact", "model", "mode", "init", "clear", "rewind"]
                # the update follows the session/new response on the wire
                sent = [e.message for e in run.wire if e.direction == StreamDirection.INCOMING]
                answered = next(i for i, m in enumerate(sent) if "sessionId" in m.get("result", {}))
                listed = next(
                    i
                    for i, m in enumerate(sent)
                    if m.get("params", {}).get("update", {}).get("sessionUpdate")
                    == "available_commands_update"
                )
                assert answered < listed
                check_wire(run.wire)

        asyncio.run(scenario())
        # every request asks for no more output than the window reserves for it
        assert {r.json()["max_tokens"] for r in server.requests} == {8192}


def test_a_context_length_error_compacts_and_retries_once(tmp_path: Path) -> None:
    root = _project(tmp_path)
    with FakeServer() as server:
        server.script(
            *_reads(3),
            Reply(400, [json.dumps(TOO_LONG).encode()], content_type="application/json"),
            Reply(chunks=[response(("text", "f2 holds value_2."), n=9).encode()]),
        )
        config = write_config(
            tmp_path, fake_backend(server.url) + '\n[compaction]\nsummary = "extractive"\n'
        )
        env = environment(tmp_path, TEST_KEY=KEY)

        async def scenario() -> None:
            async with agent(tmp_path, ScriptedClient(), "--config", str(config), env=env) as run:
                sid = await start(run.conn, root)
                await run.conn.prompt(session_id=sid, prompt=[text_block("Read the files")])
                before = len(run.notifications())
                done = await run.conn.prompt(session_id=sid, prompt=[text_block("Which is f2?")])
                assert done.stop_reason == "end_turn"
                said = text_of(run.notifications()[before:])
                assert "Compacted" in said
                assert "f2 holds value_2." in said
                assert "failed" not in said
                usage = _updates(run.notifications()[before:], "usage_update")
                assert usage[-1]["size"] == 20_000  # the window the provider named
                check_wire(run.wire)
                # a later load shows the compaction as a message in the transcript
                mark = len(run.notifications())
                await run.conn.load_session(cwd=str(root), session_id=sid, mcp_servers=[])
                assert "Compacted" in text_of(run.notifications()[mark:])

        asyncio.run(scenario())
        refused, retried = server.requests[4], server.requests[5]
        assert OPEN not in _messages_text(refused)
        assert OPEN in _messages_text(retried)
        assert "Which is f2?" in _messages_text(retried)
        assert "# FILE 2" in _messages_text(retried)  # the newest file read
        assert retried.json()["max_tokens"] <= 10_000


def test_compact_on_demand_with_a_model_summary_and_a_focus(tmp_path: Path) -> None:
    root = _project(tmp_path)
    summary = "Task: find value_2. Decisions: none. Next steps: answer."
    with FakeServer() as server:
        server.script(
            *_reads(3),
            Reply(chunks=[response(("text", summary), n=7).encode()]),
            Reply(chunks=[response(("text", "It is in f2.py."), n=8).encode()]),
        )
        config = write_config(tmp_path, fake_backend(server.url) + "context_window = 30000\n")
        env = environment(tmp_path, TEST_KEY=KEY)

        async def scenario() -> None:
            async with agent(tmp_path, ScriptedClient(), "--config", str(config), env=env) as run:
                sid = await start(run.conn, root)
                await run.conn.prompt(session_id=sid, prompt=[text_block("Read the files")])
                mark = len(run.notifications())
                done = await run.conn.prompt(
                    session_id=sid, prompt=[text_block("/compact the value of f2")]
                )
                assert done.stop_reason == "end_turn"
                assert "Compacted" in text_of(run.notifications()[mark:])
                await run.conn.prompt(session_id=sid, prompt=[text_block("Where is value_2?")])
                check_wire(run.wire)

        asyncio.run(scenario())
        asked = server.requests[4].json()
        assert "tools" not in asked  # the summary request
        assert "focus on: the value of f2" in json.dumps(asked)
        after = _messages_text(server.requests[5])
        assert summary in after
        assert "Focus the user asked for: the value of f2" in after
        assert "/compact" not in after  # a command is not a prompt


def test_nothing_to_compact_is_said_without_a_model_request(tmp_path: Path) -> None:
    root = _project(tmp_path, files=0)
    with FakeServer() as server:
        config = write_config(tmp_path, fake_backend(server.url))
        env = environment(tmp_path, TEST_KEY=KEY)

        async def scenario() -> None:
            async with agent(tmp_path, ScriptedClient(), "--config", str(config), env=env) as run:
                sid = await start(run.conn, root)
                done = await run.conn.prompt(session_id=sid, prompt=[text_block("/compact")])
                assert done.stop_reason == "end_turn"
                assert "Nothing to compact yet" in text_of(run.notifications())

        asyncio.run(scenario())
        assert server.requests == []


def test_a_compaction_outlives_the_process(tmp_path: Path) -> None:
    root = _project(tmp_path)
    with FakeServer() as server:
        server.script(
            *_reads(3),
            Reply(chunks=[response(("text", "one"), n=7).encode()]),
            Reply(chunks=[response(("text", "two"), n=8).encode()]),
        )
        config = write_config(
            tmp_path,
            fake_backend(server.url)
            + 'context_window = 30000\n[compaction]\nsummary = "extractive"\n',
        )
        env = environment(tmp_path, TEST_KEY=KEY)

        async def first() -> str:
            async with agent(tmp_path, ScriptedClient(), "--config", str(config), env=env) as run:
                sid = await start(run.conn, root)
                await run.conn.prompt(session_id=sid, prompt=[text_block("Read the files")])
                await run.conn.prompt(session_id=sid, prompt=[text_block("/compact")])
                await run.conn.prompt(session_id=sid, prompt=[text_block("Next?")])
                return sid

        async def second(sid: str) -> None:
            async with agent(tmp_path, ScriptedClient(), "--config", str(config), env=env) as run:
                await run.conn.initialize(protocol_version=1)
                await run.conn.resume_session(cwd=str(root), session_id=sid, mcp_servers=[])
                await run.conn.prompt(session_id=sid, prompt=[text_block("And then?")])

        asyncio.run(second(asyncio.run(first())))
        one, two = server.requests[4].json()["messages"], server.requests[5].json()["messages"]
        assert OPEN in json.dumps(one)
        # The same prefix, byte for byte, but for the prompt-cache breakpoint that moved on
        # (docs/context.md, "Prompt caching").
        mark = ', "cache_control": {"type": "ephemeral"}'
        assert json.dumps(two).replace(mark, "").startswith(json.dumps(one).replace(mark, "")[:-1])


def test_a_switch_to_a_smaller_window_hands_off_within_it(tmp_path: Path) -> None:
    root = _project(tmp_path, files=6, size=12_000)  # ~24k tokens read on the big model
    with FakeServer() as big, FakeServer() as small:
        big.script(*_reads(6))
        small.script(
            Reply(chunks=[response(("text", "Task: read files."), n=8).encode()]),  # summary
            Reply(chunks=[response(("text", "Here on the small one."), n=9).encode()]),
        )
        config = (
            'default_backend = "big"\n'
            f'[backends.big]\nprovider = "anthropic"\nmodel = "claude-big"\n'
            f'base_url = "{big.url}"\napi_key_env = "TEST_KEY"\n'
            f'[backends.small]\nprovider = "anthropic"\nmodel = "m"\nbase_url = "{small.url}"\n'
            'api_key_env = "TEST_KEY"\ncontext_window = 16000\nmax_output_tokens = 2000\n'
            '[compaction]\nsummary = "extractive"\n'
        )
        path = write_config(tmp_path, config)
        env = environment(tmp_path, TEST_KEY=KEY)

        async def scenario() -> None:
            async with agent(tmp_path, ScriptedClient(), "--config", str(path), env=env) as run:
                sid = await start(run.conn, root)
                await run.conn.prompt(session_id=sid, prompt=[text_block("Read the files")])
                await run.conn.set_config_option(config_id="model", session_id=sid, value="small")
                done = await run.conn.prompt(session_id=sid, prompt=[text_block("Go on")])
                assert done.stop_reason == "end_turn"
                said = text_of(run.notifications())
                assert "Here on the small one." in said
                assert "compacted to fit small's 16000-token window" in said

        asyncio.run(scenario())
        summary, first = small.requests
        assert "tools" not in summary.json()
        body = first.json()
        tokens = len(json.dumps(body).encode()) / 3  # the agent's own (high) estimate
        assert tokens + body["max_tokens"] <= 16_000
        sent = _messages_text(first)
        assert "# FILE 5" in sent  # the newest file
        assert "Read the files" in sent
        assert "Go on" in sent


def test_compact_on_a_short_conversation_keeps_only_the_last_step(tmp_path: Path) -> None:
    root = _project(tmp_path, files=1, size=2_000)
    with FakeServer() as server:
        server.script(*_reads(1), Reply(chunks=[response(("text", "ok"), n=5).encode()]))
        config = write_config(
            tmp_path, fake_backend(server.url) + '\n[compaction]\nsummary = "extractive"\n'
        )
        env = environment(tmp_path, TEST_KEY=KEY)

        async def scenario() -> None:
            async with agent(tmp_path, ScriptedClient(), "--config", str(config), env=env) as run:
                sid = await start(run.conn, root)
                await run.conn.prompt(session_id=sid, prompt=[text_block("Read f0")])
                mark = len(run.notifications())
                await run.conn.prompt(session_id=sid, prompt=[text_block("/compact")])
                assert "Compacted" in text_of(run.notifications()[mark:])
                await run.conn.prompt(session_id=sid, prompt=[text_block("Go on")])

        asyncio.run(scenario())
        after = _messages_text(server.requests[-1])
        assert OPEN in after
        assert "Read f0" in after  # the task, in the summary
        assert "# FILE 0" in after  # the file, in the tool context
