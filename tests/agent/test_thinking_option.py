"""The ``thought_level`` config option: offered, changed, sent, kept, and streamed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from acp.exceptions import RequestError

from tests.agent.pair import AgentUnderTest, agent_under_test
from tests.agent.support import answer, check_wire, text_of

pytestmark = pytest.mark.anyio


def _option(options: list[Any], option_id: str) -> dict[str, Any]:
    dumped = [o.model_dump(by_alias=True, exclude_none=True) for o in options]
    return next(o for o in dumped if o["id"] == option_id)


async def test_the_level_is_a_config_option_sent_as_thinking_and_kept(tmp_path: Path) -> None:
    async with agent_under_test(tmp_path, config='thought_level = "low"\n') as acp:
        acp.model.script(answer(("thinking", "Short think."), ("text", "Hello.")), "Again.")
        run, root = acp.run, acp.root
        await run.conn.initialize(protocol_version=1)
        new = await run.conn.new_session(cwd=str(root), mcp_servers=[])
        sid = new.session_id
        level = _option(new.config_options or [], "thought_level")
        assert level["category"] == "thought_level"
        assert level["currentValue"] == "low"  # the backend's default
        assert [o["value"] for o in level["options"]] == ["off", "low", "medium", "high"]
        await acp.prompt(sid, "hi")
        assert text_of(run.notifications(), "agent_thought_chunk") == "Short think."
        changed = await run.conn.set_config_option(
            config_id="thought_level", session_id=sid, value="high"
        )
        assert _option(changed.config_options, "thought_level")["currentValue"] == "high"
        await acp.prompt(sid, "again")
        check_wire(run.wire)
    async with acp.again() as second_agent:
        await second_agent.start()
        loaded = await second_agent.run.conn.load_session(
            cwd=str(root), session_id=sid, mcp_servers=[]
        )
        kept = _option(loaded.config_options or [], "thought_level")
        assert kept["currentValue"] == "high"
    first, second = acp.model.bodies
    max_tokens = first["max_tokens"]
    assert first["thinking"] == {"type": "enabled", "budget_tokens": min(2048, max_tokens - 1024)}
    assert second["thinking"] == {"type": "enabled", "budget_tokens": min(24576, max_tokens - 1024)}
    assert "temperature" not in second
    # The signed thinking of the first turn goes back to the backend that wrote it.
    thought = second["messages"][1]["content"][0]
    assert thought == {"type": "thinking", "thinking": "Short think.", "signature": "sig-test"}


async def test_an_unknown_level_is_refused(acp: AgentUnderTest) -> None:
    acp.model.script()  # any request fails the test
    sid = await acp.start()
    with pytest.raises(RequestError) as refused:
        await acp.run.conn.set_config_option(config_id="thought_level", session_id=sid, value="max")
    assert refused.value.code == -32602
    check_wire(acp.run.wire)
    assert acp.model.bodies == []
