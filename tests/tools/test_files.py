"""Read, Write and Edit on the local file system, and the atomic write beneath them."""

from __future__ import annotations

import asyncio
import os
import stat
from pathlib import Path

import pytest

from tests.tools.support import make_project, run
from toolwire.tools import ToolContext, ToolLimits, atomic_write, get_tool


def write(ctx: ToolContext, name: str, text: str) -> Path:
    path = ctx.cwd / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))
    return path


# --- Read ---------------------------------------------------------------------------


def test_read_numbers_lines_like_cat_n(tmp_path: Path) -> None:
    ctx = make_project(tmp_path)
    write(ctx, "a.py", "import os\n\nprint(os.sep)\n")
    result = run("Read", {"file_path": "a.py"}, ctx)
    assert not result.is_error
    assert result.content == "     1\timport os\n     2\t\n     3\tprint(os.sep)"
    assert result.locations[0].path == str(ctx.cwd / "a.py")
    assert result.raw_output == {
        "path": str(ctx.cwd / "a.py"),
        "start_line": 1,
        "lines": 3,
        "total_lines": 3,
    }


def test_read_honours_offset_and_limit_and_says_where_to_go_on(tmp_path: Path) -> None:
    ctx = make_project(tmp_path)
    write(ctx, "n.txt", "".join(f"line {i}\n" for i in range(1, 11)))
    result = run("Read", {"file_path": "n.txt", "offset": 4, "limit": 3}, ctx)
    assert result.content.startswith("     4\tline 4\n     5\tline 5\n     6\tline 6")
    assert "Showing lines 4-6 of 10. Use offset=7" in result.content
    assert result.locations[0].line == 4
    # A model sending numbers as strings still gets its lines.
    again = run("Read", {"file_path": "n.txt", "offset": "9", "limit": "5"}, ctx)
    assert again.content == "     9\tline 9\n    10\tline 10"


def test_read_default_limit_and_character_budget(tmp_path: Path) -> None:
    ctx = make_project(tmp_path)
    ctx = ToolContext.create(ctx.cwd, limits=ToolLimits(read_max_lines=5, read_max_chars=60))
    write(ctx, "n.txt", "".join(f"{i:020d}\n" for i in range(100)))
    result = run("Read", {"file_path": "n.txt"}, ctx)
    assert result.content.count("\n     ") == 1  # two lines of 28 characters fit in 60
    assert "Use offset=3" in result.content


def test_read_cuts_long_lines_and_keeps_crlf_files_numbered(tmp_path: Path) -> None:
    ctx = make_project(tmp_path)
    ctx = ToolContext.create(ctx.cwd, limits=ToolLimits(line_max_chars=10))
    write(ctx, "w.txt", "x" * 50 + "\r\nshort\r\n\fform feed\n")
    result = run("Read", {"file_path": "w.txt"}, ctx)
    lines = result.content.split("\n")
    assert lines[0] == "     1\t" + "x" * 10 + " [... line cut at 10 characters]"
    assert lines[1] == "     2\tshort"
    assert lines[2] == "     3\t\fform feed"


@pytest.mark.parametrize(
    ("setup", "args", "message"),
    [
        (None, {"file_path": "missing.txt"}, "File does not exist: missing.txt"),
        ("dir", {"file_path": "dir"}, "is a directory"),
        ("empty", {"file_path": "empty.txt"}, "exists but is empty"),
        ("short", {"file_path": "short.txt", "offset": 5}, "past the end"),
        ("binary", {"file_path": "bin.dat"}, "not UTF-8"),
        (None, {}, "Missing required argument 'file_path'"),
        (None, {"file_path": 3}, "must be a string"),
        (None, {"file_path": "a", "limit": "many"}, "must be an integer"),
        (None, {"file_path": "a", "limit": 0}, "at least 1"),
    ],
)
def test_read_errors(
    tmp_path: Path, setup: str | None, args: dict[str, object], message: str
) -> None:
    ctx = make_project(tmp_path)
    (ctx.cwd / "dir").mkdir()
    write(ctx, "empty.txt", "")
    write(ctx, "short.txt", "one\ntwo\n")
    (ctx.cwd / "bin.dat").write_bytes(b"\xff\xfe\x00binary")
    result = run("Read", args, ctx)
    assert message in result.content
    assert result.is_error == (setup != "empty")


