"""Prompt turns of the agent, driven by the official Python SDK client.

The agent runs in the test's process (``toolwire.testing.connect_in_memory``); every
message it wrote is validated against the ACP v1 JSON Schema (``check_wire``) and files
on disk are checked. The same turns through a real ``toolwire acp`` process:
``test_processes.py``.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from acp.schema import ClientCapabilities, FileSystemCapabilities

from tests.agent.pair import AgentUnderTest, agent_under_test
from tests.agent.support import (
    APP,
    alive,
    answer,
    calls_by_id,
    check_full_turn,
    check_wire,
    full_turn_answers,
    text_of,
)
from toolwire.backends.base import ModelRequest
from toolwire.history import ToolResultPart
from toolwire.testing.function import Answer
from toolwire.tools import ToolLimits

pytestmark = pytest.mark.anyio


async def test_full_turn_read_edit_bash(acp: AgentUnderTest) -> None:
    acp.model.script(*full_turn_answers())
    acp.client.answers = ["allow_once", "allow_once"]
    sid = await acp.start()
    result = await acp.prompt(sid, "Say hello")
    assert result.stop_reason == "end_turn"
    assert check_wire(acp.run.wire) > 10
    check_full_turn(acp.root, acp.run.notifications(), acp.client)
    assert (acp.root / "app.py").read_text(encoding="utf-8") == APP.replace("'hi'", "'hello'")
    # What the provider was sent: the file's text came back to it as the Read's result.
    read_result = acp.model.requests[1].messages[-1].parts[0]
    assert isinstance(read_result, ToolResultPart)
    assert "return 'hi'" in str(read_result.content)


async def test_client_fs_and_terminal(acp: AgentUnderTest) -> None:
    """With fs and terminal capabilities, files and commands go through the client."""
    acp.model.script(*full_turn_answers())
    acp.client.answers = ["allow_always", "allow_once"]
    caps = ClientCapabilities(
        fs=FileSystemCapabilities(read_text_file=True, write_text_file=True), terminal=True
    )
    sid = await acp.start(caps)
    result = await acp.prompt(sid, "Say hello")
    assert result.stop_reason == "end_turn"
    check_wire(acp.run.wire)
    calls = calls_by_id(acp.run.notifications())
    bash = calls["toolu_bash"]
    assert bash["status"] == "completed"
    assert bash["content"] == [{"type": "terminal", "terminalId": "term-1"}]
    methods = [m.get("method") for m in acp.run.sent()]
    assert methods.index("terminal/create") < methods.index("terminal/release")
    path = str(acp.root / "app.py")
    assert ("read", path) in acp.client.fs_calls
    assert ("write", path) in acp.client.fs_calls
    assert acp.client.terminals["term-1"].released
    assert (acp.root / "app.py").read_text(encoding="utf-8") == APP.replace("'hi'", "'hello'")


async def test_a_new_file_is_written_without_asking_the_editor_to_read_it(
    acp: AgentUnderTest,
) -> None:
    """Reading a missing file through ``fs/read_text_file`` makes clients print "Resource
    not found" to the user (acpx): a Write of a new file reads only the disk."""
    write = {"file_path": "notes/new.md", "content": "# New\n"}
    acp.model.script(answer(("tool", "Write", write, "toolu_w")), "Written.")
    acp.client.answers = ["allow_once"]
    (acp.root / "notes").mkdir()
    caps = ClientCapabilities(fs=FileSystemCapabilities(read_text_file=True, write_text_file=True))
    sid = await acp.start(caps)
    assert (await acp.prompt(sid, "Write it")).stop_reason == "end_turn"
    check_wire(acp.run.wire)
    path = str(acp.root / "notes" / "new.md")
    assert acp.client.fs_calls == [("write", path)]  # never ("read", path): it was not there
    assert calls_by_id(acp.run.notifications())["toolu_w"]["status"] == "completed"
    assert (acp.root / "notes" / "new.md").read_text(encoding="utf-8") == "# New\n"


