"""Grep and Glob: patterns, modes, limits, and staying inside the session's roots."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from tests.tools.support import make_project, run
from toolwire.tools import ToolContext, ToolLimits
from toolwire.tools.search import glob_to_regex, in_thread, split_static


def populate(root: Path) -> None:
    files = {
        "README.md": "# Demo\nTODO: docs\n",
        "src/app.py": "import os\n\ndef main():\n    return 'Hello'\n",
        "src/util/helpers.py": "def helper():\n    pass  # TODO tidy\n",
        "src/web/page.tsx": "export const Page = () => null // todo\n",
        "tests/test_app.py": "from src.app import main\n\nassert main()\n",
        ".git/config": "TODO in git internals\n",
        "node_modules/pkg/index.js": "// TODO vendored\n",
    }
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (root / "image.bin").write_bytes(b"\x89PNG\x00TODO")


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("*.py", "a.py", True),
        ("*.py", "src/a.py", False),
        ("**/*.py", "a.py", True),
        ("**/*.py", "src/deep/a.py", True),
        ("src/**/*.py", "src/a.py", True),
        ("src/**", "src/x/y", True),
        ("*.{ts,tsx}", "page.tsx", True),
        ("*.{ts,tsx}", "page.js", False),
        ("test_?.py", "test_1.py", True),
        ("[!a]*.py", "a.py", False),
        ("[ab]*.py", "b.py", True),
        ("a+b(c).py", "a+b(c).py", True),
    ],
)
def test_glob_to_regex(pattern: str, path: str, matches: bool) -> None:
    assert bool(glob_to_regex(pattern).match(path)) is matches


def test_split_static() -> None:
    assert split_static("src/**/*.py") == ("src", "**/*.py")
    assert split_static("**/*.py") == ("", "**/*.py")
    assert split_static("/abs/dir/*.txt") == ("/abs/dir", "*.txt")
    assert split_static("file.txt") == ("", "file.txt")


# --- Glob ---------------------------------------------------------------------------


def test_glob_lists_matching_files_relative_to_cwd(tmp_path: Path) -> None:
    ctx = make_project(tmp_path)
    populate(ctx.cwd)
    result = run("Glob", {"pattern": "**/*.py"}, ctx)
    assert result.content.split("\n") == [
        "src/app.py",
        "src/util/helpers.py",
        "tests/test_app.py",
    ]
    assert run("Glob", {"pattern": "*.md"}, ctx).content == "README.md"
    assert run("Glob", {"pattern": "*.py", "path": "src"}, ctx).content == "src/app.py"
    assert run("Glob", {"pattern": "src/**/*.tsx"}, ctx).content == "src/web/page.tsx"


def test_glob_absolute_pattern_and_no_match(tmp_path: Path) -> None:
    ctx = make_project(tmp_path)
    populate(ctx.cwd)
    result = run("Glob", {"pattern": f"{ctx.cwd}/tests/*.py"}, ctx)
    assert result.content == "tests/test_app.py"
    none = run("Glob", {"pattern": "**/*.rs"}, ctx)
    assert not none.is_error
    assert "No files match" in none.content


def test_glob_caps_results_with_a_note(tmp_path: Path) -> None:
    ctx = make_project(tmp_path)
    for i in range(12):
        (ctx.cwd / f"f{i:02d}.txt").write_text("", encoding="utf-8")
    ctx = ToolContext.create(ctx.cwd, limits=ToolLimits(search_max_results=5))
    result = run("Glob", {"pattern": "*.txt"}, ctx)
    assert result.content.split("\n")[:5] == [f"f{i:02d}.txt" for i in range(5)]
    assert "7 more files match" in result.content


def test_glob_does_not_leave_the_roots_through_symlinks(tmp_path: Path) -> None:
    ctx = make_project(tmp_path)
    (ctx.cwd / "outdir").symlink_to(tmp_path / "outside", target_is_directory=True)
    (ctx.cwd / "outfile.txt").symlink_to(tmp_path / "outside" / "secret.txt")
    (ctx.cwd / "in.txt").write_text("", encoding="utf-8")
    (ctx.cwd / "alias.txt").symlink_to(ctx.cwd / "in.txt")
    result = run("Glob", {"pattern": "**/*.txt"}, ctx)
    assert result.content.split("\n") == ["alias.txt", "in.txt"]


def test_glob_on_a_file_path_is_an_error(tmp_path: Path) -> None:
    ctx = make_project(tmp_path)
    populate(ctx.cwd)
    result = run("Glob", {"pattern": "*", "path": "README.md"}, ctx)
    assert result.is_error
    assert "not a directory" in result.content


# --- Grep ---------------------------------------------------------------------------


def test_grep_files_with_matches_is_the_default(tmp_path: Path) -> None:
    ctx = make_project(tmp_path)
    populate(ctx.cwd)
    result = run("Grep", {"pattern": "TODO"}, ctx)
    # .git, node_modules and the binary file are skipped.
    assert result.content.split("\n") == ["README.md", "src/util/helpers.py"]


def test_grep_content_and_count_modes(tmp_path: Path) -> None:
    ctx = make_project(tmp_path)
    populate(ctx.cwd)
    content = run("Grep", {"pattern": "^def ", "output_mode": "content"}, ctx)
    assert content.content.split("\n") == [
        "src/app.py:3:def main():",
        "src/util/helpers.py:1:def helper():",
    ]
    count = run("Grep", {"pattern": "todo", "-i": True, "output_mode": "count"}, ctx)
    assert count.content.split("\n") == [
        "README.md:1",
        "src/util/helpers.py:1",
        "src/web/page.tsx:1",
    ]


def test_grep_glob_filter_and_single_file_path(tmp_path: Path) -> None:
    ctx = make_project(tmp_path)
    populate(ctx.cwd)
    assert run("Grep", {"pattern": "todo", "-i": True, "glob": "*.tsx"}, ctx).content == (
        "src/web/page.tsx"
    )
    assert run("Grep", {"pattern": "main", "glob": "tests/*.py"}, ctx).content == (
        "tests/test_app.py"
    )
    single = run("Grep", {"pattern": "os", "path": "src/app.py", "output_mode": "content"}, ctx)
    assert single.content == "src/app.py:1:import os"


def test_grep_no_match_is_not_an_error(tmp_path: Path) -> None:
    ctx = make_project(tmp_path)
    populate(ctx.cwd)
    result = run("Grep", {"pattern": "nothing-like-this"}, ctx)
    assert not result.is_error
    assert result.content == "No matches found."


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"pattern": "("}, "Invalid regular expression"),
        ({"pattern": "x", "output_mode": "lines"}, "output_mode must be one of"),
        ({"pattern": "x", "path": "missing"}, "Path does not exist"),
    ],
)
def test_grep_errors(tmp_path: Path, args: dict[str, object], message: str) -> None:
    result = run("Grep", args, make_project(tmp_path))
    assert result.is_error
    assert message in result.content


def test_grep_head_limit_caps_the_result(tmp_path: Path) -> None:
    ctx = make_project(tmp_path)
    (ctx.cwd / "many.txt").write_text("hit\n" * 50, encoding="utf-8")
    result = run("Grep", {"pattern": "hit", "output_mode": "content", "head_limit": 3}, ctx)
    assert result.content.startswith("many.txt:1:hit\nmany.txt:2:hit\nmany.txt:3:hit\n[")
    assert "there are more" in result.content


def test_grep_does_not_read_outside_the_roots_through_symlinks(tmp_path: Path) -> None:
    ctx = make_project(tmp_path)
    (ctx.cwd / "outdir").symlink_to(tmp_path / "outside", target_is_directory=True)
    (ctx.cwd / "outfile.txt").symlink_to(tmp_path / "outside" / "secret.txt")
    (ctx.cwd / "inside.txt").write_text("not so secret\n", encoding="utf-8")
    result = run("Grep", {"pattern": "secret", "output_mode": "content"}, ctx)
    assert result.content == "inside.txt:1:not so secret"
    refused = run("Grep", {"pattern": "secret", "path": "outfile.txt"}, ctx)
    assert refused.is_error
    assert "top secret" not in refused.content


def test_grep_searches_additional_roots_when_asked(tmp_path: Path) -> None:
    ctx = make_project(tmp_path, tmp_path / "outside")
    result = run("Grep", {"pattern": "secret", "path": str(tmp_path / "outside")}, ctx)
    assert result.content == str((tmp_path / "outside" / "secret.txt").resolve())


def test_cancelling_a_search_stops_its_worker_thread() -> None:
    stopped = threading.Event()

    def work(stop: threading.Event) -> int:
        while not stop.wait(0.01):
            pass
        stopped.set()
        return 0

    async def scenario() -> None:
        task = asyncio.create_task(in_thread(work))
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    assert stopped.wait(2)
