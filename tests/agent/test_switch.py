"""Backend switch in a running session: A -> B -> A keeps the file.

Two backends answered by one ``FunctionBackend`` play A and B (the body each sent names
its model). On A the model reads a file; the user switches to B, then back to A. What
each backend is sent is checked: the file's content reaches B verbatim after the first
switch, and is still there verbatim when the session returns to A (the handoff is built
from the raw history, never from a previous handoff's retelling).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.agent.pair import MODEL, agent_under_test, backend_table
from tests.agent.support import answer, check_wire, text_of

pytestmark = pytest.mark.anyio

KEY = "sk-test-switch-0123456789abcdef"
# A file with content no summary would reproduce by accident.
NOTES = "".join(f"line {i}: checksum {i * 7919 % 104729:06d}\n" for i in range(60))


B = backend_table("b", "model-b")


def _sent_text(request_body: dict[str, Any]) -> str:
    """Every text the backend was sent: system, messages, tool results."""
    return json.dumps(request_body, ensure_ascii=False)


async def test_a_to_b_to_a_keeps_files_read_verbatim(tmp_path: Path) -> None:
    read = ("tool", "Read", {"file_path": "notes.txt"}, "toolu_read_notes")
    async with agent_under_test(tmp_path, config=B, env={"TEST_KEY": KEY}) as acp:
        (acp.root / "notes.txt").write_text(NOTES, encoding="utf-8")
        acp.per_model(
            {
                MODEL: [answer(read), "Read it.", "A again."],
                "model-b": ["B here.", "Summary.", "Summary."],
            }
        )
        sid = await acp.start()

        async def ask(text: str) -> None:
            result = await acp.prompt(sid, text)
            assert result.stop_reason == "end_turn"

        await ask("Read notes.txt")
        await acp.run.conn.set_config_option(config_id="model", session_id=sid, value="b")
        await ask("What is on line 42?")
        await acp.run.conn.set_config_option(config_id="model", session_id=sid, value="fake")
        await ask("And line 7?")
        said = text_of(acp.run.notifications())
        assert "B here." in said
        assert "A again." in said
        check_wire(acp.run.wire)
    # B's answer to the prompt is the request whose last message is that prompt (a
    # summarizer call, if the agent makes one, is a separate request).
    to_b = [body for body in acp.sent_to("model-b") if "What is on line 42?" in _sent_text(body)]
    back_to_a = [body for body in acp.sent_to(MODEL) if "And line 7?" in _sent_text(body)]
    assert to_b, "backend B never got the prompt"
    assert back_to_a, "backend A never got the prompt after switching back"
    line_42 = NOTES.splitlines()[42]
    for body in (to_b[-1], back_to_a[-1]):
        sent = _sent_text(body)
        # Verbatim: the file's lines as the Read tool returned them, not a retelling.
        assert json.dumps(line_42)[1:-1] in sent
        assert json.dumps(NOTES.splitlines()[7])[1:-1] in sent
    assert KEY not in _sent_text(to_b[-1])


async def test_agent_notices_end_with_a_paragraph_break(tmp_path: Path) -> None:
    """A client that joins message chunks (acpx) shows the switch notice and the model's
    next sentence as two paragraphs, live and when the session is loaded again."""
    read = ("tool", "Read", {"file_path": "notes.txt"}, "toolu_read_notes")
    async with agent_under_test(tmp_path, config=B) as acp:
        (acp.root / "notes.txt").write_text(NOTES, encoding="utf-8")
        acp.per_model({MODEL: [answer(read), "Read it."], "model-b": ["B here.", "B here."]})
        sid = await acp.start()
        await acp.prompt(sid, "Read notes.txt")
        await acp.run.conn.set_config_option(config_id="model", session_id=sid, value="b")
        seen = len(acp.run.notifications())
        await acp.prompt(sid, "Line 42?")
        live = text_of(acp.run.notifications()[seen:])
    async with acp.again() as second:
        await second.run.conn.initialize(protocol_version=1)
        await second.run.conn.load_session(cwd=str(acp.root), session_id=sid, mcp_servers=[])
        replay = text_of(second.run.notifications())
    for text in (live, replay):
        notice, _, after = text.rpartition("B here.")
        assert "switch" in notice.lower()
        assert notice.endswith(".\n\n"), repr(notice[-40:])
        assert after == ""


async def test_the_switch_notice_counts_the_whole_session_after_a_compaction(
    tmp_path: Path,
) -> None:
    """Six files read, two edited, five commands, a compaction, then a switch: the notice
    gives those numbers and says how much of each goes on verbatim."""
    reads = [("tool", "Read", {"file_path": f"m{n}.py"}, f"toolu_r{n}") for n in range(6)]
    edits = [
        ("tool", "Edit", {"file_path": f"m{n}.py", "old_string": f"= {n}", "new_string": "= 9"},
         f"toolu_e{n}")
        for n in range(2)
    ]  # fmt: skip
    runs = [("tool", "Bash", {"command": f"echo run {n}"}, f"toolu_b{n}") for n in range(5)]
    async with agent_under_test(tmp_path, config=B) as acp:
        for n in range(6):
            (acp.root / f"m{n}.py").write_text(f"VALUE_{n} = {n}\n", encoding="utf-8")
        acp.per_model(
            {
                MODEL: [
                    *(answer(*calls) for calls in (reads, edits, runs)),
                    "All done.",
                    "Summary of the work.",
                ],
                "model-b": ["B here.", "B here."],
            }
        )
        sid = await acp.start()
        await acp.run.conn.set_session_mode(session_id=sid, mode_id="bypass")
        await acp.prompt(sid, "Do the work")
        await acp.prompt(sid, "/compact")
        await acp.run.conn.set_config_option(config_id="model", session_id=sid, value="b")
        seen = len(acp.run.notifications())
        await acp.prompt(sid, "Go on")
        check_wire(acp.run.wire)
        said = text_of(acp.run.notifications()[seen:])
    assert (acp.root / "m0.py").read_text(encoding="utf-8") == "VALUE_0 = 9\n"
    notice = next(p for p in said.split("\n\n") if p.startswith("Switched the model"))
    assert "6 files read" in notice, notice
    assert "2 files changed" in notice, notice
    assert "5 commands" in notice, notice
