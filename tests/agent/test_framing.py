"""The agent's framing under hostile input: every line is answered, serving goes on.

``StdioTransport`` is driven directly over a ``StreamReader`` fed by the test, under the
official SDK's own ``Connection`` (the one ``toolwire acp`` runs) with a handler that
answers every request ``{}``. A request of ours is pending throughout, as a permission
request is during a turn: that is when a bad response id used to crash the SDK's receive
loop. The properties are bounded fuzz (hypothesis) over raw bytes, arbitrary envelopes
and deep nesting; then the real agent, in process, answers around hostile lines.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

import pytest
from acp.connection import Connection
from acp.exceptions import RequestError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.agent.pair import AgentUnderTest
from tests.agent.support import check_wire
from toolwire.agent.protocol.envelope import MAX_DEPTH
from toolwire.agent.protocol.transport import StdioTransport

PENDING = object()
SENTINEL = b'{"jsonrpc":"2.0","id":"sentinel","method":"session/list","params":{}}'
REJECTED = (-32700, -32600)


@dataclass
class Collect:
    """A ``Writer`` keeping every line; ``seen`` is set when the sentinel is answered."""

    lines: list[dict[str, Any]] = field(default_factory=list)
    seen: asyncio.Event = field(default_factory=asyncio.Event)
    _buffer: bytes = b""

    def write(self, data: bytes) -> None:
        self._buffer += data
        *done, self._buffer = self._buffer.split(b"\n")
        for line in done:
            message = json.loads(line)
            self.lines.append(message)
            if message.get("id") == "sentinel" and "method" not in message:
                self.seen.set()

    async def drain(self) -> None:
        pass

    def is_closing(self) -> bool:
        return False

    def close(self) -> None:
        pass


@dataclass
class Served:
    written: list[dict[str, Any]]
    """What the agent's side wrote, after its own pending request."""
    handled: list[tuple[str, Any, bool]]
    """What reached the handler: method, params, notification."""
    ours: Any
    """What became of our request (id 0) by the sentinel's answer: ``PENDING``, its
    result, or the exception it raised."""


async def serve(lines: list[bytes]) -> Served:
    """``lines`` then the sentinel request through the transport and the SDK connection;
    fails unless the sentinel is answered with the receive loop still running."""
    reader = asyncio.StreamReader(limit=64 * 1024)
    writer = Collect()
    handled: list[tuple[str, Any, bool]] = []

    async def handler(method: str, params: Any, notification: bool) -> Any:
        handled.append((method, params, notification))
        return None if notification else {}

    conn = Connection(handler, StdioTransport(reader, writer), listening=False)
    listening = asyncio.create_task(conn.main_loop())
    ours = asyncio.create_task(conn.send_request("session/request_permission", {}))
    await asyncio.sleep(0)  # our request goes out first: id 0
    for line in lines:
        reader.feed_data(line + b"\n")
    reader.feed_data(SENTINEL + b"\n")
    answered = asyncio.create_task(writer.seen.wait())
    await asyncio.wait({answered, listening}, timeout=10, return_when=asyncio.FIRST_COMPLETED)
    assert writer.seen.is_set(), "the sentinel request was not answered"
    assert not listening.done(), "the receive loop ended"
    outcome = PENDING
    if ours.done():
        outcome = ours.exception() or ours.result()
    reader.feed_eof()
    await listening  # ends at end of input; raises if the loop failed
    await asyncio.gather(ours, return_exceptions=True)  # refused at end of input
    await conn.close()
    assert writer.lines[0]["id"] == 0
    assert writer.lines[0]["method"] == "session/request_permission"
    return Served(writer.lines[1:], handled, outcome)


def run(lines: list[bytes]) -> Served:
    return asyncio.run(serve(lines))


def check_written(served: Served) -> None:
    """Every line written is JSON-RPC; every error is the transport's own rejection."""
    for message in served.written:
        assert message["jsonrpc"] == "2.0"
        assert message.get("id") is None or type(message["id"]) in (str, int, float)
        if "error" in message:
            assert message["error"]["code"] in REJECTED, message


# -- examples, one per class of bad input -------------------------------------------------


def _line(value: Any) -> bytes:
    return json.dumps(value).encode()


def _nest(depth: int) -> dict[str, Any]:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return {"deep": value}


