"""The terminal client answering the agent: permissions and ``fs/*`` requests."""

from __future__ import annotations

import asyncio
import io
import os
import stat
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

import pytest
from acp import RequestError
from acp.schema import PermissionOption, ToolCallUpdate
from rich.console import Console

from toolwire.client import FileAccess, LineReader, TerminalClient

T = TypeVar("T")
OPTIONS = [
    PermissionOption(option_id="o1", name="Allow once", kind="allow_once"),
    PermissionOption(option_id="a1", name="Allow always", kind="allow_always"),
    PermissionOption(option_id="r1", name="Reject", kind="reject_once"),
]


def _run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


def _client(
    root: Path, *, auto: bool, typed: str | None = None, stream: Any = None
) -> tuple[TerminalClient, Any]:
    out = io.StringIO()
    console = Console(file=out, width=80, highlight=False, emoji=False, soft_wrap=True)
    if typed is not None:
        stream = io.StringIO(typed)
    reader = LineReader(stream) if stream is not None else None
    client = TerminalClient.for_terminal(console, root, live=False, auto_allow=auto, reader=reader)
    return client, out


async def _ask(client: TerminalClient, options: list[PermissionOption] = OPTIONS) -> Any:
    await client.session_update(
        "s",
        _model({"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Run make"}),
    )
    answer = await client.request_permission("s", ToolCallUpdate(tool_call_id="t1"), options)
    return answer.outcome


def _model(update: dict[str, Any]) -> Any:
    from acp.schema import SessionNotification

    return SessionNotification.model_validate({"sessionId": "s", "update": update}).update


def test_capabilities_advertise_files_not_terminals() -> None:
    caps = TerminalClient.capabilities()
    assert caps.fs is not None
    assert (caps.fs.read_text_file, caps.fs.write_text_file, caps.terminal) == (True, True, False)


def test_auto_allow_picks_allow_once_and_says_so(tmp_path: Path) -> None:
    client, out = _client(tmp_path, auto=True)
    outcome = _run(_ask(client))
    assert (outcome.outcome, outcome.option_id) == ("selected", "o1")
    assert out.getvalue() == "▸ Run make\n  allowed once (auto): Run make\n"


def test_auto_allow_falls_back_to_always_then_cancels(tmp_path: Path) -> None:
    client, out = _client(tmp_path, auto=True)
    assert _run(_ask(client, OPTIONS[1:])).option_id == "a1"
    assert _run(_ask(client, OPTIONS[2:])).outcome == "cancelled"
    assert "no allow option, cancelled: Run make" in out.getvalue()


def test_interactive_answer_by_number_or_name(tmp_path: Path) -> None:
    client, out = _client(tmp_path, auto=False, typed="9\nreject\n")
    outcome = _run(_ask(client))
    assert (outcome.outcome, outcome.option_id) == ("selected", "r1")
    assert out.getvalue() == (
        "▸ Run make\n"
        "Permission requested: Run make\n"
        "  1) Allow once\n  2) Allow always\n  3) Reject\n"
        "choose 1-3: choose 1-3:   Reject: Run make\n"
    )


def test_interactive_end_of_input_cancels(tmp_path: Path) -> None:
    client, _ = _client(tmp_path, auto=False, typed="")
    assert _run(_ask(client)).outcome == "cancelled"


def test_session_cancel_answers_an_open_question_cancelled(tmp_path: Path) -> None:
    read_end, write_end = os.pipe()
    with os.fdopen(read_end) as never_typed, os.fdopen(write_end, "w"):
        client, _ = _client(tmp_path, auto=False, stream=never_typed)

        async def scenario() -> Any:
            asking = asyncio.ensure_future(_ask(client))
            await asyncio.sleep(0.05)
            client.permissions.cancel_pending()
            return await asyncio.wait_for(asking, 5)

        assert _run(scenario()).outcome == "cancelled"


def test_read_text_file_whole_and_by_lines(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo\nthree\n", encoding="utf-8")
    client, _ = _client(tmp_path, auto=True)
    path = str(tmp_path / "a.txt")
    assert _run(client.read_text_file("s", path)).content == "one\ntwo\nthree\n"
    assert _run(client.read_text_file("s", path, line=2, limit=1)).content == "two\n"
    assert _run(client.read_text_file("s", path, line=3)).content == "three\n"
    assert _run(client.read_text_file("s", path, limit=2)).content == "one\ntwo\n"
    assert client.files.stats.reads == 4


@pytest.mark.parametrize(
    ("name", "code", "message"),
    [
        ("missing.txt", -32002, "no such file"),
        ("sub", -32602, "is a directory"),
        ("bin.dat", -32602, "is not UTF-8 text"),
    ],
)
def test_read_errors(tmp_path: Path, name: str, code: int, message: str) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "bin.dat").write_bytes(b"\xff\xfe\x00")
    client, _ = _client(tmp_path, auto=True)
    with pytest.raises(RequestError) as error:
        _run(client.read_text_file("s", str(tmp_path / name)))
    assert error.value.code == code
    assert message in str(error.value)


def test_paths_outside_the_session_are_refused(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    (tmp_path / "secret.txt").write_text("no", encoding="utf-8")
    (root / "link.txt").symlink_to(tmp_path / "secret.txt")
    client, _ = _client(root, auto=True)
    for path in [str(tmp_path / "secret.txt"), str(root / "link.txt"), "relative.txt"]:
        with pytest.raises(RequestError) as error:
            _run(client.read_text_file("s", path))
        assert error.value.code == -32602
    with pytest.raises(RequestError, match="outside the session directory"):
        _run(client.write_text_file("s", str(root / ".." / "x.txt"), "x"))
    assert not (tmp_path / "x.txt").exists()
    assert client.files.stats.refused == 4


def test_write_is_atomic_and_keeps_the_mode(tmp_path: Path) -> None:
    target = tmp_path / "run.sh"
    target.write_text("old\n", encoding="utf-8")
    target.chmod(0o750)
    client, _ = _client(tmp_path, auto=True)
    assert _run(client.write_text_file("s", str(target), "new\r\nline é\n")) is not None
    assert target.read_bytes() == "new\r\nline é\n".encode()
    assert stat.S_IMODE(target.stat().st_mode) == 0o750
    _run(client.write_text_file("s", str(tmp_path / "d" / "new.txt"), "x"))
    assert (tmp_path / "d" / "new.txt").read_text(encoding="utf-8") == "x"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d", "run.sh"]  # no temp left
    assert client.files.stats.writes == 2


def test_failed_write_leaves_the_file_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "keep.txt"
    target.write_text("precious\n", encoding="utf-8")

    def broken(*args: Any, **dir_fds: Any) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken)
    with pytest.raises(OSError, match="disk full"):
        FileAccess(tmp_path).write(str(target), "half")
    assert target.read_text(encoding="utf-8") == "precious\n"
    assert [p.name for p in tmp_path.iterdir()] == ["keep.txt"]