async def test_permissions_allow_once_always_reject(acp: AgentUnderTest) -> None:
    """Ask mode: each edit asks after its tool_call and diff; allow always sticks."""
    edit = {"file_path": "app.py", "old_string": "'hi'", "new_string": "'hey'"}
    again = {"file_path": "app.py", "old_string": "'hey'", "new_string": "'hello'"}
    last = {"file_path": "app.py", "old_string": "greet", "new_string": "welcome"}
    acp.model.script(
        answer(("tool", "Edit", edit, "toolu_e1")),
        answer(("tool", "Write", {"file_path": "new.txt", "content": "x"}, "toolu_w1")),
        answer(("tool", "Edit", again, "toolu_e2")),
        answer(("tool", "Edit", last, "toolu_e3")),
        "All done.",
    )
    acp.client.answers = ["allow_once", "reject", "allow_always"]
    sid = await acp.start()
    result = await acp.prompt(sid, "Rename")
    assert result.stop_reason == "end_turn"
    check_wire(acp.run.wire)
    sent = acp.run.sent()
    calls = calls_by_id(acp.run.notifications())
    for call_id in ("toolu_e1", "toolu_w1", "toolu_e2"):
        _asked_after_diff(sent, call_id)
    assert calls["toolu_e1"]["status"] == "completed"
    assert calls["toolu_w1"]["status"] == "failed"
    assert "rejected" in calls["toolu_w1"]["rawOutput"]["error"]
    assert calls["toolu_w1"]["content"][-1]["content"]["text"].startswith("The user")
    assert calls["toolu_e3"]["status"] == "completed"
    assert calls["toolu_e3"]["content"][0]["type"] == "diff"
    assert [p.tool_call_id for p in acp.client.permissions] == ["toolu_e1", "toolu_w1", "toolu_e2"]
    assert all(p.content is None for p in acp.client.permissions)
    assert not (acp.root / "new.txt").exists()
    assert (acp.root / "app.py").read_text(encoding="utf-8") == (
        "def welcome():\n    return 'hello'\n"
    )
    # The model was told of the refusal: the Write's result is an error in its next request.
    refused = acp.model.requests[2].messages[-1].parts[0]
    assert isinstance(refused, ToolResultPart)
    assert refused.is_error


def _asked_after_diff(sent: list[dict[str, Any]], call_id: str) -> None:
    """The tool_call, then a diff update, then the request; its options are the three."""

    def position(match: Any) -> int:
        return next(i for i, m in enumerate(sent) if match(m))

    def update(m: dict[str, Any]) -> dict[str, Any]:
        return m.get("params", {}).get("update", {}) if m.get("method") == "session/update" else {}

    started = position(
        lambda m: (
            update(m).get("sessionUpdate") == "tool_call" and update(m)["toolCallId"] == call_id
        )
    )
    diffed = position(
        lambda m: (
            update(m).get("toolCallId") == call_id
            and any(c["type"] == "diff" for c in update(m).get("content", []))
        )
    )
    asked = position(
        lambda m: (
            m.get("method") == "session/request_permission"
            and m["params"]["toolCall"]["toolCallId"] == call_id
        )
    )
    assert started < diffed < asked
    request = sent[asked]["params"]
    assert "content" not in request["toolCall"]  # codex-acp#171: never replace the diff
    kinds = [o["kind"] for o in request["options"]]
    assert kinds == ["allow_once", "allow_always", "reject_once", "reject_always"]


