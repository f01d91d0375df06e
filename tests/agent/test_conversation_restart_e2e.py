"""A restart in a new process does not change the next request either.

The operations of ``test_conversation_property.py``, every one of them in one fixed
sequence (prompts, reads, a turn cancelled mid-answer, ``/clear``, ``/compact`` with and
without a focus, automatic compactions on the small window, model switches both ways, a
fork, deletes of other sessions), run in an in-process agent that never stops. Then a
real ``toolwire acp`` process, driven by the official ACP SDK client, reopens the session
on the same ``sessions.db`` with ``session/load`` or ``session/resume`` and sends one more
prompt; the agent that never stopped sends the same prompt. The two model requests must
be the same bytes.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from acp import text_block

from tests.agent.support import (
    KEY,
    ScriptedClient,
    agent,
    check_wire,
    environment,
    project,
    spawn_agent,
    start,
    write_config,
)
from tests.agent.test_conversation_property import (
    Models,
    _config,
    fill,
    reopen,
    run_operations,
)
from tests.fakes.http import FakeServer

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

# Every operation the property test draws, in an order where each has something to act
# on: the reads on two pass its small window, so two compacts on its own.
EVERY_OPERATION = [
    "ask",
    "read",
    "slow",
    "/clear",
    "ask",
    "/compact",
    "read",
    "fork",
    "delete",
    "ask",
    "delete",
    "model two",
    *["read"] * 8,
    "/compact the tests",
    "ask",
    "model one",
    "ask",
]


@pytest.mark.parametrize("how", ["load", "resume"])
def test_a_new_process_sends_the_next_request_as_one_that_never_stopped(
    tmp_path: Path, how: str
) -> None:
    root = project(tmp_path)
    fill(root)
    models = Models()
    with FakeServer(respond=models.answer) as one, FakeServer(respond=models.answer) as two:
        config = write_config(tmp_path, _config(one.url, two.url))
        env = environment(tmp_path, TEST_KEY=KEY)
        args = ("--config", str(config))

        async def scenario() -> tuple[bytes, bytes, str]:
            client = ScriptedClient()
            async with agent(tmp_path, client, *args, env=env) as kept:
                sid = await start(kept.conn, root)
                sid = await run_operations(kept.conn, models, root, sid, EVERY_OPERATION)
                async with spawn_agent(tmp_path, ScriptedClient(), *args, env=env) as new:
                    await reopen(new.conn, root, sid, how)
                    done = await new.conn.prompt(session_id=sid, prompt=[text_block("and now?")])
                    assert done.stop_reason == "end_turn"
                    after_restart = models.sent[-1]
                    check_wire(new.wire)
                await kept.conn.prompt(session_id=sid, prompt=[text_block("and now?")])
                said = "".join(u.content.text for u in client.of_kind("agent_message_chunk"))
                return models.sent[-1], after_restart, said

        kept, restarted, said = asyncio.run(scenario())
    # The sequence did what it says: two compactions asked for and at least one on its own.
    assert said.count("Compacted ") >= 3, said
    assert json.loads(restarted)["messages"] == json.loads(kept)["messages"]
    assert restarted == kept
