"""``plan`` and ``bypass`` modes, and "always reject" for the rest of the session."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from acp import text_block

from tests.agent.support import (
    APP,
    KEY,
    ScriptedClient,
    agent,
    calls_by_id,
    check_wire,
    environment,
    fake_backend,
    project,
    response,
    start,
    write_config,
)
from tests.fakes.http import FakeServer, Received, Reply
from toolwire.agent.features.plan import GO_AHEAD
from toolwire.config import ConfigError, load_config

EDIT = {"file_path": "app.py", "old_string": "'hi'", "new_string": "'bye'"}
BASH = {"command": "echo ran > ran.txt"}


def _run(
    tmp_path: Path, replies: list[str], answers: list[str], mode: str, prompts: int = 1
) -> tuple[list[Received], ScriptedClient, list[dict[str, Any]], Path]:
    root = project(tmp_path)
    client = ScriptedClient(answers=answers)
    notes: list[dict[str, Any]] = []
    with FakeServer() as server:
        server.script(*(Reply(chunks=[r.encode()]) for r in replies))
        config = write_config(tmp_path, fake_backend(server.url))
        env = environment(tmp_path, TEST_KEY=KEY)

        async def scenario() -> None:
            async with agent(tmp_path, client, "--config", str(config), env=env) as run:
                sid = await start(run.conn, root)
                await run.conn.set_session_mode(session_id=sid, mode_id=mode)
                for n in range(prompts):
                    result = await run.conn.prompt(session_id=sid, prompt=[text_block(f"p{n}")])
                    assert result.stop_reason == "end_turn"
                check_wire(run.wire)
                notes.extend(run.notifications())

        asyncio.run(scenario())
    return server.requests, client, notes, root


def _tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [b for m in body["messages"] for b in m["content"] if b["type"] == "tool_result"]


@pytest.mark.parametrize("answer", ["plan_go", "plan_stay"])
def test_plan_refuses_edits_then_asks_to_go(tmp_path: Path, answer: str) -> None:
    replies = [
        response(("tool", "Edit", EDIT, "toolu_e1")),
        response(("text", "Plan: change greet to say bye."), n=1),
        response(("tool", "Edit", EDIT, "toolu_e2"), n=2),
        response(("text", "Done."), n=3),
    ]
    sent, client, notes, root = _run(tmp_path, replies, [answer], "plan")
    first = sent[0].json()
    assert "plan mode" in first["system"][0]["text"]
    (refused,) = _tool_results(sent[1].json())
    assert refused["is_error"] is True
    assert "plan mode" in refused["content"]
    (asked,) = client.permissions  # only the plan question: the Edit was refused outright
    assert asked.kind == "switch_mode"
    kinds = [u["update"]["sessionUpdate"] for u in (n["params"] for n in notes)]
    if answer == "plan_stay":
        assert len(sent) == 2
        assert (root / "app.py").read_text(encoding="utf-8") == APP
        assert "current_mode_update" not in kinds[kinds.index("tool_call") :]
        return
    assert len(sent) == 4
    go = sent[2].json()
    assert go["messages"][-1]["content"][-1]["text"] == GO_AHEAD
    assert "plan mode" not in go["system"][0]["text"]
    assert "bye" in (root / "app.py").read_text(encoding="utf-8")  # accept-edits: no ask
    modes = [n["params"]["update"] for n in notes]
    switched = [u for u in modes if u["sessionUpdate"] == "current_mode_update"]
    assert switched[-1]["currentModeId"] == "accept-edits"
    options = [u for u in modes if u["sessionUpdate"] == "config_option_update"]
    mode = next(o for o in options[-1]["configOptions"] if o["id"] == "mode")
    assert mode["currentValue"] == "accept-edits"


def test_bypass_never_asks(tmp_path: Path) -> None:
    replies = [
        response(("tool", "Edit", EDIT, "toolu_e"), ("tool", "Bash", BASH, "toolu_b")),
        response(("text", "Both done."), n=1),
    ]
    sent, client, notes, root = _run(tmp_path, replies, [], "bypass")
    assert client.permissions == []
    assert "bye" in (root / "app.py").read_text(encoding="utf-8")
    assert (root / "ran.txt").exists()
    assert all(not r.get("is_error") for r in _tool_results(sent[1].json()))
    assert calls_by_id(notes)["toolu_b"]["status"] == "completed"


def test_bypass_is_never_the_default(tmp_path: Path) -> None:
    path = write_config(tmp_path, 'mode = "bypass"\n')
    with pytest.raises(ConfigError, match="cannot be the default"):
        load_config(path, environ={})
    with pytest.raises(ConfigError, match="cannot be the default"):
        load_config(None, environ={"TOOLWIRE_MODE": "bypass", "XDG_CONFIG_HOME": str(tmp_path)})


def test_reject_always_refuses_later_calls_without_asking(tmp_path: Path) -> None:
    replies = [
        response(("tool", "Bash", BASH, "toolu_1")),
        response(("tool", "Bash", BASH, "toolu_2"), n=1),
        response(("text", "I will stop."), n=2),
        response(("tool", "Bash", BASH, "toolu_3"), n=3),
        response(("text", "Still refused."), n=4),
    ]
    sent, client, notes, root = _run(tmp_path, replies, ["reject_always"], "ask", prompts=2)
    assert len(client.permissions) == 1  # asked once, for the first call
    assert not (root / "ran.txt").exists()
    (first,) = _tool_results(sent[1].json())
    assert first["content"].startswith("The user rejected this Bash call")
    second = _tool_results(sent[2].json())[-1]
    assert "always reject Bash" in second["content"]
    third = _tool_results(sent[4].json())[-1]
    assert "always reject Bash" in third["content"]
    assert calls_by_id(notes)["toolu_3"]["status"] == "failed"