async def test_cancel_mid_stream(acp: AgentUnderTest) -> None:
    """session/cancel while the model streams: answered once, cancelled, every call ended."""
    long_text = "This response streams slowly so that the cancel lands in the middle of it. " * 4
    acp.model.chunk_size, acp.model.pace = 60, 0.02
    acp.model.script(
        answer(
            ("text", long_text),
            ("tool", "Read", {"file_path": "app.py"}, "toolu_c1"),
            ("tool", "Write", {"file_path": "out.txt", "content": "never " * 200}, "toolu_c2"),
        ),
        answer(("text", "Still here.")),
    )
    sid = await acp.start()
    loop = asyncio.get_running_loop()
    tasks: list[asyncio.Task[None]] = []
    cancelled_at: list[float] = []

    def on_update(update: Any) -> None:
        if update.session_update == "tool_call" and not cancelled_at:
            cancelled_at.append(loop.time())
            tasks.append(loop.create_task(acp.run.conn.cancel(session_id=sid)))

    acp.client.on_update = on_update
    result = await acp.prompt(sid, "Go")
    assert result.stop_reason == "cancelled"
    assert loop.time() - cancelled_at[0] < 1.0, "the cancel was not prompt"
    acp.client.on_update = None
    check_wire(acp.run.wire)
    sent = acp.run.sent()
    answers = [
        m for m in sent if m.get("id") is not None and "result" in m and "stopReason" in m["result"]
    ]
    assert len(answers) == 1
    answered = sent.index(answers[0])
    assert not any(m.get("method") == "session/update" for m in sent[answered + 1 :])
    calls = calls_by_id(acp.run.notifications())
    assert calls, "the cancel landed before any tool call"
    for call in calls.values():
        assert call["status"] == "failed"
        assert call["rawOutput"]["cancelled"] is True
    # the session is still usable, and the next response is the next one
    again = await acp.prompt(sid, "Again")
    assert again.stop_reason == "end_turn"
    assert "Still here." in text_of(acp.run.notifications())
    assert not (acp.root / "out.txt").exists()


async def test_cancel_kills_running_command(acp: AgentUnderTest) -> None:
    """A cancel while Bash runs kills the command and what it started, and ends the call."""
    root = acp.root
    command = "echo $$ > shell.pid; sleep 30 & echo $! > sleep.pid; wait"
    acp.model.script(answer(("tool", "Bash", {"command": command}, "toolu_b")))
    acp.client.answers = ["allow_once"]
    sid = await acp.start()
    loop = asyncio.get_running_loop()

    async def cancel_when_running() -> float:
        while not (root / "sleep.pid").exists() or not (root / "sleep.pid").read_text():
            await asyncio.sleep(0.02)
        await acp.run.conn.cancel(session_id=sid)
        return loop.time()

    canceller = loop.create_task(cancel_when_running())
    result = await acp.prompt(sid, "Run it")
    assert result.stop_reason == "cancelled"
    assert loop.time() - await canceller < 2.0
    check_wire(acp.run.wire)
    call = calls_by_id(acp.run.notifications())["toolu_b"]
    assert call["status"] == "failed"
    assert call["rawOutput"]["cancelled"] is True
    for name in ("shell.pid", "sleep.pid"):
        assert not alive(int((root / name).read_text())), f"{name}: still running"


async def test_cancel_while_a_permission_is_pending(acp: AgentUnderTest) -> None:
    """The client cancels, then answers the pending permission "cancelled" (ACP order)."""
    edit = {"file_path": "app.py", "old_string": "'hi'", "new_string": "'bye'"}
    acp.model.script(answer(("tool", "Edit", edit, "toolu_p")))
    acp.client.answers = ["wait"]
    sid = await acp.start()
    loop = asyncio.get_running_loop()

    async def user_cancels() -> None:
        await asyncio.sleep(0.2)
        await acp.run.conn.cancel(session_id=sid)
        acp.client.cancelled.set()

    tasks: list[asyncio.Task[None]] = []
    acp.client.on_permission = lambda: tasks.append(loop.create_task(user_cancels()))
    result = await acp.prompt(sid, "Edit")
    assert result.stop_reason == "cancelled"
    call = calls_by_id(acp.run.notifications())["toolu_p"]
    assert call["status"] == "failed"
    assert call["rawOutput"]["cancelled"] is True
    assert call["content"] == [], "the diff it never applied is not left shown"
    check_wire(acp.run.wire)
    assert (acp.root / "app.py").read_text(encoding="utf-8") == APP


