"""Steering: what the user sends while a turn runs joins that turn at its next model
request, instead of being refused: a second ``session/prompt`` (answered when the turn
ends) or the ``_session/steering`` extension request claude-agent-acp and codex-acp
serve (advertised in ``initialize``'s ``_meta``)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, text_block

from tests.agent.pair import AgentUnderTest
from tests.agent.support import answer, check_wire
from toolwire.backends.base import ModelRequest

pytestmark = pytest.mark.anyio

STEER = "Also say bye at the end."


def _model(request: ModelRequest) -> Any:
    if request.messages[-1].text() == "Read app.py":
        return answer(("text", "Reading it now."), ("tool", "Read", {"file_path": "app.py"}, "t1"))
    return "Done, and bye."


async def _first_update(acp: AgentUnderTest) -> None:
    """Wait until the model's answer is streaming: the turn runs."""
    seen = asyncio.Event()

    def on_update(update: Any) -> None:
        if update.session_update == "agent_message_chunk":
            seen.set()

    acp.client.on_update = on_update
    await asyncio.wait_for(seen.wait(), 10)


def _sent(body: dict[str, Any]) -> str:
    return json.dumps(body["messages"])


async def test_a_prompt_during_a_turn_joins_its_next_model_request(acp: AgentUnderTest) -> None:
    acp.model.function = _model
    acp.model.pace = 0.02  # the first answer streams for a while: the turn is running
    sid = await acp.start()
    acp.client.answers = ["allow_once"]
    first = asyncio.create_task(acp.prompt(sid, "Read app.py"))
    await _first_update(acp)
    second = await asyncio.wait_for(acp.prompt(sid, STEER), 20)
    assert second.stop_reason == "end_turn"
    assert (await first).stop_reason == "end_turn"
    # One turn, two model requests: the second carries the tool result and the steer.
    assert len(acp.model.bodies) == 2
    assert STEER not in _sent(acp.model.bodies[0])
    assert STEER in _sent(acp.model.bodies[1])
    assert "def greet" in _sent(acp.model.bodies[1])
    check_wire(acp.run.wire)
    # Stored with the session: a load replays it as the user's message.
    async with acp.again() as second_window:
        await second_window.run.conn.initialize(protocol_version=PROTOCOL_VERSION)
        await second_window.run.conn.load_session(cwd=str(acp.root), session_id=sid, mcp_servers=[])
        replayed = [
            n["params"]["update"]
            for n in second_window.run.notifications()
            if n["params"]["update"]["sessionUpdate"] == "user_message_chunk"
        ]
        assert STEER in json.dumps(replayed)
        check_wire(second_window.run.wire)


async def test_the_steering_extension_injects_or_starts_a_turn(acp: AgentUnderTest) -> None:
    init = await acp.run.conn.initialize(protocol_version=PROTOCOL_VERSION)
    assert (init.field_meta or {}).get("steering") == {"supported": True}
    acp.model.function = _model
    acp.model.pace = 0.02
    sid = (await acp.run.conn.new_session(cwd=str(acp.root), mcp_servers=[])).session_id
    acp.client.answers = ["allow_once"]
    first = asyncio.create_task(acp.prompt(sid, "Read app.py"))
    await _first_update(acp)
    steer = {"sessionId": sid, "prompt": [text_block(STEER).model_dump(by_alias=True)]}
    assert await acp.run.conn.ext_method("session/steering", steer) == {"outcome": "injected"}
    assert (await first).stop_reason == "end_turn"
    assert STEER in _sent(acp.model.bodies[1])
    # Nothing running: a turn of its own starts (no request owns its answer).
    acp.model.pace = 0
    idle = {"sessionId": sid, "prompt": [text_block("Anything else?").model_dump()]}
    assert await acp.run.conn.ext_method("session/steering", idle) == {"outcome": "startedNewTurn"}
    for _ in range(200):
        if any("Anything else?" in _sent(b) for b in acp.model.bodies):
            break
        await asyncio.sleep(0.02)
    assert "Anything else?" in _sent(acp.model.bodies[-1])
