"""A long task on a small window: usage, automatic and on-demand compaction, cancel.

The agent runs against ``tests.fakes.windowed``: a fake Anthropic model that enforces a
24k-token window with the API's own 400 and reads 40 files of 8 KB (about 2.7k tokens
each as ``Read`` shows them: the window holds seven beside the agent's prompt and tools)
one tool call at a time. The client is the official ACP Python SDK; the main scenario
spawns ``python -m toolwire acp`` against ``WindowedServer`` (HTTP), the others run on the
``acp`` fixture with ``WindowedModel`` as its model's function. The SDK's capability
model drops ``clientCapabilities.session.compaction`` and ``.notices`` (it predates
them), so ``initialize`` goes out through the SDK connection's raw ``send_request``. Every
line the agent wrote is validated against the ACP v1 JSON Schema (the one shipped in
``@agentclientprotocol/sdk``, which has ``compaction_update``, ``notice`` and
``usage_update``); the SDK client itself logs and drops the kinds its models lack.
"""

from __future__ import annotations

import asyncio
import json
import random
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, text_block
from acp.client.connection import ClientSideConnection
from acp.connection import StreamDirection, StreamEvent

from tests.agent.pair import AgentUnderTest, agent_under_test
from tests.agent.support import (
    KEY,
    ScriptedClient,
    check_update,
    check_wire,
    environment,
    spawn_agent,
    write_config,
)
from tests.fakes.windowed import (
    SUMMARY,
    WindowedModel,
    WindowedServer,
    count_tokens,
    read_view,
)
from toolwire.decode.anthropic import AnthropicDecoder
from toolwire.events import MessageEnd, ToolCallEnd, ToolCallStart

pytestmark = pytest.mark.anyio

WINDOW = 24_000
OUTPUT = 2_048
FILES = 40
FILE_BYTES = 8 * 1024
TASK = (
    f"Read all {FILES} files of this project one by one, in order, and then tell me "
    "which of them mentions the word 'zeppelin'."
)
SHORT_TASK = "Read the first five files of this project and say what they are about."
SHORT = 5  # files: about 16k tokens with the agent's prompt, under the 80% threshold
CAPABILITIES: Mapping[str, dict[str, Any]] = {
    "plain": {},
    "compaction": {"session": {"compaction": {}}},
    "notices": {"session": {"notices": {}}},
}
_WORDS = (
    *("parser", "token", "buffer", "stream", "window", "budget", "cache", "handoff"),
    *("summary", "request", "answer", "session", "cursor", "offset", "module", "widget"),
    *("render", "layout", "engine", "signal", "record"),
)


# -- the project, the config, the client ----------------------------------------------


def big_project(
    tmp_path: Path, count: int = FILES, size: int = FILE_BYTES
) -> tuple[Path, list[Path]]:
    """``count`` files of ``size`` bytes, distinct, each naming itself on its first line."""
    root = tmp_path / "project"
    root.mkdir()
    files = []
    for n in range(1, count + 1):
        path = root / f"file_{n:02d}.txt"
        pick = random.Random(n)
        lines = [f"{path.name}: part {n} of {count}"]
        while sum(len(line) + 1 for line in lines) < size - 80:
            words = " ".join(pick.choice(_WORDS) for _ in range(9))
            lines.append(f"{n:02d}.{len(lines):03d} {words}")
        text = "\n".join(lines) + "\n"
        path.write_text(text + "#" * (size - len(text) - 1) + "\n", encoding="utf-8")
        files.append(path)
    return root, files


def small_config(tmp_path: Path, url: str, extra: str = "") -> Path:
    """The default backend: an Anthropic server at ``url`` with a 24k window."""
    return write_config(
        tmp_path,
        'default_backend = "small"\n'
        '[backends.small]\nprovider = "anthropic"\nmodel = "claude-test"\n'
        f'base_url = "{url}"\napi_key_env = "TEST_KEY"\n'
        f"context_window = {WINDOW}\nmax_output_tokens = {OUTPUT}\n{extra}",
    )


def small_window(
    tmp_path: Path, fake: WindowedModel, extra: str = ""
) -> AbstractAsyncContextManager[AgentUnderTest]:
    """The ``acp`` pair with a 24k window on its backend, ``fake`` answering its model."""
    window = f"context_window = {WINDOW}\nmax_output_tokens = {OUTPUT}\n{extra}"
    return _served(agent_under_test(tmp_path, config=window), fake)