async def test_large_command_output_is_bounded(acp: AgentUnderTest) -> None:
    """1 MB of output over a second: throttled bounded tail frames, a capped result."""
    command = "for i in $(seq 1 40); do seq 100000 105000; sleep 0.03; done"
    size = 40 * 5001 * 7  # bytes the command prints
    acp.model.script(answer(("tool", "Bash", {"command": command}, "toolu_big")), "ok")
    acp.client.answers = ["allow_once"]
    sid = await acp.start()
    result = await acp.prompt(sid, "Count")
    assert result.stop_reason == "end_turn"
    check_wire(acp.run.wire)
    notes = [
        n for n in acp.run.notifications() if n["params"]["update"].get("toolCallId") == "toolu_big"
    ]
    frames = [n["params"]["update"] for n in notes[:-1] if "content" in n["params"]["update"]]
    assert len(frames) >= 3, "no output frames while the command ran"
    for frame in frames:
        text = frame["content"][0]["content"]["text"]
        assert len(text) < 4200
        assert text.startswith("[")
        assert "earlier bytes not shown]" in text
    sent = sum(len(json.dumps(n, separators=(",", ":"))) for n in notes)
    assert sent < size // 4, f"{sent:,} bytes for {size:,} bytes of output"
    final = calls_by_id(notes)["toolu_big"]
    assert final["status"] == "completed"
    text = final["content"][0]["content"]["text"]
    assert text.startswith("100000\n100001\n")
    assert text.rstrip().endswith("105000")
    assert "bytes not shown" in text
    # What the model got back is capped too, not the megabyte.
    (result_part,) = acp.model.requests[1].messages[-1].parts
    assert isinstance(result_part, ToolResultPart)
    assert len(str(result_part.content)) < size // 4


async def test_todowrite_becomes_a_plan(acp: AgentUnderTest) -> None:
    todos = [
        {"content": "Read the code", "status": "completed", "activeForm": "Reading the code"},
        {"content": "Fix the bug", "status": "in_progress", "activeForm": "Fixing the bug"},
        {"content": "Run the tests", "status": "pending", "activeForm": "Running the tests"},
    ]
    acp.model.script(answer(("tool", "TodoWrite", {"todos": todos}, "toolu_todo")), "Planned.")
    sid = await acp.start()
    result = await acp.prompt(sid, "Plan it")
    assert result.stop_reason == "end_turn"
    check_wire(acp.run.wire)
    plans = [
        n["params"]["update"]
        for n in acp.run.notifications()
        if n["params"]["update"]["sessionUpdate"] == "plan"
    ]
    assert plans == [
        {
            "sessionUpdate": "plan",
            "entries": [
                {"content": t["content"], "priority": "medium", "status": t["status"]}
                for t in todos
            ],
        }
    ]
    call = calls_by_id(acp.run.notifications())["toolu_todo"]
    assert (call["title"], call["kind"], call["status"]) == (
        "Update todos (3)",
        "think",
        "completed",
    )
    assert acp.client.permissions == []  # a plan never asks


@pytest.mark.parametrize("profile", ["minimal", "verbose", "full"])
async def test_every_permission_request_names_its_call(tmp_path: Path, profile: str) -> None:
    """title, kind, locations and rawInput in every profile (a client's policy matches on
    them); content never, except in ``full`` where it is exactly what the card holds."""
    edit = {"file_path": "app.py", "old_string": "'hi'", "new_string": "'hey'"}
    write = {"file_path": "new.txt", "content": "x\n"}
    bash = {"command": "echo hi"}
    async with agent_under_test(tmp_path, env={"TOOLWIRE_PROFILE": profile}) as acp:
        acp.model.script(
            answer(
                ("tool", "Edit", edit, "toolu_e"),
                ("tool", "Write", write, "toolu_w"),
                ("tool", "Bash", bash, "toolu_b"),
            ),
            "Done.",
        )
        acp.client.answers = ["allow_once", "reject", "allow_once"]
        sid = await acp.start()
        result = await acp.prompt(sid, "Go")
        assert result.stop_reason == "end_turn"
        check_wire(acp.run.wire)  # each request against RequestPermissionRequest
        sent = acp.run.sent()
    requests = [
        m["params"]["toolCall"] for m in sent if m.get("method") == "session/request_permission"
    ]
    held: dict[str, dict[str, Any]] = {}
    for message in sent:  # the card as the client holds it when asked
        if message.get("method") == "session/update":
            update = message["params"]["update"]
            if update["sessionUpdate"] in ("tool_call", "tool_call_update"):
                card = held.setdefault(update["toolCallId"], {"locations": [], "content": []})
                card.update({k: v for k, v in update.items() if k != "sessionUpdate"})
        elif message.get("method") == "session/request_permission":
            asked = message["params"]["toolCall"]
            card = held[asked["toolCallId"]]
            for key in ("title", "kind", "locations", "rawInput"):
                assert asked[key] == card[key], key
            if profile == "full":
                assert asked["content"] == card["content"]
            else:
                assert "content" not in asked
    named = [(r["toolCallId"], r["kind"], r["rawInput"]) for r in requests]
    assert named == [
        ("toolu_e", "edit", edit),
        ("toolu_w", "edit", write),
        ("toolu_b", "execute", bash),
    ]
    assert all(r["title"] for r in requests)
    assert requests[0]["locations"][0]["path"] == str(acp.root / "app.py")
    assert requests[1]["locations"] == [{"path": str(acp.root / "new.txt")}]


