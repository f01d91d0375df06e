"""Claude Code hooks in a real turn: what the model is sent, what the editor sees and
asks, what the hook read on standard input (the ACP pair, the model a function)."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest

from tests.agent.pair import AgentUnderTest, agent_under_test
from tests.agent.support import alive, answer, calls_by_id, check_wire, text_of
from toolwire.history import Message, ToolResultPart

pytestmark = pytest.mark.anyio
EXTRACTIVE = '\n[compaction]\nsummary = "extractive"\n'


def hooks(where: Path, event: str, script: str, matcher: str = "", **extra: Any) -> Path:
    """A settings file at ``where`` with one ``command`` hook of ``event``: ``script``
    (shell), written beside it; the JSON it read is kept in ``<script>.in``."""
    where.parent.mkdir(parents=True, exist_ok=True)
    body = where.parent / f"{event}-{len(list(where.parent.glob('*.sh')))}.sh"
    body.write_text(f'cat > "{body}.in"\n{script}\n', encoding="utf-8")
    hook = {"type": "command", "command": f"sh {body}", **extra}
    settings = {"hooks": {event: [{"matcher": matcher, "hooks": [hook]}]}}
    where.write_text(json.dumps(settings), encoding="utf-8")
    return body


def home_hooks(acp: AgentUnderTest, event: str, script: str, **kw: Any) -> Path:
    return hooks(acp.tmp_path / "home" / ".claude" / "settings.json", event, script, **kw)


def read_in(body: Path) -> dict[str, Any]:
    return dict(json.loads(Path(f"{body}.in").read_text(encoding="utf-8")))


def result(message: Message) -> ToolResultPart:
    part = message.parts[0]
    assert isinstance(part, ToolResultPart)
    return part


BASH = answer(("tool", "Bash", {"command": "touch made.txt"}, "toolu_1"))


async def test_a_pre_tool_use_hook_exiting_2_blocks_bash(acp: AgentUnderTest) -> None:
    body = home_hooks(acp, "PreToolUse", "echo 'no commands today' >&2; exit 2", matcher="Bash")
    acp.model.script(BASH, "OK.")
    sid = await acp.start()
    await acp.prompt(sid, "Make the file")
    assert not (acp.root / "made.txt").exists()
    sent = result(acp.model.requests[1].messages[-1])
    assert sent.is_error
    assert "no commands today" in sent.content
    assert calls_by_id(acp.run.notifications())["toolu_1"]["status"] == "failed"
    assert acp.client.permissions == []  # refused before the permission question
    seen = read_in(body)
    assert seen["hook_event_name"] == "PreToolUse"
    assert seen["tool_name"] == "Bash"
    assert seen["tool_input"] == {"command": "touch made.txt"}
    assert seen["session_id"] == sid
    assert seen["cwd"] == str(acp.root)
    assert seen["tool_use_id"] == "toolu_1"
    assert Path(seen["transcript_path"]).is_file()
    check_wire(acp.run.wire)


@pytest.mark.parametrize(
    ("matcher", "runs"),
    [
        ("Bash", True),
        ("Edit|Bash", True),
        ("B.*", True),
        ("*", True),
        ("", True),
        ("Bas", False),
        ("Edit|Write", False),
    ],
)
async def test_matchers_select_tools_as_claude_code_does(
    acp: AgentUnderTest, matcher: str, runs: bool
) -> None:
    home_hooks(acp, "PreToolUse", "echo blocked >&2; exit 2", matcher=matcher)
    acp.model.script(BASH, "OK.")
    acp.client.answers = ["allow_once"]
    await acp.prompt(await acp.start(), "Make the file")
    assert (acp.root / "made.txt").exists() is not runs


async def test_a_json_deny_refuses_with_its_reason(acp: AgentUnderTest) -> None:
    out = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "ask the release team",
        }
    }
    home_hooks(acp, "PreToolUse", f"echo '{json.dumps(out)}'")
    acp.model.script(BASH, "OK.")
    await acp.prompt(await acp.start(), "Make the file")
    assert "ask the release team" in result(acp.model.requests[1].messages[-1]).content
    assert not (acp.root / "made.txt").exists()
    assert acp.client.permissions == []


async def test_a_json_allow_skips_the_prompt(acp: AgentUnderTest) -> None:
    out = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}}
    home_hooks(acp, "PreToolUse", f"echo '{json.dumps(out)}'")
    acp.model.script(BASH, "OK.")
    await acp.prompt(await acp.start(), "Make the file")
    assert (acp.root / "made.txt").exists()
    assert acp.client.permissions == []


async def test_a_json_ask_asks_even_for_a_read(acp: AgentUnderTest) -> None:
    out = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask"}}
    home_hooks(acp, "PreToolUse", f"echo '{json.dumps(out)}'", matcher="Read")
    acp.model.script(answer(("tool", "Read", {"file_path": "app.py"}, "toolu_1")), "OK.")
    acp.client.answers = ["reject_once"]
    await acp.prompt(await acp.start(), "Read it")
    assert len(acp.client.permissions) == 1
    assert result(acp.model.requests[1].messages[-1]).is_error


async def test_post_tool_use_block_tells_the_model(acp: AgentUnderTest) -> None:
    body = home_hooks(
        acp, "PostToolUse", """echo '{"decision": "block", "reason": "run the linter"}'"""
    )
    acp.model.script(answer(("tool", "Read", {"file_path": "app.py"}, "toolu_1")), "OK.")
    await acp.prompt(await acp.start(), "Read it")
    sent = result(acp.model.requests[1].messages[-1])
    assert "def greet" in sent.content
    assert "run the linter" in sent.content
    seen = read_in(body)
    assert seen["hook_event_name"] == "PostToolUse"
    assert "def greet" in json.dumps(seen)
    assert "tool_response" in seen


async def test_user_prompt_submit_exit_2_drops_the_prompt(acp: AgentUnderTest) -> None:
    body = home_hooks(
        acp,
        "UserPromptSubmit",
        'grep -q secret "$0.in" && { echo "no secrets" >&2; exit 2; }; true',
    )
    acp.model.script("Hello.")
    sid = await acp.start()
    assert (await acp.prompt(sid, "my secret is 42")).stop_reason == "end_turn"
    assert acp.model.requests == []
    assert "no secrets" in text_of(acp.run.notifications())
    await acp.prompt(sid, "Hi")
    assert "secret" not in json.dumps(acp.model.bodies[-1])  # never stored
    assert read_in(body)["prompt"] == "Hi"
    check_wire(acp.run.wire)


async def test_user_prompt_submit_output_is_context(acp: AgentUnderTest) -> None:
    home_hooks(acp, "UserPromptSubmit", "echo 'Branch: feature-x'")
    acp.model.script("Hello.")
    await acp.prompt(await acp.start(), "Hi")
    assert "Branch: feature-x" in acp.model.requests[0].messages[-1].text()


async def test_a_stop_block_goes_on_with_the_reason(acp: AgentUnderTest) -> None:
    body = home_hooks(
        acp,
        "Stop",
        'grep -q \'"stop_hook_active": true\' "$0.in" || '
        """{ echo '{"decision": "block", "reason": "tests are not run yet"}'; }""",
    )
    acp.model.script("Done.", "Ran them.")
    sid = await acp.start()
    assert (await acp.prompt(sid, "Work")).stop_reason == "end_turn"
    assert len(acp.model.requests) == 2
    assert "tests are not run yet" in acp.model.requests[1].messages[-1].text()
    assert read_in(body)["stop_hook_active"] is True
    check_wire(acp.run.wire)


async def test_session_start_output_is_context(acp: AgentUnderTest) -> None:
    body = home_hooks(acp, "SessionStart", "echo 'Deploys freeze on Fridays.'")
    acp.model.script("Hello.", "Again.")
    sid = await acp.start()
    await acp.prompt(sid, "Hi")
    await acp.prompt(sid, "Hi again")
    assert "Deploys freeze on Fridays." in json.dumps(acp.model.bodies[0])
    assert read_in(body)["source"] == "startup"
    text = json.dumps(acp.model.bodies[1])
    assert text.count("Deploys freeze on Fridays.") == 1  # run once per session


async def test_pre_compact_runs_before_a_compaction(tmp_path: Path) -> None:
    async with agent_under_test(tmp_path, config=EXTRACTIVE) as acp:
        body = home_hooks(acp, "PreCompact", "true")
        acp.model.script(answer(("tool", "Read", {"file_path": "app.py"}, "toolu_1")), "Read.")
        sid = await acp.start()
        await acp.prompt(sid, "Read app.py")
        await acp.prompt(sid, "/compact keep greet")
        seen = read_in(body)
        assert seen["trigger"] == "manual"
        assert seen["custom_instructions"] == "keep greet"


async def test_a_hook_past_its_timeout_is_killed_and_does_not_block(acp: AgentUnderTest) -> None:
    pid_file = acp.tmp_path / "hook.pid"
    home_hooks(acp, "PreToolUse", f"echo $$ > {pid_file}; sleep 30; exit 2", timeout=1)
    acp.model.script(BASH, "OK.")
    acp.client.answers = ["allow_once"]
    started = time.monotonic()
    await acp.prompt(await acp.start(), "Make the file")
    assert time.monotonic() - started < 10
    assert (acp.root / "made.txt").exists()
    assert "timed out after 1 s" in text_of(acp.run.notifications())
    pid = int(pid_file.read_text())
    assert not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text()


async def test_a_project_file_runs_once_trusted_and_asks_again_when_changed(
    acp: AgentUnderTest,
) -> None:
    settings = acp.root / ".claude" / "settings.json"
    hooks(settings, "UserPromptSubmit", "echo 'House rule one.'")
    acp.model.script("a", "b", "c", "d")
    acp.client.answers = ["hooks_trust"]
    sid = await acp.start()
    await acp.prompt(sid, "Hi")
    assert len(acp.client.permissions) == 1
    assert "House rule one." in acp.model.requests[0].messages[-1].text()
    await acp.prompt(sid, "Hi")  # the same content: not asked again
    assert len(acp.client.permissions) == 1
    hooks(settings, "UserPromptSubmit", "echo 'House rule two.'")
    acp.client.answers = ["hooks_skip"]
    await acp.prompt(sid, "Hi")
    assert len(acp.client.permissions) == 2  # changed: asked again
    assert "House rule" not in acp.model.requests[2].messages[-1].text()
    await acp.prompt(sid, "Hi")  # declined: not asked again in this session
    assert len(acp.client.permissions) == 2
    check_wire(acp.run.wire)


async def test_a_trusted_file_stays_trusted_in_another_process(acp: AgentUnderTest) -> None:
    hooks(acp.root / ".toolwire" / "settings.json", "UserPromptSubmit", "echo 'Rule.'")
    acp.model.script("a", "b")
    acp.client.answers = ["hooks_trust"]
    await acp.prompt(await acp.start(), "Hi")
    async with acp.again() as second:
        await second.prompt(await second.start(), "Hi")
        assert second.client.permissions == []
    assert "Rule." in acp.model.requests[1].messages[-1].text()


async def test_a_cancel_kills_a_running_hook(acp: AgentUnderTest) -> None:
    pid_file = acp.tmp_path / "hook.pid"
    home_hooks(acp, "PreToolUse", f"echo $$ > {pid_file}; sleep 30")
    acp.model.script(BASH, "OK.")
    sid = await acp.start()
    turn = asyncio.create_task(acp.prompt(sid, "Make the file"))
    for _ in range(200):
        if pid_file.exists() and pid_file.read_text().strip():
            break
        await asyncio.sleep(0.05)
    await acp.run.conn.cancel(session_id=sid)
    assert (await asyncio.wait_for(turn, 10)).stop_reason == "cancelled"
    assert not alive(int(pid_file.read_text()))
    assert not (acp.root / "made.txt").exists()
