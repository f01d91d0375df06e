"""Subagent types: the built-ins, definition files and where they are read from, the
``Task`` tool as the model sees it; and children stored under their parent."""

from __future__ import annotations

from pathlib import Path

from toolwire.agent.features.agent_types import TASK, load_agent_types
from toolwire.agent.store.database import SessionDatabase

DEFINITION = "---\nname: {name}\ndescription: {description}\n{extra}---\n{body}\n"


def _define(folder: Path, file: str, name: str, extra: str = "", body: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / file
    text = DEFINITION.format(name=name, description=f"{name} does things", extra=extra, body=body)
    path.write_text(text, encoding="utf-8")
    return path


def test_definitions_from_the_project_and_the_user(tmp_path: Path) -> None:
    project, config = tmp_path / "project", tmp_path / "config"
    _define(
        project / ".toolwire" / "agents", "a.md", "reviewer", "tools: Read, Grep\n", "Be strict."
    )
    _define(project / ".claude" / "agents", "b.md", "tester", "model: fast\n")
    _define(config / "toolwire" / "agents", "c.md", "reviewer")  # the project's wins
    types = load_agent_types(str(project), {"XDG_CONFIG_HOME": str(config)})
    names = [t.name for t in types.types]
    assert names == ["general-purpose", "explore", "reviewer", "tester"]
    reviewer, tester = types.get("reviewer"), types.get("tester")
    assert reviewer is not None
    assert tester is not None
    assert reviewer.tool_names() == ("Read", "Grep")
    assert reviewer.prompt == "Be strict."
    assert tester.model == "fast"
    assert types.skipped == ()
    spec = types.spec()
    assert spec.name == TASK
    for kind in types.types:  # the model sees every type and what it is for
        assert f"- {kind.name}: {kind.description}" in spec.description
    assert "cannot start subagents" in spec.description


def test_built_ins_never_offer_task_and_explore_only_reads(tmp_path: Path) -> None:
    types = load_agent_types(str(tmp_path), {"XDG_CONFIG_HOME": str(tmp_path)})
    general, explore = types.get("general-purpose"), types.get("explore")
    assert general is not None
    assert explore is not None
    assert TASK not in general.tool_names()
    assert {"Edit", "Write", "Bash"} <= set(general.tool_names())
    assert not {"Edit", "Write", "Bash"} & set(explore.tool_names())
    assert "Read" in explore.tool_names()


def test_a_bad_definition_is_skipped_with_one_line_naming_it(tmp_path: Path) -> None:
    folder = tmp_path / ".toolwire" / "agents"
    good = _define(folder, "good.md", "fine")
    bad = _define(folder, "bad.md", "broken", "tools: Read, Teleport\n")
    (folder / "empty.md").write_text("no front matter\n", encoding="utf-8")
    types = load_agent_types(str(tmp_path), {"XDG_CONFIG_HOME": str(tmp_path / "none")})
    assert [t.name for t in types.types][-1] == "fine"
    assert types.get("fine") is not None
    assert str(good) == types.types[-1].source
    assert len(types.skipped) == 2
    assert any(str(bad) in line and "Teleport" in line for line in types.skipped)
    assert all("\n" not in line for line in types.skipped)


def test_children_are_stored_under_their_parent_and_go_with_it(tmp_path: Path) -> None:
    db = SessionDatabase(tmp_path / "s.db")
    parent = db.create(str(tmp_path)).id
    first = db.create(str(tmp_path), parent_id=parent).id
    second = db.create(str(tmp_path), parent_id=parent).id
    assert db.children(parent) == [first, second]
    assert [r.id for r in db.list_sessions()] == [parent]
    assert db.delete(parent)
    assert db.get(first) is None
    assert db.get(second) is None
