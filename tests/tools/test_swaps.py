"""A path swapped for a symbolic link between the check and the use is never followed.

The check (``ToolContext.resolve``) sees a real file or directory inside the project;
right after it, the test replaces that file, or a directory on its way, with a link to
the ``outside`` directory (which holds ``secret.txt``: ``top secret``). Whatever the
tool does next must neither read nor write outside.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.tools.support import make_project, run
from toolwire.agent.session.permissions import preview
from toolwire.tools import LocalFileSystem, ToolContext, atomic_write, get_tool

SECRET = "top secret\n"
Swap = Callable[[ToolContext, Path], None]


def swap_file(ctx: ToolContext, checked: Path) -> None:
    """The checked file becomes a link to the outside secret."""
    checked.unlink()
    checked.symlink_to(ctx.cwd.parent / "outside" / "secret.txt")


def swap_directory(ctx: ToolContext, checked: Path) -> None:
    """The checked path's directory (``sub``) becomes a link to the outside directory."""
    sub = ctx.cwd / "sub"
    sub.rename(ctx.cwd / "sub.moved")
    sub.symlink_to(ctx.cwd.parent / "outside", target_is_directory=True)


@pytest.fixture
def project(tmp_path: Path) -> ToolContext:
    """``secret.txt`` inside (at the top and in ``sub``) as well as outside."""
    ctx = make_project(tmp_path)
    (ctx.cwd / "sub").mkdir()
    for path in (ctx.cwd / "secret.txt", ctx.cwd / "sub" / "secret.txt"):
        path.write_text("inside\n", encoding="utf-8")
    return ctx


@pytest.fixture
def swap_after_check(monkeypatch: pytest.MonkeyPatch) -> Callable[[Swap], None]:
    """Install a swap that runs once, right after the next path check."""

    def install(swap: Swap) -> None:
        original = ToolContext.resolve
        done: list[bool] = []

        def resolve(self: ToolContext, raw: str) -> Path:
            checked = original(self, raw)
            if not done:
                done.append(True)
                swap(self, checked)
            return checked

        monkeypatch.setattr(ToolContext, "resolve", resolve)

    return install


def outside(ctx: ToolContext) -> Path:
    return ctx.cwd.parent / "outside"


def untouched(ctx: ToolContext) -> bool:
    """The outside directory still holds exactly the secret, unchanged."""
    names = sorted(p.name for p in outside(ctx).iterdir())
    return names == ["secret.txt"] and (outside(ctx) / "secret.txt").read_text() == SECRET


CASES: list[tuple[str, str, dict[str, Any], Swap]] = [
    ("Read", "file_path", {}, swap_file),
    ("Read", "file_path", {}, swap_directory),
    ("Write", "file_path", {"content": "overwritten\n"}, swap_file),
    ("Write", "file_path", {"content": "overwritten\n"}, swap_directory),
    ("Edit", "file_path", {"old_string": "inside", "new_string": "edited"}, swap_file),
    ("Edit", "file_path", {"old_string": "inside", "new_string": "edited"}, swap_directory),
    ("Grep", "path", {"pattern": "secret|inside", "output_mode": "content"}, swap_file),
    ("Grep", "path", {"pattern": "secret|inside", "output_mode": "content"}, swap_directory),
]


@pytest.mark.parametrize(("tool", "key", "extra", "swap"), CASES)
def test_a_swap_after_the_check_is_not_followed(
    project: ToolContext,
    swap_after_check: Callable[[Swap], None],
    tool: str,
    key: str,
    extra: dict[str, Any],
    swap: Swap,
) -> None:
    target = "secret.txt" if swap is swap_file else "sub/secret.txt"
    swap_after_check(swap)
    result = run(tool, {key: target, **extra}, project)
    assert "top secret" not in result.content
    assert untouched(project)


def test_a_new_file_in_a_swapped_directory_is_not_created_outside(
    project: ToolContext, swap_after_check: Callable[[Swap], None]
) -> None:
    swap_after_check(swap_directory)
    result = run("Write", {"file_path": "sub/new/deeper.txt", "content": "x"}, project)
    assert result.is_error
    assert "symbolic link" in result.content
    assert untouched(project)


@pytest.mark.parametrize("tool", ["Write", "Edit"])
@pytest.mark.parametrize("swap", [swap_file, swap_directory])
def test_the_approval_preview_does_not_show_a_swapped_in_file(
    project: ToolContext, swap_after_check: Callable[[Swap], None], tool: str, swap: Swap
) -> None:
    target = "secret.txt" if swap is swap_file else "sub/secret.txt"
    swap_after_check(swap)
    found = get_tool(tool)
    assert found is not None
    args = {"file_path": target, "content": "x", "old_string": "top", "new_string": "x"}
    if tool == "Write":
        del args["old_string"], args["new_string"]
    else:
        del args["content"]
    shown = asyncio.run(preview(found, args, project))
    assert shown is None or "top secret" not in str(shown)


