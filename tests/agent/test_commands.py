"""Slash commands (``agent.commands``, ``agent.slash``): what is announced, what each
built-in does to the session and its updates, and what a custom command sends the model
(the official SDK client drives the agent; the model is a ``FunctionBackend`` that keeps
the request bodies; every line is checked against the ACP schema)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.agent.pair import AgentUnderTest, agent_under_test
from tests.agent.support import answer, check_wire, text_of
from toolwire.agent.features.commands import (
    BUILTINS,
    custom_commands,
    front_matter,
    load_command,
    parse_command,
)
from toolwire.backends.base import ModelRequest

pytestmark = pytest.mark.anyio


def _ok(request: ModelRequest) -> str:
    return "ok"


def _updates(notes: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [n["params"]["update"] for n in notes if n["params"]["update"]["sessionUpdate"] == kind]


def _user_texts(body: dict[str, Any]) -> list[str]:
    """The text of each user message the model was sent (tool results left out)."""
    out = []
    for message in body["messages"]:
        if message["role"] != "user":
            continue
        content = message["content"]
        if isinstance(content, str):
            out.append(content)
        else:
            out += [b["text"] for b in content if b.get("type") == "text"]
    return out


def test_front_matter_and_expansion(tmp_path: Path) -> None:
    keys, body = front_matter('---\ndescription: "Review a file"\nargument-hint: PATH\n---\nGo\n')
    assert keys == {"description": "Review a file", "argument-hint": "PATH"}
    assert body == "Go\n"
    assert front_matter("---\nno end\n") == ({}, "---\nno end\n")
    path = tmp_path / "review.md"
    path.write_text("---\ndescription: Review\n---\nReview $ARGUMENTS carefully.\n")
    command = load_command(path)
    assert command is not None
    assert command.expand("app.py") == "Review app.py carefully."
    assert command.wire() == {
        "name": "review",
        "description": "Review",
        "input": {"hint": "input for the command"},
    }
    (tmp_path / "plain.md").write_text("# Explain the build\nExplain it.\n")
    plain = load_command(tmp_path / "plain.md")
    assert plain is not None
    assert plain.description == "Explain the build"
    assert plain.expand("briefly") == "# Explain the build\nExplain it.\n\nbriefly"
    assert load_command(tmp_path / "bad name.md") is None


def test_where_commands_come_from_and_which_wins(tmp_path: Path) -> None:
    env = {"XDG_CONFIG_HOME": str(tmp_path / "config")}
    user = tmp_path / "config" / "toolwire" / "commands"
    user.mkdir(parents=True)
    (user / "review.md").write_text("USER review")
    (user / "mine.md").write_text("USER only")
    (user / "compact.md").write_text("never: a built-in wins")
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".claude" / "commands").mkdir(parents=True)
    (repo / ".claude" / "commands" / "fix.md").write_text("CLAUDE fix")
    (repo / ".claude" / "commands" / "review.md").write_text("CLAUDE review")
    cwd = repo / "app"
    (cwd / ".toolwire" / "commands").mkdir(parents=True)
    (cwd / ".toolwire" / "commands" / "review.md").write_text("PROJECT review")
    found = custom_commands(str(cwd), env)
    assert sorted(found) == ["fix", "mine", "review"]
    assert found["review"].body == "PROJECT review"
    assert found["mine"].body == "USER only"
    parsed = parse_command("/review  a b", found)
    assert parsed is not None
    assert parsed[0].body == "PROJECT review"
    assert parsed[1] == "a b"
    compact = parse_command("/compact", found)
    assert compact is not None
    assert compact[0] is BUILTINS["compact"]
    assert parse_command("/nope x", found) is None
    assert parse_command("see /review", found) is None


async def test_custom_commands_are_announced_and_reach_the_model(acp: AgentUnderTest) -> None:
    commands = acp.root / ".toolwire" / "commands"
    commands.mkdir(parents=True)
    (commands / "review.md").write_text(
        "---\ndescription: Review a file\nargument-hint: PATH\n---\nReview $ARGUMENTS for bugs.\n"
    )
    acp.model.function = _ok
    sid = await acp.start()
    (listed,) = _updates(acp.run.notifications(), "available_commands_update")
    review = listed["availableCommands"][-1]
    assert review == {
        "name": "review",
        "description": "Review a file",
        "input": {"hint": "PATH"},
    }
    await acp.prompt(sid, "/review src/app.py")
    await acp.prompt(sid, "/unknown thing")
    user = _updates(acp.run.notifications(), "user_message_chunk")
    assert user == []  # the client shows its own prompt; nothing echoed
    check_wire(acp.run.wire)
    first, second = acp.model.bodies
    assert _user_texts(first) == ["Review src/app.py for bugs."]
    assert _user_texts(second)[-1] == "/unknown thing"


B = (
    '[backends.b]\nprovider = "anthropic"\nmodel = "model-b"\nbase_url = "http://b.test"\n'
    'api_key_env = "TEST_KEY"\n'
)


async def test_model_and_mode_commands_change_the_session(tmp_path: Path) -> None:
    async with agent_under_test(tmp_path, config=B) as acp:
        acp.model.function = _ok
        sid = await acp.start()

        async def say(text: str) -> str:
            mark = len(acp.run.notifications())
            done = await acp.prompt(sid, text)
            assert done.stop_reason == "end_turn"
            return text_of(acp.run.notifications()[mark:])

        await say("hello")
        mark = len(acp.run.notifications())
        assert "switches to b at your next prompt" in await say("/model b")
        (options,) = _updates(acp.run.notifications()[mark:], "config_option_update")
        model = next(o for o in options["configOptions"] if o["id"] == "model")
        assert model["currentValue"] == "b/model-b"
        assert "no model 'zz'" in await say("/model zz")
        assert "fake (claude-test), b (model-b)" in await say("/model")
        mark = len(acp.run.notifications())
        assert "accept-edits" in await say("/mode accept-edits")
        (mode,) = _updates(acp.run.notifications()[mark:], "current_mode_update")
        assert mode["currentModeId"] == "accept-edits"
        (options,) = _updates(acp.run.notifications()[mark:], "config_option_update")
        chosen = next(o for o in options["configOptions"] if o["id"] == "mode")
        assert chosen["currentValue"] == "accept-edits"
        assert "no mode 'fast'" in await say("/mode fast")
        await say("again")
        check_wire(acp.run.wire)
    models = [body["model"] for body in acp.model.bodies]
    assert models.count("claude-test") == 1  # the commands never reached a model
    on_b = [body for body in acp.model.bodies if body["model"] == "model-b"]
    assert any("again" in json.dumps(body["messages"]) for body in on_b)


async def test_clear_starts_fresh_and_survives_a_reload(acp: AgentUnderTest) -> None:
    acp.model.function = _ok
    sid = await acp.start()
    for text in ("first question", "/clear", "second question"):
        await acp.prompt(sid, text)
    assert "New conversation" in text_of(acp.run.notifications())
    check_wire(acp.run.wire)
    async with acp.again() as second:
        await second.start()
        await second.run.conn.load_session(cwd=str(acp.root), session_id=sid, mcp_servers=[])
        replayed = text_of(second.run.notifications())
        assert "New conversation" in replayed  # the transcript keeps the marker
        assert "first question" in json.dumps(second.run.notifications())
        await second.prompt(sid, "third question")
        check_wire(second.run.wire)
    before, after, reloaded = (_user_texts(body) for body in acp.model.bodies)
    assert before == ["first question"]
    assert after == ["second question"]
    assert reloaded == ["second question", "third question"]


async def test_init_sends_the_survey_prompt_and_writes_with_permission(
    acp: AgentUnderTest,
) -> None:
    root = acp.root
    (root / ".git").mkdir(parents=True)
    write = {"file_path": str(root / "AGENTS.md"), "content": "# Agents\nRun make test.\n"}
    acp.model.script(answer(("tool", "Write", write, "toolu_w")), "Wrote AGENTS.md.")
    acp.client.answers = ["allow_once"]
    sid = await acp.start()
    await acp.prompt(sid, "/init the tests")
    check_wire(acp.run.wire)
    (prompt,) = _user_texts(acp.model.bodies[0])
    assert prompt.startswith("Survey this project")
    assert str(root / "AGENTS.md") in prompt
    assert prompt.endswith("Pay particular attention to: the tests")
    assert len(acp.client.permissions) == 1  # the normal Write permission
    assert (root / "AGENTS.md").read_text() == "# Agents\nRun make test.\n"
    # within the turn the system prompt keeps its bytes; the new file shows next prompt
    assert acp.model.bodies[1]["system"] == acp.model.bodies[0]["system"]