@pytest.mark.parametrize("choice", ["reject", "cancelled"])
async def test_a_refused_edit_ends_without_its_diff(acp: AgentUnderTest, choice: str) -> None:
    """Not applied, so not shown: the final update replaces the previewed diff."""
    edit = {"file_path": "app.py", "old_string": "'hi'", "new_string": "'bye'"}
    acp.model.script(answer(("tool", "Edit", edit, "toolu_no")), "OK.")
    acp.client.answers = [choice]
    sid = await acp.start()
    result = await acp.prompt(sid, "Edit")
    assert result.stop_reason == ("end_turn" if choice == "reject" else "cancelled")
    check_wire(acp.run.wire)
    _asked_after_diff(acp.run.sent(), "toolu_no")  # the diff was shown while asking
    call = calls_by_id(acp.run.notifications())["toolu_no"]
    assert call["status"] == "failed"
    assert all(item["type"] != "diff" for item in call["content"])
    if choice == "reject":
        (item,) = call["content"]
        assert item["content"]["text"].startswith("The user rejected this Edit")
    else:
        assert call["content"] == []
        assert call["rawOutput"]["cancelled"] is True
    assert (acp.root / "app.py").read_text(encoding="utf-8") == APP


async def test_a_write_over_a_huge_file_is_previewed_without_reading_it(
    acp: AgentUnderTest,
) -> None:
    """A 63 MB sparse file: the preview is a note, no notification carries the file."""
    with (acp.root / "huge.log").open("wb") as handle:
        handle.truncate(63 * 1024 * 1024)
    write = {"file_path": "huge.log", "content": "small\n"}
    acp.model.script(answer(("tool", "Write", write, "toolu_h")), "OK.")
    acp.client.answers = ["allow_once"]
    sid = await acp.start()
    result = await acp.prompt(sid, "Write")
    assert result.stop_reason == "end_turn"
    check_wire(acp.run.wire)
    sizes = [len(json.dumps(m)) for m in acp.run.sent()]
    assert max(sizes) < 4096, "the file went out"
    shown = [
        n["params"]["update"]["content"]
        for n in acp.run.notifications()
        if n["params"]["update"].get("toolCallId") == "toolu_h"
        and "content" in n["params"]["update"]
    ]
    note = shown[0][0]["content"]["text"]
    assert note.startswith("No preview: huge.log is 66,060,288 bytes")
    assert calls_by_id(acp.run.notifications())["toolu_h"]["status"] == "failed"
    assert (acp.root / "huge.log").stat().st_size == 63 * 1024 * 1024


async def test_an_edit_in_a_large_file_sends_a_bounded_diff(acp: AgentUnderTest) -> None:
    """A 3 MB file: the preview and the final card show the change, not the file."""
    lines = [f"line {i:07d} " + "x" * 20 + "\n" for i in range(100_000)]
    (acp.root / "big.txt").write_text("".join(lines), encoding="utf-8")
    edit = {"file_path": "big.txt", "old_string": "line 0050000 ", "new_string": "LINE 50000 "}
    acp.model.script(answer(("tool", "Edit", edit, "toolu_big")), "OK.")
    acp.client.answers = ["allow_once"]
    limit = ToolLimits().read_max_chars
    sid = await acp.start()
    result = await acp.prompt(sid, "Edit")
    assert result.stop_reason == "end_turn"
    check_wire(acp.run.wire)
    assert max(len(json.dumps(m)) for m in acp.run.sent()) < 2 * limit + 4096
    diffs = [
        n["params"]["update"]["content"]
        for n in acp.run.notifications()
        if n["params"]["update"].get("toolCallId") == "toolu_big"
        and any(c["type"] == "diff" for c in n["params"]["update"].get("content", []))
    ]
    final = calls_by_id(acp.run.notifications())["toolu_big"]
    assert final["status"] == "completed"
    assert diffs[-1] == final["content"], "the applied change, as previewed"
    for diff, note in diffs:
        assert diff["oldText"] == "".join(lines[49_997:50_004])
        assert diff["newText"] == diff["oldText"].replace("line 0050000 ", "LINE 50000 ")
        assert note["content"]["text"] == (
            "Only the changed lines are shown, from line 49,998 of 100,000; "
            "the rest of the file is unchanged."
        )
    assert "LINE 50000 " in (acp.root / "big.txt").read_text(encoding="utf-8")