@pytest.mark.parametrize(
    ("line", "code", "reply_id"),
    [
        (b"[" * 1000, -32700, None),  # killed the agent (RecursionError in json.loads)
        (b"[" * 100_000, -32700, None),
        (b"{" * 50_000, -32700, None),
        (b'{"a":' * 5000 + b"1" + b"}" * 5000, -32700, None),
        (b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1), -32600, None),
        (b"\xff\xfe{}", -32700, None),
        (b"{this is not json", -32700, None),
        (b"[1, 2]", -32600, None),
        (_line({"jsonrpc": "2.0", "id": 7}), -32600, None),  # an id alone is no response
        (_line({"jsonrpc": "2.0", "id": 7, "error": None}), -32600, None),
        (_line({"jsonrpc": "2.0"}), -32600, None),
        (_line({"jsonrpc": "2.0", "id": 8, "method": 5}), -32600, 8),
        (_line({"jsonrpc": "2.0", "id": "x", "method": ["a"]}), -32600, "x"),
        (_line({"jsonrpc": "2.0", "id": 3, "method": None}), -32600, 3),
        (_line({"jsonrpc": "2.0", "method": {"a": 1}}), -32600, None),
        (_line({"jsonrpc": "2.0", "id": 9, "method": "m", "params": "p"}), -32600, 9),
        (_line({"jsonrpc": "2.0", "id": [1], "method": "session/list"}), -32600, None),
        (_line({"jsonrpc": "2.0", "id": {"a": 1}, "method": "session/list"}), -32600, None),
        (_line({"jsonrpc": "2.0", "id": True, "method": "session/list"}), -32600, None),
        (b'{"jsonrpc":"2.0","id":NaN,"method":"session/list"}', -32600, None),
        (_line({"jsonrpc": "2.0", "id": [0], "result": {}}), -32600, None),
        (
            _line({"jsonrpc": "2.0", "id": {"a": 1}, "error": {"code": 1, "message": "m"}}),
            -32600,
            None,
        ),
        (
            _line({"jsonrpc": "2.0", "id": 4, "method": "m", "params": {"_meta": [[[[[]]]]] * 2}}),
            None,
            None,
        ),
        (
            _line({"jsonrpc": "2.0", "id": 5, "method": "m", "params": _nest(MAX_DEPTH)}),
            -32600,
            5,
        ),
    ],
)
def test_every_bad_line_is_answered_and_serving_goes_on(
    line: bytes, code: int | None, reply_id: Any
) -> None:
    served = run([line])
    check_written(served)
    errors = [m for m in served.written if "error" in m]
    if code is None:  # a valid request, deep but not too deep: the SDK answers it
        assert errors == []
        assert served.handled[0][0] == "m"
        return
    assert [(e["error"]["code"], e["id"]) for e in errors] == [(code, reply_id)]
    assert served.handled == [("session/list", {}, False)]  # the sentinel, and only it
    assert served.ours is PENDING  # our own request still waits for its answer


# -- answers to our own requests still pass --------------------------------------------


@pytest.mark.parametrize(
    ("line", "outcome"),
    [
        (_line({"jsonrpc": "2.0", "id": 0, "result": {"outcome": {"outcome": "cancelled"}}}), 0),
        (_line({"jsonrpc": "2.0", "id": 0, "result": None}), 0),
        (_line({"jsonrpc": "2.0", "id": 0, "result": {}, "error": None}), 0),  # JSON-RPC 1.0
        (_line({"jsonrpc": "2.0", "id": 0, "error": {"code": -32000, "message": "no"}}), -32000),
    ],
)
def test_an_answer_to_our_request_reaches_it(line: bytes, outcome: int) -> None:
    served = run([line])
    assert [m for m in served.written if "error" in m] == []
    if outcome == 0:
        assert served.ours == json.loads(line)["result"]
    else:
        assert isinstance(served.ours, RequestError)
        assert served.ours.code == outcome


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "2.0", "id": 0, "error": "boom"},  # crashed the SDK's receive loop
        {"jsonrpc": "2.0", "id": 0, "error": {"code": "1", "message": "m"}},
        {"jsonrpc": "2.0", "id": 0, "error": {"code": 1}},
        {"jsonrpc": "2.0", "id": 0, "result": {}, "error": {"code": 1, "message": "m"}},
        {"jsonrpc": "2.0", "id": 0, "result": _nest(MAX_DEPTH)},
    ],
)
def test_a_broken_answer_to_our_request_fails_it(message: dict[str, Any]) -> None:
    served = run([_line(message)])
    assert [(m["error"]["code"], m["id"]) for m in served.written if "error" in m] == [
        (-32600, None)
    ]
    assert isinstance(served.ours, RequestError)  # failed, rather than waiting forever
    assert served.ours.code == -32600


# -- bounded fuzz of the framing ------------------------------------------------------------

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=8,
)
_ENVELOPES = st.fixed_dictionaries(
    {},
    optional={
        "jsonrpc": st.just("2.0") | _JSON,
        "id": st.just(0) | st.integers() | st.text(max_size=4) | _JSON,
        "method": st.sampled_from(["session/list", "m", "_ext"]) | _JSON,
        "params": st.dictionaries(st.text(max_size=4), _JSON, max_size=3) | _JSON,
        "result": _JSON,
        "error": st.fixed_dictionaries({"code": st.integers(), "message": st.text()}) | _JSON,
    },
)


