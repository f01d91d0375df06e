"""A server that leaks every tool call as text still gets a task done (docs/decoding.md,
"Rescue"): ``toolwire acp`` on an OpenAI-compatible backend whose parser is broken
(``tests/fakes/leaky.py``) reads, edits and runs a command, and says it is done; with
``rescue = "off"`` the same server's first answer is shown as text and the turn stops."""

from __future__ import annotations

import json
import logging
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
    project,
    start,
    text_of,
    write_config,
)
from tests.fakes.http import FakeServer
from tests.fakes.leaky import DONE, leaky

pytestmark = pytest.mark.anyio
Note = dict[str, Any]


def _config(tmp_path: Path, url: str, rescue: str | None) -> Path:
    line = f'rescue = "{rescue}"\n' if rescue else ""
    return write_config(
        tmp_path,
        'default_backend = "local"\n[backends.local]\nprovider = "openai-chat"\n'
        f'model = "qwen3-coder"\nbase_url = "{url}/v1"\napi_key_env = "TEST_KEY"\n{line}',
    )


async def _task(tmp_path: Path, *args: str) -> tuple[list[Note], Path]:
    """The task in a fresh project, ``toolwire acp ARGS``: the session updates, the project."""
    root = project(tmp_path)
    client = ScriptedClient(answers=["allow_once", "allow_once"])
    env = environment(tmp_path, TEST_KEY=KEY)
    async with agent(tmp_path, client, *args, env=env) as run:
        sid = await start(run.conn, root)
        result = await run.conn.prompt(session_id=sid, prompt=[text_block("Say hello")])
        check_wire(run.wire)
        notes = run.notifications()
    assert result.stop_reason == "end_turn"
    return notes, root


async def _run(
    tmp_path: Path, rescue: str | None, *args: str
) -> tuple[FakeServer, list[Note], Path]:
    """The task on the leaky server: the server, the session updates, the project."""
    with FakeServer(leaky) as server:
        config = _config(tmp_path, server.url, rescue)
        notes, root = await _task(tmp_path, "--config", str(config), *args)
    return server, notes, root


async def test_leaked_calls_are_rescued_through_read_edit_bash(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, "toolwire.backends")
    server, notes, root = await _run(tmp_path, None)  # the default: a base_url server
    calls = list(calls_by_id(notes).values())
    assert [(c["title"], c["status"]) for c in calls] == [
        ("Read app.py", "completed"),
        ("Edit app.py", "completed"),
        ("cat app.py", "completed"),
    ]
    assert (root / "app.py").read_text() == APP.replace("'hi'", "'hello'")
    assert "return 'hello'" in calls[2]["content"][0]["content"]["text"]
    shown = text_of(notes)
    assert "Let me read the file first." in shown
    assert DONE in shown
    thought = text_of(notes, "agent_thought_chunk")
    assert "friendlier greeting" in thought
    for markup in ("<function=", "<parameter=", "tool_call>", '"parameters"'):
        assert markup not in shown
        assert markup not in thought
    # The server is sent its calls back as native calls, and four requests ran the task.
    assert len(server.requests) == 4
    second = server.requests[1].json()["messages"]
    assert second[-2]["tool_calls"][0]["function"]["name"] == "Read"
    assert second[-1]["role"] == "tool"
    notices = [r.getMessage() for r in caplog.records if "rescued" in r.getMessage()]
    assert len(notices) == 3  # one line per rescued response
    assert "qwen3-coder markup in `content`" in notices[0]
    assert "hermes markup in `reasoning_content`" in notices[1]
    assert "llama-json markup in `content`" in notices[2]
    assert "backend 'local' at 127.0.0.1:" in notices[0]


async def test_with_rescue_off_the_leak_is_text_and_the_turn_stops(tmp_path: Path) -> None:
    server, notes, root = await _run(tmp_path, "off")
    assert calls_by_id(notes) == {}
    assert "<function=Read>" in text_of(notes)
    assert len(server.requests) == 1
    assert (root / "app.py").read_text() == APP


async def test_a_recorded_rescue_replays_as_it_ran(tmp_path: Path) -> None:
    cassette = tmp_path / "leaks.jsonl"
    (tmp_path / "live").mkdir()
    (tmp_path / "replay").mkdir()
    live, _, _ = await _run(tmp_path / "live", None, "--record", str(cassette))
    rows = [json.loads(line) for line in cassette.read_text().splitlines()]
    assert [row.get("rescue") for row in rows] == ["auto"] * 4
    notes, root = await _task(tmp_path / "replay", "--backend", f"replay:{cassette}")
    calls = list(calls_by_id(notes).values())
    assert [(c["title"], c["status"]) for c in calls] == [
        ("Read app.py", "completed"),
        ("Edit app.py", "completed"),
        ("cat app.py", "completed"),
    ]
    assert (root / "app.py").read_text() == APP.replace("'hi'", "'hello'")
    assert len(live.requests) == 4
