"""The sandbox through the agent: the editor's questions, and what the model is told.

The pair of ``tests/agent`` (the agent ``toolwire acp`` runs, the official SDK client),
with the sandbox on as a user gets it by default (the agent tests turn it off).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from acp.exceptions import RequestError
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    FileSystemCapabilities,
    RequestPermissionResponse,
)

from tests.agent.pair import AgentUnderTest, agent_under_test
from tests.agent.support import ScriptedClient, answer, calls_by_id
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
        assert f"The sandbox refused a write to {target}" in told
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


class AllowAll(ScriptedClient):
    """A client whose policy approves every request: it picks the first option of an
    allowing kind, as acpx ``--approve-all`` does, whatever the question."""

    async def request_permission(
        self, options: Any, session_id: str, tool_call: Any, **kwargs: Any
    ) -> RequestPermissionResponse:
        self.permissions.append(tool_call)
        first = next(o for o in options if o.kind in ("allow_once", "allow_always"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=first.option_id)
        )


async def test_the_question_names_the_sandbox_and_an_allow_all_policy_stays_inside(
    tmp_path: Path, base: Path
) -> None:
    target = base / "outside" / "note.txt"
    async with agent_under_test(tmp_path, env=ON, client=AllowAll()) as acp:
        bash = {"command": f"echo hi > {target}"}
        acp.model.script(answer(("tool", "Bash", bash, "toolu_1")), "Understood.")
        sid = await acp.start()
        assert (await acp.prompt(sid, "write the note")).stop_reason == "end_turn"
        [asked] = acp.client.permissions
        assert (
            asked.title
            == f"The sandbox refused a write to {target}: run `{bash['command']}` outside it?"
        )
        assert not target.exists()  # approving everything did not take it out
        assert "the user chose to keep it in the sandbox" in last_tool_text(acp)


async def test_escape_never_asks_nothing_and_says_so(tmp_path: Path, base: Path) -> None:
    target = base / "outside" / "note.txt"
    config = '\n[tools.sandbox]\nescape = "never"\n'
    async with agent_under_test(tmp_path, env=ON, config=config) as acp:
        bash = {"command": f"echo hi > {target}"}
        acp.model.script(answer(("tool", "Bash", bash, "toolu_1")), "Understood.")
        acp.client.answers = ["allow_once"]
        sid = await acp.start()
        assert (await acp.prompt(sid, "write the note")).stop_reason == "end_turn"
        assert acp.client.permissions == []
        assert not target.exists()
        assert "[tools.sandbox] escape" in last_tool_text(acp)


async def test_a_hidden_path_is_said_to_be_hidden_and_offers_no_way_out(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("PRIVATE-KEY-MATERIAL\n")
    async with agent_under_test(tmp_path, env={**ON, "HOME": str(home)}) as acp:
        bash = {"command": "cat ~/.ssh/id_rsa"}
        acp.model.script(answer(("tool", "Bash", bash, "toolu_1")), "Understood.")
        acp.client.answers = ["allow_once"]
        sid = await acp.start()
        assert (await acp.prompt(sid, "show the key")).stop_reason == "end_turn"
        told = last_tool_text(acp)
        assert "PRIVATE-KEY-MATERIAL" not in told
        assert "~/.ssh is hidden from commands by the sandbox ([tools.sandbox] deny_read)" in told
        assert acp.client.permissions == []  # no offer to leave the sandbox for it


class RefusesTerminals(ScriptedClient):
    """A client that offers terminals and refuses each one, as acpx does where it has
    no human to ask ("Permission denied for terminal/create")."""

    async def create_terminal(self, *args: Any, **kwargs: Any) -> Any:
        self.fs_calls.append(("terminal", ""))
        raise RequestError.internal_error({"details": "Permission denied for terminal/create"})


async def test_a_refused_terminal_runs_the_command_here_and_the_turn_goes_on(
    tmp_path: Path,
) -> None:
    async with agent_under_test(tmp_path, env=ON, client=RefusesTerminals()) as acp:
        calls = [("tool", "Bash", {"command": f"echo run-{i}"}, f"toolu_{i}") for i in range(3)]
        acp.model.script(answer(*calls), "Done.")
        sid = await acp.start(ClientCapabilities(terminal=True))
        assert (await acp.prompt(sid, "three commands")).stop_reason == "end_turn"
        notes = acp.run.notifications()
        by_id = calls_by_id(notes)
        assert [by_id[f"toolu_{i}"]["status"] for i in range(3)] == ["completed"] * 3
        assert acp.client.fs_calls == [("terminal", "")]  # asked once, then not again
        assert "run-2" in last_tool_text(acp)
        said = json.dumps(notes)
        assert said.count("Permission denied for terminal/create") == 1
        assert "internal error" not in said


class RefusesWrites(ScriptedClient):
    async def write_text_file(self, *args: Any, **kwargs: Any) -> Any:
        raise RequestError.internal_error({"details": "Permission denied for fs/write_text_file"})


async def test_a_refused_file_write_fails_that_call_with_the_reason(tmp_path: Path) -> None:
    async with agent_under_test(tmp_path, env=ON, client=RefusesWrites()) as acp:
        write = {"file_path": str(acp.root / "new.txt"), "content": "x\n"}
        calls = [
            ("tool", "Write", write, "toolu_1"),
            ("tool", "Bash", {"command": "true"}, "toolu_2"),
        ]
        acp.model.script(answer(*calls), "Done.")
        caps = ClientCapabilities(
            fs=FileSystemCapabilities(read_text_file=True, write_text_file=True)
        )
        sid = await acp.start(caps)
        await acp.run.conn.set_session_mode(session_id=sid, mode_id="accept-edits")
        assert (await acp.prompt(sid, "write it")).stop_reason == "end_turn"
        by_id = calls_by_id(acp.run.notifications())
        assert by_id["toolu_1"]["status"] == "failed"
        assert by_id["toolu_2"]["status"] == "completed"
        first = acp.model.requests[-1].messages[-1].parts[0]
        assert "Permission denied for fs/write_text_file" in str(getattr(first, "content", ""))


async def test_without_the_sandbox_a_refused_terminal_fails_that_call(tmp_path: Path) -> None:
    off = {"TOOLWIRE_SANDBOX": "off"}
    async with agent_under_test(tmp_path, env=off, client=RefusesTerminals()) as acp:
        calls = [("tool", "Bash", {"command": f"echo run-{i}"}, f"toolu_{i}") for i in range(2)]
        acp.model.script(answer(*calls), "Done.")
        acp.client.answers = ["allow_once", "allow_once"]
        sid = await acp.start(ClientCapabilities(terminal=True))
        assert (await acp.prompt(sid, "two commands")).stop_reason == "end_turn"
        by_id = calls_by_id(acp.run.notifications())
        assert [by_id[f"toolu_{i}"]["status"] for i in range(2)] == ["failed", "failed"]
        told = last_tool_text(acp)
        assert (
            "The editor refused to run the command: Permission denied for terminal/create" in told
        )
        assert "run-1" not in told  # nothing ran behind the client's back
