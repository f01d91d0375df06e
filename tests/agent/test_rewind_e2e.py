"""``/rewind`` end to end: the official SDK client drives a real ``toolwire acp`` process.

A git repository with a commit; three prompts that change files (an Edit; a Write of a
new file; Bash running ``sed -i`` on one file, ``touch`` of a new one and ``rm`` of an
existing one); the user edits a file between prompts 2 and 3. ``/rewind 2`` must leave
the tree as it was just before prompt 2 (content and mode, Bash's changes included),
the user's edit left and reported as a conflict; the repository's HEAD, index and refs
as they were before the session; the next model request holding exactly the history
before prompt 2. After a restart and ``session/load``, ``/rewind undo`` must put the
tree from before the rewind back byte for byte. Every line is checked against the ACP
schema.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from acp import text_block

from tests.agent.support import (
    KEY,
    ScriptedClient,
    check_wire,
    environment,
    fake_backend,
    response,
    spawn_agent,
    text_of,
    uncached,
    write_config,
)
from tests.fakes.http import FakeServer, Reply

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

EDIT = {"file_path": "app.py", "old_string": "'hi'", "new_string": "'hello'"}
WRITE = {"file_path": "new.py", "content": "print('new')\n"}
BASH = {"command": "sed -i 's/one/ONE/' lib.txt && touch made.txt && rm old.txt"}
Tree = dict[str, tuple[bytes, int]]
ANSWERS: list[tuple[tuple[Any, ...], ...]] = [
    (("tool", "Edit", EDIT, "toolu_edit"),),
    (("text", "Edited."),),
    (("tool", "Write", WRITE, "toolu_write"),),
    (("text", "Written."),),
    (("tool", "Bash", BASH, "toolu_bash"),),
    (("text", "Ran it."),),
    (("text", "Starting over from prompt 2."),),
]


def _git(root: Path, *args: str) -> bytes:
    env = {"PATH": os.environ["PATH"], "HOME": str(root.parent / "home"), "LC_ALL": "C"}
    command = ["git", "--no-optional-locks", "-c", "user.name=t", "-c", "user.email=t@t", *args]
    return subprocess.run(command, cwd=root, env=env, check=True, capture_output=True).stdout


def _repository(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "app.py").write_text("def greet():\n    return 'hi'\n")
    (root / "lib.txt").write_text("one\ntwo\n")
    (root / "old.txt").write_text("to be removed\n")
    (root / "notes.md").write_text("# notes\n")
    (root / "run.sh").write_text("#!/bin/sh\necho run\n")
    (root / "run.sh").chmod(0o755)
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "start")
    return root


def _repo_state(root: Path) -> tuple[bytes, bytes, bytes]:
    """HEAD, the index's bytes, every ref: what checkpoints must never change."""
    index = (root / ".git" / "index").read_bytes()
    return _git(root, "rev-parse", "HEAD"), index, _git(root, "for-each-ref")


def _tree(root: Path) -> Tree:
    """Every file outside ``.git``: its bytes and mode."""
    found: Tree = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if rel.parts[0] != ".git" and path.is_file():
            found[str(rel)] = (path.read_bytes(), path.stat().st_mode & 0o777)
    return found


def test_rewind_two_then_undo_after_a_restart(tmp_path: Path) -> None:
    root = _repository(tmp_path)
    before_session = _repo_state(root)
    status_before = _git(root, "status", "--porcelain")
    with FakeServer() as server:
        server.script(*(Reply(chunks=[response(*b, n=n).encode()]) for n, b in enumerate(ANSWERS)))
        config = write_config(tmp_path, fake_backend(server.url))
        env = environment(tmp_path, TEST_KEY=KEY)
        asyncio.run(_scenario(tmp_path, root, server, str(config), env, before_session))
    assert _git(root, "status", "--porcelain") != status_before  # prompt 1's edit stays


async def _scenario(
    tmp_path: Path,
    root: Path,
    server: FakeServer,
    config: str,
    env: dict[str, str],
    before_session: tuple[bytes, bytes, bytes],
) -> None:
    async def ask(conn: Any, sid: str, line: str) -> None:
        result = await conn.prompt(session_id=sid, prompt=[text_block(line)])
        assert result.stop_reason == "end_turn"

    client = ScriptedClient()
    async with spawn_agent(tmp_path, client, "--config", config, env=env) as run:
        conn = run.conn
        await conn.initialize(protocol_version=1)
        sid = (await conn.new_session(cwd=str(root), mcp_servers=[])).session_id
        await conn.set_session_mode(session_id=sid, mode_id="bypass")
        await ask(conn, sid, "Say hello instead of hi.")
        before_two = _tree(root)
        status_before_two = _git(root, "status", "--porcelain")
        await ask(conn, sid, "Add a new.py.")
        (root / "notes.md").write_text("# notes\nthe user's own line\n")  # outside a turn
        await ask(conn, sid, "Tidy the text files.")
        assert (root / "made.txt").exists()
        assert not (root / "old.txt").exists()
        assert (root / "lib.txt").read_text() == "ONE\ntwo\n"
        before_rewind = _tree(root)

        since = len(run.notifications())
        await ask(conn, sid, "/rewind 2")
        told = text_of(run.notifications()[since:])
        assert "Rewound to before prompt 2" in told
        assert "conflicts" in told
        assert "notes.md" in told
        now = _tree(root)
        assert now["notes.md"][0] == b"# notes\nthe user's own line\n"  # not overwritten
        assert {k: v for k, v in now.items() if k != "notes.md"} == {
            k: v for k, v in before_two.items() if k != "notes.md"
        }
        assert _repo_state(root) == before_session
        assert _git(root, "status", "--porcelain") == status_before_two + b" M notes.md\n"

        await ask(conn, sid, "Try again from here.")
        bodies = [r.json() for r in server.requests]
        sent, prompt_two = uncached(bodies[-1]["messages"]), uncached(bodies[2]["messages"])
        assert sent[:-1] == prompt_two[:-1]  # exactly the history before prompt 2
        assert sent[-1]["content"][0]["text"] == "Try again from here."
        check_wire(run.wire)

    client = ScriptedClient()
    async with spawn_agent(tmp_path, client, "--config", config, env=env) as run:
        conn = run.conn
        await conn.initialize(protocol_version=1)
        await conn.load_session(cwd=str(root), session_id=sid, mcp_servers=[])
        replayed = text_of(run.notifications())
        assert "Rewound to before prompt 2" in replayed  # the transcript keeps the marker
        assert "Tidy the text files." not in text_of(run.notifications(), "user_message_chunk")
        await ask(conn, sid, "/rewind undo")
        assert _tree(root) == before_rewind
        assert _repo_state(root) == before_session
        check_wire(run.wire)
