"""The dedup rules of docs/handoff.md, one by one, seen through the item reports."""

from __future__ import annotations

from tests.handoff.support import CWD, Session, by_label
from toolwire.handoff import build_handoff, normalize_path


def reports(session: Session, tool: str) -> list[tuple[str, str, str | None]]:
    handoff = build_handoff(session.messages, cwd=CWD, keep_last=0, summary=False)
    return by_label(handoff.items, tool)


def test_latest_read_per_path_offset_limit() -> None:
    s = Session().user("go")
    s.read("a.py", "old a").read("b.py", "b").read("a.py", "new a")
    s.read("a.py", "part", offset=10, limit=5).read("a.py", "part again", offset=10, limit=5)
    assert reports(s, "Read") == [
        ("a.py", "dropped", "superseded"),
        ("b.py", "kept", None),
        ("a.py", "kept", None),
        ("a.py offset=10 limit=5", "dropped", "superseded"),
        ("a.py offset=10 limit=5", "kept", None),
    ]
    block = build_handoff(s.messages, cwd=CWD, keep_last=0, summary=False).block
    assert "new a" in block
    assert "old a" not in block
    assert "part again" in block


def test_relative_and_absolute_paths_are_one_key() -> None:
    s = Session().user("go").read("src/a.py", "first").read("/proj/src/./a.py", "second")
    assert [status for _, status, _ in reports(s, "Read")] == ["dropped", "kept"]
    assert normalize_path("../x/y.py", "/proj/src") == "/proj/x/y.py"
    assert normalize_path("/abs//p/../q", None) == "/abs/q"


def test_offset_one_and_no_offset_are_the_same_read() -> None:
    s = Session().user("go").read("a.py", "x", offset=1).read("a.py", "y")
    assert [status for _, status, _ in reports(s, "Read")] == ["dropped", "kept"]


def test_read_made_stale_by_later_write_is_dropped() -> None:
    s = Session().user("go").read("a.py", "OLD CONTENT")
    s.run("Write", {"file_path": "/proj/a.py", "content": "NEW CONTENT"}, "Wrote a.py")
    assert reports(s, "Read") == [("a.py", "dropped", "stale")]
    block = build_handoff(s.messages, cwd=CWD, keep_last=0, summary=False).block
    assert "OLD CONTENT" not in block
    assert "NEW CONTENT" in block


def test_read_made_stale_by_later_edit_is_kept_and_marked() -> None:
    s = Session().user("go").read("a.py", "x = 1\ny = 2\n")
    s.run("Edit", {"file_path": "a.py", "old_string": "x = 1", "new_string": "x = 3"}, "Edited")
    handoff = build_handoff(s.messages, cwd=CWD, keep_last=0, summary=False)
    (read,) = [r for r in handoff.items if r.item.tool == "Read"]
    assert read.status == "kept"
    assert read.stale
    assert "### Read: a.py (stale: changed later by Edit)" in handoff.block


def test_read_after_the_change_is_not_stale() -> None:
    s = Session().user("go")
    s.run("Edit", {"file_path": "a.py", "old_string": "1", "new_string": "2"}, "Edited")
    s.read("a.py", "fresh")
    handoff = build_handoff(s.messages, cwd=CWD, keep_last=0, summary=False)
    assert not any(r.stale for r in handoff.items)


def test_failed_edit_does_not_make_a_read_stale() -> None:
    s = Session().user("go").read("a.py", "content")
    s.run(
        "Edit",
        {"file_path": "a.py", "old_string": "zz", "new_string": "y"},
        "not found",
        error=True,
    )
    handoff = build_handoff(s.messages, cwd=CWD, keep_last=0, summary=False)
    assert not any(r.stale for r in handoff.items)


def test_latest_write_or_edit_per_path() -> None:
    s = Session().user("go")
    s.run("Write", {"file_path": "a.py", "content": "v1"}, "Wrote")
    s.run("Edit", {"file_path": "a.py", "old_string": "v1", "new_string": "v2"}, "Edited")
    s.run("Write", {"file_path": "b.py", "content": "b"}, "Wrote")
    assert [(label, status) for label, status, _ in reports(s, "Write")] == [
        ("a.py", "dropped"),
        ("b.py", "kept"),
    ]
    assert [status for _, status, _ in reports(s, "Edit")] == ["kept"]


def test_failed_change_keeps_the_last_success_and_itself_when_latest() -> None:
    s = Session().user("go")
    s.run("Edit", {"file_path": "a.py", "old_string": "a", "new_string": "b"}, "Edited")
    s.run(
        "Edit", {"file_path": "a.py", "old_string": "q", "new_string": "r"}, "no match", error=True
    )
    assert [status for _, status, _ in reports(s, "Edit")] == ["kept", "kept"]
    s.run(
        "Edit", {"file_path": "a.py", "old_string": "s", "new_string": "t"}, "no match", error=True
    )
    assert [status for _, status, _ in reports(s, "Edit")] == ["kept", "dropped", "kept"]


def test_read_only_bash_keeps_latest_per_normalized_command() -> None:
    s = Session().user("go")
    s.bash("git status", "dirty").bash("ls", "a").bash("git  status", "clean")
    assert reports(s, "Bash") == [
        ("git status", "dropped", "superseded"),
        ("ls", "kept", None),
        ("git  status", "kept", None),
    ]


