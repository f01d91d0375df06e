"""Project instructions (``agent.instructions``): which files, in which order, capped,
byte-stable; and in the agent, the system prompt each request carries (the fixture's
model, ``acp.model``, keeps the bodies; the official SDK client drives)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.agent.pair import AgentUnderTest
from tests.agent.support import check_wire, start
from toolwire.agent.session.instructions import (
    MAX_BYTES,
    Instructions,
    instruction_files,
    project_dirs,
    render,
)
from toolwire.cli.config_cmd import render as render_config
from toolwire.config import load_config


def _tree(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    """A repository with instructions at three levels, and a user file."""
    env = {"XDG_CONFIG_HOME": str(tmp_path / "config"), "HOME": str(tmp_path / "home")}
    user = tmp_path / "config" / "toolwire"
    user.mkdir(parents=True)
    (user / "AGENTS.md").write_text("USER: answer in English.\n")
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "AGENTS.md").write_text("ROOT: run make test.\n")
    (repo / "CLAUDE.md").write_text("ROOT-CLAUDE: not read, AGENTS.md is here.\n")
    pkg = repo / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "GEMINI.md").write_text("PKG: only a GEMINI.md here.\n")
    cwd = pkg / "sub"
    return repo, cwd, env


def test_files_in_order_user_then_root_down_to_the_cwd(tmp_path: Path) -> None:
    repo, cwd, env = _tree(tmp_path)
    assert project_dirs(cwd) == [repo, repo / "pkg", cwd]
    files = instruction_files(cwd, env)
    assert files == [
        tmp_path / "config" / "toolwire" / "AGENTS.md",
        repo / "AGENTS.md",
        repo / "pkg" / "GEMINI.md",
    ]
    text = render([(str(p), p.read_text()) for p in files])
    labels = [f"## {p}" for p in files]
    assert [text.index(label) for label in labels] == sorted(text.index(lb) for lb in labels)
    assert "ROOT-CLAUDE" not in text


def test_without_a_repository_only_the_cwd(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "AGENTS.md").write_text("not ours")
    (tmp_path / "a" / "b" / "CLAUDE.md").write_text("here")
    env = {"XDG_CONFIG_HOME": str(tmp_path / "none")}
    assert instruction_files(tmp_path / "a" / "b", env) == [tmp_path / "a" / "b" / "CLAUDE.md"]


def test_the_cap_cuts_visibly_and_names_what_was_cut() -> None:
    files = [("/a/AGENTS.md", "a" * 20_000), ("/b/AGENTS.md", "b" * 20_000), ("/c/AGENTS.md", "c")]
    text = render(files)
    assert len(text.encode()) < MAX_BYTES + 1_000
    assert "a" * 20_000 in text
    marker = text.splitlines()[-1]
    assert marker.startswith("[instructions cut at 32 KB")
    assert "/b/AGENTS.md (cut after" in marker
    assert "/c/AGENTS.md (left out)" in marker
    assert render([("/x", "  \n")]) == ""


def test_refresh_rereads_only_on_change(tmp_path: Path) -> None:
    repo, cwd, env = _tree(tmp_path)
    found = Instructions()
    assert found.refresh(str(cwd), env)
    first = found.text
    assert not found.refresh(str(cwd), env)
    assert found.text is first
    gemini = repo / "pkg" / "GEMINI.md"
    gemini.write_text("PKG: changed and longer.\n")
    assert found.refresh(str(cwd), env)
    assert "PKG: changed and longer." in found.text
    (repo / "pkg" / "AGENTS.md").write_text("PKG-AGENTS\n")  # now AGENTS.md wins there
    assert found.refresh(str(cwd), env)
    assert "PKG-AGENTS" in found.text
    assert "PKG: changed" not in found.text


def test_toolwire_config_lists_the_files(tmp_path: Path) -> None:
    _, cwd, env = _tree(tmp_path)
    config = load_config(environ=env)
    lines = render_config(config, env, cwd=str(cwd))
    start_at = next(i for i, line in enumerate(lines) if line.startswith("# instruction files"))
    listed = lines[start_at + 1 : start_at + 4]
    assert [line.split()[1] for line in listed] == [str(p) for p in instruction_files(cwd, env)]


def _systems(bodies: list[dict[str, Any]]) -> list[str]:
    out = []
    for body in bodies:
        system: Any = body["system"]
        out.append(system if isinstance(system, str) else system[0]["text"])
    return out


@pytest.mark.anyio
async def test_the_system_prompt_carries_the_files_byte_stable_and_fresh(
    acp: AgentUnderTest, tmp_path: Path
) -> None:
    repo, cwd, _ = _tree(tmp_path)
    acp.model.function = lambda request: "ok"
    sid = await start(acp.run.conn, cwd)
    for n, text in enumerate(("one", "two", "three")):
        if n == 2:  # an edit between prompts shows at the next one
            agents = repo / "AGENTS.md"
            agents.write_text("ROOT: run make check now.\n")
            os.utime(agents, ns=(1, 1))  # a new mtime even on a coarse clock
        assert (await acp.prompt(sid, text)).stop_reason == "end_turn"
    check_wire(acp.run.wire)
    first, second, third = _systems(acp.model.bodies)
    assert first.startswith("You are toolwire")
    order = [first.index(s) for s in ("USER: answer", "ROOT: run make test", "PKG: only")]
    assert order == sorted(order)
    assert f"## {tmp_path / 'config' / 'toolwire' / 'AGENTS.md'}" in first
    assert f"## {repo / 'AGENTS.md'}" in first
    assert first.encode() == second.encode()
    assert "ROOT: run make check now." in third
    assert "make test" not in third