async def test_a_prompt_right_after_cancel_waits_for_the_cancelled_turn_then_runs(
    acp: AgentUnderTest,
) -> None:
    """Cancel, then prompt at once (as acp-client and editors' "stop and send" do): the
    first prompt answers ``cancelled``, the second runs to ``end_turn`` after it."""

    def model(request: ModelRequest) -> Answer:
        first = len(acp.model.requests) == 1
        acp.model.pace = 0.5 if first else 0.0  # the first answer streams on when cancelled
        return answer(("text", "Reading the whole tree first")) if first else "Second answer."

    acp.model.function = model
    sid = await acp.start()
    streaming = asyncio.Event()
    acp.client.on_update = lambda u: (
        streaming.set() if u.session_update == "agent_message_chunk" else None
    )
    first = asyncio.create_task(acp.prompt(sid, "one"))
    await streaming.wait()
    await acp.run.conn.cancel(session_id=sid)
    second = await acp.prompt(sid, "two")
    assert (await first).stop_reason == "cancelled"
    assert second.stop_reason == "end_turn"
    check_wire(acp.run.wire)
    # The cancelled prompt is answered before the next turn speaks.
    sent = acp.run.sent()
    answered = next(
        i for i, m in enumerate(sent) if m.get("result", {}).get("stopReason") == "cancelled"
    )
    updates = [m for m in sent if m.get("method") == "session/update"]
    before = [m for m in updates if sent.index(m) < answered]
    assert "Second" not in text_of(before)
    assert text_of(updates).endswith("Second answer.")
    assert len(acp.model.bodies) == 2
    messages = acp.model.bodies[1]["messages"]
    sent_texts = [block.get("text") for m in messages for block in m["content"]]
    assert sent_texts[0] == "one"
    assert sent_texts[-1] == "two"


async def test_a_failed_command_says_how_it_ended(acp: AgentUnderTest) -> None:
    """The editor's card of a failed Bash call: its output, then how it ended, in words;
    the rawOutput keeps the fields editors read."""
    acp.model.script(
        answer(("tool", "Bash", {"command": "echo partial; exit 3"}, "toolu_exit")),
        answer(("tool", "Bash", {"command": "kill -TERM $$"}, "toolu_signal")),
        answer(("tool", "Bash", {"command": "sleep 5", "timeout": 200}, "toolu_slow")),
        "Noted.",
    )
    acp.client.answers = ["allow_always"]
    sid = await acp.start()
    assert (await acp.prompt(sid, "Run them")).stop_reason == "end_turn"
    check_wire(acp.run.wire)
    calls = calls_by_id(acp.run.notifications())
    ended = {
        call_id: (call["status"], call["content"][-1]["content"]["text"])
        for call_id, call in calls.items()
    }
    assert ended == {
        "toolu_exit": ("failed", "Exit code 3."),
        "toolu_signal": ("failed", "Killed by signal 15."),
        "toolu_slow": ("failed", "Timed out after 0.2 s; the command was killed."),
    }
    assert "partial" in json.dumps(calls["toolu_exit"]["content"])
    raw = calls["toolu_exit"]["rawOutput"]
    assert (raw["exit_code"], raw["timed_out"], raw["truncated"]) == (3, False, False)
    assert calls["toolu_slow"]["rawOutput"]["timeout_s"] == 0.2
