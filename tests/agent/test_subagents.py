"""Subagents: the ``Task`` tool, its children, and what the editor and the models see.

Most tests run the agent and the official SDK client in this process with a
``FunctionBackend`` as every model (parent and children alike: a child's request is told
apart by its first message, the prompt the parent wrote for it). The two-families test
runs the parent on a fake Anthropic server and the child on a fake OpenAI-Chat server.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, text_block
from acp.connection import StreamDirection, StreamEvent
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from tests.agent.pair import AgentUnderTest, agent_under_test
from tests.agent.support import (
    APP,
    KEY,
    ScriptedClient,
    agent,
    answer,
    calls_by_id,
    check_wire,
    environment,
    start,
    write_config,
)
from tests.fakes.http import FakeServer, Received, Reply, sse
from toolwire.backends.base import ModelRequest
from toolwire.history import Message
from toolwire.testing import streams

pytestmark = pytest.mark.anyio

PARENT_PROMPT = "Investigate the greeting in three ways"
CHILD = "CHILD"


def _task(n: int, kind: str = "explore", **extra: str) -> tuple[Any, ...]:
    args = {
        "description": f"look {n}",
        "prompt": f"{CHILD} {n}: read app.py",
        "subagent_type": kind,
    }
    return ("tool", "Task", {**args, **extra}, f"toolu_task{n}")


def _child_of(request: ModelRequest) -> str | None:
    """The child's number when ``request`` is a child's, else None."""
    first = request.messages[0].text() if request.messages else ""
    return first.split(":")[0].split()[1] if first.startswith(CHILD) else None


def _last_is_tool(request: ModelRequest) -> bool:
    return request.messages[-1].role == "tool"


def _results(message: Message) -> dict[str, str]:
    return {
        p.call_id: p.content
        for p in message.parts
        if hasattr(p, "call_id") and hasattr(p, "content")
    }


async def _open(acp: AgentUnderTest, *, subagents: bool) -> str:
    """initialize as sent (the SDK's model would drop ``subagents``), then session/new."""
    caps: dict[str, Any] = {"subagents": {}} if subagents else {}
    params = {
        "protocolVersion": PROTOCOL_VERSION,
        "clientCapabilities": caps,
        "clientInfo": {"name": "toolwire-tests", "version": "0"},
    }
    await acp.run.conn._conn.send_request("initialize", params)
    session = await acp.run.conn.new_session(cwd=str(acp.root), mcp_servers=[])
    return str(session.session_id)


async def test_three_children_run_together_within_max_parallel(tmp_path: Path) -> None:
    overlap = {"now": 0, "peak": 0}

    async def model(request: ModelRequest) -> Any:
        n = _child_of(request)
        if n is None:
            if _last_is_tool(request):
                return "All three reported."
            return answer(_task(1), _task(2), _task(3))
        overlap["now"] += 1
        overlap["peak"] = max(overlap["peak"], overlap["now"])
        await asyncio.sleep(0.15)
        overlap["now"] -= 1
        if _last_is_tool(request):
            return f"Child {n} found greet."
        return answer(("tool", "Read", {"file_path": "app.py"}, f"toolu_read{n}"))

    async with agent_under_test(tmp_path, config="\n[subagents]\nmax_parallel = 2\n") as acp:
        acp.model.function = model
        sid = await acp.start()
        started = time.monotonic()
        assert (await acp.prompt(sid, PARENT_PROMPT)).stop_reason == "end_turn"
        took = time.monotonic() - started
        check_wire(acp.run.wire)

        children = [r for r in acp.model.requests if _child_of(r) is not None]
        assert len(children) == 6  # a Read and an answer each
        assert overlap["peak"] == 2  # together, never more than max_parallel
        assert took < 6 * 0.15 + 1.0  # not one after another
        for request in children:  # none of the parent's history, no Task, nothing to edit
            assert PARENT_PROMPT not in json.dumps([m.text() for m in request.messages])
            names = {t.name for t in request.tools}
            assert "Task" not in names
            assert "Edit" not in names
            assert "Read" in names
        parent = [r for r in acp.model.requests if _child_of(r) is None]
        assert "Task" in {t.name for t in parent[0].tools}
        results = _results(parent[-1].messages[-1])
        read = {_child_of(r): _results(r.messages[-1]) for r in children if _last_is_tool(r)}
        for n in (1, 2, 3):
            assert f"Child {n} found greet." in results[f"toolu_task{n}"]
            shown = read[str(n)][f"toolu_read{n}"]  # what the child's Read gave its model
            assert "def greet():" in shown
            assert shown in results[f"toolu_task{n}"]  # reaches the parent verbatim
        cards = calls_by_id(acp.run.notifications())
        for n in (1, 2, 3):
            card = cards[f"toolu_task{n}"]
            assert card["status"] == "completed"
            shown = json.dumps(card["content"])
            assert "Read app.py" in shown
            assert f"Child {n} found greet." in shown
        listed = await acp.run.conn.list_sessions()
        assert [s.session_id for s in listed.sessions] == [sid]  # children are not listed


async def test_digest_stays_within_the_output_bound(tmp_path: Path) -> None:
    reads = 60

    def model(request: ModelRequest) -> Any:
        if _child_of(request) is None:
            return "Done." if _last_is_tool(request) else answer(_task(1))
        done = sum(1 for m in request.messages if m.role == "tool")
        if done >= reads:
            return "Read it all."
        path = f"missing-{done:03d}-" + "x" * 100 + ".py"
        return answer(("tool", "Read", {"file_path": path}, f"toolu_r{done}"))

    extra = "\n[limits]\nmax_live_output_bytes = 1000\n[subagents]\nmax_steps = 100\n"
    async with agent_under_test(tmp_path, config=extra) as acp:
        acp.model.function = model
        sid = await acp.start()
        assert (await acp.prompt(sid, PARENT_PROMPT)).stop_reason == "end_turn"
        check_wire(acp.run.wire)
        task_updates = [
            n["params"]["update"]
            for n in acp.run.notifications()
            if n["params"]["update"].get("toolCallId") == "toolu_task1"
        ]
        assert len(task_updates) < reads  # coalesced, not one per child update
        for update in task_updates:
            for item in update.get("content") or []:
                text = item.get("content", {}).get("text", "")
                assert len(text.encode()) <= 1000
        assert "earlier calls" in json.dumps(task_updates)


async def test_child_permission_reaches_the_client_at_once(acp: AgentUnderTest) -> None:
    edit = {"file_path": "app.py", "old_string": "'hi'", "new_string": "'hey'"}
    asked_at: list[float] = []
    requested: list[float] = []

    def model(request: ModelRequest) -> Any:
        if _child_of(request) is None:
            return "Changed." if _last_is_tool(request) else answer(_task(1, "general-purpose"))
        if _last_is_tool(request):
            return "Edited."
        requested.append(time.monotonic())
        return answer(("tool", "Edit", edit, "toolu_edit"))

    acp.model.function = model
    acp.client.answers = ["allow_once"]
    acp.client.on_permission = lambda: asked_at.append(time.monotonic())
    sid = await acp.start()
    assert (await acp.prompt(sid, PARENT_PROMPT)).stop_reason == "end_turn"
    check_wire(acp.run.wire)
    assert len(acp.client.permissions) == 1
    asked = acp.client.permissions[0]
    assert "general-purpose (look 1)" in asked.title  # names the child
    # From the child's model request (its whole stream included) to the client: 3 ms on
    # an idle machine; the bound is 100 ms from the request alone.
    assert asked_at[0] - requested[0] < 0.1
    assert (acp.root / "app.py").read_text() == APP.replace("'hi'", "'hey'")  # unblocked
    assert [w for w in acp.run.wire if _permission_on(w) not in (None, sid)] == []


def _permission_on(event: StreamEvent) -> str | None:
    message = event.message
    if message.get("method") != "session/request_permission":
        return None
    return str(message["params"]["sessionId"])


async def test_cancel_ends_every_child_within_a_second(acp: AgentUnderTest) -> None:
    started = asyncio.Event()
    running = {"n": 0}

    async def model(request: ModelRequest) -> Any:
        if _child_of(request) is None:  # a command allowed for the session, then children
            if not _last_is_tool(request):
                return answer(("tool", "Bash", {"command": "true"}, "toolu_true"))
            kind = "general-purpose"
            return answer(_task(1, kind), _task(2, kind), _task(3, kind))
        command = {"command": "sleep 30", "description": "wait"}
        if _last_is_tool(request):
            return "Slept."
        running["n"] += 1
        if running["n"] == 3:
            started.set()
        return answer(("tool", "Bash", command, f"toolu_sleep{_child_of(request)}"))

    acp.model.function = model
    acp.client.answers = ["allow_always"]  # in the parent: its children follow it
    sid = await acp.start()
    prompt = asyncio.ensure_future(acp.prompt(sid, PARENT_PROMPT))
    await asyncio.wait_for(started.wait(), 10)
    await asyncio.sleep(0.3)  # the commands are running
    cancelled_at = time.monotonic()
    await acp.run.conn.cancel(session_id=sid)
    result = await asyncio.wait_for(prompt, 5)
    assert time.monotonic() - cancelled_at < 1.0
    assert result.stop_reason == "cancelled"
    assert len(acp.client.permissions) == 1  # "always" given in the parent holds in children
    check_wire(acp.run.wire)
    cards = calls_by_id(acp.run.notifications())
    for n in (1, 2, 3):
        assert cards[f"toolu_task{n}"]["status"] == "failed"
    ended = [
        n["params"]["update"]
        for n in acp.run.notifications()
        if str(n["params"]["update"].get("toolCallId", "")).startswith("toolu_sleep")
    ]
    assert ended == []  # without subagents, the children's calls are only in the digest


# -- the subagents capability ---------------------------------------------------------


def _unstable_check(wire: list[StreamEvent]) -> int:
    """Every session/update against the unstable schema (``SessionNotification``), and no
    child traffic before its ``subagent_update``."""
    validator = _unstable_validator()
    announced: set[str] = set()
    sessions: set[str] = set()
    checked = 0
    for event in wire:
        message = event.message
        if event.direction != StreamDirection.INCOMING:
            continue
        result = message.get("result")
        if isinstance(result, dict) and "sessionId" in result:
            sessions.add(result["sessionId"])
        if message.get("method") != "session/update":
            continue
        params = message["params"]
        errors = list(validator.iter_errors(params))
        assert not errors, errors[0].message
        update = params["update"]
        if update["sessionUpdate"] == "subagent_update":
            announced.add(update["sessionId"])
        elif params["sessionId"] not in sessions:
            assert params["sessionId"] in announced, "child traffic before subagent_update"
        checked += 1
    return checked


def _unstable_validator() -> Any:
    schema = json.loads(UNSTABLE.read_text(encoding="utf-8"))
    uri = "urn:toolwire-tests:acp-unstable"
    registry = Registry().with_resource(uri, Resource.from_contents({**schema, "$id": uri}))
    return Draft202012Validator({"$ref": f"{uri}#/$defs/SessionNotification"}, registry=registry)


UNSTABLE = (
    Path(__file__).parents[1]
    / "node/node_modules/@agentclientprotocol/sdk/schema/v1/schema.unstable.json"
)


@pytest.mark.parametrize("subagents", [True, False], ids=["subagents", "digest"])
async def test_every_line_valid_and_load_replays_children(
    tmp_path: Path, *, subagents: bool
) -> None:
    if not UNSTABLE.is_file():
        pytest.skip("no @agentclientprotocol/sdk schema.unstable.json (make node-deps)")

    def model(request: ModelRequest) -> Any:
        n = _child_of(request)
        if n is None:
            return "Both done." if _last_is_tool(request) else answer(_task(1), _task(2))
        if _last_is_tool(request):
            return f"Child {n} read it."
        return answer(("tool", "Read", {"file_path": "app.py"}, f"toolu_read{n}"))

    async with agent_under_test(tmp_path) as acp:
        acp.model.function = model
        sid = await _open(acp, subagents=subagents)
        assert (await acp.prompt(sid, PARENT_PROMPT)).stop_reason == "end_turn"
        assert _unstable_check(acp.run.wire) > 0
        live = acp.run.notifications()
        announced = [n for n in live if n["params"]["update"]["sessionUpdate"] == "subagent_update"]
        child_ids = {n["params"]["update"]["sessionId"] for n in announced}
        assert len(child_ids) == (2 if subagents else 0)
        child_lines = [n for n in live if n["params"]["sessionId"] in child_ids]
        if subagents:  # the child's own calls, on its own session
            assert any(
                n["params"]["update"].get("toolCallId") == "toolu_read1" for n in child_lines
            )
        async with acp.again() as second:
            await _open(second, subagents=subagents)
            await second.run.conn.load_session(cwd=str(acp.root), session_id=sid, mcp_servers=[])
            assert _unstable_check_loaded(second.run.wire, sid) > 0
            replay = second.run.notifications()
            shown = json.dumps(replay)
            assert "Child 1 read it." in shown
            assert "Child 2 read it." in shown
            replayed_children = {
                n["params"]["update"]["sessionId"]
                for n in replay
                if n["params"]["update"]["sessionUpdate"] == "subagent_update"
            }
            assert replayed_children == child_ids


def _unstable_check_loaded(wire: list[StreamEvent], sid: str) -> int:
    """As ``_unstable_check``, for a ``session/load`` of ``sid`` (no session/new answer)."""
    marked = [
        StreamEvent(StreamDirection.INCOMING, {"id": -1, "result": {"sessionId": sid}}),
        *wire,
    ]
    return _unstable_check(marked)


# -- two provider families ---------------------------------------------------------------


NOTES = "".join(f"row {i}: value {i * 7919 % 104729:06d}\n" for i in range(40))


def _anthropic(events: list[Any]) -> Reply:
    return Reply(chunks=[streams.anthropic_sse(events)])


def _chat(text: str | None = None, call: tuple[str, str, dict[str, Any]] | None = None) -> Reply:
    """An OpenAI Chat Completions stream: a text, or one tool call."""
    base = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "gpt-test"}
    if call is not None:
        call_id, name, args = call
        function = {"name": name, "arguments": json.dumps(args)}
        delta: dict[str, Any] = {
            "tool_calls": [{"index": 0, "id": call_id, "type": "function", "function": function}]
        }
        finish = "tool_calls"
    else:
        delta, finish = {"role": "assistant", "content": text}, "stop"
    events = [
        (None, {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}),
        (None, {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}),
        (None, "[DONE]"),
    ]
    return Reply(chunks=[sse(events)])