def test_read_refuses_huge_files(tmp_path: Path) -> None:
    ctx = make_project(tmp_path)
    ctx = ToolContext.create(ctx.cwd, limits=ToolLimits(max_file_bytes=10))
    write(ctx, "big.txt", "x" * 11)
    result = run("Read", {"file_path": "big.txt"}, ctx)
    assert result.is_error
    assert "Grep" in result.content


def test_non_object_arguments_are_an_error(tmp_path: Path) -> None:
    ctx = make_project(tmp_path)
    tool = get_tool("Read")
    assert tool is not None
    result = asyncio.run(tool.run(["a.txt"], ctx))  # type: ignore[arg-type]
    assert result.is_error
    assert "JSON object" in result.content


# --- Write --------------------------------------------------------------------------


def test_write_creates_file_and_parents_with_a_new_file_diff(tmp_path: Path) -> None:
    ctx = make_project(tmp_path)
    result = run("Write", {"file_path": "pkg/sub/mod.py", "content": "x = 1\n"}, ctx)
    path = ctx.cwd / "pkg" / "sub" / "mod.py"
    assert not result.is_error
    assert result.content == "Created pkg/sub/mod.py (1 line)."
    assert path.read_text(encoding="utf-8") == "x = 1\n"
    assert result.diff is not None
    # A new file's diff leaves oldText out (the SDK's form; the schema allows it).
    assert result.diff.to_acp() == {"type": "diff", "path": str(path), "newText": "x = 1\n"}
    assert result.raw_output is not None
    assert result.raw_output["created"] is True


def test_write_overwrites_with_old_text_in_the_diff_and_keeps_the_mode(tmp_path: Path) -> None:
    ctx = make_project(tmp_path)
    path = write(ctx, "run.sh", "echo old\n")
    path.chmod(0o750)
    result = run("Write", {"file_path": "run.sh", "content": "echo new\necho two\n"}, ctx)
    assert result.diff is not None
    assert (result.diff.old_text, result.diff.new_text) == ("echo old\n", "echo new\necho two\n")
    assert "Wrote run.sh (2 lines; it had 1)" in result.content
    assert stat.S_IMODE(path.stat().st_mode) == 0o750
    assert [p.name for p in ctx.cwd.iterdir()] == ["run.sh"]  # no temporary file left


def test_write_through_a_symlink_inside_replaces_its_target(tmp_path: Path) -> None:
    ctx = make_project(tmp_path)
    target = write(ctx, "real.txt", "old")
    (ctx.cwd / "alias.txt").symlink_to(target)
    result = run("Write", {"file_path": "alias.txt", "content": "new"}, ctx)
    assert not result.is_error
    assert (ctx.cwd / "alias.txt").is_symlink()
    assert target.read_text(encoding="utf-8") == "new"


def test_write_refuses_a_directory_and_keeps_non_utf8_files(tmp_path: Path) -> None:
    ctx = make_project(tmp_path)
    (ctx.cwd / "dir").mkdir()
    assert "is a directory" in run("Write", {"file_path": "dir", "content": ""}, ctx).content
    (ctx.cwd / "bin.dat").write_bytes(b"\xff\x00")
    result = run("Write", {"file_path": "bin.dat", "content": "text"}, ctx)
    assert result.is_error
    assert (ctx.cwd / "bin.dat").read_bytes() == b"\xff\x00"


