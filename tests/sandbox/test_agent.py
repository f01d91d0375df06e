"""The sandbox through the agent: the editor's questions, and what the model is told.

The pair of ``tests/agent`` (the agent ``toolwire acp`` runs, the official SDK client),
with the sandbox on as a user gets it by default (the agent tests turn it off).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from acp.schema import ClientCapabilities

from tests.agent.pair import AgentUnderTest, agent_under_test
from tests.agent.support import answer, calls_by_id
from tests.sandbox.support import needs_bwrap

pytestmark = [needs_bwrap, pytest.mark.anyio]
ON = {"TOOLWIRE_SANDBOX": "workspace-write"}


def last_tool_text(acp: AgentUnderTest) -> str:
    """The tool result the model was sent last."""
    part = acp.model.requests[-1].messages[-1].parts[-1]
    return str(getattr(part, "content", ""))


@pytest.mark.parametrize("terminal", [False, True], ids=["local", "client-terminal"])
async def test_a_refused_write_asks_once_and_for_this_session_runs_it(
    tmp_path: Path, base: Path, terminal: bool
) -> None:
    target = base / "outside" / "note.txt"
    async with agent_under_test(tmp_path, env=ON) as acp:
        bash = {"command": f"echo hi > {target}"}
        acp.model.script(answer(("tool", "Bash", bash, "toolu_1")), "Done.")
        acp.client.answers = ["allow_always"]
        sid = await acp.start(ClientCapabilities(terminal=terminal) if terminal else None)
        assert (await acp.prompt(sid, "write the note")).stop_reason == "end_turn"
        assert len(acp.client.permissions) == 1
        assert target.read_text() == "hi\n"  # the retry outside the sandbox passed
        assert calls_by_id(acp.run.notifications())["toolu_1"]["status"] == "completed"
        told = last_tool_text(acp)
        assert "The sandbox refused a write outside the writable directories" in told
        assert "outside the sandbox" in told


async def test_kept_in_the_sandbox_the_model_is_told_and_nothing_is_written(
    tmp_path: Path, base: Path
) -> None:
    target = base / "outside" / "note.txt"
    async with agent_under_test(tmp_path, env=ON) as acp:
        bash = {"command": f"echo hi > {target}"}
        acp.model.script(answer(("tool", "Bash", bash, "toolu_1")), "Understood.")
        acp.client.answers = ["reject"]
        sid = await acp.start()
        await acp.prompt(sid, "write the note")
        assert len(acp.client.permissions) == 1
        assert not target.exists()
        assert "the user chose to keep it in the sandbox" in last_tool_text(acp)
        assert calls_by_id(acp.run.notifications())["toolu_1"]["status"] == "failed"


@pytest.mark.parametrize(("sandbox", "questions"), [("workspace-write", 0), ("off", 20)])
async def test_twenty_commands_in_the_workspace_ask_only_without_the_sandbox(
    tmp_path: Path, sandbox: str, questions: int
) -> None:
    calls = [
        ("tool", "Bash", {"command": f"echo {i} > out{i}.txt"}, f"toolu_{i}") for i in range(20)
    ]
    async with agent_under_test(tmp_path, env={"TOOLWIRE_SANDBOX": sandbox}) as acp:
        acp.model.script(answer(*calls), "Done.")
        acp.client.answers = ["allow_once"] * 20
        sid = await acp.start()
        assert (await acp.prompt(sid, "twenty files")).stop_reason == "end_turn"
        assert len(acp.client.permissions) == questions
        assert sorted(p.name for p in acp.root.glob("out*.txt")) == sorted(
            f"out{i}.txt" for i in range(20)
        )


async def test_ask_true_keeps_asking(tmp_path: Path) -> None:
    config = "\n[tools.sandbox]\nask = true\n"
    async with agent_under_test(tmp_path, env=ON, config=config) as acp:
        acp.model.script(answer(("tool", "Bash", {"command": "true"}, "toolu_1")), "Done.")
        acp.client.answers = ["allow_once"]
        sid = await acp.start()
        await acp.prompt(sid, "go")
        assert len(acp.client.permissions) == 1