async def test_a_child_on_another_provider_family_hands_back_what_it_read(
    tmp_path: Path,
) -> None:
    task = {"description": "read notes", "prompt": f"{CHILD} 1: read notes.txt", "model": "chat"}

    def parent(received: Received) -> Reply:
        body = received.json()
        last = body["messages"][-1]
        if last["role"] == "user" and any(
            b.get("type") == "tool_result" for b in last["content"] if isinstance(b, dict)
        ):
            return _anthropic([*streams.text("Noted."), streams.end()])
        return _anthropic(
            [*streams.tool_call("toolu_task1", "Task", task), streams.end("tool_use")]
        )

    def child(received: Received) -> Reply:
        body = received.json()
        if body["messages"][-1]["role"] == "tool":
            return _chat("The notes have 40 rows.")
        return _chat(call=("call_read", "Read", {"file_path": "notes.txt"}))

    root = tmp_path / "project"
    root.mkdir()
    (root / "notes.txt").write_text(NOTES, encoding="utf-8")
    with FakeServer(parent) as anthropic, FakeServer(child) as chat:
        config = write_config(
            tmp_path,
            'default_backend = "claude"\n'
            f'[backends.claude]\nprovider = "anthropic"\nmodel = "claude-test"\n'
            f'base_url = "{anthropic.url}"\napi_key_env = "TEST_KEY"\n'
            f'[backends.chat]\nprovider = "openai-chat"\nmodel = "gpt-test"\n'
            f'base_url = "{chat.url}/v1"\napi_key_env = "TEST_KEY"\n',
        )
        client = ScriptedClient()
        env = environment(tmp_path, TEST_KEY=KEY)
        async with agent(tmp_path, client, "--config", str(config), env=env) as run:
            sid = await start(run.conn, root)
            result = await run.conn.prompt(session_id=sid, prompt=[text_block(PARENT_PROMPT)])
            assert result.stop_reason == "end_turn"
            check_wire(run.wire)
        assert len(chat.requests) == 2
        for request in chat.requests:  # the child's requests: none of the parent's history
            assert PARENT_PROMPT not in request.body.decode()
        read = chat.requests[1].json()["messages"][-1]["content"]  # the child's Read result
        assert "row 39: value 099383" in read
        final = anthropic.requests[-1].json()["messages"][-1]["content"]
        (result,) = [b for b in final if b.get("tool_use_id") == "toolu_task1"]
        assert read in result["content"]  # the file the child read, verbatim
        assert "The notes have 40 rows." in result["content"]