def test_atomic_write_leaves_the_original_intact_when_replace_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ctx = make_project(tmp_path)
    path = write(ctx, "keep.txt", "precious\n")

    def failing_replace(src: object, dst: object, **dir_fds: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", failing_replace)
    result = run("Write", {"file_path": "keep.txt", "content": "half-written"}, ctx)
    assert result.is_error
    assert "No space left on device" in result.content
    assert path.read_text(encoding="utf-8") == "precious\n"
    assert [p.name for p in ctx.cwd.iterdir()] == ["keep.txt"]  # the temp file is gone


def test_atomic_write_new_file_gets_umask_mode(tmp_path: Path) -> None:
    atomic_write(tmp_path / "new.txt", b"data")
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE((tmp_path / "new.txt").stat().st_mode) == 0o666 & ~mask


def test_atomic_write_never_touches_the_process_umask(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Setting the umask to read it is process-wide: another thread's file would get 0o666."""
    mask = os.umask(0o027)
    try:

        def no_umask(value: int) -> int:
            raise AssertionError("os.umask called")

        monkeypatch.setattr(os, "umask", no_umask)
        atomic_write(tmp_path / "sub" / "new.txt", b"data")
        monkeypatch.undo()
    finally:
        os.umask(mask)
    assert stat.S_IMODE((tmp_path / "sub" / "new.txt").stat().st_mode) == 0o640


# --- Edit ---------------------------------------------------------------------------


def test_edit_replaces_a_unique_string_and_reports_a_diff(tmp_path: Path) -> None:
    ctx = make_project(tmp_path)
    original = "def f():\n    return 1\n\n\ndef g():\n    return 2\n"
    path = write(ctx, "m.py", original)
    result = run(
        "Edit",
        {"file_path": "m.py", "old_string": "    return 2\n", "new_string": "    return 3\n"},
        ctx,
    )
    assert not result.is_error, result.content
    assert path.read_text(encoding="utf-8") == original.replace("return 2", "return 3")
    assert result.diff is not None
    assert result.diff.old_text == original
    assert result.locations[0].line == 6
    assert "     6\t    return 3" in result.content
    assert result.raw_output == {"path": str(path), "replacements": 1, "line": 6}


def test_edit_not_unique_fails_unless_replace_all(tmp_path: Path) -> None:
    ctx = make_project(tmp_path)
    path = write(ctx, "m.py", "x = 1\ny = x\nz = x\n")
    args = {"file_path": "m.py", "old_string": "x", "new_string": "value"}
    result = run("Edit", args, ctx)
    assert result.is_error
    assert "occurs 3 times" in result.content
    assert path.read_text(encoding="utf-8") == "x = 1\ny = x\nz = x\n"
    result = run("Edit", {**args, "replace_all": True}, ctx)
    assert not result.is_error
    assert "(3 replacements)" in result.content
    assert path.read_text(encoding="utf-8") == "value = 1\ny = value\nz = value\n"


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("nope", "x", "old_string was not found in m.py"),
        ("  x = 1  ", "y", "leading/trailing whitespace"),
        ("     1\tx = 1", "y", "line-number prefix"),
        ("x = 1", "x = 1", "identical"),
        ("", "y", "old_string is empty but m.py is not"),
    ],
)
def test_edit_errors_leave_the_file_alone(tmp_path: Path, old: str, new: str, message: str) -> None:
    ctx = make_project(tmp_path)
    path = write(ctx, "m.py", "x = 1\n")
    result = run("Edit", {"file_path": "m.py", "old_string": old, "new_string": new}, ctx)
    assert result.is_error
    assert message in result.content
    assert path.read_text(encoding="utf-8") == "x = 1\n"


def test_edit_missing_file_fails_clearly_and_empty_old_string_creates(tmp_path: Path) -> None:
    ctx = make_project(tmp_path)
    result = run("Edit", {"file_path": "new.py", "old_string": "a", "new_string": "b"}, ctx)
    assert result.is_error
    assert "File does not exist: new.py" in result.content
    result = run("Edit", {"file_path": "new.py", "old_string": "", "new_string": "b\n"}, ctx)
    assert not result.is_error
    assert result.diff is not None
    assert result.diff.old_text is None
    assert (ctx.cwd / "new.py").read_text(encoding="utf-8") == "b\n"


def test_edit_matches_lf_old_string_in_a_crlf_file(tmp_path: Path) -> None:
    ctx = make_project(tmp_path)
    path = write(ctx, "w.txt", "one\r\ntwo\r\nthree\r\n")
    args = {"file_path": "w.txt", "old_string": "one\ntwo\n", "new_string": "1\n2\n"}
    result = run("Edit", args, ctx)
    assert not result.is_error, result.content
    assert path.read_bytes() == b"1\r\n2\r\nthree\r\n"


def test_parallel_edits_of_one_file_both_apply(tmp_path: Path) -> None:
    ctx = make_project(tmp_path)
    path = write(ctx, "m.py", "a = 1\nb = 2\n")
    tool = get_tool("Edit")
    assert tool is not None

    async def both() -> None:
        await asyncio.gather(
            tool.run({"file_path": "m.py", "old_string": "a = 1", "new_string": "a = 10"}, ctx),
            tool.run({"file_path": "m.py", "old_string": "b = 2", "new_string": "b = 20"}, ctx),
        )

    asyncio.run(both())
    assert path.read_text(encoding="utf-8") == "a = 10\nb = 20\n"