@asynccontextmanager
async def _served(
    pair: AbstractAsyncContextManager[AgentUnderTest], fake: WindowedModel
) -> AsyncIterator[AgentUnderTest]:
    async with pair as acp:
        fake.serve(acp.model)
        try:
            yield acp
        finally:
            fake.release()  # a stalled summary answers (to nobody) and its thread ends


async def open_session(conn: ClientSideConnection, root: Path, variant: str) -> str:
    """``initialize`` advertising the variant's capabilities as sent, then a session."""
    params = {
        "protocolVersion": PROTOCOL_VERSION,
        "clientCapabilities": CAPABILITIES[variant],
        "clientInfo": {"name": "toolwire-tests", "version": "0"},
    }
    # The SDK's ClientCapabilities would drop session.compaction: the raw params go out.
    answer = await conn._conn.send_request("initialize", params)
    assert answer["protocolVersion"] == PROTOCOL_VERSION
    session = await conn.new_session(cwd=str(root), mcp_servers=[])
    return str(session.session_id)


async def ask(conn: ClientSideConnection, sid: str, text: str) -> str:
    result = await conn.prompt(session_id=sid, prompt=[text_block(text)])
    return str(result.stop_reason)


# -- reading the wire ---------------------------------------------------------------------


def updates(wire: list[StreamEvent], kind: str | None = None) -> list[dict[str, Any]]:
    """The ``update`` of each ``session/update`` the agent sent (of one kind, if given)."""
    out = [
        e.message["params"]["update"]
        for e in wire
        if e.direction == StreamDirection.INCOMING and e.message.get("method") == "session/update"
    ]
    return [u for u in out if kind is None or u["sessionUpdate"] == kind]


def compacted_messages(wire: list[StreamEvent]) -> list[str]:
    return [
        u["content"]["text"]
        for u in updates(wire, "agent_message_chunk")
        if u["content"].get("type") == "text" and u["content"]["text"].startswith("Compacted ")
    ]


def compactions_by_id(wire: list[StreamEvent]) -> dict[str, list[dict[str, Any]]]:
    """Each ``compaction_update``, grouped by ``compactionId`` in order."""
    out: dict[str, list[dict[str, Any]]] = {}
    for update in updates(wire, "compaction_update"):
        out.setdefault(update["compactionId"], []).append(update)
    return out


def check_compaction_lines(sid: str, wire: list[StreamEvent], final: str = "completed") -> int:
    """Every compaction went ``in_progress`` then ``final``; each line valid; how many."""
    grouped = compactions_by_id(wire)
    for cid, lines in grouped.items():
        for line in lines:
            check_update(sid, line)
        statuses = [line["status"] for line in lines]
        assert statuses[0] == "in_progress", f"{cid}: {statuses}"
        assert statuses[-1] in ("completed", "failed", "cancelled"), f"{cid}: {statuses}"
        assert set(statuses[:-1]) == {"in_progress"}, f"{cid}: {statuses}"
        if statuses[-1] == "completed":
            summary = lines[-1]["summary"]
            assert summary, f"{cid}: completed without a summary"
            assert all(b["type"] == "text" and b["text"].strip() for b in summary)
    finals = [lines[-1]["status"] for lines in grouped.values()]
    assert finals.count(final) >= 1, finals
    return finals.count("completed")


def check_visible(sid: str, wire: list[StreamEvent], variant: str) -> int:
    """How the variant's client was told of the compactions; returns how many completed."""
    said = compacted_messages(wire)
    notices = updates(wire, "notice")
    if variant == "compaction":
        assert not said, "a plain compaction message to a client that has compaction_update"
        assert not [n for n in notices if n.get("title", "").startswith("Compacted")]
        return check_compaction_lines(sid, wire)
    assert not updates(wire, "compaction_update"), "compaction_update without the capability"
    if variant == "notices":
        assert not said
        compacted = [n for n in notices if n["title"].startswith("Compacted")]
        assert all(n["severity"] == "info" and n.get("description") for n in compacted)
        return len(compacted)
    assert not notices, "a notice without the capability"
    return len(said)


def check_usage(wire: list[StreamEvent], responses: int) -> None:
    usage = updates(wire, "usage_update")
    assert len(usage) >= responses, f"{len(usage)} usage_update for {responses} responses"
    assert all(u["size"] == WINDOW for u in usage), {u["size"] for u in usage}
    assert all(0 < u["used"] <= WINDOW for u in usage), [u["used"] for u in usage]