def test_side_effecting_bash_keeps_every_occurrence() -> None:
    s = Session().user("go")
    s.bash("rm -rf build", "").bash("git commit -m x", "[main 1] x").bash("rm -rf build", "")
    assert [status for _, status, _ in reports(s, "Bash")] == ["kept", "kept", "kept"]


def test_bash_key_includes_cwd() -> None:
    s = Session().user("go")
    s.run("Bash", {"command": "ls", "cwd": "/proj/a"}, "x").run("Bash", {"command": "ls"}, "y")
    assert [status for _, status, _ in reports(s, "Bash")] == ["kept", "kept"]


def test_error_kept_only_if_latest_for_its_key() -> None:
    s = Session().user("go")
    s.bash("pytest -q", "1 failed", error=True).bash("pytest -q", "1 failed", error=True)
    s.bash("pytest -q", "all passed").bash("cat missing", "No such file", error=True)
    assert reports(s, "Bash") == [
        ("pytest -q", "dropped", "superseded"),
        ("pytest -q", "dropped", "superseded"),
        ("pytest -q", "kept", None),
        ("cat missing", "kept", None),
    ]
    s.bash("pytest -q", "2 failed", error=True)
    assert [status for _, status, _ in reports(s, "Bash")][-1] == "kept"


def test_error_read_superseded_by_success() -> None:
    s = Session().user("go").run("Read", {"file_path": "a.py"}, "not found", error=True)
    s.read("a.py", "found")
    assert [status for _, status, _ in reports(s, "Read")] == ["dropped", "kept"]


def test_other_tools_are_all_kept() -> None:
    s = Session().user("go")
    s.run("Grep", {"pattern": "x"}, "a.py").run("Grep", {"pattern": "x"}, "a.py")
    s.run("TodoWrite", {"todos": []}, "ok").run("mcp__search", {"q": "y"}, "hits")
    handoff = build_handoff(s.messages, cwd=CWD, keep_last=0, summary=False)
    assert [r.status for r in handoff.items] == ["kept"] * 4
    assert "## Other tools" in handoff.block


def test_other_tool_error_kept_only_if_latest() -> None:
    s = Session().user("go")
    s.run("Grep", {"pattern": "("}, "bad regex", error=True).run("Grep", {"pattern": "("}, "ok")
    assert [status for _, status, _ in reports(s, "Grep")] == ["dropped", "kept"]


def test_interrupted_call_is_text_and_kept_only_if_latest() -> None:
    s = Session().user("go").run("Bash", {"command": "make"}, None)
    s.user("again").bash("make", "built")
    s.user("read").run("Read", {"file_path": "a.py"}, None)
    handoff = build_handoff(s.messages, cwd=CWD, keep_last=0, summary=False)
    assert [(r.item.tool, r.status, r.item.interrupted) for r in handoff.items] == [
        ("Bash", "dropped", True),  # a failure, and not the latest for its key
        ("Bash", "kept", False),
        ("Read", "kept", True),
    ]
    assert "### Read: a.py (interrupted)" in handoff.block
    assert "(interrupted: the call never returned a result)" in handoff.block


def test_interrupted_read_only_command_superseded_by_later_run() -> None:
    s = Session().user("go").run("Bash", {"command": "ls"}, None).user("x").bash("ls", "a")
    assert [status for _, status, _ in reports(s, "Bash")] == ["dropped", "kept"]


def test_tool_names_from_other_agents_map_to_the_rules() -> None:
    s = Session().user("go")
    s.run("read_file", {"path": "a.py"}, "1").run("read_file", {"path": "a.py"}, "2")
    s.run("shell", {"command": ["bash", "-lc", "ls"]}, "x").run("shell", {"command": "ls"}, "y")
    handoff = build_handoff(s.messages, cwd=CWD, keep_last=0, summary=False)
    assert [r.status for r in handoff.items] == ["dropped", "kept", "dropped", "kept"]


def test_read_without_a_path_is_an_other_tool() -> None:
    s = Session().user("go").run("Read", {}, "what?")
    handoff = build_handoff(s.messages, cwd=CWD, keep_last=0, summary=False)
    assert handoff.items[0].item.category == "other"


def test_a_read_only_session_tool_dedupes_like_a_read() -> None:
    from toolwire.handoff.dedupe import dedupe
    from toolwire.handoff.extract import extract_items
    from toolwire.history import Message, ToolCallPart, ToolResultPart, tool_results

    def call(n: int, name: str) -> list[Message]:
        part = ToolCallPart(f"c{n}", name, {"query": "open bugs"})
        result = ToolResultPart(f"c{n}", name, f"answer {n}")
        return [Message("assistant", (part,)), tool_results([result])]

    history = [
        *call(0, "mcp__tracker__search"),
        *call(1, "mcp__tracker__search"),
        *call(2, "mcp__tracker__comment"),
        *call(3, "mcp__tracker__comment"),
    ]
    read_only = {"mcp__tracker__search"}
    verdicts = dedupe(extract_items(history, read_only=read_only))
    assert [v.keep for v in verdicts] == [False, True, True, True]  # side effects all kept
    assert [v.keep for v in dedupe(extract_items(history))] == [True, True, True, True]