@st.composite
def _deep(draw: st.DrawFn) -> bytes:
    """Nesting of any depth, closed or not, alone or inside an envelope."""
    depth = draw(st.integers(1, 3000))
    opener = draw(st.sampled_from([b"[", b'{"a":', b'[{"b":']))
    closer = {b"[": b"]", b'{"a":': b"}", b'[{"b":': b"}]"}[opener]
    body = opener * depth + b"1" + (closer * depth if draw(st.booleans()) else b"")
    where = draw(st.sampled_from(["alone", "params", "id", "result"]))
    if where == "alone":
        return body
    head = b'{"jsonrpc":"2.0","id":0,' if where == "result" else b'{"jsonrpc":"2.0",'
    if where == "params":
        head += b'"id":1,"method":"m",'
    return head + f'"{where}":'.encode() + body + b"}"


_LINES = (
    st.binary(max_size=64).map(lambda b: b.replace(b"\n", b""))
    | _ENVELOPES.map(lambda m: json.dumps(m).encode())
    | _deep()
)
_FUZZ = settings(max_examples=100, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.slow
@_FUZZ
@given(_LINES)
def test_any_line_is_answered_or_served_and_the_agent_keeps_serving(line: bytes) -> None:
    served = run([line])
    check_written(served)
    mine = served.written[:-1]  # the last line written answers the sentinel
    assert served.written[-1] == {"jsonrpc": "2.0", "id": "sentinel", "result": {}}
    errors = [m for m in mine if "error" in m]
    assert len(errors) <= 1
    if not line.strip():  # a blank line is no message: skipped
        assert mine == []
        return
    if errors:  # rejected: the handler saw only the sentinel
        assert served.handled == [("session/list", {}, False)]
        return
    message = json.loads(line)  # accepted: it was JSON, and went to the SDK
    if isinstance(message.get("method"), str):
        method, params = message["method"], message.get("params")
        assert served.handled[0] == (method, params, "id" not in message)
        if "id" in message:
            assert mine == [{"jsonrpc": "2.0", "id": message["id"], "result": {}}]


@settings(_FUZZ, max_examples=40)
@given(st.lists(_LINES, max_size=6))
def test_a_run_of_bad_lines_leaves_the_connection_serving(lines: list[bytes]) -> None:
    served = run(lines)
    check_written(served)
    assert served.written[-1] == {"jsonrpc": "2.0", "id": "sentinel", "result": {}}
    assert len([m for m in served.written if "error" in m]) <= len(lines)


# -- the real agent, in process --------------------------------------------------------------


@pytest.mark.anyio
async def test_the_agent_answers_before_and_after_hostile_lines(acp: AgentUnderTest) -> None:
    hostile = [
        b"[" * 1000,  # ended the process
        b'{"a":' * 100_000,
        _line({"jsonrpc": "2.0", "id": 41}),
        _line({"jsonrpc": "2.0", "id": 42, "method": 7}),
        _line({"jsonrpc": "2.0", "id": [43], "method": "session/list", "params": {}}),
        _line({"jsonrpc": "2.0", "id": 44, "method": "session/list", "params": _nest(500)}),
        _line({"jsonrpc": "2.0", "id": 0, "error": "boom"}),
    ]
    run = acp.run
    await run.conn.initialize(protocol_version=1)
    for line in hostile:
        before = len(run.sent())
        await run.send_raw(line + b"\n")
        listed = await asyncio.wait_for(run.conn.list_sessions(), 10)
        assert listed.sessions == []
        errors = [m["error"]["code"] for m in run.sent()[before:] if "error" in m]
        assert len(errors) == 1, line[:40]
        assert errors[0] in REJECTED
    # Still a working agent: a session, a prompt answered.
    acp.model.function = lambda request: "hi"
    sid = str((await run.conn.new_session(cwd=str(acp.root), mcp_servers=[])).session_id)
    assert (await acp.prompt(sid, "Hello")).stop_reason == "end_turn"
    check_wire(run.wire)


@pytest.mark.anyio
@pytest.mark.parametrize(
    "cursor", ["99999999999999999999999", "-50", "1_0", " 50", "50\n", "\u0663", "x", "5e1"]
)
async def test_a_cursor_not_from_session_list_is_invalid_params(
    acp: AgentUnderTest, cursor: str
) -> None:
    await acp.run.conn.initialize(protocol_version=1)
    with pytest.raises(RequestError) as bad:
        await acp.run.conn.list_sessions(cursor=cursor)
    assert bad.value.code == -32602
    assert (await acp.run.conn.list_sessions(cursor="50")).sessions == []
