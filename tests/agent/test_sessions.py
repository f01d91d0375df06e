"""Sessions and settings of the agent (official Python SDK client, in this process).

``session/load``, ``list``, ``resume`` and ``close`` on one agent; modes and the model
config option; a malformed input line; a backend's 4xx answer; every stop reason; no
key, no demo. Every message the agent wrote is validated against the ACP v1 schema. Load
after a restart (a second process): ``test_processes.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from acp import text_block
from acp.exceptions import RequestError

from tests.agent.pair import AgentUnderTest, agent_under_test
from tests.agent.support import (
    APP,
    KEY,
    ScriptedClient,
    agent,
    answer,
    calls_by_id,
    check_wire,
    full_turn_answers,
    response,
    start,
    text_of,
)
from toolwire.samples import copy_demo_project
from toolwire.testing import ErrorResponse
from toolwire.testing.function import Answer

pytestmark = pytest.mark.anyio


async def test_load_list_resume_close_on_one_agent(acp: AgentUnderTest) -> None:
    """What a turn stored is listed, replayed on load (consolidated), resumed, closed."""
    acp.model.script(*full_turn_answers())
    acp.client.answers = ["allow_always", "allow_always"]
    conn, root = acp.run.conn, acp.root
    sid = await acp.start()
    result = await acp.prompt(sid, "Say hello")
    assert result.stop_reason == "end_turn"
    listed = await conn.list_sessions()
    assert [s.session_id for s in listed.sessions] == [sid]
    assert listed.sessions[0].title == "Say hello"
    assert (await conn.list_sessions(cwd=str(acp.tmp_path))).sessions == []
    before = len(acp.run.notifications())
    loaded = await conn.load_session(cwd=str(root), session_id=sid, mcp_servers=[])
    assert loaded.modes is not None
    replayed = acp.run.notifications()[before:]
    kinds = [n["params"]["update"]["sessionUpdate"] for n in replayed]
    assert kinds[0] == "user_message_chunk"
    assert "tool_call_update" not in kinds, "the transcript is consolidated"
    calls = calls_by_id(replayed)
    assert [c["status"] for c in calls.values()] == ["completed"] * 3
    assert calls["toolu_edit"]["content"][0]["oldText"] == APP
    assert "Done: greet() now says hello." in text_of(replayed)
    await conn.resume_session(cwd=str(root), session_id=sid, mcp_servers=[])
    await conn.close_session(session_id=sid)
    with pytest.raises(RequestError):
        await acp.prompt(sid, "closed?")
    with pytest.raises(RequestError):
        await conn.load_session(cwd=str(root), session_id="nope", mcp_servers=[])
    check_wire(acp.run.wire)


TWO = (
    '[backends.two]\nprovider = "anthropic"\nmodel = "m2"\nbase_url = "http://two.test"\n'
    'api_key_env = "TEST_KEY"\n'
)


async def test_modes_and_model_option(tmp_path: Path) -> None:
    """read-only refuses edits; the model option switches backends at the next prompt."""
    edit = {"file_path": "app.py", "old_string": "'hi'", "new_string": "'bye'"}
    async with agent_under_test(tmp_path, config=TWO) as acp:
        first: list[Answer] = [answer(("tool", "Edit", edit, "toolu_ro")), "Refused."]
        second: list[Answer] = ["Second model here."]
        # Which backend asked: the model name in the body it sent.
        acp.model.function = lambda request: (
            second if acp.model.bodies[-1]["model"] == "m2" else first
        ).pop(0)
        conn, client = acp.run.conn, acp.client
        sid = await acp.start()
        await conn.set_session_mode(session_id=sid, mode_id="read-only")
        kinds = [u.session_update for _, u in client.updates]
        assert "current_mode_update" in kinds
        result = await acp.prompt(sid, "Edit it")
        assert result.stop_reason == "end_turn"
        call = calls_by_id(acp.run.notifications())["toolu_ro"]
        assert call["status"] == "failed"
        assert "read-only" in call["content"][-1]["content"]["text"]
        switched = await conn.set_config_option(config_id="model", session_id=sid, value="two")
        model = next(o for o in switched.config_options if o.id == "model")
        assert model.current_value == "two/m2"
        assert [o.value for o in model.options] == ["fake/claude-test", "two/m2", "demo"]
        assert client.of_kind("config_option_update")
        with pytest.raises(RequestError) as bad:
            await conn.set_config_option(config_id="model", session_id=sid, value="x")
        assert bad.value.code == -32602
        result = await acp.prompt(sid, "Who are you?")
        assert result.stop_reason == "end_turn"
        text = text_of(acp.run.notifications())
        assert "Switched the model from fake to two" in text
        assert text.index("Switched the model") < text.index("Second model here.")
        check_wire(acp.run.wire)
    assert (acp.root / "app.py").read_text(encoding="utf-8") == APP
    assert [body["model"] for body in acp.model.bodies] == ["claude-test", "claude-test", "m2"]


async def test_malformed_line_is_answered_and_serving_goes_on(acp: AgentUnderTest) -> None:
    run = acp.run
    await run.conn.initialize(protocol_version=1)
    await run.send_raw(b"{this is not json\n[1, 2]\n")
    listed = await run.conn.list_sessions()  # still serving
    assert listed.sessions == []
    errors = [m["error"] for m in run.sent() if "error" in m]
    assert [(e["code"], m) for e, m in zip(errors, [None, None], strict=True)] == [
        (-32700, None),
        (-32600, None),
    ]
    assert all(m["id"] is None for m in run.sent() if "error" in m)
    check_wire(run.wire)


async def test_backend_4xx_is_a_message_and_the_session_lives(acp: AgentUnderTest) -> None:
    error = {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": "max_tokens: 999999 is too large"},
    }
    acp.model.script(ErrorResponse(400, error), "Working again.")
    run = acp.run
    sid = await acp.start()
    result = await acp.prompt(sid, "Hi")
    assert result.stop_reason == "end_turn"
    said = text_of(run.notifications())
    assert "HTTP 400" in said
    assert "max_tokens: 999999 is too large" in said
    assert KEY not in said
    result = await acp.prompt(sid, "Again")
    assert result.stop_reason == "end_turn"
    assert "Working again." in text_of(run.notifications())
    live = _said(run.notifications(), "HTTP 400")
    before = len(run.notifications())
    await run.conn.load_session(cwd=str(acp.root), session_id=sid, mcp_servers=[])
    # the stored message is the one that was sent: same text, same messageId
    assert _said(run.notifications()[before:], "HTTP 400") == live
    check_wire(run.wire)


def _said(notes: list[dict[str, Any]], needle: str) -> dict[str, Any]:
    """The one message chunk whose text has ``needle``."""
    (update,) = [
        n["params"]["update"]
        for n in notes
        if n["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
        and needle in n["params"]["update"]["content"]["text"]
    ]
    return dict(update)


async def test_every_stop_reason(tmp_path: Path) -> None:
    """max_tokens, refusal, a stream cut mid-call, then max_turn_requests."""
    read = ("tool", "Read", {"file_path": "app.py"}, "toolu_r")
    cut = response(
        ("text", "Let me write."),
        ("tool", "Write", {"file_path": "w.txt", "content": "partial"}, "toolu_cut"),
    )
    cut = cut[: cut.index('"content_block_stop","index":1') - 30]  # the connection drops
    limits = "\n[limits]\nmax_turn_requests = 2\n"
    async with agent_under_test(tmp_path, config=limits) as acp:
        acp.model.script(
            answer(("text", "This answer is cut"), stop="max_tokens"),
            answer(("text", "I can't help with that."), stop="refusal"),
            cut.encode(),
            answer(read),
            answer(("tool", "Read", {"file_path": "app.py"}, "toolu_r2")),
            answer(("text", "never reached")),
        )
        sid = await acp.start()

        async def ask(text: str) -> str:
            return str((await acp.prompt(sid, text)).stop_reason)

        assert await ask("one") == "max_tokens"
        assert await ask("two") == "refusal"
        assert await ask("three") == "end_turn"
        call = calls_by_id(acp.run.notifications())["toolu_cut"]
        assert call["status"] == "failed"
        assert "broke off" in text_of(acp.run.notifications())
        assert await ask("four") == "max_turn_requests"
        calls = calls_by_id(acp.run.notifications())
        assert calls["toolu_r"]["status"] == calls["toolu_r2"]["status"] == "completed"
        assert len(acp.model.bodies) == 5, "a request past max_turn_requests"
        check_wire(acp.run.wire)
        assert not (acp.root / "w.txt").exists()


async def test_no_key_runs_nothing_in_the_users_project(tmp_path: Path) -> None:
    """No config, no key, the demo's own project: the agent says what is missing (in
    ``authenticate``'s error and the prompt's answer) and runs nothing, not the bundled
    demo. Its own agent, not the acp fixture's: the point is an agent with no
    configuration."""
    root = copy_demo_project(tmp_path / "project").resolve()
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    client = ScriptedClient()
    async with agent(tmp_path, client) as run:
        sid = await start(run.conn, root)
        with pytest.raises(RequestError) as info:
            await run.conn.authenticate(method_id="env")
        assert "$ANTHROPIC_API_KEY" in str(info.value.data)
        assert "toolwire login" in str(info.value.data)
        for typed in ("Fix the failing test", "Go on"):
            result = await run.conn.prompt(session_id=sid, prompt=[text_block(typed)])
            assert result.stop_reason == "end_turn"
        said = [u.content.text for u in client.of_kind("agent_message_chunk")]
        assert len(said) == 2
        assert all("Set $ANTHROPIC_API_KEY" in text for text in said)
        assert all("Nothing was run" in text for text in said)
        assert client.of_kind("tool_call") == []
        check_wire(run.wire)
    after = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    assert after == before  # no edit, no test run (no __pycache__ either)


async def test_an_explicit_demo_backend_still_replays(tmp_path: Path) -> None:
    root = copy_demo_project(tmp_path / "project").resolve()
    client = ScriptedClient(answers=["allow_once"] * 4)
    async with agent(tmp_path, client, "--backend", "demo", "--mode", "accept-edits") as run:
        sid = await start(run.conn, root)
        await run.conn.authenticate(method_id="env")
        result = await run.conn.prompt(session_id=sid, prompt=[text_block("Fix it")])
        assert result.stop_reason == "end_turn"
        assert client.of_kind("tool_call") != []
    assert "ascii_text.lower()" in (root / "textkit" / "slugify.py").read_text(encoding="utf-8")