def check_no_failure(fake: WindowedModel, wire: list[StreamEvent]) -> None:
    """No failed prompt: every 400 the fake sent was followed by a request that fit."""
    for rejection in fake.rejected:
        after = [s for s in fake.model_requests() if s.index > rejection.index]
        assert after, f"no retry after {rejection}"
        assert after[0].status == 200, f"the retry after {rejection} did not fit either"
    said = "".join(u["content"].get("text", "") for u in updates(wire, "agent_message_chunk"))
    for needle in ("HTTP 4", "prompt is too long", "exceed context limit"):
        assert needle not in said, f"the agent said {needle!r}"


# -- the fake itself -------------------------------------------------------------------------


def _post(url: str, body: dict[str, Any]) -> tuple[int, bytes]:
    request = urllib.request.Request(
        f"{url}/v1/messages", json.dumps(body).encode(), {"content-type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def test_the_fake_counts_and_enforces_its_window(tmp_path: Path) -> None:
    """Its count in ``message_start``, the API's 400 bodies, a stream the decoder takes."""
    _, files = big_project(tmp_path, count=1)
    tools = [{"name": "Read", "description": "Reads.", "input_schema": {"type": "object"}}]
    small = {"model": "m", "max_tokens": 100, "system": "s", "tools": tools, "stream": True}
    small["messages"] = [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]
    with WindowedServer(window=1000) as fake:
        fake.plan("hi", files)
        status, body = _post(fake.url, small)
        assert status == 200
        events = AnthropicDecoder().feed(body)
        (end,) = [e for e in events if isinstance(e, MessageEnd)]
        assert end.stop_reason == "tool_use"
        (start,) = [e for e in events if isinstance(e, ToolCallStart)]
        (call,) = [e for e in events if isinstance(e, ToolCallEnd)]
        assert (start.name, call.arguments) == ("Read", {"file_path": str(files[0])})
        assert fake.seen[0].tokens == count_tokens(small)
        first = json.loads(body.split(b"data: ", 1)[1].split(b"\n", 1)[0])
        assert first["type"] == "message_start"
        assert first["message"]["usage"]["input_tokens"] == count_tokens(small)
        share = "input length and `max_tokens` exceed context limit: {} + 100 > 1000, "
        share += "decrease input length or `max_tokens` and try again"
        for text, wording in (
            ("x" * 3300, share),
            ("x" * 3600, "prompt is too long: {} tokens > 1000 maximum"),
        ):
            big = {**small, "messages": [{"role": "user", "content": text}]}
            status, body = _post(fake.url, big)
            assert status == 400
            error = {"type": "invalid_request_error", "message": wording.format(count_tokens(big))}
            assert json.loads(body) == {"type": "error", "error": error}
        assert len(fake.rejected) == 2
        assert fake.violations == []


# -- the Done-when scenario ---------------------------------------------------------------


@pytest.mark.e2e
@pytest.mark.slow
@pytest.mark.parametrize("variant", ["plain", "compaction", "notices"])
def test_forty_files_on_a_24k_window(tmp_path: Path, variant: str) -> None:
    """``toolwire acp`` (a process) reads 40 files of 8 KB through a 24k window."""
    root, files = big_project(tmp_path)
    with WindowedServer(window=WINDOW) as fake:
        config = small_config(tmp_path, fake.url)
        env = environment(tmp_path, TEST_KEY=KEY)
        client = ScriptedClient()

        async def scenario() -> None:
            async with spawn_agent(tmp_path, client, "--config", str(config), env=env) as run:
                sid = await open_session(run.conn, root, variant)
                fake.plan(TASK, files)
                assert await ask(run.conn, sid, TASK) == "end_turn"
                check_wire(run.wire)
                check_no_failure(fake, run.wire)
                said = "".join(
                    u["content"].get("text", "") for u in updates(run.wire, "agent_message_chunk")
                )
                assert fake.served == files, f"every file read once, in order; said: {said[-600:]}"
                answered = [s for s in fake.model_requests() if s.status == 200]
                check_usage(run.wire, len(answered))
                last = updates(run.wire, "usage_update")[-1]
                assert last["used"] >= answered[-1].tokens, "usage counts the provider's input"
                told = check_visible(sid, run.wire, variant)
                assert told >= 1, "no compaction on a task 4 times the window"
                assert told == fake.compactions(), "each compaction shows in the next request"
                summaries = fake.summaries()
                assert len(summaries) == told, "one model summary per compaction"
                assert fake.violations == []
                if variant == "compaction":  # the model's summary reaches the client
                    done = [ls[-1] for ls in compactions_by_id(run.wire).values()]
                    assert all(SUMMARY in d["summary"][0]["text"] for d in done)
                    assert all(TASK in d["summary"][0]["text"] for d in done)

        asyncio.run(scenario())


# -- recovery from the provider's context-length error ------------------------------------


@pytest.mark.parametrize("wording", ["max_tokens", "prompt"])
async def test_context_length_error_compacts_and_retries(tmp_path: Path, wording: str) -> None:
    """Automatic compaction off: the 400 itself compacts, and the request is sent again.

    Both of the API's wordings: "input length and `max_tokens` exceed context limit"
    (the request fits the window, not with the answer's share) and "prompt is too long".
    """
    root, files = big_project(tmp_path, count=16)
    fake = WindowedModel(window=WINDOW, wording=wording)
    async with small_window(tmp_path, fake, "[compaction]\nenabled = false\n") as acp:
        sid = await open_session(acp.run.conn, root, "plain")
        fake.plan(TASK, files)
        assert await ask(acp.run.conn, sid, TASK) == "end_turn"
        assert fake.rejected, "the fake never answered 400: nothing was recovered"
        said = "prompt is too long" if wording == "prompt" else "exceed context limit"
        assert all(said in r.message for r in fake.rejected), fake.rejected
        check_no_failure(fake, acp.run.wire)
        assert fake.served == files
        assert len(compacted_messages(acp.run.wire)) == fake.compactions() >= 1
        assert fake.violations == []
        check_wire(acp.run.wire)


async def test_one_result_bigger_than_the_window_is_cut(tmp_path: Path) -> None:
    """A file of 80 KB (about 26k tokens as Read shows it) in a 24k window: cut, and said."""
    root, files = big_project(tmp_path, count=1, size=80 * 1024)
    (huge,) = files
    lines = huge.read_text(encoding="utf-8").splitlines()
    fake = WindowedModel(window=WINDOW)
    async with small_window(tmp_path, fake) as acp:
        sid = await open_session(acp.run.conn, root, "plain")
        fake.plan(SHORT_TASK, files)
        assert await ask(acp.run.conn, sid, SHORT_TASK) == "end_turn"
        check_no_failure(fake, acp.run.wire)
        last = fake.model_requests()[-1]
        assert last.status == 200
        assert last.answered == "final"
        assert f"     1\t{lines[0]}" in last.text, "the head survives"
        assert f"\t{lines[-1]}" in last.text, "the tail survives"
        assert "chars omitted" in last.text, "the cut is marked"
        assert SHORT_TASK in last.text
        (said,) = compacted_messages(acp.run.wire)
        assert "cut" in said, "the user is told a result was cut"
        check_wire(acp.run.wire)


# -- /compact on demand -------------------------------------------------------------------


@pytest.mark.parametrize("variant", ["plain", "compaction"])
async def test_compact_command(tmp_path: Path, variant: str) -> None:
    """``/compact focus`` compacts with one summary request and ends the turn."""
    root, files = big_project(tmp_path, count=SHORT + 1)
    fake = WindowedModel(window=WINDOW)
    async with small_window(tmp_path, fake) as acp:
        conn, wire = acp.run.conn, acp.run.wire
        sid = await open_session(conn, root, variant)
        check_commands_after_new(wire)
        fake.plan(SHORT_TASK, files[:SHORT])
        assert await ask(conn, sid, SHORT_TASK) == "end_turn"
        before = len(fake.seen)
        assert not any(s.compacted for s in fake.seen), "a short task needs none"
        assert await ask(conn, sid, "/compact focus on the parser") == "end_turn"
        during = fake.seen[before:]
        assert [s.kind for s in during] == ["summary"], "only the summary request"
        assert "focus on the parser" in during[0].text, "the focus steers the summary"
        assert check_visible(sid, wire, variant) == 1
        fake.plan("Which file was the longest?")
        assert await ask(conn, sid, "Which file was the longest?") == "end_turn"
        after = fake.model_requests()[-1]
        assert after.compacted, "the next request starts from the compaction"
        newest = files[SHORT - 1].read_text(encoding="utf-8")
        assert read_view(newest) in after.text
        assert SHORT_TASK in after.text
        assert fake.violations == []
        assert fake.rejected == []
        check_wire(wire)


def check_commands_after_new(wire: list[StreamEvent]) -> None:
    """``available_commands_update`` lists ``compact``, after the session/new response."""
    asked = next(
        e.message["id"]
        for e in wire
        if e.direction == StreamDirection.OUTGOING and e.message.get("method") == "session/new"
    )
    incoming = [e.message for e in wire if e.direction == StreamDirection.INCOMING]
    answered = next(i for i, m in enumerate(incoming) if m.get("id") == asked and "result" in m)
    listed = [
        i
        for i, m in enumerate(incoming)
        if m.get("method") == "session/update"
        and m["params"]["update"]["sessionUpdate"] == "available_commands_update"
    ]
    assert listed, "no available_commands_update"
    assert listed[0] > answered, "available_commands_update before the session/new response"
    names = [c["name"] for c in incoming[listed[0]]["params"]["update"]["availableCommands"]]
    assert "compact" in names


# -- cancel during a compaction -----------------------------------------------------------

FOLLOW_UP = "Which of the five files is longest?"


async def test_cancel_during_compact_leaves_the_session_as_it_was(tmp_path: Path) -> None:
    """A cancelled ``/compact``: ``cancelled`` on the wire, the next request unchanged.

    The control is the same session without the ``/compact``: a second agent, a second
    model, the same project; its request for the follow-up prompt must be the same bytes.
    """
    root, files = big_project(tmp_path, count=SHORT)

    async def session(home: Path, cancel: bool) -> bytes:
        fake = WindowedModel(window=WINDOW)
        async with small_window(home, fake) as acp:
            conn, wire = acp.run.conn, acp.run.wire
            sid = await open_session(conn, root, "compaction")
            fake.plan(SHORT_TASK, files)
            assert await ask(conn, sid, SHORT_TASK) == "end_turn"
            if cancel:
                fake.stall_summaries()
                compact = asyncio.create_task(ask(conn, sid, "/compact"))
                started = await asyncio.to_thread(fake.summary_started.wait, 10)
                assert started, "the summary request never came"
                await conn.cancel(session_id=sid)
                assert await asyncio.wait_for(compact, 10) == "cancelled"
                fake.release()
                (lines,) = compactions_by_id(wire).values()
                assert [line["status"] for line in lines] == ["in_progress", "cancelled"]
                for line in lines:
                    check_update(sid, line)
                assert not compacted_messages(wire)
            fake.plan(FOLLOW_UP)
            assert await ask(conn, sid, FOLLOW_UP) == "end_turn"
            check_wire(wire)
        last = fake.model_requests()[-1]
        assert not last.compacted
        assert fake.violations == []
        return last.raw

    for home in ("cancelled", "control"):
        (tmp_path / home).mkdir()
    cancelled = await session(tmp_path / "cancelled", cancel=True)
    control = await session(tmp_path / "control", cancel=False)
    assert cancelled == control, "the cancelled compaction changed the next request"


async def test_cancel_during_automatic_compaction_then_carry_on(tmp_path: Path) -> None:
    """Cancel the first automatic compaction of the long task; the next prompt finishes."""
    root, files = big_project(tmp_path)
    fake = WindowedModel(window=WINDOW)
    async with small_window(tmp_path, fake) as acp:
        conn, wire = acp.run.conn, acp.run.wire
        sid = await open_session(conn, root, "compaction")
        fake.plan(TASK, files)
        fake.stall_summaries()
        task = asyncio.create_task(ask(conn, sid, TASK))
        assert await asyncio.to_thread(fake.summary_started.wait, 30)
        await conn.cancel(session_id=sid)
        assert await asyncio.wait_for(task, 10) == "cancelled"
        fake.release()
        (lines,) = compactions_by_id(wire).values()
        assert [line["status"] for line in lines] == ["in_progress", "cancelled"]
        read = len(fake.served)
        assert 0 < read < FILES
        carry_on = "Go on reading where you stopped."
        fake.plan(carry_on, files[read:])
        assert await ask(conn, sid, carry_on) == "end_turn"
        assert fake.served == files
        check_no_failure(fake, wire)
        check_compaction_lines(sid, wire)
        assert fake.compactions() >= 1
        assert fake.violations == []
        check_wire(wire)
