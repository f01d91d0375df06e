"""The tool registry, the tools' metadata for the model and the editor, and TodoWrite."""

from __future__ import annotations

from pathlib import Path

import jsonschema
import pytest

from tests.tools.support import make_project, run
from toolwire.tools import TOOLS, PlanEntry, ToolResult, get_tool, tool_specs
from toolwire.updates.output import OutputWindow, cap_text


def test_registry_names_kinds_and_permissions() -> None:
    assert list(TOOLS) == [
        "Read",
        "Write",
        "Edit",
        "Bash",
        "Grep",
        "Glob",
        "TodoWrite",
        "WebFetch",
        "WebSearch",
    ]
    kinds = {name: tool.kind for name, tool in TOOLS.items()}
    assert kinds == {
        "Read": "read",
        "Write": "edit",
        "Edit": "edit",
        "Bash": "execute",
        "Grep": "search",
        "Glob": "search",
        "TodoWrite": "think",
        "WebFetch": "fetch",
        "WebSearch": "search",
    }
    needs = {n for n, t in TOOLS.items() if t.needs_permission}
    assert needs == {"Write", "Edit", "Bash", "WebFetch"}
    # What the permission policy reads of each tool, from the tool itself.
    effects = {n: t.effect for n, t in TOOLS.items() if t.effect != "read"}
    assert effects == {"Write": "edit", "Edit": "edit", "Bash": "command", "WebFetch": "fetch"}


def test_lookup_by_name() -> None:
    assert get_tool("Read") is TOOLS["Read"]
    assert get_tool("todowrite") is TOOLS["TodoWrite"]
    assert get_tool("Nope") is None


def test_specs_are_valid_json_schemas_with_descriptions() -> None:
    specs = tool_specs()
    assert [s.name for s in specs] == list(TOOLS)
    for spec in specs:
        jsonschema.Draft202012Validator.check_schema(spec.input_schema)
        assert spec.input_schema["type"] == "object"
        assert len(spec.description) > 80
    assert [s.name for s in tool_specs(("Bash", "Read"))] == ["Read", "Bash"]
    assert "WebSearch" not in [s.name for s in tool_specs(without=("WebSearch",))]


def test_result_to_history_part() -> None:
    part = ToolResult.error("boom").to_part("call_1", "Bash")
    assert (part.call_id, part.name, part.content, part.is_error) == (
        "call_1",
        "Bash",
        "boom",
        True,
    )


def test_todowrite_produces_plan_entries(tmp_path: Path) -> None:
    todos = [
        {"content": "Read the code", "status": "completed", "activeForm": "Reading the code"},
        {"content": "Fix it", "status": "in_progress", "activeForm": "Fixing it"},
        {"content": "Test it", "status": "pending", "priority": "high"},
    ]
    result = run("TodoWrite", {"todos": todos}, make_project(tmp_path))
    assert not result.is_error
    assert result.plan == (
        PlanEntry("Read the code", "completed"),
        PlanEntry("Fix it", "in_progress"),
        PlanEntry("Test it", "pending", "high"),
    )
    assert [e.to_acp() for e in result.plan][2] == {
        "content": "Test it",
        "priority": "high",
        "status": "pending",
    }
    assert result.content.startswith("Task list updated: 1 completed, 1 in progress, 1 pending.")
    assert "[>] Fix it" in result.content
    assert result.raw_output is not None
    assert result.raw_output["todos"][1]["activeForm"] == "Fixing it"


def test_todowrite_empty_list_clears_the_plan(tmp_path: Path) -> None:
    result = run("TodoWrite", {"todos": []}, make_project(tmp_path))
    assert result.plan == ()
    assert "empty" in result.content


@pytest.mark.parametrize(
    ("todos", "message"),
    [
        ("do it", "must be an array"),
        ([{"content": "x", "status": "done"}], "todos[0].status must be one of"),
        ([{"content": " ", "status": "pending"}], "todos[0].content must be a non-empty"),
        (["x"], "todos[0] must be an object"),
    ],
)
def test_todowrite_rejects_bad_items(tmp_path: Path, todos: object, message: str) -> None:
    result = run("TodoWrite", {"todos": todos}, make_project(tmp_path))
    assert result.is_error
    assert result.plan is None
    assert message in result.content


def test_the_tools_output_window_and_cap_agree() -> None:
    """Bash keeps its output in the update engine's window; Grep caps with ``cap_text``."""
    text = "".join(f"{i:05d}\n" for i in range(5000))
    window = OutputWindow(tail_bytes=1, result_bytes=1000)
    for start in range(0, len(text), 777):
        window.append(text[start : start + 777])
    assert window.total == len(text)
    assert window.truncated
    assert window.result_text() == cap_text(text, 1000)
    small = OutputWindow(tail_bytes=1, result_bytes=1000)
    small.append("abc")
    assert (small.result_text(), small.truncated) == ("abc", False)
