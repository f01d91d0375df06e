"""Slash commands (``agent.commands``, ``agent.slash``): what is announced, what each
built-in does to the session and its updates, and what a custom command sends the model
(the official SDK client drives the agent; a scripted Anthropic-compatible server
records the request bodies; every line is checked against the ACP schema)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from acp import text_block

from tests.agent.support import (
    KEY,
    ScriptedClient,
    agent,
    check_wire,
    environment,
    fake_backend,
    response,
    start,
    text_of,
    write_config,
)
from tests.fakes.http import FakeServer, Received, Reply
from toolwire.agent.features.commands import (
    BUILTINS,
    custom_commands,
    front_matter,
    load_command,
    parse_command,
)


def _ok(request: Received) -> Reply:
    return Reply(chunks=[response(("text", "ok")).encode()])


def _updates(notes: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [n["params"]["update"] for n in notes if n["params"]["update"]["sessionUpdate"] == kind]


def _user_texts(request: Received) -> list[str]:
    """The text of each user message the model was sent (tool results left out)."""
    out = []
    for message in request.json()["messages"]:
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


def test_custom_commands_are_announced_and_reach_the_model(tmp_path: Path) -> None:
    root = tmp_path / "project"
    commands = root / ".toolwire" / "commands"
    commands.mkdir(parents=True)
    (commands / "review.md").write_text(
        "---\ndescription: Review a file\nargument-hint: PATH\n---\nReview $ARGUMENTS for bugs.\n"
    )
    with FakeServer(respond=_ok) as server:
        config = write_config(tmp_path, fake_backend(server.url))
        env = environment(tmp_path, TEST_KEY=KEY)

        async def scenario() -> None:
            async with agent(tmp_path, ScriptedClient(), "--config", str(config), env=env) as run:
                sid = await start(run.conn, root)
                (listed,) = _updates(run.notifications(), "available_commands_update")
                review = listed["availableCommands"][-1]
                assert review == {
                    "name": "review",
                    "description": "Review a file",
                    "input": {"hint": "PATH"},
                }
                await run.conn.prompt(session_id=sid, prompt=[text_block("/review src/app.py")])
                await run.conn.prompt(session_id=sid, prompt=[text_block("/unknown thing")])
                user = _updates(run.notifications(), "user_message_chunk")
                assert user == []  # the client shows its own prompt; nothing echoed
                check_wire(run.wire)

        asyncio.run(scenario())
    first, second = server.requests
    assert _user_texts(first) == ["Review src/app.py for bugs."]
    assert _user_texts(second)[-1] == "/unknown thing"


def _two_backends(url_a: str, url_b: str) -> str:
    table = 'default_backend = "a"\n'
    for name, url in (("a", url_a), ("b", url_b)):
        table += (
            f'[backends.{name}]\nprovider = "anthropic"\nmodel = "model-{name}"\n'
            f'base_url = "{url}"\napi_key_env = "TEST_KEY"\n'
        )
    return table


def test_model_and_mode_commands_change_the_session(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    with FakeServer(respond=_ok) as server_a, FakeServer(respond=_ok) as server_b:
        config = write_config(tmp_path, _two_backends(server_a.url, server_b.url))
        env = environment(tmp_path, TEST_KEY=KEY)

        async def scenario() -> None:
            async with agent(tmp_path, ScriptedClient(), "--config", str(config), env=env) as run:
                sid = await start(run.conn, root)

                async def say(text: str) -> str:
                    mark = len(run.notifications())
                    done = await run.conn.prompt(session_id=sid, prompt=[text_block(text)])
                    assert done.stop_reason == "end_turn"
                    return text_of(run.notifications()[mark:])

                await say("hello")
                mark = len(run.notifications())
                assert "switches to b at your next prompt" in await say("/model b")
                (options,) = _updates(run.notifications()[mark:], "config_option_update")
                model = next(o for o in options["configOptions"] if o["id"] == "model")
                assert model["currentValue"] == "b"
                assert "no model 'zz'" in await say("/model zz")
                assert "a (model-a), b (model-b)" in await say("/model")
                mark = len(run.notifications())
                assert "accept-edits" in await say("/mode accept-edits")
                (mode,) = _updates(run.notifications()[mark:], "current_mode_update")
                assert mode["currentModeId"] == "accept-edits"
                (options,) = _updates(run.notifications()[mark:], "config_option_update")
                chosen = next(o for o in options["configOptions"] if o["id"] == "mode")
                assert chosen["currentValue"] == "accept-edits"
                assert "no mode 'fast'" in await say("/mode fast")
                await say("again")
                check_wire(run.wire)

        asyncio.run(scenario())
        assert len(server_a.requests) == 1  # the commands never reached a model
        assert any("again" in json.dumps(r.json()["messages"]) for r in server_b.requests)


def test_clear_starts_fresh_and_survives_a_reload(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    with FakeServer(respond=_ok) as server:
        config = write_config(tmp_path, fake_backend(server.url))
        env = environment(tmp_path, TEST_KEY=KEY)
        sid = ""

        async def first() -> None:
            nonlocal sid
            async with agent(tmp_path, ScriptedClient(), "--config", str(config), env=env) as run:
                sid = await start(run.conn, root)
                for text in ("first question", "/clear", "second question"):
                    await run.conn.prompt(session_id=sid, prompt=[text_block(text)])
                assert "New conversation" in text_of(run.notifications())
                check_wire(run.wire)

        async def second() -> None:
            async with agent(tmp_path, ScriptedClient(), "--config", str(config), env=env) as run:
                await start(run.conn, root)
                await run.conn.load_session(cwd=str(root), session_id=sid, mcp_servers=[])
                replayed = text_of(run.notifications())
                assert "New conversation" in replayed  # the transcript keeps the marker
                assert "first question" in json.dumps(run.notifications())
                await run.conn.prompt(session_id=sid, prompt=[text_block("third question")])
                check_wire(run.wire)

        asyncio.run(first())
        asyncio.run(second())
    before, after, reloaded = (_user_texts(r) for r in server.requests)
    assert before == ["first question"]
    assert after == ["second question"]
    assert reloaded == ["second question", "third question"]


def test_init_sends_the_survey_prompt_and_writes_with_permission(tmp_path: Path) -> None:
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    write = {"file_path": str(root / "AGENTS.md"), "content": "# Agents\nRun make test.\n"}
    with FakeServer() as server:
        server.script(
            Reply(chunks=[response(("tool", "Write", write, "toolu_w")).encode()]),
            Reply(chunks=[response(("text", "Wrote AGENTS.md."), n=1).encode()]),
        )
        config = write_config(tmp_path, fake_backend(server.url))
        env = environment(tmp_path, TEST_KEY=KEY)
        client = ScriptedClient(answers=["allow_once"])

        async def scenario() -> None:
            async with agent(tmp_path, client, "--config", str(config), env=env) as run:
                sid = await start(run.conn, root)
                await run.conn.prompt(session_id=sid, prompt=[text_block("/init the tests")])
                check_wire(run.wire)

        asyncio.run(scenario())
    (prompt,) = _user_texts(server.requests[0])
    assert prompt.startswith("Survey this project")
    assert str(root / "AGENTS.md") in prompt
    assert prompt.endswith("Pay particular attention to: the tests")
    assert len(client.permissions) == 1  # the normal Write permission
    assert (root / "AGENTS.md").read_text() == "# Agents\nRun make test.\n"
    # within the turn the system prompt keeps its bytes; the new file shows next prompt
    assert server.requests[1].json()["system"] == server.requests[0].json()["system"]