def test_grep_does_not_enter_a_directory_swapped_during_the_walk(
    project: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``a.txt`` is read first; right then ``sub`` (listed as a directory) becomes a link."""
    from toolwire.tools import grep

    (project.cwd / "a.txt").write_text("inside\n", encoding="utf-8")
    original = grep.read_candidate
    swapped: list[bool] = []

    def read_then_swap(found: Any, max_bytes: int) -> str | None:
        text = original(found, max_bytes)
        if not swapped:
            swapped.append(True)
            swap_directory(project, project.cwd / "sub" / "secret.txt")
        return text

    monkeypatch.setattr(grep, "read_candidate", read_then_swap)
    result = run("Grep", {"pattern": "secret|inside", "output_mode": "content"}, project)
    assert swapped
    assert "top secret" not in result.content
    assert result.content.split("\n") == ["a.txt:1:inside", "secret.txt:1:inside"]


# --- the port itself, whatever the tools checked before -------------------------------


def test_the_local_file_system_never_follows_a_link_anywhere_on_the_path(
    project: ToolContext,
) -> None:
    swap_file(project, project.cwd / "secret.txt")
    swap_directory(project, project.cwd / "sub" / "secret.txt")
    fs = LocalFileSystem()
    for path in (project.cwd / "secret.txt", project.cwd / "sub" / "secret.txt"):
        with pytest.raises(OSError, match="symbolic link"):
            asyncio.run(fs.read_text(path))
        with pytest.raises(OSError, match="symbolic link"):
            asyncio.run(fs.write_text(path, "x"))
        with pytest.raises(OSError, match="symbolic link"):
            atomic_write(path, b"x")
    with pytest.raises(OSError, match="symbolic link"):
        atomic_write(project.cwd / "sub" / "new" / "file.txt", b"x")
    assert untouched(project)


def test_racing_swaps_never_read_or_write_outside(project: ToolContext) -> None:
    """A thread flips ``race.txt`` between a file and a link out while tools use it."""
    race = project.cwd / "race.txt"
    race.write_text("inside\n", encoding="utf-8")
    link = project.cwd / ".race-link"
    plain = project.cwd / ".race-plain"
    stop = threading.Event()

    def flip() -> None:
        while not stop.is_set():
            link.symlink_to(outside(project) / "secret.txt")
            os.replace(link, race)
            plain.write_text("inside\n", encoding="utf-8")
            os.replace(plain, race)

    async def use() -> list[str]:
        seen = []
        read, write = get_tool("Read"), get_tool("Write")
        assert read is not None
        assert write is not None
        for _ in range(150):
            seen.append((await read.run({"file_path": "race.txt"}, project)).content)
            await write.run({"file_path": "race.txt", "content": "written\n"}, project)
        return seen

    flipper = threading.Thread(target=flip)
    flipper.start()
    try:
        seen = asyncio.run(use())
    finally:
        stop.set()
        flipper.join()
    assert not [text for text in seen if "top secret" in text]
    assert untouched(project)


@pytest.mark.parametrize(
    ("operation", "level"),
    [
        (operation, level)
        for operation in ("read", "write", "atomic_write", "create")
        for level in range(4)
        if (operation, level) != ("create", 0)  # a new sibling of the link: no link on its way
    ],
)
def test_a_link_at_any_level_of_the_path_is_not_followed(
    tmp_path: Path, level: int, operation: str
) -> None:
    """``a/b/c/file.txt`` with one of ``file.txt``, ``c``, ``b``, ``a`` turned into a link
    to its twin under ``outside``: the port neither reads nor writes there."""
    ctx = make_project(tmp_path)
    parts = ["a", "b", "c", "file.txt"]
    for base in (ctx.cwd, outside(ctx)):
        (base / "a" / "b" / "c").mkdir(parents=True)
        (base / "a" / "b" / "c" / "file.txt").write_text(f"{base.name}\n", encoding="utf-8")
    swapped = ctx.cwd.joinpath(*parts[: len(parts) - level])
    twin = outside(ctx).joinpath(*parts[: len(parts) - level])
    if swapped.is_dir():
        swapped.rename(swapped.with_name(swapped.name + ".moved"))
    else:
        swapped.unlink()
    swapped.symlink_to(twin, target_is_directory=twin.is_dir())
    path = ctx.cwd.joinpath(*parts)
    fs = LocalFileSystem()
    operations: dict[str, Callable[[], object]] = {
        "read": lambda: asyncio.run(fs.read_text(path)),
        "write": lambda: asyncio.run(fs.write_text(path, "x")),
        "atomic_write": lambda: atomic_write(path, b"x"),
        "create": lambda: atomic_write(path.with_name("new.txt"), b"x"),
    }
    with pytest.raises(OSError, match="symbolic link"):
        operations[operation]()
    outside_files = sorted(p.name for p in outside(ctx).rglob("*") if p.is_file())
    assert outside_files == ["file.txt", "secret.txt"]
    assert (twin.joinpath(*parts[len(parts) - level :]) if level else twin).read_text() == (
        "outside\n"
    )
