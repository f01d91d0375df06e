"""Backend switch in a running session: A -> B -> A keeps the file.

Two fake Anthropic-compatible servers play backends A and B. On A the model reads a file;
the user switches to B, then back to A. What each backend is sent is checked: the file's
content reaches B verbatim after the first switch, and is still there verbatim when the
session returns to A (the handoff is built from the raw history, never from a previous
handoff's retelling).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from acp import text_block

from tests.agent.support import (
    ScriptedClient,
    agent,
    check_wire,
    environment,
    project,
    response,
    start,
    text_of,
    write_config,
)
from tests.fakes.http import FakeServer, Reply

KEY = "sk-test-switch-0123456789abcdef"
# A file with content no summary would reproduce by accident.
NOTES = "".join(f"line {i}: checksum {i * 7919 % 104729:06d}\n" for i in range(60))


def _backends(url_a: str, url_b: str) -> str:
    table = 'default_backend = "a"\n'
    for name, url in (("a", url_a), ("b", url_b)):
        table += (
            f'[backends.{name}]\nprovider = "anthropic"\nmodel = "model-{name}"\n'
            f'base_url = "{url}"\napi_key_env = "TEST_KEY"\n'
        )
    return table


def _sent_text(request_body: dict[str, Any]) -> str:
    """Every text the backend was sent: system, messages, tool results."""
    return json.dumps(request_body, ensure_ascii=False)


def test_a_to_b_to_a_keeps_files_read_verbatim(tmp_path: Path) -> None:
    root = project(tmp_path)
    (root / "notes.txt").write_text(NOTES, encoding="utf-8")
    read = ("tool", "Read", {"file_path": "notes.txt"}, "toolu_read_notes")
    with FakeServer() as server_a, FakeServer() as server_b:
        server_a.script(
            Reply(chunks=[response(read).encode()]),
            Reply(chunks=[response(("text", "Read it."), n=1).encode()]),
            Reply(chunks=[response(("text", "A again."), n=2).encode()]),
        )
        server_b.script(
            Reply(chunks=[response(("text", "B here."), n=3).encode()]),
            Reply(chunks=[response(("text", "Summary."), n=4).encode()]),
            Reply(chunks=[response(("text", "Summary."), n=5).encode()]),
        )
        config = write_config(tmp_path, _backends(server_a.url, server_b.url))
        env = environment(tmp_path, TEST_KEY=KEY)
        client = ScriptedClient()

        async def scenario() -> None:
            async with agent(tmp_path, client, "--config", str(config), env=env) as run:
                sid = await start(run.conn, root)

                async def ask(text: str) -> None:
                    result = await run.conn.prompt(session_id=sid, prompt=[text_block(text)])
                    assert result.stop_reason == "end_turn"

                await ask("Read notes.txt")
                await run.conn.set_config_option(config_id="model", session_id=sid, value="b")
                await ask("What is on line 42?")
                await run.conn.set_config_option(config_id="model", session_id=sid, value="a")
                await ask("And line 7?")
                said = text_of(run.notifications())
                assert "B here." in said
                assert "A again." in said
                check_wire(run.wire)

        asyncio.run(scenario())
        # B's answer to the prompt is the request whose last message is that prompt (a
        # summarizer call, if the agent makes one, is a separate request).
        to_b = [
            r.json() for r in server_b.requests if "What is on line 42?" in _sent_text(r.json())
        ]
        back_to_a = [r.json() for r in server_a.requests if "And line 7?" in _sent_text(r.json())]
    assert to_b, "backend B never got the prompt"
    assert back_to_a, "backend A never got the prompt after switching back"
    line_42 = NOTES.splitlines()[42]
    for body in (to_b[-1], back_to_a[-1]):
        sent = _sent_text(body)
        # Verbatim: the file's lines as the Read tool returned them, not a retelling.
        assert json.dumps(line_42)[1:-1] in sent
        assert json.dumps(NOTES.splitlines()[7])[1:-1] in sent
    assert KEY not in _sent_text(to_b[-1])


def test_agent_notices_end_with_a_paragraph_break(tmp_path: Path) -> None:
    """A client that joins message chunks (acpx) shows the switch notice and the model's
    next sentence as two paragraphs, live and when the session is loaded again."""
    root = project(tmp_path)
    (root / "notes.txt").write_text(NOTES, encoding="utf-8")
    read = ("tool", "Read", {"file_path": "notes.txt"}, "toolu_read_notes")
    with FakeServer() as server_a, FakeServer() as server_b:
        server_a.script(
            Reply(chunks=[response(read).encode()]),
            Reply(chunks=[response(("text", "Read it."), n=1).encode()]),
        )
        server_b.script(
            *(Reply(chunks=[response(("text", "B here."), n=n).encode()]) for n in (2, 3)),
        )
        config = write_config(tmp_path, _backends(server_a.url, server_b.url))
        env = environment(tmp_path, TEST_KEY=KEY)

        async def scenario() -> None:
            async with agent(tmp_path, ScriptedClient(), "--config", str(config), env=env) as run:
                sid = await start(run.conn, root)
                await run.conn.prompt(session_id=sid, prompt=[text_block("Read notes.txt")])
                await run.conn.set_config_option(config_id="model", session_id=sid, value="b")
                seen = len(run.notifications())
                await run.conn.prompt(session_id=sid, prompt=[text_block("Line 42?")])
                live = text_of(run.notifications()[seen:])
            async with agent(tmp_path, ScriptedClient(), "--config", str(config), env=env) as run:
                await run.conn.initialize(protocol_version=1)
                await run.conn.load_session(cwd=str(root), session_id=sid, mcp_servers=[])
                replay = text_of(run.notifications())
            for text in (live, replay):
                notice, _, after = text.rpartition("B here.")
                assert "switch" in notice.lower()
                assert notice.endswith(".\n\n"), repr(notice[-40:])
                assert after == ""

        asyncio.run(scenario())


def test_the_switch_notice_counts_the_whole_session_after_a_compaction(tmp_path: Path) -> None:
    """Six files read, two edited, five commands, a compaction, then a switch: the notice
    gives those numbers and says how much of each goes on verbatim."""
    root = project(tmp_path)
    for n in range(6):
        (root / f"m{n}.py").write_text(f"VALUE_{n} = {n}\n", encoding="utf-8")
    reads = [("tool", "Read", {"file_path": f"m{n}.py"}, f"toolu_r{n}") for n in range(6)]
    edits = [
        ("tool", "Edit", {"file_path": f"m{n}.py", "old_string": f"= {n}", "new_string": "= 9"},
         f"toolu_e{n}")
        for n in range(2)
    ]  # fmt: skip
    runs = [("tool", "Bash", {"command": f"echo run {n}"}, f"toolu_b{n}") for n in range(5)]
    with FakeServer() as server_a, FakeServer() as server_b:
        server_a.script(
            *(Reply(chunks=[response(*calls, n=i).encode()])
              for i, calls in enumerate((reads, edits, runs))),
            Reply(chunks=[response(("text", "All done."), n=3).encode()]),
            Reply(chunks=[response(("text", "Summary of the work."), n=4).encode()]),
        )  # fmt: skip
        server_b.script(
            *(Reply(chunks=[response(("text", "B here."), n=n).encode()]) for n in (5, 6)),
        )
        config = write_config(tmp_path, _backends(server_a.url, server_b.url))
        env = environment(tmp_path, TEST_KEY=KEY)

        async def scenario() -> str:
            async with agent(tmp_path, ScriptedClient(), "--config", str(config), env=env) as run:
                sid = await start(run.conn, root)
                await run.conn.set_session_mode(session_id=sid, mode_id="bypass")
                await run.conn.prompt(session_id=sid, prompt=[text_block("Do the work")])
                await run.conn.prompt(session_id=sid, prompt=[text_block("/compact")])
                await run.conn.set_config_option(config_id="model", session_id=sid, value="b")
                seen = len(run.notifications())
                await run.conn.prompt(session_id=sid, prompt=[text_block("Go on")])
                check_wire(run.wire)
                return text_of(run.notifications()[seen:])

        said = asyncio.run(scenario())
    assert (root / "m0.py").read_text(encoding="utf-8") == "VALUE_0 = 9\n"
    notice = next(p for p in said.split("\n\n") if p.startswith("Switched the model"))
    assert "6 files read" in notice, notice
    assert "2 files changed" in notice, notice
    assert "5 commands" in notice, notice
