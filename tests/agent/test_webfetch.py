"""``WebFetch`` through the ACP pair: asked per host with "Always allow HOST", the
deadline ends the call and the turn goes on, ``session/cancel`` closes the socket."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from acp import text_block

from tests.agent.pair import AgentUnderTest, agent_under_test
from tests.agent.support import (
    answer,
    calls_by_id,
    check_wire,
)
from tests.web.servers import head, page, serve
from toolwire.history import ToolResultPart

pytestmark = pytest.mark.anyio
WEB = (
    '\n[tools.web]\nallow_hosts = ["docs.test", "other.test"]\ntimeout = 2\n'
    'resolve = {"docs.test" = "127.0.0.1", "other.test" = "127.0.0.1"}\n'
)


def _result(acp: AgentUnderTest, request: int) -> ToolResultPart:
    """The tool result the model was sent in request ``request``."""
    part = acp.model.requests[request].messages[-1].parts[0]
    assert isinstance(part, ToolResultPart)
    return part


def fetch(url: str, call_id: str) -> tuple[Any, ...]:
    return ("tool", "WebFetch", {"url": url, "prompt": "the answer"}, call_id)


async def test_asked_per_host_and_always_allow_holds_for_that_host(tmp_path: Path) -> None:
    async with serve({"/a": page(b"<h1>Answer</h1><p>42</p>")}) as server:
        server.routes["/b"] = server.routes["/a"]
        async with agent_under_test(tmp_path, config=WEB) as acp:
            docs, other = server.url("/a", "docs.test"), server.url("/b", "other.test")
            acp.model.script(
                answer(fetch(docs, "toolu_1")),
                answer(fetch(docs.replace("/a", "/b"), "toolu_2")),
                answer(fetch(other, "toolu_3")),
                "Done.",
            )
            acp.client.answers = ["allow_always", "reject"]
            sid = await acp.start()
            assert (await acp.prompt(sid, "Look it up")).stop_reason == "end_turn"
            check_wire(acp.run.wire)
            asked = acp.client.permissions
            assert len(asked) == 2  # docs.test once (then always), other.test again
            assert asked[0].kind == "fetch"
            (first, second) = [
                [o["name"] for o in m["params"]["options"]]
                for m in acp.run.sent()
                if m.get("method") == "session/request_permission"
            ]
            assert "Always allow docs.test" in first
            assert "Always allow other.test" in second
            calls = calls_by_id(acp.run.notifications())
            assert calls["toolu_1"]["title"] == "Fetch docs.test/a"
            assert calls["toolu_1"]["kind"] == "fetch"
            assert [calls[c]["status"] for c in ("toolu_1", "toolu_2", "toolu_3")] == [
                "completed",
                "completed",
                "failed",
            ]
            sent = _result(acp, 1).content
            assert sent.startswith("Looking for: the answer\nURL: ")
            assert "# Answer\n\n42" in sent
        assert server.hits == ["/a", "/b"]  # the rejected host was never contacted


async def test_the_deadline_fails_the_call_and_the_turn_goes_on(tmp_path: Path) -> None:
    async def trickle(writer: asyncio.StreamWriter) -> None:
        writer.write(head("200 OK", "Content-Type: text/plain"))
        while True:
            writer.write(b".")
            await writer.drain()
            await asyncio.sleep(1)

    async with serve({"/": trickle}) as server, agent_under_test(tmp_path, config=WEB) as acp:
        acp.model.script(answer(fetch(server.url("/", "docs.test"), "toolu_1")), "It timed out.")
        acp.client.answers = ["allow_once"]
        sid = await acp.start()
        loop = asyncio.get_running_loop()
        began = loop.time()
        assert (await acp.prompt(sid, "Fetch it")).stop_reason == "end_turn"
        took = loop.time() - began
        print(f"deadline 2 s, turn with the failed fetch took {took:.3f} s")
        assert took < 3.0  # 2 s deadline, within 1 s of it
        result = _result(acp, 1)
        assert result.is_error
        assert "Timed out" in result.content
        assert calls_by_id(acp.run.notifications())["toolu_1"]["status"] == "failed"
        check_wire(acp.run.wire)


async def test_cancel_closes_the_socket_at_once(tmp_path: Path) -> None:
    async def hang(writer: asyncio.StreamWriter) -> None:
        writer.write(head("200 OK", "Content-Type: text/plain"))
        await writer.drain()
        await asyncio.sleep(3600)

    async with serve({"/": hang}) as server, agent_under_test(tmp_path, config=WEB) as acp:
        acp.model.script(answer(fetch(server.url("/", "docs.test"), "toolu_1")), "unused")
        acp.client.answers = ["allow_once"]
        sid = await acp.start()
        loop = asyncio.get_running_loop()
        prompt = loop.create_task(acp.run.conn.prompt(session_id=sid, prompt=[text_block("Go")]))
        while not server.started:
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.2)
        cancelled_at = loop.time()
        await acp.run.conn.cancel(session_id=sid)
        assert (await prompt).stop_reason == "cancelled"
        while not server.closed and loop.time() - cancelled_at < 2:
            await asyncio.sleep(0.005)
        assert server.closed, "the server never saw the connection close"
        latency = server.closed[0] - cancelled_at
        print(f"socket closed {latency * 1000:.1f} ms after session/cancel")
        assert latency < 0.1, f"closed {latency * 1000:.0f} ms after the cancel"
        check_wire(acp.run.wire)


async def test_a_loopback_address_is_refused_before_the_user_is_asked(tmp_path: Path) -> None:
    async with serve({"/a": page(b"<p>secret</p>")}) as server:
        async with agent_under_test(tmp_path, config=WEB) as acp:
            acp.model.script(answer(fetch(server.url("/a", "127.0.0.1"), "toolu_1")), "Refused.")
            acp.client.answers = ["allow_once"]
            sid = await acp.start()
            assert (await acp.prompt(sid, "Fetch it")).stop_reason == "end_turn"
            assert acp.client.permissions == []  # nothing to allow: it would be refused
            result = _result(acp, 1)
            assert result.is_error
            assert "127.0.0.1 (loopback)" in result.content
            assert calls_by_id(acp.run.notifications())["toolu_1"]["status"] == "failed"
            check_wire(acp.run.wire)
        assert server.hits == []


async def test_a_host_with_a_control_character_never_reaches_the_resolver(tmp_path: Path) -> None:
    wildcard = '\n[tools.web]\nallow_hosts = ["*.example.com"]\ntimeout = 2\n'
    async with serve({"/": page(b"<p>open port</p>")}) as server:
        urls = [f"http://127.0.0.1{c}.example.com:{server.port}/" for c in ("\x00", "\x1f", " ")]
        urls.append(f"http://127.0.0.1%00.example.com:{server.port}/")
        async with agent_under_test(tmp_path, config=wildcard) as acp:
            calls = [fetch(url, f"toolu_{n}") for n, url in enumerate(urls)]
            acp.model.script(*(answer(call) for call in calls), "Refused.")
            acp.client.answers = ["allow_once"] * len(urls)
            sid = await acp.start()
            assert (await acp.prompt(sid, "Fetch them")).stop_reason == "end_turn"
            assert acp.client.permissions == []
            for request in range(1, len(urls) + 1):
                result = _result(acp, request)
                assert result.is_error
                assert "Not a valid host name" in result.content, result.content
        assert server.hits == []
        assert server.started == []  # not even a connection: no port told open or closed


SPECIAL = [
    ("http://192.88.99.1/", "6to4 relay anycast"),
    ("http://192.0.0.170/", "IETF protocol assignments"),
    ("http://198.18.0.1/", "benchmarking"),
    ("http://[::ffff:0:127.0.0.1]/", "loopback, inside an IPv6 address"),
    ("http://[::ffff:0:a00:1]/", "private, inside an IPv6 address"),
    ("http://[5f00::1]/", "segment-routing"),
    ("http://[3fff::1]/", "documentation"),
    ("http://[100:0:0:1::1]/", "dummy prefix"),
    ("http://[4000::1]/", "outside 2000::/3"),
]


async def test_special_purpose_addresses_are_refused_by_toolwires_own_table(
    tmp_path: Path,
) -> None:
    async with agent_under_test(tmp_path, config=WEB) as acp:
        calls = [fetch(url, f"toolu_{n}") for n, (url, _) in enumerate(SPECIAL)]
        acp.model.script(*(answer(call) for call in calls), "Refused.")
        acp.client.answers = ["allow_once"] * len(SPECIAL)
        sid = await acp.start()
        assert (await acp.prompt(sid, "Fetch them")).stop_reason == "end_turn"
        assert acp.client.permissions == []
        for request, (url, why) in enumerate(SPECIAL, start=1):
            result = _result(acp, request)
            assert result.is_error, url
            assert why in result.content, (url, result.content)
