"""Path safety: relative paths, roots, ``..``, absolute paths and symlinks in and out."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.tools.support import make_project, run
from toolwire.errors import UsageError
from toolwire.tools import PathRefusedError, ToolContext


def test_relative_paths_resolve_against_cwd(tmp_path: Path) -> None:
    ctx = make_project(tmp_path)
    assert ctx.resolve("src/app.py") == ctx.cwd / "src" / "app.py"
    assert ctx.resolve("./a/../b.txt") == ctx.cwd / "b.txt"
    assert ctx.resolve(str(ctx.cwd / "x")) == ctx.cwd / "x"


@pytest.mark.parametrize("raw", ["../outside/secret.txt", "a/../../outside/secret.txt", ".."])
def test_dotdot_out_of_the_root_is_refused(tmp_path: Path, raw: str) -> None:
    ctx = make_project(tmp_path)
    with pytest.raises(PathRefusedError, match="outside the session's directories"):
        ctx.resolve(raw)


def test_absolute_path_outside_is_refused(tmp_path: Path) -> None:
    ctx = make_project(tmp_path)
    with pytest.raises(PathRefusedError):
        ctx.resolve(str(tmp_path / "outside" / "secret.txt"))
    with pytest.raises(PathRefusedError):
        ctx.resolve("/etc/passwd")


def test_symlinked_file_escaping_the_root_is_refused(tmp_path: Path) -> None:
    ctx = make_project(tmp_path)
    (ctx.cwd / "link.txt").symlink_to(tmp_path / "outside" / "secret.txt")
    with pytest.raises(PathRefusedError, match="symbolic link"):
        ctx.resolve("link.txt")


def test_new_file_under_an_escaping_symlinked_dir_is_refused(tmp_path: Path) -> None:
    ctx = make_project(tmp_path)
    (ctx.cwd / "out").symlink_to(tmp_path / "outside", target_is_directory=True)
    with pytest.raises(PathRefusedError):
        ctx.resolve("out/new/deeper/file.txt")


def test_dangling_symlink_pointing_out_is_refused(tmp_path: Path) -> None:
    ctx = make_project(tmp_path)
    (ctx.cwd / "dangling").symlink_to(tmp_path / "outside" / "not-yet.txt")
    with pytest.raises(PathRefusedError):
        ctx.resolve("dangling")


def test_symlink_inside_the_root_is_fine(tmp_path: Path) -> None:
    ctx = make_project(tmp_path)
    (ctx.cwd / "real.txt").write_text("x", encoding="utf-8")
    (ctx.cwd / "alias.txt").symlink_to(ctx.cwd / "real.txt")
    assert ctx.resolve("alias.txt") == ctx.cwd / "real.txt"


def test_new_file_in_missing_directories_inside_is_fine(tmp_path: Path) -> None:
    ctx = make_project(tmp_path)
    assert ctx.resolve("a/b/c.txt") == ctx.cwd / "a" / "b" / "c.txt"


def test_additional_directories_are_roots(tmp_path: Path) -> None:
    ctx = make_project(tmp_path, tmp_path / "outside")
    assert ctx.resolve("../outside/secret.txt") == (tmp_path / "outside" / "secret.txt").resolve()
    assert len(ctx.roots) == 2


def test_symlinked_cwd_is_resolved(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "alias").symlink_to(tmp_path / "real", target_is_directory=True)
    ctx = ToolContext.create(tmp_path / "alias")
    assert ctx.cwd == (tmp_path / "real").resolve()
    assert ctx.resolve("f.txt") == ctx.cwd / "f.txt"


def test_relative_cwd_is_a_usage_error() -> None:
    with pytest.raises(UsageError):
        ToolContext.create("relative/dir")


def test_empty_and_nul_paths_are_errors(tmp_path: Path) -> None:
    ctx = make_project(tmp_path)
    assert run("Read", {"file_path": ""}, ctx).is_error
    assert "NUL" in run("Read", {"file_path": "a\0b"}, ctx).content


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("Read", {"file_path": "../outside/secret.txt"}),
        ("Write", {"file_path": "../outside/new.txt", "content": "x"}),
        ("Edit", {"file_path": "../outside/secret.txt", "old_string": "top", "new_string": "x"}),
        ("Grep", {"pattern": "secret", "path": "../outside"}),
        ("Glob", {"pattern": "*.txt", "path": "../outside"}),
        ("Glob", {"pattern": "../outside/*.txt"}),
    ],
)
def test_every_file_tool_refuses_outside_paths(
    tmp_path: Path, name: str, args: dict[str, str]
) -> None:
    ctx = make_project(tmp_path)
    result = run(name, args, ctx)
    assert result.is_error
    assert "Refused" in result.content
    assert "top secret" not in result.content
    assert (tmp_path / "outside" / "secret.txt").read_text(encoding="utf-8") == "top secret\n"
    assert not (tmp_path / "outside" / "new.txt").exists()


def test_write_through_escaping_symlink_writes_nothing_outside(tmp_path: Path) -> None:
    ctx = make_project(tmp_path)
    (ctx.cwd / "link.txt").symlink_to(tmp_path / "outside" / "secret.txt")
    result = run("Write", {"file_path": "link.txt", "content": "pwned"}, ctx)
    assert result.is_error
    assert "symbolic link" in result.content
    assert (tmp_path / "outside" / "secret.txt").read_text(encoding="utf-8") == "top secret\n"
    assert os.path.islink(ctx.cwd / "link.txt")
