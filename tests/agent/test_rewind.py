"""``/rewind`` in the agent, fast: the official SDK client drives the agent in this process,
the model a ``FunctionBackend`` whose request bodies are kept (``acp.model.bodies``).

What the model is sent after a rewind, what the user is told, what is stored (the prompt
index, the transcript a ``session/load`` replays) and what a fork and a delete do with it.
The full scenario with files, git and a restart is in ``test_rewind_e2e``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from acp.exceptions import RequestError
from acp.schema import ClientCapabilities

from tests.agent.pair import AgentUnderTest
from tests.agent.support import check_wire, text_of, uncached
from toolwire.agent.features import checkpointing
from toolwire.agent.store import prompt_index
from toolwire.agent.store.database import SessionDatabase
from toolwire.checkpoints import Checkpoints
from toolwire.testing.streams import text, tool_call

pytestmark = pytest.mark.anyio


def _db(acp: AgentUnderTest) -> SessionDatabase:
    return SessionDatabase(acp.root.parent / "data" / "toolwire" / "sessions.db")


def _said(acp: AgentUnderTest, since: int) -> str:
    return text_of(acp.run.notifications()[since:])


async def _ask(acp: AgentUnderTest, sid: str, line: str) -> str:
    """Send ``line``; what toolwire answered."""
    since = len(acp.run.notifications())
    result = await acp.prompt(sid, line)
    assert result.stop_reason == "end_turn"
    return _said(acp, since)


def _messages(body: dict[str, Any]) -> list[Any]:
    """The messages sent, without the prompt-cache markers (they move with the end)."""
    return [uncached(m) for m in body["messages"]]


async def test_built_in_commands_are_not_numbered(acp: AgentUnderTest) -> None:
    acp.model.function = lambda request: "ok"
    sid = await acp.start()
    await _ask(acp, sid, "first prompt\nsecond line")
    await _ask(acp, sid, "/mode")
    await _ask(acp, sid, "/model")
    await _ask(acp, sid, "/init")
    await _ask(acp, sid, "/rewind")
    listing = await _ask(acp, sid, "/rewind")
    lines = listing.strip().splitlines()
    assert lines[1].startswith("1. ")
    assert lines[1].split("  ")[1] == "first prompt"
    assert lines[2].startswith("2. ")
    assert "/init" in lines[2]
    assert len(lines) == 3, listing
    with _db(acp) as db:
        rows = prompt_index.prompts(db, sid)
    assert [(r.number, r.first_line) for r in rows] == [(1, "first prompt"), (2, "/init")]
    assert rows[0].message_index == 0
    assert rows[1].message_index == 2
    check_wire(acp.run.wire)


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("/rewind 99", "there is no prompt 99 (this session has prompts 1 to 1)"),
        ("/rewind x", "/rewind x: not a prompt number."),
        ("/rewind 0", "/rewind 0: not a prompt number."),
        ("/rewind 1 everything", "'everything' is unknown."),
        ("/rewind undo", "Nothing to undo"),
    ],
)
async def test_bad_input_answers_one_line_saying_what_to_do(
    acp: AgentUnderTest, line: str, says: str
) -> None:
    acp.model.function = lambda request: "ok"
    sid = await acp.start()
    await _ask(acp, sid, "hello")
    answer = await _ask(acp, sid, line)
    assert says in answer
    assert len(answer.strip().splitlines()) == 1
    assert len(acp.model.bodies) == 1  # nothing reached the model
    with _db(acp) as db:
        assert len(prompt_index.prompts(db, sid)) == 1  # nothing was cut


async def test_conversation_rewind_sends_the_history_before_the_prompt_and_undo_puts_it_back(
    acp: AgentUnderTest,
) -> None:
    acp.model.function = lambda request: f"answer {len(acp.model.bodies)}"
    sid = await acp.start()
    for n in (1, 2, 3):
        await _ask(acp, sid, f"prompt {n}")
    before_two = _messages(acp.model.bodies[1])[:-1]
    told = await _ask(acp, sid, "/rewind 2 conversation")
    assert "Rewound to before prompt 2" in told
    await _ask(acp, sid, "after the rewind")
    assert _messages(acp.model.bodies[3])[:-1] == before_two
    with _db(acp) as db:
        transcript = db.updates(sid)
        assert [r.number for r in prompt_index.prompts(db, sid)] == [1, 2]
    shown = [u["content"]["text"] for u in transcript if u["sessionUpdate"] == "user_message_chunk"]
    assert shown == ["prompt 1", "after the rewind"]  # the cut prompts are gone, a marker left
    assert any("Rewound to before prompt 2" in u.get("content", {}).get("text", "")
               for u in transcript)  # fmt: skip

    assert "Undid the last rewind" in await _ask(acp, sid, "/rewind undo")
    await _ask(acp, sid, "after the undo")
    sent = _messages(acp.model.bodies[4])[:-1]
    upto_three = _messages(acp.model.bodies[2])
    assert sent[: len(upto_three)] == upto_three  # prompts 2 and 3 are back, as they were
    assert len(sent) == len(upto_three) + 1
    assert "answer 3" in json.dumps(sent[-1])
    check_wire(acp.run.wire)


async def test_rewind_after_clear_and_compact_sends_what_the_model_saw_then(
    acp: AgentUnderTest,
) -> None:
    acp.model.function = lambda request: "noted"
    sid = await acp.start()
    await _ask(acp, sid, "prompt 1")
    await _ask(acp, sid, "prompt 2")
    before_two = _messages(acp.model.bodies[1])[:-1]
    await _ask(acp, sid, "/clear")
    await _ask(acp, sid, "prompt 3")
    await _ask(acp, sid, "/compact")
    await _ask(acp, sid, "prompt 4")
    assert "Rewound" in await _ask(acp, sid, "/rewind 3")  # the prompt after the clear
    await _ask(acp, sid, "once more")
    assert [m["content"][0]["text"] for m in _messages(acp.model.bodies[-1])] == ["once more"]
    assert "Rewound" in await _ask(acp, sid, "/rewind 2")  # back before the clear
    await _ask(acp, sid, "again")
    assert _messages(acp.model.bodies[-1])[:-1] == before_two
    check_wire(acp.run.wire)


async def test_fork_copies_the_index_and_checkpoints_delete_removes_them(
    acp: AgentUnderTest,
) -> None:
    acp.model.function = lambda request: "ok"
    sid = await acp.start(ClientCapabilities())
    await _ask(acp, sid, "one")
    await _ask(acp, sid, "two")
    assert checkpointing.exists(sid)
    forked = await acp.run.conn.fork_session(cwd=str(acp.root), session_id=sid, mcp_servers=[])
    fid = forked.session_id
    assert checkpointing.exists(fid)
    with _db(acp) as db:
        assert [r.number for r in prompt_index.prompts(db, fid)] == [1, 2]
    await acp.run.conn.load_session(cwd=str(acp.root), session_id=fid, mcp_servers=[])
    (acp.root / "app.py").write_text("changed in the fork\n", encoding="utf-8")
    told = await _ask(acp, fid, "/rewind 1 code force")
    assert "Files restored: app.py" in told
    await acp.run.conn.ext_method("session/delete", {"sessionId": fid})
    assert not checkpointing.exists(fid)
    assert checkpointing.exists(sid)
    with _db(acp) as db:
        assert prompt_index.prompts(db, fid) == []
        assert len(prompt_index.prompts(db, sid)) == 2


async def test_files_written_by_a_tool_come_back_and_a_user_edit_is_a_conflict(
    acp: AgentUnderTest,
) -> None:
    write = {"file_path": "new.txt", "content": "made by the model\n"}

    def model(request: Any) -> Any:
        if request.messages[-1].role == "user" and request.messages[-1].text() == "write":
            return [*text("Writing."), *tool_call("toolu_w", "Write", write)]
        return "done"

    acp.model.function = model
    acp.client.answers = ["allow"]
    sid = await acp.start()
    await acp.run.conn.set_session_mode(session_id=sid, mode_id="bypass")
    await _ask(acp, sid, "write")
    assert (acp.root / "new.txt").exists()
    (acp.root / "app.py").write_text("the user's edit\n", encoding="utf-8")
    told = await _ask(acp, sid, "/rewind 1 code")
    assert not (acp.root / "new.txt").exists()
    assert "Files removed: new.txt" in told
    assert "conflicts" in told
    assert "app.py" in told
    assert (acp.root / "app.py").read_text(encoding="utf-8") == "the user's edit\n"
    await _ask(acp, sid, "/rewind undo")
    assert (acp.root / "new.txt").read_text(encoding="utf-8") == "made by the model\n"


async def test_checkpoints_off_says_why(acp: AgentUnderTest, tmp_path: Path) -> None:
    acp.model.function = lambda request: "ok"
    sid = await acp.start()
    await _ask(acp, sid, "one")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(checkpointing, "unavailable", lambda: "git was not found on PATH")
        told = await _ask(acp, sid, "/rewind 1 code")
    assert "Files: not rewound: git was not found on PATH" in told


async def test_extension_method_is_advertised_and_answers_the_report(acp: AgentUnderTest) -> None:
    acp.model.function = lambda request: "ok"
    sid = await acp.start()
    answered = [e.message.get("result", {}) for e in acp.run.wire]
    caps = next(r["agentCapabilities"] for r in answered if "agentCapabilities" in r)
    method = caps["_meta"]["toolwire"]["rewind"]["method"]
    assert method == "_toolwire/session/rewind"
    for line in ("one", "two"):
        await _ask(acp, sid, line)
    (acp.root / "scratch.txt").write_text("made between prompts\n", encoding="utf-8")
    since = len(acp.run.notifications())
    # The SDK client adds the leading underscore of an extension method.
    report = await acp.run.conn.ext_method(
        method.removeprefix("_"), {"sessionId": sid, "prompt": 2, "scope": "both"}
    )
    assert report["prompt"] == 2
    assert report["conversation"] is True
    assert report["conflicts"] == [str((acp.root / "scratch.txt").resolve())]
    assert "Rewound to before prompt 2" in _said(acp, since)  # the marker, sent and stored
    with _db(acp) as db:
        assert [r.number for r in prompt_index.prompts(db, sid)] == [1]
    await _ask(acp, sid, "three")
    assert _messages(acp.model.bodies[-1])[:-1] == _messages(acp.model.bodies[1])[:-1]
    with pytest.raises(RequestError) as refused:
        await acp.run.conn.ext_method(method[1:], {"sessionId": sid, "prompt": 7})
    assert "there is no prompt 7" in str(refused.value.data)
    undone = await acp.run.conn.ext_method(method[1:], {"sessionId": sid, "prompt": "undo"})
    assert undone["prompt"] is None
    check_wire(acp.run.wire)


async def test_a_prompt_sent_as_the_session_opens_waits_for_its_first_snapshot(
    acp: AgentUnderTest,
) -> None:
    # The first snapshot reads every file; it starts when the session opens. A prompt
    # sent at once must not race it on the store's index (git refuses a second writer).
    for i in range(3000):
        (acp.root / f"pkg{i % 30}").mkdir(exist_ok=True)
        (acp.root / f"pkg{i % 30}" / f"m{i}.py").write_text(f"x = {i}\n", encoding="utf-8")
    acp.model.function = lambda request: "ok"
    sid = await acp.start()
    await _ask(acp, sid, "one")
    store = Checkpoints.open(checkpointing.root(), sid, (str(acp.root),))
    names = {s.name for s in store.snapshots()}
    assert {"start", "before-1", "after-1"} <= names
    told = await _ask(acp, sid, "/rewind")
    assert "1. " in told
    assert "0 files changed since" in told
    (acp.root / "pkg0" / "m0.py").write_text("x = -1\n", encoding="utf-8")
    assert "(1 file changed since)" in await _ask(acp, sid, "/rewind")
